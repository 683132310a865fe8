#include "report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace limpwatch::eval {
namespace {

std::string Percent(int part, int whole) {
  if (whole == 0) return "-";
  char text[16];
  std::snprintf(text, sizeof text, "%.1f", 100.0 * part / whole);
  return text;
}

// Inside a JSON string.
std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

double Mean(const std::vector<double>& values) {
  double sum = 0;
  for (double value : values) sum += value;
  return values.empty() ? 0 : sum / double(values.size());
}

}  // namespace

std::string RenderTable(const std::map<std::string, ClassScore>& classes) {
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%-18s %5s %12s %12s %12s %12s %12s %10s %10s %9s\n", "fault", "runs",
                "TP% comb", "FP% comb", "TP% time", "TP% count", "TP% samples", "lat mean", "lat max", "resource%");
  out << line;
  int all = 0, tp = 0, fp = 0, checked = 0, right = 0;
  std::vector<double> latencies;
  for (const auto& [fault, score] : classes) {
    double max_latency = score.latencies_s.empty() ? 0 : *std::max_element(score.latencies_s.begin(), score.latencies_s.end());
    auto metric_tp = [&](const char* metric) {
      auto found = score.true_positives_by_metric.find(metric);
      return Percent(found == score.true_positives_by_metric.end() ? 0 : found->second, score.experiments);
    };
    // Fault-free and cluster-wide classes have no faulty server: FP only.
    bool fault_free = !score.true_positive_applies;
    std::snprintf(line, sizeof line, "%-18s %5d %12s %12s %12s %12s %12s %9.1fs %9.1fs %9s\n", fault.c_str(),
                  score.experiments, fault_free ? "-" : Percent(score.true_positives, score.experiments).c_str(),
                  Percent(score.false_positives, score.experiments).c_str(), fault_free ? "-" : metric_tp("time").c_str(),
                  fault_free ? "-" : metric_tp("count").c_str(), fault_free ? "-" : metric_tp("samples").c_str(),
                  Mean(score.latencies_s), max_latency, Percent(score.resource_right, score.resource_checked).c_str());
    out << line;
    all += score.experiments;
    if (!fault_free) tp += score.true_positives;
    fp += score.false_positives;
    checked += score.resource_checked;
    right += score.resource_right;
    latencies.insert(latencies.end(), score.latencies_s.begin(), score.latencies_s.end());
  }
  int faulty_runs = 0;
  bool any_cluster_wide = false;
  for (const auto& [fault, score] : classes) {
    if (score.true_positive_applies) faulty_runs += score.experiments;
    any_cluster_wide = any_cluster_wide || score.cluster_wide;
  }
  std::snprintf(line, sizeof line, "%-18s %5d %12s %12s %12s %12s %12s %9.1fs %10s %9s\n", "all", all,
                Percent(tp, faulty_runs).c_str(), Percent(fp, all).c_str(), "", "", "", Mean(latencies), "",
                Percent(right, checked).c_str());
  out << line;
  if (any_cluster_wide) {
    out << "cluster-wide faults (every server alike, e.g. slow-path) have no faulty server: any alarm is a false\n"
           "positive and TP does not apply (\"-\"), as for none; \"all\" counts TP over the other faults only.\n";
  }
  return out.str();
}

std::string RenderJson(const std::vector<Experiment>& experiments, const std::map<std::string, ClassScore>& classes,
                       uint64_t grace_ms) {
  std::ostringstream out;
  out << "{\n  \"classes\": {";
  bool first = true;
  for (const auto& [fault, score] : classes) {
    out << (first ? "\n" : ",\n") << "    \"" << Escape(fault) << "\": {\"experiments\": " << score.experiments
        << ", \"true_positives\": " << score.true_positives << ", \"false_positives\": " << score.false_positives
        << ", \"true_positive_applies\": " << (score.true_positive_applies ? "true" : "false")
        << ", \"cluster_wide\": " << (score.cluster_wide ? "true" : "false");
    if (score.cluster_wide) out << ", \"scored_as\": \"cluster-wide: no faulty server, any alarm is a false positive\"";
    out << ", \"resource_checked\": " << score.resource_checked << ", \"resource_right\": " << score.resource_right
        << ", \"latencies_s\": [";
    for (size_t index = 0; index < score.latencies_s.size(); ++index) {
      out << (index ? ", " : "") << score.latencies_s[index];
    }
    out << "], \"true_positives_by_metric\": {";
    bool first_metric = true;
    for (const auto& [metric, count] : score.true_positives_by_metric) {
      out << (first_metric ? "" : ", ") << "\"" << metric << "\": " << count;
      first_metric = false;
    }
    out << "}, \"false_positives_by_metric\": {";
    first_metric = true;
    for (const auto& [metric, count] : score.false_positives_by_metric) {
      out << (first_metric ? "" : ", ") << "\"" << metric << "\": " << count;
      first_metric = false;
    }
    out << "}}";
    first = false;
  }
  out << "\n  },\n  \"experiments\": [";
  for (size_t index = 0; index < experiments.size(); ++index) {
    const Experiment& experiment = experiments[index];
    ExperimentScore score = ScoreExperiment(experiment, grace_ms);
    out << (index ? ",\n" : "\n") << "    {\"workload\": \"" << Escape(experiment.workload) << "\", \"fault\": \""
        << Escape(experiment.fault) << "\", \"faulty_server\": \"" << Escape(experiment.faulty_server)
        << "\", \"cluster_wide\": " << (experiment.cluster_wide ? "true" : "false")
        << ", \"repetition\": " << experiment.repetition << ", \"true_positive\": "
        << (!score.true_positive_applies ? "null" : score.true_positive ? "true" : "false") << ", \"false_positive\": "
        << (score.false_positive ? "true" : "false") << ", \"latency_s\": ";
    if (score.latency_s) out << *score.latency_s; else out << "null";
    out << ", \"start_ms\": " << experiment.start_ms << ", \"fault_start_ms\": " << experiment.fault_start_ms
        << ", \"fault_end_ms\": " << experiment.fault_end_ms << ", \"end_ms\": " << experiment.end_ms;
    out << ", \"resource_right\": ";
    if (score.resource_right) out << (*score.resource_right ? "true" : "false"); else out << "null";
    out << ", \"alarms\": " << experiment.alarms.size() << "}";
  }
  out << "\n  ]\n}\n";
  return out.str();
}

}  // namespace limpwatch::eval
