#include "limpwatch/analyzer/start_line.h"

#include <cstdio>

namespace limpwatch::analyzer {
namespace {

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string Rule(const AnalyzerConfig& config) {
  std::string text = std::string("rule ") + DecisionRuleName(config.decision_rule);
  if (config.decision_rule == DecisionRule::kCalibrated) {
    text += " (at most 1 false alarm per " + Number(config.server_days_per_false_alarm) + " server-days)";
  } else {
    text += " (" + std::to_string(config.k) + " of " + std::to_string(2 * config.k - 1) + " windows)";
  }
  return text + ", tick " + std::to_string(config.tick_ms) + " ms, windows of " +
         std::to_string(config.window_ticks) + " ticks";
}

std::string Selection(const shm::SegmentView& segment) {
  const shm::ProcessCounters& counters = segment.header()->counters;
  uint64_t applied = counters.selections_applied.load(std::memory_order_relaxed);
  uint64_t untraced = counters.functions_unselected.load(std::memory_order_relaxed);
  if (applied == 0) return "every instrumented function";
  return "a selection (" + std::to_string(untraced) + " registered functions left untraced so far)";
}

std::string Sampling(const shm::Snapshot& first) {
  auto source = static_cast<shm::SampleSource>(first.samples.source);
  if (source == shm::SampleSource::kOff) return "off";
  return std::string(shm::SampleSourceName(source)) + " at " + std::to_string(first.samples.rate_hz) + " Hz";
}

}  // namespace

std::string AnalyzerStartLine(const AnalyzerSetup& setup, const shm::SegmentView& segment,
                              const shm::Snapshot& first) {
  std::string line = "analyzer: '" + setup.node + "' started: " + Rule(setup.config);
  line += "; thresholds: " +
          (setup.thresholds_path.empty() ? std::string("none, untrained defaults") : setup.thresholds_path);
  line += "; manifest: " + (setup.manifest_paths.empty() ? std::string("none") : setup.manifest_paths);
  line += "; selection: " + Selection(segment);
  line += "; CPU sampling: " + Sampling(first);
  line += "; peers: " + (setup.exchange ? setup.exchange->Describe() : std::string("none, this server alone"));
  line += "; recording: " + (setup.record_path.empty() ? std::string("off") : setup.record_path);
  line += "; alarms file: " + (setup.alarms_path.empty() ? std::string("none") : setup.alarms_path);
  return line;
}

}  // namespace limpwatch::analyzer
