#include "serve/dashboard_page.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "format.h"
#include "limpwatch/analyzer/io_metrics.h"
#include "limpwatch/analyzer/thresholds.h"
#include "report/html_text.h"

namespace limpwatch::cli::serve {
namespace {

using report::EscapeHtml;

constexpr int kChartWidth = 132;
constexpr int kChartHeight = 30;
// The chart's top: twice the threshold; a score beyond is drawn at the top.
constexpr double kChartCeiling = 2.0;
constexpr size_t kTopFunctions = 20;

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:1em 2em;color:#222}"
    "table{border-collapse:collapse;margin-bottom:1.5em}"
    "th,td{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:middle}"
    "th{background:#f2f2f2;font-weight:600}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}"
    "tr.limping td{background:#fde8e8}"
    ".state-limping{color:#b00020;font-weight:700}"
    ".state-ok{color:#1b7f3b}"
    ".muted{color:#777}"
    "svg{display:block}";

std::string Page(const std::string& title, const std::string& body, bool refresh) {
  std::string head = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  if (refresh) head += "<meta http-equiv=\"refresh\" content=\"" + std::to_string(kDashboardRefreshSeconds) + "\">";
  return head + "<title>" + EscapeHtml(title) + "</title><style>" + kStyle + "</style></head>\n<body>\n" + body +
         "</body></html>\n";
}

std::string Number(double value, int decimals) { return FormatFixed(value, decimals); }

// The metrics in the analyzer's order, then any a newer writer added.
std::vector<std::string> OrderedMetrics(const std::set<std::string>& seen) {
  std::vector<std::string> ordered;
  for (int index = 0; index < analyzer::kComparedMetricCount; ++index) {
    std::string name = analyzer::ComparedMetricName(static_cast<analyzer::ComparedMetric>(index));
    if (seen.count(name)) ordered.push_back(name);
  }
  for (const std::string& name : seen) {
    if (std::find(ordered.begin(), ordered.end(), name) == ordered.end()) ordered.push_back(name);
  }
  return ordered;
}

double ShareOfThreshold(const ScorePoint& point) {
  return point.threshold > 0 ? point.score / point.threshold : 0;
}

double ChartY(double share) { return kChartHeight * (1.0 - std::clamp(share, 0.0, kChartCeiling) / kChartCeiling); }

// Score over threshold against time: the dashed line is the threshold, the
// red dots the windows over it.
std::string Sparkline(const std::deque<ScorePoint>& points, uint64_t start_ms, uint64_t now_ms,
                      const std::string& label) {
  uint64_t span_ms = now_ms > start_ms ? now_ms - start_ms : 1;
  std::string svg = "<svg width=\"" + std::to_string(kChartWidth) + "\" height=\"" + std::to_string(kChartHeight) +
                    "\" viewBox=\"0 0 " + std::to_string(kChartWidth) + " " + std::to_string(kChartHeight) +
                    "\" role=\"img\" aria-label=\"" + EscapeHtml(label) + "\">";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"#fafafa\"/>";
  std::string threshold_y = Number(ChartY(1.0), 1);
  svg += "<line x1=\"0\" x2=\"" + std::to_string(kChartWidth) + "\" y1=\"" + threshold_y + "\" y2=\"" + threshold_y +
         "\" stroke=\"#b00020\" stroke-dasharray=\"3,3\" stroke-width=\"1\"/>";
  std::string line, dots;
  for (const ScorePoint& point : points) {
    if (point.unix_ms < start_ms) continue;
    double x = double(point.unix_ms - start_ms) / double(span_ms) * kChartWidth;
    std::string xy = Number(std::min<double>(x, kChartWidth), 1) + "," + Number(ChartY(ShareOfThreshold(point)), 1);
    line += (line.empty() ? "" : " ") + xy;
    if (point.over) {
      dots += "<circle cx=\"" + xy.substr(0, xy.find(',')) + "\" cy=\"" + xy.substr(xy.find(',') + 1) +
              "\" r=\"2\" fill=\"#b00020\"/>";
    }
  }
  if (!line.empty()) {
    svg += "<polyline fill=\"none\" stroke=\"#1f5fa8\" stroke-width=\"1.5\" points=\"" + line + "\"/>";
  }
  return svg + dots + "</svg>";
}

struct OpenAlarm {
  AlarmLabels labels;
  std::set<std::string> reporters;
  AlarmSeries newest;
  std::string reporter_of_newest;
  // The widest agreement any of the node's analyzers knows of, over the
  // cluster (verdict_board.h): 0 of 0 when none records it.
  uint32_t agreeing = 0;
  uint32_t analyzers = 0;
};

// Open alarms merged over the node's reporters: one row per indicted server,
// resource and kind.
std::vector<OpenAlarm> OpenAlarms(const Collection& collection, double open_seconds) {
  std::map<AlarmLabels, OpenAlarm> open;
  for (const ServedSegment& segment : collection.segments) {
    for (const auto& [labels, series] : segment.alarms.series()) {
      if (!IsOpen(series, collection.taken_realtime_ns, open_seconds)) continue;
      OpenAlarm& alarm = open[labels];
      alarm.labels = labels;
      alarm.reporters.insert(segment.server);
      if (std::pair(series.analyzers, series.agreeing) > std::pair(alarm.analyzers, alarm.agreeing)) {
        alarm.agreeing = series.agreeing;
        alarm.analyzers = series.analyzers;
      }
      if (series.last_time_ns >= alarm.newest.last_time_ns) {
        alarm.newest = series;
        alarm.reporter_of_newest = segment.server;
      }
    }
  }
  std::vector<OpenAlarm> rows;
  for (auto& [labels, alarm] : open) rows.push_back(std::move(alarm));
  return rows;
}

const ServedSegment* FindServed(const Collection& collection, const std::string& server) {
  for (const ServedSegment& segment : collection.segments) {
    if (segment.server == server) return &segment;
  }
  return nullptr;
}

// A function's name without its parameters: "ns::Store::Write" for
// "ns::Store::Write(char const*, unsigned long)".
std::string WithoutParameters(const std::string& name) {
  size_t open = name.find('(');
  return open == std::string::npos || open == 0 ? name : name.substr(0, open);
}

// The names of an alarm's first top functions, from the reporter's function
// table, without their parameters (the server's own page has them whole).
std::string TopFunctionNames(const Collection& collection, const OpenAlarm& alarm) {
  constexpr size_t kShown = 3;
  const ServedSegment* reporter = FindServed(collection, alarm.reporter_of_newest);
  std::string names;
  size_t shown = 0;
  for (uint64_t hash : alarm.newest.top_function_hashes) {
    if (shown++ == kShown) break;
    std::string name;
    if (reporter != nullptr) {
      for (const shm::FunctionRecord& function : reporter->snapshot->functions) {
        if (function.name_hash == hash) {
          name = WithoutParameters(function.name);
          break;
        }
      }
    }
    if (name.empty()) {
      char hex[24];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
      name = hex;
    }
    names += (names.empty() ? "" : ", ") + name;
  }
  return names.empty() ? "-" : names;
}

size_t AnalyzersServed(const Collection& collection) {
  size_t analyzers = 0;
  for (const ServedSegment& segment : collection.segments) analyzers += segment.snapshot->analyzer_health.valid;
  return analyzers;
}

std::string AlarmSection(const Collection& collection, const std::vector<OpenAlarm>& alarms) {
  std::string html = "<h2>Open alarms</h2>\n";
  if (alarms.empty()) return html + "<p id=\"no-alarms\" class=\"state-ok\">No open alarm.</p>\n";
  size_t analyzers = AnalyzersServed(collection);
  html += "<table id=\"alarms\"><tr><th>server</th><th>resource</th><th>kind</th><th>reported by</th>"
          "<th>metrics</th><th>score / threshold</th><th>top functions</th><th>last</th></tr>\n";
  for (const OpenAlarm& alarm : alarms) {
    std::string reporters;
    for (const std::string& reporter : alarm.reporters) reporters += (reporters.empty() ? "" : ", ") + reporter;
    // The cluster's agreement when the analyzers record it, else what this node's own analyzers say.
    std::string agreement =
        alarm.analyzers > 0
            ? std::to_string(alarm.agreeing) + " of " + std::to_string(alarm.analyzers) + " analyzers"
            : std::to_string(alarm.reporters.size()) + " of " + std::to_string(analyzers) + " on this node";
    html += "<tr class=\"alarm\" data-server=\"" + EscapeHtml(alarm.labels.server) + "\" data-resource=\"" +
            EscapeHtml(alarm.labels.resource) + "\" data-agreeing=\"" + std::to_string(alarm.agreeing) +
            "\" data-analyzers=\"" + std::to_string(alarm.analyzers) + "\"><td>" + EscapeHtml(alarm.labels.server) +
            "</td><td>" + EscapeHtml(alarm.labels.resource) + "</td><td>" + EscapeHtml(alarm.labels.kind) +
            "</td><td title=\"on this node: " + EscapeHtml(reporters) + "\">" + agreement + "</td><td>" +
            EscapeHtml(alarm.newest.metrics) +
            "</td><td class=\"num\">" + Number(alarm.newest.score, 2) + " / " + Number(alarm.newest.threshold, 2) +
            "</td><td>" + EscapeHtml(TopFunctionNames(collection, alarm)) + "</td><td>" +
            EscapeHtml(FormatLocalTime(alarm.newest.last_time_ns)) + "</td></tr>\n";
  }
  return html + "</table>\n";
}

std::string ServerLink(const std::string& server) {
  std::string query;
  for (unsigned char c : server) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      query += char(c);
    } else {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", c);
      query += escaped;
    }
  }
  return "<a href=\"/server?name=" + query + "\">" + EscapeHtml(server) + "</a>";
}

