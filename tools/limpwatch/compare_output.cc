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

// "3 mutations (2 response time, 1 new, 0 vanished)".
std::string MutationCounts(const analyzer::PeriodComparison& comparison) {
  size_t count = comparison.mutations.size();
  return (count == 0 ? std::string("no mutation") : std::to_string(count) + (count == 1 ? " mutation" : " mutations")) +
         " (" + std::to_string(CountOf(comparison, MutationKind::kResponseTime)) + " response time, " +
         std::to_string(CountOf(comparison, MutationKind::kNew)) + " new, " +
         std::to_string(CountOf(comparison, MutationKind::kVanished)) + " vanished)";
}

const char* KindJson(MutationKind kind) {
  return kind == MutationKind::kResponseTime ? "response_time" : kind == MutationKind::kNew ? "new" : "vanished";
}

// The mutations' table: `subject` names what each row is, `sample` what
// was counted in each period.
Table MutationTable(const std::string& subject, size_t subject_width, const std::string& sample,
                    const std::string& medians) {
  return Table({{"RANK", Align::kRight},
                {subject, Align::kLeft, subject_width},
                {"KIND", Align::kLeft},
                {sample, Align::kRight},
                {medians, Align::kLeft},
                {"RATIO", Align::kRight},
                {"P", Align::kRight},
                {"MS/S", Align::kRight}});
}

