#include "compare_output.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "format.h"
#include "html_text.h"
#include "recording_scan.h"
#include "svg_chart.h"

namespace limpwatch::cli {
namespace {

using analyzer::FunctionChange;
using analyzer::PeriodProfile;
using report::EscapeHtml;

constexpr int kChartWidth = 420;
constexpr int kChartHeight = 150;

// Styles only: nothing is fetched, nothing runs.
constexpr const char* kStyle =
    "body{font:14px/1.4 sans-serif;margin:1.5em;color:#222;max-width:1300px}"
    "h2{margin-top:1.6em;border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse;margin:.5em 0}"
    "th,td{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}"
    "th{background:#f3f3f3}td.number{text-align:right}"
    ".meta{color:#555}ul.recordings{color:#555;margin:.2em 0}"
    ".charts{display:flex;flex-wrap:wrap;gap:10px}"
    "figure{margin:0}figcaption{font-size:12px;width:420px}"
    ".key{display:inline-block;width:18px;height:0;margin:0 4px 0 12px;vertical-align:middle}"
    ".key.before{border-top:1.5px solid #1f5fa8}.key.after{border-top:2.5px solid #c62828}"
    "svg.chart .plot{fill:#fff;stroke:#bbb}"
    "svg.chart .grid{stroke:#eee}svg.chart .tick{stroke:#999}"
    "svg.chart text{font-size:10px;fill:#555}"
    "svg.chart .ylabel{text-anchor:end}svg.chart .xlabel{text-anchor:middle}"
    "svg.chart .xlabel.end{text-anchor:end}svg.chart .xlabel.start{text-anchor:start}"
    "svg.chart .line{fill:none}"
    "svg.chart .line.before{stroke:#1f5fa8;stroke-width:1.2;stroke-opacity:.75}"
    "svg.chart .line.after{stroke:#c62828;stroke-width:2}";

const std::vector<double>* SampleOf(const PeriodProfile& period, const FunctionChange& change) {
  auto found = period.functions().find(change.name_hash);
  if (found == period.functions().end()) return nullptr;
  const std::vector<double>& sample = change.per_tick ? found->second.ms_without_calls : found->second.ms_per_call;
  return sample.empty() ? nullptr : &sample;
}

// The empirical distribution function of `sample` as a staircase over
// log10 of the time; times at or under `floor_ms` are drawn at it.
report::ChartLine Staircase(std::vector<double> sample, double floor_ms, const char* css_class) {
  std::sort(sample.begin(), sample.end());
  report::ChartLine line;
  line.css_class = css_class;
  const double count = double(sample.size());
  for (size_t index = 0; index < sample.size(); ++index) {
    double x = std::log10(std::max(sample[index], floor_ms));
    line.x.push_back(x);
    line.y.push_back(double(index) / count);
    line.x.push_back(x);
    line.y.push_back(double(index + 1) / count);
  }
  return line;
}

// Ticks at whole decades when the range holds two or more, else at its two
// ends and their geometric middle.
std::vector<report::ChartTick> LogTicks(double from, double to, bool per_tick) {
  auto label = [per_tick](double log_ms) {
    return FormatDuration(std::pow(10.0, log_ms) * 1e6) + (per_tick ? "/tick" : "");
  };
  std::vector<report::ChartTick> ticks;
  for (double decade = std::ceil(from); decade <= to; decade += 1.0) ticks.push_back({decade, label(decade)});
  if (ticks.size() >= 2) return ticks;
  ticks.clear();
  for (double at : {from, (from + to) / 2, to}) ticks.push_back({at, label(at)});
  return ticks;
}

std::string DistributionFigure(const ComparisonReport& report, size_t rank) {
  const FunctionChange& change = report.comparison->mutations[rank];
  std::vector<const std::vector<double>*> before;
  for (const PeriodProfile* run : report.before.runs) {
    if (const std::vector<double>* sample = SampleOf(*run, change)) before.push_back(sample);
  }
  const std::vector<double>* after = report.after.runs.empty() ? nullptr : SampleOf(*report.after.runs.front(), change);
  std::vector<const std::vector<double>*> all = before;
  if (after != nullptr) all.push_back(after);

  double low = 0, high = 0;
  for (const std::vector<double>* sample : all) {
    for (double value : *sample) {
      if (value <= 0) continue;
      low = low == 0 ? value : std::min(low, value);
      high = std::max(high, value);
    }
  }
  std::string caption = "#" + std::to_string(rank + 1) + " " + EscapeHtml(FunctionLabel(*report.names, change.name_hash)) +
                        ": " + analyzer::MutationKindName(change.kind);
  if (low == 0) return "<figure><figcaption>" + caption + ": no tick with time</figcaption></figure>\n";

  report::Chart chart;
  chart.width = kChartWidth;
  chart.height = kChartHeight;
  // A decade's twentieth on each side, and at least that much range.
  double from = std::log10(low), to = std::log10(high);
  double pad = std::max(0.05, (to - from) / 20);
  chart.x_from = from - pad;
  chart.x_to = to + pad;
  chart.x_ticks = LogTicks(chart.x_from, chart.x_to, change.per_tick);
  for (const std::vector<double>* sample : before) chart.lines.push_back(Staircase(*sample, low, "before"));
  if (after != nullptr) chart.lines.push_back(Staircase(*after, low, "after"));
  chart.description = "Share of ticks (0 to 1) whose time " + std::string(change.per_tick ? "per tick" : "per call") +
                      " is at most x (log scale), before (each baseline run) and after";
  report::YAxis axis{report::YScale::kLinear, 0.0, 1.0};
  caption += ", " + std::to_string(change.ticks_before) + " ticks before in " + std::to_string(before.size()) +
             (before.size() == 1 ? " run" : " runs") + ", " + std::to_string(change.ticks_after) + " after; " +
             "share of ticks whose time " + (change.per_tick ? "per tick" : "per call") + " is at most x";
  return "<figure><figcaption>" + caption + "</figcaption>" + report::RenderSvgChart(chart, axis) + "</figure>\n";
}

std::string RecordingList(const std::string& title, const std::vector<std::string>& paths) {
  std::string out = "<p class=\"meta\">" + title + ":</p><ul class=\"recordings\">";
  for (const std::string& path : paths) out += "<li>" + EscapeHtml(path) + "</li>";
  return out + "</ul>\n";
}

}  // namespace

std::string RenderComparisonHtml(const ComparisonReport& report) {
  std::string out = std::string("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>") +
                    "<title>limpwatch compare</title><style>" + kStyle +
                    "</style></head><body>\n<h1>limpwatch compare</h1>\n";
  out += "<p>" + EscapeHtml(ComparisonSummary(report)) + "</p>\n";
  if (report.split_unix_ms != 0) {
    out += "<p class=\"meta\">Split at " + EscapeHtml(report::UtcDateTime(report.split_unix_ms)) + " UTC.</p>\n";
    out += RecordingList("Recordings", report.before.recordings);
  } else {
    out += RecordingList("Before", report.before.recordings) + RecordingList("After", report.after.recordings);
  }

  size_t shown = MutationRowsShown(report);
  if (shown == 0) return out + "</body></html>\n";
  out += "<h2>Mutations</h2>\n<table><tr><th>#</th><th>function</th><th>kind</th><th>ticks before/after</th>"
         "<th>median before &#8594; after</th><th>ratio</th><th>p</th><th>ms/s</th></tr>\n";
  for (size_t rank = 0; rank < shown; ++rank) {
    std::vector<std::string> cells = MutationRowCells(report, rank);
    out += "<tr>";
    for (size_t column = 0; column < cells.size(); ++column) {
      bool number = column == 0 || column >= 3;
      out += std::string(number ? "<td class=\"number\">" : "<td>") + EscapeHtml(cells[column]) + "</td>";
    }
    out += "</tr>\n";
  }
  out += "</table>\n<h2>Distributions</h2>\n<p class=\"meta\">Per mutation, the share of ticks whose time per call "
         "(per tick for a feature without calls) is at most x, x on a log scale:"
         "<span class=\"key before\"></span>before, one line per baseline run"
         "<span class=\"key after\"></span>after. A response-time mutation moves the red line clear of every "
         "blue one.</p>\n<div class=\"charts\">\n";
  for (size_t rank = 0; rank < shown; ++rank) out += DistributionFigure(report, rank);
  return out + "</div>\n</body></html>\n";
}

}  // namespace limpwatch::cli
