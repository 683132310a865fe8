#include "sampler/sampler_config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace limpwatch::runtime {
namespace {

const char* Get(const char* variable) {
  const char* value = std::getenv(variable);
  return (value != nullptr && value[0] != '\0') ? value : nullptr;
}

// Reads a yes/no setting into *setting; a value that is neither is
// reported and *setting keeps its default.
void ReadSwitch(const char* variable, bool* setting, std::vector<std::string>* problems) {
  const char* value = Get(variable);
  if (value == nullptr) return;
  if (!std::strcmp(value, "1") || !std::strcmp(value, "yes") || !std::strcmp(value, "true")) {
    *setting = true;
  } else if (!std::strcmp(value, "0") || !std::strcmp(value, "no") || !std::strcmp(value, "false")) {
    *setting = false;
  } else {
    problems->push_back(std::string(variable) + "='" + value + "' is not 0/1, yes/no or true/false");
  }
}

}  // namespace

SamplerConfig ReadSamplerConfig(std::vector<std::string>* problems) {
  SamplerConfig config;
  if (const char* value = Get("LIMPWATCH_SAMPLE_HZ")) {
    char* end = nullptr;
    errno = 0;
    unsigned long long parsed = std::strtoull(value, &end, 10);
    if (errno != 0 || end == value || *end != '\0' || value[0] == '-' || parsed > kMaxSampleHz) {
      problems->push_back(std::string("LIMPWATCH_SAMPLE_HZ='") + value + "' is not a whole number from 0 to " +
                          std::to_string(kMaxSampleHz) + "; sampling at " + std::to_string(kDefaultSampleHz) +
                          " Hz");
    } else {
      config.rate_hz = static_cast<uint32_t>(parsed);
    }
  }
  ReadSwitch("LIMPWATCH_SAMPLE_SYSTEM", &config.system_wide, problems);
  ReadSwitch("LIMPWATCH_SAMPLE_SHARE", &config.share_events, problems);
  if (const char* value = Get("LIMPWATCH_SAMPLE_EVENTS")) {
    if (!std::strcmp(value, "cpu")) {
      config.placement = EventPlacement::kPerCpu;
    } else if (!std::strcmp(value, "thread")) {
      config.placement = EventPlacement::kPerThread;
    } else if (std::strcmp(value, "auto") != 0) {
      problems->push_back(std::string("LIMPWATCH_SAMPLE_EVENTS='") + value +
                          "' is not auto, cpu or thread; placing them automatically");
    }
  }
  return config;
}

}  // namespace limpwatch::runtime
