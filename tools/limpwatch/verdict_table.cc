#include "verdict_table.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "format.h"
#include "json_writer.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "table.h"

namespace limpwatch::cli {
namespace {

// What the alarms on one peer say: the resource of its first alarm of each
// kind, and the causes they named most often.
struct AlarmSummary {
  size_t alarms = 0;
  std::string resource = "-";
  std::string kind;
  std::vector<std::string> causes;
};

AlarmSummary SummarizeAlarms(const std::string& peer, const std::vector<analyzer::Alarm>& alarms) {
  AlarmSummary summary;
  std::map<std::string, double> weight;
  for (const analyzer::Alarm& alarm : alarms) {
    if (alarm.server != peer) continue;
    if (summary.alarms++ == 0) {
      summary.resource = analyzer::ResourceName(alarm.resource);
      summary.kind = analyzer::AlarmKindName(alarm.kind);
    }
    for (size_t index = 0; index < alarm.top_functions.size(); ++index) {
      // Earlier places weigh more: a cause named first in every alarm leads.
      weight[alarm.top_functions[index].name] += 1.0 / double(index + 1);
    }
  }
  std::vector<std::pair<std::string, double>> ranked(weight.begin(), weight.end());
  std::sort(ranked.begin(), ranked.end(),
            [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  for (size_t index = 0; index < ranked.size() && index < 5; ++index) summary.causes.push_back(ranked[index].first);
  return summary;
}

std::string Percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? "-" : FormatFixed(100.0 * double(part) / double(whole), 1) + " %";
}

std::string Time(const PeerVerdictInput& input, uint64_t window) {
  return FormatIsoTime(input.window_end_ms(window) * 1000000ull);
}

}  // namespace

std::string RenderVerdictTable(const PeerVerdictInput& input) {
  Table table({{"PEER"}, {"VERDICT"}, {"ANOMALOUS", Align::kRight}, {"FIRST INDICTED"}, {"LAST INDICTED"},
               {"RESOURCE"}, {"RATIO TO PEERS (MEDIAN)"}, {"TOP CAUSES", Align::kLeft, 60}});
  for (const analyzer::ServerVerdict& verdict : input.verdicts) {
    AlarmSummary alarms = SummarizeAlarms(verdict.server, input.alarms);
    bool limping = verdict.indicted_windows > 0 || alarms.alarms > 0;
    std::string ratios;
    for (size_t m = 0; m < verdict.metrics.size() && m < input.metric_names.size(); ++m) {
      const analyzer::MetricVerdict& metric = verdict.metrics[m];
      if (metric.compared == 0) continue;
      // Every metric of a CSV; of the many a server compares, those away
      // from their peers' or that indicted it.
      bool notable = input.metric_names.size() <= 4 || metric.median_ratio >= 1.1 || metric.median_ratio <= 0.9 ||
                     metric.largest_statistic >= 1.0;
      if (!notable) continue;
      ratios += (ratios.empty() ? "" : " ") + input.metric_names[m] + " " + FormatFixed(metric.median_ratio, 2) +
                (m < input.symptoms.size() && !input.symptoms[m] ? " (load)" : "");
    }
    std::string causes;
    for (const std::string& cause : alarms.causes) causes += (causes.empty() ? "" : ", ") + cause;
    table.AddRow({verdict.server, limping ? (alarms.kind.empty() || alarms.kind == "anomaly" ? "limping" : alarms.kind) : "healthy",
                  Percent(verdict.anomalous_windows, verdict.windows),
                  verdict.indicted_windows ? Time(input, verdict.first_indicted) : "-",
                  verdict.indicted_windows ? Time(input, verdict.last_indicted) : "-", limping ? alarms.resource : "-",
                  ratios.empty() ? "-" : ratios, causes.empty() ? "-" : causes});
  }
  return table.Render();
}

std::string RenderVerdictJson(const PeerVerdictInput& input) {
  std::string out;
  for (const analyzer::ServerVerdict& verdict : input.verdicts) {
    AlarmSummary alarms = SummarizeAlarms(verdict.server, input.alarms);
    bool limping = verdict.indicted_windows > 0 || alarms.alarms > 0;
    JsonWriter json(0);
    json.BeginObject();
    json.Field("peer", verdict.server);
    json.Field("verdict", limping ? (alarms.kind.empty() || alarms.kind == "anomaly" ? "limping" : alarms.kind.c_str())
                                  : "healthy");
    json.Field("windows", verdict.windows);
    json.Field("anomalous_windows", verdict.anomalous_windows);
    json.Field("anomalous_share", verdict.windows ? double(verdict.anomalous_windows) / double(verdict.windows) : 0.0);
    json.Field("indicted_windows", verdict.indicted_windows);
    json.Field("alarms", uint64_t(alarms.alarms));
    json.FieldOrNull("first_indicted", verdict.indicted_windows ? Time(input, verdict.first_indicted) : "");
    json.FieldOrNull("last_indicted", verdict.indicted_windows ? Time(input, verdict.last_indicted) : "");
    json.FieldOrNull("resource", limping ? alarms.resource : "");
    json.Key("top_causes");
    json.BeginArray();
    for (const std::string& cause : alarms.causes) json.String(cause);
    json.EndArray();
    json.Key("metrics");
    json.BeginObject();
    for (size_t m = 0; m < verdict.metrics.size() && m < input.metric_names.size(); ++m) {
      const analyzer::MetricVerdict& metric = verdict.metrics[m];
      if (metric.compared == 0) continue;
      json.Key(input.metric_names[m]);
      json.BeginObject();
      json.Field("median_ratio", metric.median_ratio);
      json.Field("windows", metric.compared);
      json.Field("anomalous_windows", metric.anomalous);
      json.Field("largest_evidence", metric.largest_statistic);
      json.Field("load", m < input.symptoms.size() && !input.symptoms[m]);
      json.EndObject();
    }
    json.EndObject();
    json.EndObject();
    out += json.str() + "\n";
  }
  return out;
}

}  // namespace limpwatch::cli
