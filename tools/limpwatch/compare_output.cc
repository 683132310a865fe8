#include "compare_output.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string_view>
#include <utility>

#include "format.h"
#include "json_writer.h"
#include "recording_scan.h"
#include "table.h"

namespace limpwatch::cli {
namespace {

using analyzer::FunctionChange;
using analyzer::MutationKind;

std::string Median(double ms, size_t sample, bool per_tick) {
  if (sample == 0) return "-";
  return FormatDuration(ms * 1e6) + (per_tick ? "/tick" : "");
}

std::string PValue(const FunctionChange& change) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1e", change.p_value);
  return text;
}

std::string Signed(double value, int decimals) {
  std::string text = FormatFixed(value, decimals);
  return value >= 0 ? "+" + text : text;
}

// A period's runs taken together.
struct PeriodTotals {
  std::set<std::string> servers;
  uint64_t ticks = 0;
  double seconds = 0;
};

PeriodTotals TotalsOf(const ComparedPeriod& period) {
  PeriodTotals totals;
  for (const analyzer::PeriodProfile* run : period.runs) {
    totals.servers.insert(run->servers().begin(), run->servers().end());
    totals.ticks += run->ticks();
    totals.seconds += run->seconds();
  }
  return totals;
}

std::string PeriodLine(const ComparedPeriod& period) {
  PeriodTotals totals = TotalsOf(period);
  std::string line = std::to_string(totals.servers.size()) + (totals.servers.size() == 1 ? " server, " : " servers, ") +
                     std::to_string(totals.ticks) + " ticks, " + FormatNumber(totals.seconds) + " s";
  if (period.runs.size() > 1) line += " in " + std::to_string(period.runs.size()) + " runs";
  return line;
}

size_t CountOf(const analyzer::PeriodComparison& comparison, MutationKind kind) {
  size_t count = 0;
  for (const FunctionChange& change : comparison.mutations) count += change.kind == kind;
  return count;
}

void PeriodJson(JsonWriter& json, const ComparedPeriod& period) {
  json.BeginObject();
  json.Key("recordings");
  json.BeginArray();
  for (const std::string& path : period.recordings) json.String(path);
  json.EndArray();
  PeriodTotals totals = TotalsOf(period);
  json.Key("servers");
  json.BeginArray();
  for (const std::string& server : totals.servers) json.String(server);
  json.EndArray();
  json.Field("ticks", totals.ticks);
  json.Field("seconds", totals.seconds);
  json.Field("runs", uint64_t(period.runs.size()));
  json.EndObject();
}

void MedianJson(JsonWriter& json, std::string_view key, double ms, size_t sample) {
  json.Key(key);
  if (sample == 0) {
    json.Null();
  } else {
    json.Double(ms);
  }
}

}  // namespace

size_t MutationRowsShown(const ComparisonReport& report) {
  size_t count = report.comparison->mutations.size();
  return report.limit == 0 ? count : std::min(count, report.limit);
}

std::vector<std::string> MutationRowCells(const ComparisonReport& report, size_t rank) {
  const FunctionChange& change = report.comparison->mutations[rank];
  return {std::to_string(rank + 1),
          FunctionLabel(*report.names, change.name_hash),
          analyzer::MutationKindName(change.kind),
          std::to_string(change.ticks_before) + "/" + std::to_string(change.ticks_after),
          Median(change.median_ms_before, change.ticks_before, change.per_tick) + " -> " +
              Median(change.median_ms_after, change.ticks_after, change.per_tick),
          change.ratio > 0 ? "x" + FormatFixed(change.ratio, change.ratio < 10 ? 2 : 1) : "-",
          PValue(change),
          Signed(change.contribution_ms_per_s, 1)};
}

std::string ComparisonSummary(const ComparisonReport& report) {
  const analyzer::PeriodComparison& comparison = *report.comparison;
  size_t shown = MutationRowsShown(report);
  size_t count = comparison.mutations.size();
  std::string text =
      "compare: " + (count == 0 ? std::string("no mutation") : std::to_string(count) + (count == 1 ? " mutation" : " mutations")) +
      " (" + std::to_string(CountOf(comparison, MutationKind::kResponseTime)) + " response time, " +
      std::to_string(CountOf(comparison, MutationKind::kNew)) + " new, " +
      std::to_string(CountOf(comparison, MutationKind::kVanished)) + " vanished) among " +
      std::to_string(comparison.functions_compared) + " functions, " + std::to_string(comparison.functions_tested) +
      " tested (p < " + FormatNumber(report.settings.alpha) + ", >= " + std::to_string(report.settings.min_ticks) +
      " ticks a period)";
  if (shown < count) text += ", " + std::to_string(shown) + " shown";
  if (comparison.baseline_runs >= 2) {
    text += "; " + std::to_string(comparison.within_baseline_noise) + " more within the differences between the " +
            std::to_string(comparison.baseline_runs) + " baseline runs";
  } else {
    text += "; one baseline run: the differences between healthy runs are not measured (give two or more BEFORE "
            "runs to leave them out)";
  }
  return text + "; before: " + PeriodLine(report.before) + "; after: " + PeriodLine(report.after);
}

