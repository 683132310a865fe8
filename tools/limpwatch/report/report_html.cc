#include "report_html.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "html_text.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "svg_chart.h"

namespace limpwatch::report {
namespace {

constexpr int kChartWidth = 360;
constexpr int kChartHeight = 130;
constexpr int kMaxTimeLabels = 5;

// Styles only: nothing is fetched, nothing runs.
constexpr const char* kStyle =
    "body{font:14px/1.4 sans-serif;margin:1.5em;color:#222;max-width:1200px}"
    "h2{margin-top:1.6em;border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse;margin:.5em 0}"
    "th,td{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}"
    "th{background:#f3f3f3}td.number{text-align:right}"
    "ol{margin:0;padding-left:1.4em}"
    ".meta{color:#555}.problems{color:#8a4b00}.limping{color:#b00020;font-weight:bold}"
    "pre{background:#f6f6f6;padding:.6em;overflow-x:auto}"
    ".charts{display:flex;flex-wrap:wrap;gap:8px}"
    "figure{margin:0}figcaption{font-size:12px;width:360px}"
    ".key{display:inline-block;width:18px;height:10px;margin:0 4px 0 12px;vertical-align:middle}"
    ".key.score{border-top:2px solid #1f5fa8;height:0}"
    ".key.threshold{border-top:2px dashed #c62828;height:0}"
    ".key.indicted{background:#f4a6a6}.key.warmup{background:#ddd}.key.marked{background:#ffe08a}"
    ".key.alarm{border-left:3px solid #8b0000;width:0;height:12px}"
    "svg.chart .plot{fill:#fff;stroke:#bbb}"
    "svg.chart .band.indicted{fill:#f4a6a6;fill-opacity:.6}"
    "svg.chart .band.warmup{fill:#ddd;fill-opacity:.7}"
    "svg.chart .band.marked{fill:#ffe08a;fill-opacity:.6}"
    "svg.chart .grid{stroke:#eee}svg.chart .tick{stroke:#999}"
    "svg.chart text{font-size:10px;fill:#555}"
    "svg.chart .ylabel{text-anchor:end}svg.chart .xlabel{text-anchor:middle}"
    "svg.chart .xlabel.end{text-anchor:end}svg.chart .xlabel.start{text-anchor:start}"
    "svg.chart .line{fill:none;stroke-width:1.2}"
    "svg.chart .line.score{stroke:#1f5fa8}"
    "svg.chart .line.threshold{stroke:#c62828;stroke-dasharray:4 3}"
    "svg.chart .mark.alarm{fill:#8b0000;fill-opacity:.55}"
    "svg.chart .mark.alarm.fired{fill-opacity:1}";

struct MetricText {
  analyzer::ComparedMetric metric;
  const char* what;
};

constexpr MetricText kMetricTexts[] = {
    {analyzer::ComparedMetric::kSamples, "CPU samples per function (profile)"},
    {analyzer::ComparedMetric::kCount, "calls per function (profile)"},
    {analyzer::ComparedMetric::kTime, "self time per function (profile)"},
    {analyzer::ComparedMetric::kDread, "storage reads: service time per call"},
    {analyzer::ComparedMetric::kDwrite, "storage writes: service time per call"},
    {analyzer::ComparedMetric::kNsread, "server socket reads: time per call"},
    {analyzer::ComparedMetric::kNcread, "client socket reads: time per call"},
    {analyzer::ComparedMetric::kRoundTrip, "TCP round trip"},
    {analyzer::ComparedMetric::kLoss, "time lost to lost packets"},
    {analyzer::ComparedMetric::kCpuWait, "waiting for a CPU"},
    {analyzer::ComparedMetric::kDsync, "file syncs: time per call"},
    {analyzer::ComparedMetric::kMajorFaults, "major page faults"},
};

const char* MetricWhat(analyzer::ComparedMetric metric) {
  for (const MetricText& text : kMetricTexts) {
    if (text.metric == metric) return text.what;
  }
  return "";
}

std::string Duration(uint64_t ms) {
  uint64_t seconds = (ms + 500) / 1000;
  if (seconds < 120) return std::to_string(seconds) + " s";
  if (seconds < 7200) return std::to_string(seconds / 60) + " min " + std::to_string(seconds % 60) + " s";
  return std::to_string(seconds / 3600) + " h " + std::to_string(seconds % 3600 / 60) + " min";
}

std::string Seconds(uint64_t ms) { return ShortNumber(double(ms) / 1000.0) + " s"; }

// Time labels at a round step, at most kMaxTimeLabels of them.
std::vector<ChartTick> TimeTicks(uint64_t from_ms, uint64_t to_ms) {
  static constexpr uint64_t kSteps[] = {1,   2,   5,    10,   15,   30,    60,    120,   300,
                                        600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400};
  std::vector<ChartTick> ticks;
  if (to_ms <= from_ms) return ticks;
  uint64_t step_ms = kSteps[std::size(kSteps) - 1] * 1000;
  for (uint64_t step : kSteps) {
    if ((to_ms - from_ms) / (step * 1000) + 1 <= kMaxTimeLabels) {
      step_ms = step * 1000;
      break;
    }
  }
  for (uint64_t at = (from_ms + step_ms - 1) / step_ms * step_ms; at <= to_ms; at += step_ms) {
    std::string label = UtcTimeOfDay(at);
    if (step_ms >= 60000) label = label.substr(0, 5);  // HH:MM
    ticks.push_back({double(at), label});
  }
  return ticks;
}

std::string AlarmMetrics(const analyzer::Alarm& alarm) {
  std::string text;
  for (const std::string& metric : alarm.metrics) text += (text.empty() ? "" : ", ") + metric;
  return text;
}

// A mark's tooltip: short, as every chart of the server repeats it; the
// alarms table has the rest.
std::string AlarmSummary(const analyzer::Alarm& alarm, size_t number) {
  std::string text = "alarm " + std::to_string(number) + " (" + analyzer::AlarmKindName(alarm.kind) + ") at " +
                     UtcTimeOfDay(alarm.time_unix_ms) + " UTC: " + alarm.server + " limps on " +
                     analyzer::ResourceName(alarm.resource);
  std::string metrics = AlarmMetrics(alarm);
  if (!metrics.empty()) text += " (" + metrics + ")";
  return text;
}

// Spans less than a pixel apart drawn as one: the chart could not show the
// gap, and each band costs the page its markup.
std::vector<TimeSpan> JoinedWithinPixel(const std::vector<TimeSpan>& spans, double ms_per_pixel) {
  std::vector<TimeSpan> joined;
  for (const TimeSpan& span : spans) {
    if (!joined.empty() && double(span.from_ms) - double(joined.back().to_ms) < ms_per_pixel) {
      joined.back().to_ms = std::max(joined.back().to_ms, span.to_ms);
    } else {
      joined.push_back(span);
    }
  }
  return joined;
}

std::string ServerId(size_t cluster, size_t server) {
  return "c" + std::to_string(cluster) + "-s" + std::to_string(server);
}

class PageWriter {
 public:
  explicit PageWriter(const ReportPage& page) : page_(page) {}

