#include "report_data.h"

#include <algorithm>
#include <map>

#include "limpwatch/analyzer/cluster_replay.h"
#include "run_replay.h"

namespace limpwatch::report {
namespace {

// Adds a window's stretch to spans in time order, joined to the last when
// they touch.
void AddSpan(std::vector<TimeSpan>* spans, uint64_t from_ms, uint64_t to_ms) {
  if (!spans->empty() && spans->back().to_ms >= from_ms) {
    spans->back().to_ms = std::max(spans->back().to_ms, to_ms);
    return;
  }
  spans->push_back({from_ms, to_ms});
}

}  // namespace

bool BuildClusterReport(const std::vector<std::string>& recordings, const ReplaySettings& settings,
                        ClusterReport* report, std::string* error,
                        const std::function<void(size_t, size_t)>& progress) {
  cli::LoadedRun run;
  if (!cli::LoadRun(recordings, &run, error)) return false;
  analyzer::AnalyzerConfig config = cli::ReplayConfigFor(run, settings.config);
  analyzer::ReplayResult result = cli::ReplayRun(run, config, settings.thresholds, settings.manifest, progress);

  report->recordings = recordings;
  report->problems.insert(report->problems.end(), run.problems.begin(), run.problems.end());
  report->rule = config.decision_rule;
  report->server_days_per_false_alarm = config.server_days_per_false_alarm;
  report->tick_ms = config.tick_ms;
  report->window_ticks = config.window_ticks;
  report->shift_ticks = config.shift_ticks;
  report->thresholds_path = settings.thresholds_path;
  report->manifest_path = settings.manifest_path;
  report->windows = result.windows.size();
  report->alarms = std::move(result.alarms);

  std::map<std::string, ServerTrack> servers;
  bool first_server = true;
  for (const auto& [name, ticks] : run.ticks) {
    ServerTrack& track = servers[name];
    track.name = name;
    track.ticks = ticks.size();
    if (ticks.empty()) continue;
    // A tick's unix_ms is its end.
    track.first_ms = ticks.front().unix_ms - ticks.front().tick_ms;
    track.last_ms = ticks.back().unix_ms;
    report->first_ms = first_server ? track.first_ms : std::min(report->first_ms, track.first_ms);
    report->last_ms = first_server ? track.last_ms : std::max(report->last_ms, track.last_ms);
    first_server = false;
  }

  const uint64_t shift_ms = uint64_t(config.shift_ticks) * config.tick_ms;
  std::map<std::string, std::map<analyzer::ComparedMetric, MetricTrack>> metrics;
  for (const analyzer::WindowResult& window : result.windows) {
    // The window's nominal end, as the replay and the online analyzer compute it.
    uint64_t end_ms = window.window * shift_ms;
    uint64_t from_ms = end_ms > shift_ms ? end_ms - shift_ms : 0;
    std::map<std::string, bool> compared;  // server -> warming up
    for (const analyzer::MetricScore& score : window.scores) {
      MetricTrack& track = metrics[score.server][score.metric];
      track.metric = score.metric;
      track.points.push_back({window.window, end_ms, score.score, score.threshold, score.ratio, score.anomalous,
                              score.warming_up});
      if (score.anomalous) ++track.anomalous_windows;
      compared[score.server] = compared[score.server] || score.warming_up;
    }
    for (const auto& [server, warming_up] : compared) {
      ServerTrack& track = servers[server];
      track.name = server;
      ++track.windows;
      if (warming_up) AddSpan(&track.warming_up, from_ms, end_ms);
    }
    for (const std::string& server : window.indicted) {
      ServerTrack& track = servers[server];
      track.name = server;
      ++track.indicted_windows;
      AddSpan(&track.indicted, from_ms, end_ms);
    }
  }
  // A window ends on its nominal tick boundary, which may fall a little
  // after the last tick recorded: the charts span both.
  if (!result.windows.empty()) {
    report->first_ms = std::min(report->first_ms, result.windows.front().window * shift_ms - shift_ms);
    report->last_ms = std::max(report->last_ms, result.windows.back().window * shift_ms);
  }
  for (auto& [name, track] : servers) {
    for (auto& [metric, metric_track] : metrics[name]) track.metrics.push_back(std::move(metric_track));
    report->servers.push_back(std::move(track));
  }
  return true;
}

const ServerTrack* FindServer(const ClusterReport& report, const std::string& name) {
  for (const ServerTrack& server : report.servers) {
    if (server.name == name) return &server;
  }
  return nullptr;
}

}  // namespace limpwatch::report
