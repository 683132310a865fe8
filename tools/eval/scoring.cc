#include "scoring.h"

#include <algorithm>
#include <cstdlib>

namespace limpwatch::eval {
namespace {

// Extracts a string value "key":"value" from a flat JSON object.
std::optional<std::string> StringField(const std::string& json, const std::string& key) {
  std::string pattern = "\"" + key + "\":\"";
  size_t at = json.find(pattern);
  if (at == std::string::npos) return std::nullopt;
  at += pattern.size();
  std::string value;
  for (; at < json.size() && json[at] != '"'; ++at) {
    if (json[at] == '\\' && at + 1 < json.size()) ++at;
    value += json[at];
  }
  if (at >= json.size()) return std::nullopt;
  return value;
}

std::optional<uint64_t> NumberField(const std::string& json, const std::string& key) {
  std::string pattern = "\"" + key + "\":";
  size_t at = json.find(pattern);
  if (at == std::string::npos) return std::nullopt;
  char* end = nullptr;
  unsigned long long value = std::strtoull(json.c_str() + at + pattern.size(), &end, 10);
  if (end == json.c_str() + at + pattern.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<ObservedAlarm> ParseAlarmLine(const std::string& line) {
  ObservedAlarm alarm;
  auto kind = StringField(line, "kind");
  auto reporter = StringField(line, "reporter");
  auto server = StringField(line, "server");
  auto resource = StringField(line, "resource");
  auto time = NumberField(line, "raised_unix_ms");
  if (!time) time = NumberField(line, "time_unix_ms");
  if (!kind || !server || !resource || !time) return std::nullopt;
  alarm.kind = *kind;
  alarm.reporter = reporter.value_or("");
  alarm.server = *server;
  alarm.resource = *resource;
  alarm.time_unix_ms = *time;
  size_t metrics = line.find("\"metrics\":[");
  if (metrics != std::string::npos) {
    size_t end = line.find(']', metrics);
    std::string list = line.substr(metrics + 11, end - metrics - 11);
    size_t position = 0;
    while ((position = list.find('"', position)) != std::string::npos) {
      size_t close = list.find('"', position + 1);
      if (close == std::string::npos) break;
      alarm.metrics.push_back(list.substr(position + 1, close - position - 1));
      position = close + 1;
    }
  }
  return alarm;
}

bool IsClusterWideFault(const std::string& fault) { return fault == "slow-path"; }

ExperimentScore ScoreExperiment(const Experiment& experiment, uint64_t grace_ms) {
  ExperimentScore score;
  score.true_positive_applies = experiment.fault != "none" && !experiment.cluster_wide;
  const ObservedAlarm* first_hit = nullptr;
  for (const ObservedAlarm& alarm : experiment.alarms) {
    if (alarm.time_unix_ms < experiment.start_ms || alarm.time_unix_ms > experiment.end_ms + grace_ms) continue;
    bool on_faulty = score.true_positive_applies && !experiment.faulty_server.empty() &&
                     alarm.server == experiment.faulty_server;
    if (!on_faulty) {
      score.false_positive = true;
      for (const auto& metric : alarm.metrics) score.false_positive_by_metric[metric] = true;
      continue;
    }
    bool during_fault = alarm.time_unix_ms >= experiment.fault_start_ms &&
                        alarm.time_unix_ms <= experiment.fault_end_ms + grace_ms;
    if (!during_fault) continue;  // an alarm on the faulty server outside its fault is neither
    score.true_positive = true;
    for (const auto& metric : alarm.metrics) score.true_positive_by_metric[metric] = true;
    if (first_hit == nullptr || alarm.time_unix_ms < first_hit->time_unix_ms) first_hit = &alarm;
  }
  if (first_hit != nullptr) {
    score.latency_s = double(first_hit->time_unix_ms) / 1000.0 - double(experiment.fault_start_ms) / 1000.0;
    if (!experiment.expected_resource.empty()) score.resource_right = first_hit->resource == experiment.expected_resource;
  }
  return score;
}

std::map<std::string, ClassScore> ScoreByFault(const std::vector<Experiment>& experiments, uint64_t grace_ms) {
  std::map<std::string, ClassScore> classes;
  for (const Experiment& experiment : experiments) {
    ExperimentScore score = ScoreExperiment(experiment, grace_ms);
    ClassScore& total = classes[experiment.fault];
    ++total.experiments;
    total.true_positive_applies = score.true_positive_applies;
    total.cluster_wide = experiment.cluster_wide;
    total.true_positives += score.true_positive;
    total.false_positives += score.false_positive;
    for (const auto& [metric, hit] : score.true_positive_by_metric) total.true_positives_by_metric[metric] += hit;
    for (const auto& [metric, hit] : score.false_positive_by_metric) total.false_positives_by_metric[metric] += hit;
    if (score.latency_s) total.latencies_s.push_back(*score.latency_s);
    if (score.resource_right) {
      ++total.resource_checked;
      total.resource_right += *score.resource_right;
    }
  }
  return classes;
}

}  // namespace limpwatch::eval