  std::string Render();

 private:
  void Contents();
  void Cluster(size_t index, const ClusterReport& cluster);
  void Settings(const ClusterReport& cluster);
  void ServerTable(size_t index, const ClusterReport& cluster);
  void AlarmTable(size_t index, const ClusterReport& cluster);
  void Legend(const ClusterReport& cluster);
  void ServerCharts(size_t index, size_t server_index, const ClusterReport& cluster);
  void MetricChart(const ClusterReport& cluster, const ServerTrack& server, const MetricTrack& track);
  std::string ServerLink(size_t index, const ClusterReport& cluster, const std::string& name) const;

  const ReportPage& page_;
  std::string out_;
};

std::string PageWriter::Render() {
  out_ = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><title>" + EscapeHtml(page_.title) +
         "</title><style>" + kStyle + "</style></head><body>\n<h1>" + EscapeHtml(page_.title) + "</h1>\n";
  size_t recordings = 0;
  for (const ClusterReport& cluster : page_.clusters) recordings += cluster.recordings.size();
  out_ += "<p class=\"meta\">Made by limpwatch from " + std::to_string(recordings) +
          " recording(s), replayed through the analysis the servers run online (as limpwatch diagnose does). "
          "Times are UTC.</p>\n";
  if (!page_.preface.empty()) out_ += "<pre>" + EscapeHtml(page_.preface) + "</pre>\n";
  if (page_.clusters.size() > 1) Contents();
  for (size_t index = 0; index < page_.clusters.size(); ++index) Cluster(index, page_.clusters[index]);
  out_ += "</body></html>\n";
  return std::move(out_);
}

void PageWriter::Contents() {
  out_ += "<h2>Contents</h2>\n<table><tr><th>run</th><th>servers</th><th>alarms</th></tr>\n";
  for (size_t index = 0; index < page_.clusters.size(); ++index) {
    const ClusterReport& cluster = page_.clusters[index];
    std::string alarms;
    for (const analyzer::Alarm& alarm : cluster.alarms) {
      alarms += (alarms.empty() ? "" : "; ") + alarm.server + " " + analyzer::ResourceName(alarm.resource) + " " +
                UtcTimeOfDay(alarm.time_unix_ms);
    }
    out_ += "<tr><td><a href=\"#c" + std::to_string(index) + "\">" + EscapeHtml(cluster.title) +
            "</a></td><td class=\"number\">" + std::to_string(cluster.servers.size()) + "</td><td>" +
            EscapeHtml(alarms.empty() ? "none" : alarms) + "</td></tr>\n";
  }
  out_ += "</table>\n";
}

void PageWriter::Cluster(size_t index, const ClusterReport& cluster) {
  out_ += "<section id=\"c" + std::to_string(index) + "\">\n<h2>" +
          EscapeHtml(cluster.title.empty() ? std::string("Summary") : cluster.title) + "</h2>\n";
  if (cluster.servers.empty()) {
    out_ += "<p>No recording could be read.</p>\n";
    for (const std::string& note : cluster.notes) out_ += "<p class=\"meta\">" + EscapeHtml(note) + "</p>\n";
    for (const std::string& problem : cluster.problems) out_ += "<p class=\"problems\">" + EscapeHtml(problem) + "</p>\n";
    out_ += "</section>\n";
    return;
  }
  Settings(cluster);
  ServerTable(index, cluster);
  AlarmTable(index, cluster);
  Legend(cluster);
  for (size_t server = 0; server < cluster.servers.size(); ++server) ServerCharts(index, server, cluster);
  out_ += "</section>\n";
}

void PageWriter::Settings(const ClusterReport& cluster) {
  std::string text = std::to_string(cluster.servers.size()) + " servers recorded from " +
                     UtcDateTime(cluster.first_ms) + " to " + UtcDateTime(cluster.last_ms) + " UTC (" +
                     Duration(cluster.last_ms - cluster.first_ms) + "); " + std::to_string(cluster.windows) +
                     " windows of " + Seconds(uint64_t(cluster.window_ticks) * cluster.tick_ms) + " every " +
                     Seconds(uint64_t(cluster.shift_ticks) * cluster.tick_ms) + "; " +
                     analyzer::DecisionRuleName(cluster.rule) + " rule";
  if (cluster.rule == analyzer::DecisionRule::kCalibrated) {
    text += " (at most one false alarm per " + ShortNumber(cluster.server_days_per_false_alarm) + " server-days)";
  }
  text += "; thresholds: " + (cluster.thresholds_path.empty() ? std::string("untrained") : cluster.thresholds_path);
  text += "; manifest: " + (cluster.manifest_path.empty() ? std::string("none") : cluster.manifest_path) + ".";
  out_ += "<p class=\"meta\">" + EscapeHtml(text) + "</p>\n<p class=\"meta\">Recordings:";
  for (const std::string& path : cluster.recordings) out_ += " " + EscapeHtml(path);
  out_ += "</p>\n";
  for (const MarkedSpan& marked : cluster.marked) {
    out_ += "<p class=\"meta\">" +
            EscapeHtml(marked.label + (marked.server.empty() ? std::string() : " on " + marked.server) + ": " +
                       UtcDateTime(marked.span.from_ms) + " to " + UtcTimeOfDay(marked.span.to_ms) + " UTC") +
            "</p>\n";
  }
  for (const std::string& note : cluster.notes) out_ += "<p class=\"meta\">" + EscapeHtml(note) + "</p>\n";
  if (!cluster.problems.empty()) {
    out_ += "<ul class=\"problems\">";
    for (const std::string& problem : cluster.problems) out_ += "<li>" + EscapeHtml(problem) + "</li>";
    out_ += "</ul>\n";
  }
}

std::string PageWriter::ServerLink(size_t index, const ClusterReport& cluster, const std::string& name) const {
  for (size_t server = 0; server < cluster.servers.size(); ++server) {
    if (cluster.servers[server].name == name) {
      return "<a href=\"#" + ServerId(index, server) + "\">" + EscapeHtml(name) + "</a>";
    }
  }
  return EscapeHtml(name);
}

void PageWriter::ServerTable(size_t index, const ClusterReport& cluster) {
  out_ += "<table class=\"servers\"><tr><th>server</th><th>verdict</th><th>recorded (UTC)</th><th>ticks</th>"
          "<th>windows compared</th><th>windows indicted</th><th>alarms</th></tr>\n";
  for (const ServerTrack& server : cluster.servers) {
    size_t alarms = std::count_if(cluster.alarms.begin(), cluster.alarms.end(),
                                  [&](const analyzer::Alarm& alarm) { return alarm.server == server.name; });
    std::string verdict = server.windows == 0 ? "not compared"
                          : (server.indicted_windows > 0 || alarms > 0) ? "limping"
                                                                        : "healthy";
    out_ += "<tr><td>" + ServerLink(index, cluster, server.name) + "</td><td" +
            (verdict == "limping" ? " class=\"limping\"" : "") + ">" + verdict + "</td><td>" +
            EscapeHtml(UtcTimeOfDay(server.first_ms) + " to " + UtcTimeOfDay(server.last_ms)) +
            "</td><td class=\"number\">" + std::to_string(server.ticks) + "</td><td class=\"number\">" +
            std::to_string(server.windows) + "</td><td class=\"number\">" + std::to_string(server.indicted_windows) +
            "</td><td class=\"number\">" + std::to_string(alarms) + "</td></tr>\n";
  }
  out_ += "</table>\n";
}

void PageWriter::AlarmTable(size_t index, const ClusterReport& cluster) {
  if (cluster.alarms.empty()) {
    out_ += "<p>No alarm.</p>\n";
    return;
  }
  out_ += "<table class=\"alarms\"><tr><th>#</th><th>time (UTC)</th><th>server</th><th>kind</th><th>resource</th>"
          "<th>metrics</th><th>score</th><th>top functions</th><th>why</th></tr>\n";
  for (size_t number = 0; number < cluster.alarms.size(); ++number) {
    const analyzer::Alarm& alarm = cluster.alarms[number];
    std::string metrics;
    for (const analyzer::AlarmEvidence& evidence : alarm.evidence) {
      metrics += (metrics.empty() ? "" : ", ") + evidence.metric + " x" + ShortNumber(evidence.ratio);
    }
    if (metrics.empty()) metrics = AlarmMetrics(alarm);
    out_ += "<tr class=\"alarm\"><td class=\"number\">" + std::to_string(number + 1) + "</td><td>" +
            EscapeHtml(UtcDateTime(alarm.time_unix_ms)) + "</td><td>" + ServerLink(index, cluster, alarm.server) +
            "</td><td>" + analyzer::AlarmKindName(alarm.kind) + "</td><td>" +
            analyzer::ResourceName(alarm.resource) + "</td><td>" + EscapeHtml(metrics) + "</td><td>" +
            EscapeHtml(ShortNumber(alarm.score) + " > " + ShortNumber(alarm.threshold)) + "</td><td>";
    if (alarm.top_functions.empty()) {
      out_ += "-";
    } else {
      out_ += "<ol class=\"functions\">";
      for (const analyzer::RootCauseFunction& function : alarm.top_functions) {
        out_ += "<li>" + EscapeHtml(function.name) + " <span class=\"meta\">(" +
                analyzer::ResourceName(function.resource) + ", " + EscapeHtml(ShortNumber(function.score)) +
                ")</span></li>";
      }
      out_ += "</ol>";
    }
    out_ += "</td><td>" + EscapeHtml(alarm.reason.empty() ? std::string("-") : alarm.reason) + "</td></tr>\n";
  }
  out_ += "</table>\n";
}

void PageWriter::Legend(const ClusterReport& cluster) {
  bool calibrated = cluster.rule == analyzer::DecisionRule::kCalibrated;
  out_ += "<p class=\"meta\">Each chart: one metric of one server, one point per window at its end.";
  out_ += calibrated ? " The score is the evidence (nats) of the metric's strongest chart that the server is slower "
                       "than its peers; the threshold follows from the false-alarm budget."
                     : " The score is the server's distance to its peers (profiles) or its service time over "
                       "their median; the threshold is trained or the default rule's.";
  out_ += " The axis is linear from 0 unless the chart says log scale (the scores span decades); on a log scale, "
          "0 and values under the axis are drawn on it.</p>\n<p class=\"meta\">"
          "<span class=\"key score\"></span>score<span class=\"key threshold\"></span>threshold"
          "<span class=\"key indicted\"></span>windows the server was indicted in"
          "<span class=\"key alarm\"></span>alarm<span class=\"key warmup\"></span>warm-up (never counted)";
  if (!cluster.marked.empty()) out_ += "<span class=\"key marked\"></span>" + EscapeHtml(cluster.marked.front().label);
  out_ += "</p>\n";
}

void PageWriter::ServerCharts(size_t index, size_t server_index, const ClusterReport& cluster) {
  const ServerTrack& server = cluster.servers[server_index];
  out_ += "<div class=\"server\" id=\"" + ServerId(index, server_index) + "\"><h3>" + EscapeHtml(server.name) +
          "</h3>\n";
  if (server.metrics.empty()) {
    out_ += "<p>Never compared with its peers in these recordings (a comparison needs 3 servers recording at "
            "once, past their first windows).</p></div>\n";
    return;
  }
  out_ += "<div class=\"charts\">\n";
  for (const MetricTrack& track : server.metrics) MetricChart(cluster, server, track);
  out_ += "</div></div>\n";
}

void PageWriter::MetricChart(const ClusterReport& cluster, const ServerTrack& server, const MetricTrack& track) {
  const char* metric = analyzer::ComparedMetricName(track.metric);
  Chart chart;
  chart.width = kChartWidth;
  chart.height = kChartHeight;
  chart.x_from = double(cluster.first_ms);
  chart.x_to = double(cluster.last_ms);
  chart.x_ticks = TimeTicks(cluster.first_ms, cluster.last_ms);
  chart.description = server.name + ": " + metric + " score and threshold over time";

  for (const MarkedSpan& marked : cluster.marked) {
    chart.bands.push_back({double(marked.span.from_ms), double(marked.span.to_ms), "marked",
                           marked.label + (marked.server.empty() ? std::string() : " on " + marked.server) + ", " +
                               UtcTimeOfDay(marked.span.from_ms) + " to " + UtcTimeOfDay(marked.span.to_ms)});
  }
  double ms_per_pixel = double(cluster.last_ms - cluster.first_ms) / PlotColumns(kChartWidth);
  for (const TimeSpan& span : JoinedWithinPixel(server.warming_up, ms_per_pixel)) {
    chart.bands.push_back({double(span.from_ms), double(span.to_ms), "warmup",
                           "warm-up " + UtcTimeOfDay(span.from_ms) + " to " + UtcTimeOfDay(span.to_ms)});
  }
  for (const TimeSpan& span : JoinedWithinPixel(server.indicted, ms_per_pixel)) {
    chart.bands.push_back({double(span.from_ms), double(span.to_ms), "indicted",
                           "indicted " + UtcTimeOfDay(span.from_ms) + " to " + UtcTimeOfDay(span.to_ms)});
  }

  ChartLine score{{}, {}, "score"}, threshold{{}, {}, "threshold"};
  const ScorePoint* peak = nullptr;
  uint64_t previous_window = 0;
  for (const ScorePoint& point : track.points) {
    // A window the server was not compared in is no data, not a zero.
    if (!score.x.empty() && point.window > previous_window + 1) {
      for (ChartLine* line : {&score, &threshold}) {
        line->x.push_back(line->x.back());
        line->y.push_back(std::numeric_limits<double>::quiet_NaN());
      }
    }
    previous_window = point.window;
    score.x.push_back(double(point.end_ms));
    score.y.push_back(point.score);
    threshold.x.push_back(double(point.end_ms));
    threshold.y.push_back(point.threshold);
    if (peak == nullptr || point.score > peak->score) peak = &point;
  }
  chart.lines = {threshold, score};

  for (size_t number = 0; number < cluster.alarms.size(); ++number) {
    const analyzer::Alarm& alarm = cluster.alarms[number];
    if (alarm.server != server.name) continue;
    bool fired = std::find(alarm.metrics.begin(), alarm.metrics.end(), metric) != alarm.metrics.end();
    chart.marks.push_back({double(alarm.time_unix_ms), fired ? "alarm fired" : "alarm", AlarmSummary(alarm, number + 1)});
  }

  YAxis axis = ChooseYAxis(chart.lines);
  std::string caption = "<b>" + EscapeHtml(metric) + "</b> " + EscapeHtml(MetricWhat(track.metric));
  if (peak != nullptr) {
    std::string notes = "0 in every window";
    if (peak->score > 0) {
      notes = "peak " + ShortNumber(peak->score) + " at " + UtcTimeOfDay(peak->end_ms);
      if (peak->ratio > 0) notes += " (x" + ShortNumber(peak->ratio) + " its peers)";
    }
    notes += "; over the threshold in " + std::to_string(track.anomalous_windows) + " of " +
             std::to_string(track.points.size()) + " windows";
    caption += " · " + EscapeHtml(notes);
  }
  if (axis.scale == YScale::kLog) caption += " · <b>log scale</b>";
  out_ += "<figure><figcaption>" + caption + "</figcaption>" + RenderSvgChart(chart, axis) + "</figure>\n";
}

}  // namespace

std::string RenderReportHtml(const ReportPage& page) { return PageWriter(page).Render(); }

namespace {

std::string PartialPath(const std::string& path) { return path + ".partial-" + std::to_string(getpid()); }

}  // namespace

bool CanWriteReportFile(const std::string& path, std::string* error) {
  std::string partial = PartialPath(path);
  FILE* file = std::fopen(partial.c_str(), "w");
  if (file == nullptr) {
    *error = path + ": cannot write: " + std::strerror(errno);
    return false;
  }
  std::fclose(file);
  std::remove(partial.c_str());
  return true;
}

bool WriteReportFile(const std::string& path, const std::string& html, std::string* error) {
  std::string partial = PartialPath(path);
  FILE* file = std::fopen(partial.c_str(), "w");
  if (file == nullptr) {
    *error = path + ": cannot write: " + std::strerror(errno);
    return false;
  }
  bool written = std::fwrite(html.data(), 1, html.size(), file) == html.size();
  int saved = errno;
  if (std::fclose(file) != 0 && written) {
    written = false;
    saved = errno;
  }
  if (!written || std::rename(partial.c_str(), path.c_str()) != 0) {
    if (written) saved = errno;
    std::remove(partial.c_str());
    *error = path + ": cannot write: " + std::strerror(saved);
    return false;
  }
  return true;
}

}  // namespace limpwatch::report