// The test's statistic, p-value and the change's contribution. A structural
// mutation has no KS statistic; its p-value is the presence test's.
void TestJson(JsonWriter& json, const FunctionChange& change) {
  json.Key("ks_statistic");
  if (change.kind == MutationKind::kResponseTime) {
    json.Double(change.ks_statistic);
  } else {
    json.Null();
  }
  json.Field("p_value", change.p_value);
  json.Field("contribution_ms_per_s", change.contribution_ms_per_s);
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

bool HasCategories(const ComparisonReport& report) {
  return report.categories != nullptr && report.categories->flows_before + report.categories->flows_after > 0;
}

size_t CategoryRowsShown(const ComparisonReport& report) {
  if (!HasCategories(report)) return 0;
  size_t count = report.categories->changes.mutations.size();
  return report.limit == 0 ? count : std::min(count, report.limit);
}

std::string CategoryLabel(const ComparisonReport& report, uint64_t category, bool short_names) {
  for (const ComparedPeriod* period : {&report.after, &report.before}) {
    for (const analyzer::PeriodProfile* run : period->runs) {
      auto found = run->categories().find(category);
      if (found != run->categories().end()) return analyzer::DescribeCategory(found->second, *report.names, short_names);
    }
  }
  return "0x" + FormatHex16(category);
}

std::vector<std::string> CategoryRowCells(const ComparisonReport& report, size_t rank) {
  const FunctionChange& change = report.categories->changes.mutations[rank];
  return {std::to_string(rank + 1),
          CategoryLabel(report, change.name_hash, true),
          analyzer::MutationKindName(change.kind),
          std::to_string(change.calls_before) + "/" + std::to_string(change.calls_after),
          Median(change.median_ms_before, change.ticks_before, false) + " -> " +
              Median(change.median_ms_after, change.ticks_after, false),
          change.ratio > 0 ? "x" + FormatFixed(change.ratio, change.ratio < 10 ? 2 : 1) : "-",
          PValue(change),
          Signed(change.contribution_ms_per_s, 1)};
}

std::vector<std::string> PrecursorLines(const ComparisonReport& report, size_t rank) {
  std::vector<std::string> lines;
  const FunctionChange& change = report.categories->changes.mutations[rank];
  auto found = report.categories->precursors.find(change.name_hash);
  if (found == report.categories->precursors.end()) return lines;
  for (const analyzer::Precursor& precursor : found->second) {
    lines.push_back("precursor " + CategoryLabel(report, precursor.category, true) + "  (similarity " +
                    FormatFixed(precursor.similarity, 2) + ", share of flows " +
                    FormatFixed(precursor.share_before * 100, 0) + " % -> " +
                    FormatFixed(precursor.share_after * 100, 0) + " %)");
  }
  return lines;
}

std::string CategorySummary(const ComparisonReport& report) {
  const analyzer::CategoryComparison& categories = *report.categories;
  const analyzer::PeriodComparison& changes = categories.changes;
  std::string text = "categories: " + MutationCounts(changes) + " among " +
                     std::to_string(changes.functions_compared) + " request categories, " +
                     std::to_string(changes.functions_tested) + " tested (>= " +
                     std::to_string(report.settings.min_ticks) + " flows a period), of " +
                     std::to_string(categories.flows_before) + " flows before and " +
                     std::to_string(categories.flows_after) + " after";
  if (changes.baseline_runs >= 2) {
    text += "; " + std::to_string(changes.within_baseline_noise) + " more within the differences between the " +
            std::to_string(changes.baseline_runs) + " baseline runs";
  }
  return text;
}

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
      "compare: " + MutationCounts(comparison) + " among " +
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
  if (HasCategories(report)) {
    size_t categories_shown = CategoryRowsShown(report);
    if (categories_shown > 0) {
      Table table = MutationTable("REQUEST CATEGORY", 70, "FLOWS", "MEDIAN LATENCY BEFORE -> AFTER");
      for (size_t rank = 0; rank < categories_shown; ++rank) table.AddRow(CategoryRowCells(report, rank));
      // The precursors go under their row.
      std::vector<std::string> lines;
      std::string rendered = table.Render();
      for (size_t start = 0; start < rendered.size();) {
        size_t end = rendered.find('\n', start);
        lines.push_back(rendered.substr(start, end - start + 1));
        start = end + 1;
      }
      text += lines[0];
      for (size_t rank = 0; rank < categories_shown && rank + 1 < lines.size(); ++rank) {
        text += lines[rank + 1];
        for (const std::string& line : PrecursorLines(report, rank)) text += "      " + line + "\n";
      }
    }
    text += CategorySummary(report) + "\n\n";
  }
  size_t shown = MutationRowsShown(report);
  if (shown > 0) {
    Table table = MutationTable("FUNCTION", 60, "TICKS", "MEDIAN BEFORE -> AFTER");
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
    json.Field("kind", KindJson(change.kind));
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
    TestJson(json, change);
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
  if (HasCategories(report)) {
    const analyzer::CategoryComparison& categories = *report.categories;
    json.Key("categories");
    json.BeginObject();
    json.Field("flows_before", categories.flows_before);
    json.Field("flows_after", categories.flows_after);
    json.Field("categories_compared", uint64_t(categories.changes.functions_compared));
    json.Field("categories_tested", uint64_t(categories.changes.functions_tested));
    json.Field("within_baseline_noise", uint64_t(categories.changes.within_baseline_noise));
    json.Field("mutation_count", uint64_t(categories.changes.mutations.size()));
    json.Key("mutations");
    json.BeginArray();
    for (size_t rank = 0; rank < CategoryRowsShown(report); ++rank) {
      const FunctionChange& change = categories.changes.mutations[rank];
      json.BeginObject();
      json.Field("rank", uint64_t(rank + 1));
      json.Field("category", FormatHex16(change.name_hash));
      json.Field("structure", CategoryLabel(report, change.name_hash, false));
      json.Field("display", CategoryLabel(report, change.name_hash, true));
      json.Field("kind", KindJson(change.kind));
      json.Field("flows_before", change.calls_before);
      json.Field("flows_after", change.calls_after);
      json.Field("flows_per_s_before", change.calls_per_s_before);
      json.Field("flows_per_s_after", change.calls_per_s_after);
      MedianJson(json, "median_ms_before", change.median_ms_before, change.ticks_before);
      MedianJson(json, "median_ms_after", change.median_ms_after, change.ticks_after);
      TestJson(json, change);
      json.Key("precursors");
      json.BeginArray();
      auto found = categories.precursors.find(change.name_hash);
      if (found != categories.precursors.end()) {
        for (const analyzer::Precursor& precursor : found->second) {
          json.BeginObject();
          json.Field("category", FormatHex16(precursor.category));
          json.Field("display", CategoryLabel(report, precursor.category, true));
          json.Field("similarity", precursor.similarity);
          json.Field("share_before", precursor.share_before);
          json.Field("share_after", precursor.share_after);
          json.EndObject();
        }
      }
      json.EndArray();
      json.EndObject();
    }
    json.EndArray();
    json.EndObject();
  }
  json.EndObject();
  return json.str() + "\n";
}

}  // namespace limpwatch::cli
