#include "limpwatch/analyzer/analyzer_config.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace limpwatch::analyzer {
namespace {

const char* Get(const char* variable) {
  const char* value = std::getenv(variable);
  return (value != nullptr && value[0] != '\0') ? value : nullptr;
}

template <typename T>
void ReadNumber(const char* variable, double low, double high, T* value_out, std::vector<std::string>* problems) {
  const char* text = Get(variable);
  if (text == nullptr) return;
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(text, &end);
  bool whole = std::is_integral_v<T> ? value == std::floor(value) : true;
  if (errno != 0 || end == text || *end != '\0' || !(value >= low && value <= high) || !whole) {
    problems->push_back(std::string(variable) + "='" + text + "' is not a " + (std::is_integral_v<T> ? "whole " : "") +
                        "number from " + std::to_string(low) + " to " + std::to_string(high));
    return;
  }
  *value_out = static_cast<T>(value);
}

}  // namespace

const char* DecisionRuleName(DecisionRule rule) { return rule == DecisionRule::kSeed ? "seed" : "calibrated"; }

std::optional<DecisionRule> ParseDecisionRule(const std::string& name) {
  if (name == "calibrated") return DecisionRule::kCalibrated;
  if (name == "seed") return DecisionRule::kSeed;
  return std::nullopt;
}

AnalyzerConfig ReadAnalyzerConfigFromEnvironment(std::vector<std::string>* problems) {
  AnalyzerConfig config;
  if (const char* rule = Get("LIMPWATCH_ANALYZE_RULE")) {
    if (auto parsed = ParseDecisionRule(rule)) {
      config.decision_rule = *parsed;
    } else {
      problems->push_back(std::string("LIMPWATCH_ANALYZE_RULE='") + rule + "' is not calibrated or seed");
    }
  }
  ReadNumber("LIMPWATCH_ANALYZE_BUDGET", 1, 1e6, &config.server_days_per_false_alarm, problems);
  ReadNumber("LIMPWATCH_ANALYZE_TICK_MS", 100, 60000, &config.tick_ms, problems);
  ReadNumber("LIMPWATCH_ANALYZE_WINDOW", 1, 600, &config.window_ticks, problems);
  ReadNumber("LIMPWATCH_ANALYZE_SHIFT", 1, 600, &config.shift_ticks, problems);
  ReadNumber("LIMPWATCH_ANALYZE_K", 1, 50, &config.k, problems);
  ReadNumber("LIMPWATCH_ANALYZE_WARMUP", 0, 10000, &config.warmup_windows, problems);
  ReadNumber("LIMPWATCH_ANALYZE_MIN_SAMPLES", 0, 1e9, &config.min_feature_samples, problems);
  ReadNumber("LIMPWATCH_ANALYZE_MIN_TIME_MS", 0, 1e9, &config.min_feature_time_ms, problems);
  ReadNumber("LIMPWATCH_ANALYZE_MAX_FEATURES", 1, 1000, &config.max_features, problems);
  ReadNumber("LIMPWATCH_ANALYZE_SUPPRESS_S", 0, 86400, &config.alarm_suppression_s, problems);
  ReadNumber("LIMPWATCH_ANALYZE_SILENT_WINDOWS", 1, 1000, &config.peer_silence_windows, problems);
  ReadNumber("LIMPWATCH_ANALYZE_FACTOR", 1.01, 1000, &config.default_threshold_factor, problems);
  ReadNumber("LIMPWATCH_ANALYZE_RELATIVE", 1.0, 1000, &config.relative_factor, problems);
  ReadNumber("LIMPWATCH_ANALYZE_CPUWAIT_RELATIVE", 1.0, 1000, &config.cpu_wait_relative_factor, problems);
  if (config.shift_ticks > config.window_ticks) {
    problems->push_back("LIMPWATCH_ANALYZE_SHIFT is larger than LIMPWATCH_ANALYZE_WINDOW; using a shift of 1");
    config.shift_ticks = 1;
  }
  if (const char* distance = Get("LIMPWATCH_ANALYZE_DISTANCE")) {
    if (auto kind = ParseDistanceKind(distance)) {
      config.distance = *kind;
    } else {
      problems->push_back(std::string("LIMPWATCH_ANALYZE_DISTANCE='") + distance +
                          "' is not manhattan, relative, scaled or kl");
    }
  }
  if (const char* rpca = Get("LIMPWATCH_ANALYZE_RPCA")) {
    if (!std::strcmp(rpca, "1")) {
      config.rpca_detector = true;
    } else if (std::strcmp(rpca, "0") != 0) {
      problems->push_back(std::string("LIMPWATCH_ANALYZE_RPCA='") + rpca + "' is not 0 or 1");
    }
  }
  if (const char* weighting = Get("LIMPWATCH_ANALYZE_VARIANCE_WEIGHTING")) {
    if (!std::strcmp(weighting, "1")) {
      config.variance_weighting = true;
    } else if (std::strcmp(weighting, "0") != 0) {
      problems->push_back(std::string("LIMPWATCH_ANALYZE_VARIANCE_WEIGHTING='") + weighting + "' is not 0 or 1");
    }
  }
  return config;
}

}  // namespace limpwatch::analyzer
