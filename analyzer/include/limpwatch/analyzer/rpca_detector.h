// The `rpca` detector: CloudDiag (cloud_diag.h) over what every server
// measures, with no training and no thresholds file.
//
// Each step takes the recent rows of every server, a row being one server's
// tick (offline, from recordings) or window (online, from the summaries the
// peers exchange), and the functions' time per call as columns, each column
// divided by its median so that fast and slow functions weigh alike. What
// the servers share over time (the load, its mix) is the low-rank part; a
// server on which some functions run slow for a while is sparse. A function
// whose column points away from its low-rank part is anomalous; it votes for
// the one server whose newest rows carry its slow entries (a function slow
// on several servers at once accuses none: that is a change of the whole
// cluster, not one server that limps). A server with votes in k of the last
// 2k-1 steps is indicted, as under peer comparison.
//
// A fault that lasts long enough to fill a large share of the rows becomes
// part of the pattern; the alarm is raised at its onset.
#ifndef LIMPWATCH_ANALYZER_RPCA_DETECTOR_H_
#define LIMPWATCH_ANALYZER_RPCA_DETECTOR_H_

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/analyzer/analyzer_config.h"
#include "limpwatch/analyzer/name_book.h"
#include "limpwatch/analyzer/peer_summary.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "limpwatch/analyzer/tick_record.h"

namespace limpwatch::analyzer {

inline constexpr const char* kRpcaDetectorName = "rpca";

struct RpcaSettings {
  // Rows per server, at most: a minute of ticks or windows. Long against a
  // window (so that a fault's first rows are a small share of them, i.e.
  // sparse), short against the changes of load a replay spans.
  uint32_t history_rows = 60;
  // Rows per server a step needs before it runs: the servers' warm-up and
  // two windows besides (set from the config by the callers below).
  uint32_t least_rows = 12;
  // The newest rows of each server that must be mostly slow for a vote: a
  // window's ticks offline, the newest window online.
  uint32_t newest_rows = 4;
};

// The settings for rows of ticks (offline) or of windows (online).
RpcaSettings RpcaSettingsForTicks(const AnalyzerConfig& config);
RpcaSettings RpcaSettingsForWindows(const AnalyzerConfig& config);

// One function's measure in one row.
struct RpcaCell {
  uint32_t key = 0;       // FoldNameHash of the function's name
  double self_ms = 0;     // time in the row
  double calls = 0;       // calls in the row
};

struct RpcaStep {
  uint64_t index = 0;  // the newest row's tick or window
  uint64_t unix_ms = 0;
  size_t servers = 0;
  size_t columns = 0;
  int rank = 0;  // of the low-rank part
  // Per server with votes: the anomalous functions (keys) that voted for it.
  std::map<std::string, std::vector<uint32_t>> votes;
  std::vector<std::string> indicted;  // k of the last 2k-1 steps
};

struct RankedFunction {
  uint32_t key = 0;
  std::string name;
  uint32_t times_anomalous = 0;  // steps in which its column was anomalous
  uint32_t times_voting = 0;     // of those, steps in which it named one server
};

class RpcaDetector {
 public:
  RpcaDetector(const AnalyzerConfig& config, RpcaSettings settings, const ResourceManifest* manifest,
               const NameBook* names);

  // Adds a server's row `index` (indexes increase per server; rows of all
  // servers with the same index are compared as the same moment).
  void AddRow(const std::string& server, uint64_t index, uint64_t unix_ms, std::vector<RpcaCell> cells);
  // Analyzes the rows up to `index` and returns the alarms it raises.
  std::vector<Alarm> Step(uint64_t index);
  // Forgets a server (it left the comparison).
  void Forget(const std::string& server);

  const std::vector<RpcaStep>& steps() const { return steps_; }
  void KeepSteps(bool keep) { keep_steps_ = keep; }
  // CloudDiag's ranking so far: most often anomalous first.
  std::vector<RankedFunction> Ranking() const;

 private:
  struct Row {
    uint64_t index = 0;
    uint64_t unix_ms = 0;
    std::vector<RpcaCell> cells;  // sorted by key
  };
  struct ServerState {
    std::deque<Row> rows;
    std::deque<bool> voted;  // last 2k-1 steps
    uint64_t last_alarm_ms = 0;
  };

  AnalyzerConfig config_;
  RpcaSettings settings_;
  const ResourceManifest* manifest_;
  const NameBook* names_;
  std::map<std::string, ServerState> servers_;
  std::map<uint32_t, RankedFunction> ranking_;
  std::vector<RpcaStep> steps_;
  bool keep_steps_ = false;
};

// A server's row from the summary it sent for a window: each function's
// time (Metric::kTime) and calls (Metric::kCount) summed over the window.
std::vector<RpcaCell> RpcaCellsOfSummary(const PeerSummary& summary);

struct RpcaReplay {
  std::vector<RpcaStep> steps;
  std::vector<Alarm> alarms;
  std::vector<RankedFunction> ranking;
};

// Runs the detector over every server's ticks (server -> ticks in order),
// one row per tick.
RpcaReplay ReplayRpca(const AnalyzerConfig& config, const std::map<std::string, std::vector<TickRecord>>& ticks,
                      const ResourceManifest& manifest, const NameBook& names);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_RPCA_DETECTOR_H_
