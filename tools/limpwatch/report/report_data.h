// What a report shows of one cluster's recordings: the recordings replayed
// through the analysis `limpwatch diagnose` runs (analyzer/cluster_replay.h,
// the same decision code as the servers online), and its per-window scores,
// thresholds and alarms laid out per server and metric over time.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_REPORT_REPORT_DATA_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_REPORT_REPORT_DATA_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/analyzer/analyzer_config.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "limpwatch/analyzer/thresholds.h"

namespace limpwatch::report {

// How the recordings are judged: as `diagnose` judges them.
struct ReplaySettings {
  analyzer::AnalyzerConfig config;  // the rule, the budget, the windows (tick_ms comes from the recordings)
  analyzer::Thresholds thresholds;  // what `limpwatch train` learnt; empty when untrained
  analyzer::ResourceManifest manifest;
  std::string thresholds_path;  // shown on the page; empty when untrained
  std::string manifest_path;    // shown on the page; empty when none
};

// One metric's score against its threshold in one window of one server.
struct ScorePoint {
  uint64_t window = 0;
  uint64_t end_ms = 0;  // the window's end (unix ms): where the score is drawn
  double score = 0;
  double threshold = 0;
  double ratio = 0;  // calibrated rule: the server's value over its peers' median
  bool anomalous = false;
  bool warming_up = false;
};

struct MetricTrack {
  analyzer::ComparedMetric metric = analyzer::ComparedMetric::kTime;
  std::vector<ScorePoint> points;  // in window order
  size_t anomalous_windows = 0;
};

struct TimeSpan {
  uint64_t from_ms = 0;
  uint64_t to_ms = 0;
};

struct ServerTrack {
  std::string name;
  size_t ticks = 0;  // recorded
  uint64_t first_ms = 0, last_ms = 0;
  size_t windows = 0;  // compared (on any metric)
  size_t indicted_windows = 0;
  std::vector<MetricTrack> metrics;  // those compared at least once, in the metrics' order
  std::vector<TimeSpan> indicted;    // windows the decision indicted it in, merged
  std::vector<TimeSpan> warming_up;  // its start-up windows: compared, never counted
};

// A stretch the page marks on every chart of the cluster (the evaluation's
// fault, injected into one server).
struct MarkedSpan {
  TimeSpan span;
  std::string label;
  std::string server;  // the server it concerns, if one
};

struct ClusterReport {
  std::string title;
  std::vector<std::string> recordings;
  std::vector<std::string> problems;  // what reading the recordings or settings reported, one line each
  analyzer::DecisionRule rule = analyzer::DecisionRule::kCalibrated;
  double server_days_per_false_alarm = 0;
  uint32_t tick_ms = 1000, window_ticks = 0, shift_ticks = 0;
  std::string thresholds_path, manifest_path;
  uint64_t first_ms = 0, last_ms = 0;  // the recordings' span
  size_t windows = 0;
  std::vector<ServerTrack> servers;  // by name
  std::vector<analyzer::Alarm> alarms;
  std::vector<MarkedSpan> marked;
  std::vector<std::string> notes;  // lines of the caller's own (the evaluation's score of the run)
};

// Reads the recordings (tools/limpwatch/recordings.h: a server's several
// files in any order) and replays them. False with a one-line *error naming
// the file when one cannot be read at all; a damaged record is a problem
// listed in the report, as `diagnose` warns of it.
// `progress`, when set, is called with (done, total) ticks of the replay.
bool BuildClusterReport(const std::vector<std::string>& recordings, const ReplaySettings& settings,
                        ClusterReport* report, std::string* error,
                        const std::function<void(size_t, size_t)>& progress = nullptr);

// The server's track, or null.
const ServerTrack* FindServer(const ClusterReport& report, const std::string& name);

}  // namespace limpwatch::report

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_REPORT_REPORT_DATA_H_
