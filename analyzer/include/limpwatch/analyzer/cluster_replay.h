// Offline diagnosis: every server's tick records (from recordings, or a CSV
// of per-peer time series) replayed through the same pipeline and diagnoser
// that run online, window by window, as if the summaries had been exchanged.
#ifndef LIMPWATCH_ANALYZER_CLUSTER_REPLAY_H_
#define LIMPWATCH_ANALYZER_CLUSTER_REPLAY_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "limpwatch/analyzer/cluster_diagnoser.h"
#include "limpwatch/analyzer/node_pipeline.h"
#include "limpwatch/analyzer/tick_record.h"

namespace limpwatch::analyzer {

// How a summary travels between servers: identity offline, or the wire
// encoding's precision, so that offline verdicts match the online ones.
using SummaryTransform = std::function<PeerSummary(const PeerSummary&)>;

struct ReplayResult {
  std::vector<Alarm> alarms;
  std::vector<WindowResult> windows;
  // Every summary produced, per window (for training).
  std::map<uint64_t, std::vector<PeerSummary>> summaries;
  // The calibrated rule's per-server verdicts over the replay (empty under
  // the seed rule), and what it learnt: each compared metric's noise and the
  // servers' usual profile ratios (what `limpwatch train` keeps).
  std::vector<ServerVerdict> verdicts;
  Thresholds learnt;
};

// Replays the ticks of every server (a map server -> ticks in order).
// `progress`, when set, is called with (done, total) ticks.
ReplayResult ReplayCluster(const AnalyzerConfig& config, const std::map<std::string, std::vector<TickRecord>>& ticks,
                           const Thresholds& thresholds, const ResourceManifest& manifest, const NameBook& names,
                           const SummaryTransform& transform,
                           const std::function<void(size_t, size_t)>& progress = nullptr);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_CLUSTER_REPLAY_H_