std::string ServerSection(const Collection& collection, const ScoreHistory& history,
                          const std::vector<OpenAlarm>& alarms) {
  std::map<std::string, std::set<std::string>> limping;  // server -> resources
  for (const OpenAlarm& alarm : alarms) limping[alarm.labels.server].insert(alarm.labels.resource);
  std::set<std::string> servers;
  std::set<std::string> metrics;
  for (const ServedSegment& segment : collection.segments) servers.insert(segment.server);
  for (const auto& [server, resources] : limping) servers.insert(server);
  for (const auto& [server, scores] : history.servers()) {
    for (const auto& [metric, points] : scores.metrics) metrics.insert(metric);
  }
  std::vector<std::string> ordered = OrderedMetrics(metrics);
  // The charts cover the history kept: the last minutes, or less since serve started.
  uint64_t now_ms = collection.taken_realtime_ns / 1000000;
  uint64_t start_ms = now_ms > history.span_ms() ? now_ms - history.span_ms() : 0;
  if (history.oldest_ms() > start_ms && history.oldest_ms() < now_ms) start_ms = history.oldest_ms();

  std::string html = "<h2>Servers</h2>\n<p class=\"muted\">Each chart: the server's score for that metric over the "
                     "last " + std::to_string((now_ms - start_ms + 500) / 1000) +
                     " s (at most " + std::to_string(history.span_ms() / 60000) +
                     " minutes), as a share of its threshold (dashed line); red dots: windows over it.</p>\n";
  html += "<table id=\"servers\"><tr><th>server</th><th>state</th>";
  for (const std::string& metric : ordered) html += "<th>" + EscapeHtml(metric) + "</th>";
  html += "</tr>\n";
  for (const std::string& server : servers) {
    auto limp = limping.find(server);
    std::string resources;
    if (limp != limping.end()) {
      for (const std::string& resource : limp->second) resources += (resources.empty() ? "" : ",") + resource;
    }
    bool served = FindServed(collection, server) != nullptr;
    html += "<tr class=\"server" + std::string(limp != limping.end() ? " limping" : "") + "\" data-server=\"" +
            EscapeHtml(server) + "\" data-state=\"" + (limp != limping.end() ? "limping" : "ok") + "\"" +
            (resources.empty() ? "" : " data-resource=\"" + EscapeHtml(resources) + "\"") + "><td>" +
            (served ? ServerLink(server) : EscapeHtml(server) + " <span class=\"muted\">(not on this node)</span>") +
            "</td><td class=\"" + (limp != limping.end() ? "state-limping\">LIMPING: " + EscapeHtml(resources)
                                                          : "state-ok\">ok") +
            "</td>";
    auto scores = history.servers().find(server);
    for (const std::string& metric : ordered) {
      html += "<td>";
      if (scores != history.servers().end()) {
        auto points = scores->second.metrics.find(metric);
        if (points != scores->second.metrics.end() && !points->second.empty()) {
          html += Sparkline(points->second, start_ms, now_ms, server + " " + metric);
        }
      }
      html += "</td>";
    }
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

}  // namespace

std::string RenderDashboard(const Collection& collection, const ScoreHistory& history,
                            const ExpositionSettings& settings) {
  std::vector<OpenAlarm> alarms = OpenAlarms(collection, settings.open_alarm_seconds);
  std::string body = "<h1>limpwatch</h1>\n<p class=\"muted\">" + std::to_string(collection.segments.size()) +
                     " traced servers on this node; read " +
                     EscapeHtml(FormatLocalTime(collection.taken_realtime_ns)) + "; this page refreshes every " +
                     std::to_string(kDashboardRefreshSeconds) + " s. <a href=\"/metrics\">/metrics</a></p>\n";
  body += AlarmSection(collection, alarms);
  body += ServerSection(collection, history, alarms);
  return Page("limpwatch", body, true);
}

std::string RenderServerPage(const Collection& collection, const std::string& server) {
  const ServedSegment* segment = FindServed(collection, server);
  if (segment == nullptr) return "";
  const shm::Snapshot& s = *segment->snapshot;
  std::string body = "<p><a href=\"/dashboard\">&larr; all servers</a></p>\n<h1>" + EscapeHtml(server) + "</h1>\n";
  body += "<p class=\"muted\">" + EscapeHtml(s.program) + ", pid " + std::to_string(s.pid) + ", read " +
          EscapeHtml(FormatLocalTime(collection.taken_realtime_ns)) + "</p>\n";

  body += "<h2>Scores, newest window</h2>\n";
  if (!s.score_status.valid) {
    body += "<p class=\"muted\">None yet: no analyzer, or it has not compared a window.</p>\n";
  } else {
    body += "<table id=\"scores\"><tr><th>metric</th><th>score</th><th>threshold</th><th>ratio to peers</th>"
            "<th>state</th></tr>\n";
    for (const shm::ScoreRow& row : s.score_status.scores) {
      body += "<tr><td>" + EscapeHtml(row.metric) + "</td><td class=\"num\">" + Number(row.score, 3) +
              "</td><td class=\"num\">" + Number(row.threshold, 3) + "</td><td class=\"num\">" +
              (row.ratio > 0 ? Number(row.ratio, 2) + "x" : "-") + "</td><td>" +
              (row.warming_up ? "warming up" : row.anomalous ? "<b class=\"state-limping\">over</b>" : "ok") +
              "</td></tr>\n";
    }
    body += "</table>\n";
  }

  body += "<h2>I/O service times, since the start</h2>\n<table id=\"io\"><tr><th>metric</th><th>calls</th>"
          "<th>ms per call</th><th>errors</th></tr>\n";
  analyzer::IoMetrics io = analyzer::DeriveIoMetrics(shm::Snapshot{}, s);
  for (auto [name, time] : {std::pair{"dread", &io.dread}, std::pair{"dwrite", &io.dwrite},
                            std::pair{"dsync", &io.dsync}, std::pair{"nsread", &io.nsread},
                            std::pair{"ncread", &io.ncread}}) {
    body += "<tr><td>" + std::string(name) + "</td><td class=\"num\">" + std::to_string(time->calls) +
            "</td><td class=\"num\">" + Number(time->ms_per_call, 3) + "</td><td class=\"num\">" +
            std::to_string(time->errors) + "</td></tr>\n";
  }
  body += "</table>\n";

  std::vector<const shm::FunctionRecord*> functions;
  for (const shm::FunctionRecord& function : s.functions) {
    if (function.counters.calls > 0) functions.push_back(&function);
  }
  std::sort(functions.begin(), functions.end(), [](const shm::FunctionRecord* a, const shm::FunctionRecord* b) {
    return a->counters.self_ticks > b->counters.self_ticks;
  });
  if (functions.size() > kTopFunctions) functions.resize(kTopFunctions);
  body += "<h2>Top functions by self time, since the start</h2>\n<table id=\"functions\"><tr><th>function</th>"
          "<th>calls</th><th>self s</th><th>total s</th></tr>\n";
  for (const shm::FunctionRecord* function : functions) {
    body += "<tr><td>" + EscapeHtml(function->name) + "</td><td class=\"num\">" +
            std::to_string(function->counters.calls) + "</td><td class=\"num\">" +
            Number(s.TicksToNs(function->counters.self_ticks) / 1e9, 3) + "</td><td class=\"num\">" +
            Number(s.TicksToNs(function->counters.total_ticks) / 1e9, 3) + "</td></tr>\n";
  }
  body += "</table>\n";
  return Page("limpwatch: " + server, body, true);
}

}  // namespace limpwatch::cli::serve
