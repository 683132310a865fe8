#include "config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "limpwatch/shm/segment.h"

namespace limpwatch::runtime {
namespace {

const char* Get(const char* variable) {
  const char* value = std::getenv(variable);
  return (value != nullptr && value[0] != '\0') ? value : nullptr;
}

bool ReadFlag(const char* variable, bool fallback, std::vector<std::string>* problems) {
  const char* value = Get(variable);
  if (value == nullptr) return fallback;
  if (!std::strcmp(value, "1") || !std::strcmp(value, "yes") || !std::strcmp(value, "true")) return true;
  if (!std::strcmp(value, "0") || !std::strcmp(value, "no") || !std::strcmp(value, "false")) return false;
  problems->push_back(std::string(variable) + "='" + value + "' is not 0/1, yes/no or true/false");
  return fallback;
}

void ReadBounded(const char* variable, uint32_t low, uint32_t high, uint32_t* value_out,
                 std::vector<std::string>* problems) {
  const char* value = Get(variable);
  if (value == nullptr) return;
  char* end = nullptr;
  errno = 0;
  unsigned long long parsed = std::strtoull(value, &end, 10);
  if (errno != 0 || end == value || *end != '\0' || parsed < low || parsed > high) {
    problems->push_back(std::string(variable) + "='" + value + "' is not a whole number from " + std::to_string(low) +
                        " to " + std::to_string(high));
    return;
  }
  *value_out = static_cast<uint32_t>(parsed);
}

}  // namespace

RuntimeConfig ReadConfigFromEnvironment(std::vector<std::string>* problems) {
  RuntimeConfig config;
  config.disabled = ReadFlag("LIMPWATCH_DISABLE", false, problems);
  config.keep_segment = ReadFlag("LIMPWATCH_KEEP", false, problems);
  config.quiet = ReadFlag("LIMPWATCH_QUIET", false, problems);
  config.patch_functions = ReadFlag("LIMPWATCH_PATCH", false, problems);
  if (const char* name = Get("LIMPWATCH_NAME")) {
    if (shm::IsValidSegmentName(name)) {
      config.name = name;
    } else {
      problems->push_back(std::string("LIMPWATCH_NAME='") + name +
                          "' must be 1-63 characters of letters, digits, '_', '-' or '.', not all digits; "
                          "naming the segment after the pid");
    }
  }
  if (const char* clock = Get("LIMPWATCH_CLOCK")) {
    if (!std::strcmp(clock, "monotonic")) {
      config.force_monotonic = true;
    } else if (std::strcmp(clock, "tsc") != 0) {
      problems->push_back(std::string("LIMPWATCH_CLOCK='") + clock + "' is neither 'tsc' nor 'monotonic'");
    }
  }
  ReadBounded("LIMPWATCH_MAX_FUNCTIONS", 16, shm::kMaxFunctionsLimit, &config.geometry.max_functions, problems);
  ReadBounded("LIMPWATCH_MAX_THREADS", 1, shm::kMaxThreadsLimit, &config.geometry.max_threads, problems);
  ReadBounded("LIMPWATCH_STACK_DEPTH", 8, shm::kMaxStackDepthLimit, &config.geometry.stack_depth, problems);
  ReadBounded("LIMPWATCH_SERVICE_INTERVAL_MS", 10, 1000, &config.service_interval_ms, problems);
  ReadBounded("LIMPWATCH_FLOW_SAMPLE", 0, 1u << 30, &config.flow_sample_every, problems);
  uint32_t flow_events = shm::kDefaultFlowEventsPerThread;
  ReadBounded("LIMPWATCH_FLOW_EVENTS", shm::kMinFlowEventsPerThread, shm::kMaxFlowEventsPerThread, &flow_events,
              problems);
  config.geometry.flow_events = config.flow_sample_every == 0 ? 0 : flow_events;
  return config;
}

}  // namespace limpwatch::runtime
