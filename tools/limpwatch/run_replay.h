// Replaying a loaded run through the online analysis, as the offline
// commands do. Apart from recordings.h so that what only loads runs (the
// recording fuzz target) does not link the whole cluster diagnoser.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_RUN_REPLAY_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_RUN_REPLAY_H_

#include <cstddef>
#include <functional>

#include "limpwatch/analyzer/analyzer_config.h"
#include "limpwatch/analyzer/cluster_replay.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "limpwatch/analyzer/thresholds.h"
#include "recordings.h"

namespace limpwatch::cli {

// The settings a replay of `run` goes by: `config` with the run's tick
// length, and every feature compared when the run came from CSV (a CSV's
// columns are all features, whatever their size).
analyzer::AnalyzerConfig ReplayConfigFor(const LoadedRun& run, analyzer::AnalyzerConfig config);

// `run` replayed through the online analysis as every offline command does
// (diagnose, report, export): with ReplayConfigFor's settings and summaries
// cut to the wire encoding's precision, so that its alarms are the ones the
// servers' own analyzers would have raised. `progress` as ReplayCluster's.
analyzer::ReplayResult ReplayRun(const LoadedRun& run, const analyzer::AnalyzerConfig& config,
                                 const analyzer::Thresholds& thresholds, const analyzer::ResourceManifest& manifest,
                                 const std::function<void(size_t, size_t)>& progress = nullptr);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_RUN_REPLAY_H_
