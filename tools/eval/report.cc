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

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "\\\"";
    else out += c;
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
    bool fault_free = fault == "none";
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
  for (const auto& [fault, score] : classes) {
    if (fault != "none") faulty_runs += score.experiments;
  }
  std::snprintf(line, sizeof line, "%-18s %5d %12s %12s %12s %12s %12s %9.1fs %10s %9s\n", "all", all,
                Percent(tp, faulty_runs).c_str(), Percent(fp, all).c_str(), "", "", "", Mean(latencies), "",
                Percent(right, checked).c_str());
  out << line;
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
        << ", \"resource_checked\": " << score.resource_checked << ", \"resource_right\": " << score.resource_right
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
        << "\", \"repetition\": " << experiment.repetition << ", \"true_positive\": "
        << (score.true_positive ? "true" : "false") << ", \"false_positive\": "
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

std::string RenderHtml(const std::vector<PlottedExperiment>& experiments, const std::map<std::string, ClassScore>& classes) {
  std::ostringstream out;
  out << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>limpwatch evaluation</title>"
         "<style>body{font-family:sans-serif;margin:2em}pre{background:#f4f4f4;padding:1em}"
         "svg{background:#fff;border:1px solid #ccc;margin:4px}</style></head><body>"
         "<h1>limpwatch evaluation</h1><pre>"
      << Escape(RenderTable(classes)) << "</pre>";
  const char* colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
  for (const PlottedExperiment& plotted : experiments) {
    const Experiment& experiment = *plotted.experiment;
    out << "<h2>" << Escape(experiment.workload) << " / " << Escape(experiment.fault) << " on "
        << Escape(experiment.faulty_server.empty() ? "-" : experiment.faulty_server) << " (run "
        << experiment.repetition << ")</h2>";
    uint64_t first_ms = experiment.start_ms, last_ms = experiment.end_ms;
    if (last_ms <= first_ms) continue;
    struct Panel {
      const char* title;
      double (*value)(const analyzer::TickRecord&);
    };
    const Panel panels[] = {
        {"calls per second (all traced functions)",
         [](const analyzer::TickRecord& tick) {
           double calls = 0;
           for (const auto& function : tick.functions) calls += double(function.calls);
           return calls;
         }},
        {"storage read+write service time, ms per call (dread + dwrite)",
         [](const analyzer::TickRecord& tick) { return tick.io.dread_ms + tick.io.dwrite_ms; }},
    };
    for (const Panel& panel : panels) {
      constexpr int kWidth = 900, kHeight = 180;
      double top = 1e-9;
      for (const auto& [server, ticks] : plotted.ticks) {
        for (const auto& tick : ticks) top = std::max(top, panel.value(tick));
      }
      auto x_of = [&](uint64_t ms) { return double(ms - first_ms) / double(last_ms - first_ms) * kWidth; };
      out << "<div>" << panel.title << "</div><svg width=\"" << kWidth << "\" height=\"" << kHeight << "\">";
      if (experiment.fault_start_ms) {
        out << "<rect x=\"" << x_of(experiment.fault_start_ms) << "\" y=\"0\" width=\""
            << x_of(experiment.fault_end_ms) - x_of(experiment.fault_start_ms) << "\" height=\"" << kHeight
            << "\" fill=\"#fdd\"/>";
      }
      int colour = 0;
      for (const auto& [server, ticks] : plotted.ticks) {
        out << "<polyline fill=\"none\" stroke=\"" << colours[colour % 8] << "\" points=\"";
        for (const auto& tick : ticks) {
          if (tick.unix_ms < first_ms || tick.unix_ms > last_ms) continue;
          out << x_of(tick.unix_ms) << "," << kHeight - panel.value(tick) / top * (kHeight - 10) << " ";
        }
        out << "\"><title>" << Escape(server) << "</title></polyline>";
        out << "<text x=\"5\" y=\"" << 14 + 14 * colour << "\" fill=\"" << colours[colour % 8] << "\" font-size=\"12\">"
            << Escape(server) << "</text>";
        ++colour;
      }
      for (const ObservedAlarm& alarm : experiment.alarms) {
        if (alarm.time_unix_ms < first_ms || alarm.time_unix_ms > last_ms) continue;
        double x = x_of(alarm.time_unix_ms);
        out << "<line x1=\"" << x << "\" x2=\"" << x << "\" y1=\"0\" y2=\"" << kHeight
            << "\" stroke=\"black\" stroke-dasharray=\"4\"><title>alarm: " << Escape(alarm.server) << " on "
            << Escape(alarm.resource) << " (by " << Escape(alarm.reporter) << ")</title></line>";
      }
      out << "</svg>";
    }
  }
  out << "</body></html>\n";
  return out.str();
}

}  // namespace limpwatch::eval