std::string RenderComparisonText(const ComparisonReport& report) {
  std::string text;
  size_t shown = MutationRowsShown(report);
  if (shown > 0) {
    Table table({{"RANK", Align::kRight},
                 {"FUNCTION", Align::kLeft, 60},
                 {"KIND", Align::kLeft},
                 {"TICKS", Align::kRight},
                 {"MEDIAN BEFORE -> AFTER", Align::kLeft},
                 {"RATIO", Align::kRight},
                 {"P", Align::kRight},
                 {"MS/S", Align::kRight}});
    for (size_t rank = 0; rank < shown; ++rank) table.AddRow(MutationRowCells(report, rank));
    text += table.Render();
  }
  return text + ComparisonSummary(report) + "\n";
}

std::string RenderComparisonJson(const ComparisonReport& report) {
  const analyzer::PeriodComparison& comparison = *report.comparison;
  JsonWriter json;
  json.BeginObject();
  json.Key("before");
  PeriodJson(json, report.before);
  json.Key("after");
  PeriodJson(json, report.after);
  json.Key("split_unix_ms");
  if (report.split_unix_ms == 0) {
    json.Null();
  } else {
    json.Uint(report.split_unix_ms);
  }
  json.Field("alpha", report.settings.alpha);
  json.Field("min_ticks", uint64_t(report.settings.min_ticks));
  json.Field("functions_compared", uint64_t(comparison.functions_compared));
  json.Field("functions_tested", uint64_t(comparison.functions_tested));
  json.Field("baseline_runs", uint64_t(comparison.baseline_runs));
  json.Field("within_baseline_noise", uint64_t(comparison.within_baseline_noise));
  json.Field("mutation_count", uint64_t(comparison.mutations.size()));
  json.Key("mutations");
  json.BeginArray();
  size_t shown = MutationRowsShown(report);
  for (size_t rank = 0; rank < shown; ++rank) {
    const FunctionChange& change = comparison.mutations[rank];
    json.BeginObject();
    json.Field("rank", uint64_t(rank + 1));
    json.Field("function", FunctionLabel(*report.names, change.name_hash));
    json.Field("name_hash", FormatHex16(change.name_hash));
    json.Field("kind", change.kind == MutationKind::kResponseTime ? "response_time"
                       : change.kind == MutationKind::kNew        ? "new"
                                                                  : "vanished");
    json.Field("per", change.per_tick ? "tick" : "call");
    json.Field("ticks_before", uint64_t(change.ticks_before));
    json.Field("ticks_after", uint64_t(change.ticks_after));
    json.Field("calls_before", change.calls_before);
    json.Field("calls_after", change.calls_after);
    json.Field("self_ms_before", change.self_ms_before);
    json.Field("self_ms_after", change.self_ms_after);
    json.Field("calls_per_s_before", change.calls_per_s_before);
    json.Field("calls_per_s_after", change.calls_per_s_after);
    MedianJson(json, "median_ms_before", change.median_ms_before, change.ticks_before);
    MedianJson(json, "median_ms_after", change.median_ms_after, change.ticks_after);
    json.Key("ratio");
    if (change.ratio > 0) {
      json.Double(change.ratio);
    } else {
      json.Null();
    }
    // A structural mutation has no KS statistic; its p-value is the
    // presence test's.
    json.Key("ks_statistic");
    if (change.kind == MutationKind::kResponseTime) {
      json.Double(change.ks_statistic);
    } else {
      json.Null();
    }
    json.Field("p_value", change.p_value);
    json.Field("contribution_ms_per_s", change.contribution_ms_per_s);
    // Null with one baseline run, where there is no such noise to measure.
    for (auto [key, value] : {std::pair<std::string_view, double>{"ks_between_baseline_runs", change.ks_between_runs},
                              {"ks_to_nearest_baseline_run", change.ks_to_nearest_run},
                              {"contribution_between_baseline_runs_ms_per_s",
                               change.contribution_between_runs_ms_per_s}}) {
      // Null too where it is infinite: timed in one sample and not the other.
      json.Key(key);
      if (comparison.baseline_runs >= 2 && std::isfinite(value)) {
        json.Double(value);
      } else {
        json.Null();
      }
    }
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
  return json.str() + "\n";
}

}  // namespace limpwatch::cli
