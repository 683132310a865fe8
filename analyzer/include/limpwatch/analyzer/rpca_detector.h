// The `rpca` detector: CloudDiag (cloud_diag.h) over what every server
// records each tick, with no training and no thresholds file.
//
// Each step takes the last history_ticks ticks of every server as rows
// (server, tick) and the functions' time per call as columns, each column
// divided by its median so that fast and slow functions weigh alike. What
// the servers share over time (the load, its mix) is the low-rank part; a
// server on which some functions run slow for a while is sparse. A function
// whose column points away from its low-rank part is anomalous; it votes for
// the one server whose newest ticks carry its positive sparse entries (a
// function slow on several servers at once accuses none: that is a change
// of the whole cluster, not one that limps). A server with votes in k of
// the last 2k-1 steps is indicted, as under peer comparison.
//
// A fault that lasts long enough to fill a large share of the rows becomes
// part of the pattern; the alarm is raised at its onset.
#ifndef LIMPWATCH_ANALYZER_RPCA_DETECTOR_H_
#define LIMPWATCH_ANALYZER_RPCA_DETECTOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/analyzer/analyzer_config.h"
#include "limpwatch/analyzer/cloud_diag.h"
#include "limpwatch/analyzer/name_book.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "limpwatch/analyzer/tick_record.h"

namespace limpwatch::analyzer {

inline constexpr const char* kRpcaDetectorName = "rpca";

struct RpcaSettings {
  // Rows per server, at most. A minute: long against a window (so that a
  // fault's first windows are a small share of the rows, i.e. sparse), short
  // against the changes of load a replay spans. Steps start once the
  // servers' warm-up windows and two windows have passed.
  uint32_t history_ticks = 60;
  CloudDiagOptions cloud;
};

struct RpcaStep {
  uint64_t tick = 0;  // the newest tick of the rows
  uint64_t unix_ms = 0;
  size_t servers = 0;
  size_t columns = 0;
  int rank = 0;  // of the low-rank part
  // Per server with votes: the anomalous functions that voted for it.
  std::map<std::string, std::vector<uint64_t>> votes;
  std::vector<std::string> indicted;  // k of the last 2k-1 steps
};

struct RankedFunction {
  uint64_t name_hash = 0;
  std::string name;
  uint32_t times_anomalous = 0;  // steps in which its column was anomalous
  uint32_t times_voting = 0;     // of those, steps in which it named one server
};

struct RpcaReplay {
  std::vector<RpcaStep> steps;
  std::vector<Alarm> alarms;
  std::vector<RankedFunction> ranking;  // CloudDiag's: most often anomalous first
};

// Runs the detector over every server's ticks (server -> ticks in order).
RpcaReplay ReplayRpca(const AnalyzerConfig& config, const RpcaSettings& settings,
                      const std::map<std::string, std::vector<TickRecord>>& ticks, const ResourceManifest& manifest,
                      const NameBook& names);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_RPCA_DETECTOR_H_
