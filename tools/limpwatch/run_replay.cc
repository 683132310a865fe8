#include "run_replay.h"

#include "limpwatch/analyzer/transport_exchange.h"

namespace limpwatch::cli {

analyzer::AnalyzerConfig ReplayConfigFor(const LoadedRun& run, analyzer::AnalyzerConfig config) {
  config.tick_ms = run.tick_ms;
  if (run.from_csv) config.min_feature_time_ms = 0;
  return config;
}

analyzer::ReplayResult ReplayRun(const LoadedRun& run, const analyzer::AnalyzerConfig& config,
                                 const analyzer::Thresholds& thresholds, const analyzer::ResourceManifest& manifest,
                                 const std::function<void(size_t, size_t)>& progress) {
  return analyzer::ReplayCluster(ReplayConfigFor(run, config), run.ticks, thresholds, manifest, run.names,
                                 analyzer::WireRoundTrip, progress);
}

}  // namespace limpwatch::cli
