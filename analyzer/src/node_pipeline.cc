#include "limpwatch/analyzer/node_pipeline.h"

namespace limpwatch::analyzer {

NodePipeline::NodePipeline(const AnalyzerConfig& config, uint64_t boot_id)
    : windows_(config.window_ticks, config.shift_ticks),
      invariants_(config.invariant_period_ticks, config.request_drop_alpha),
      summarizer_(config),
      boot_id_(boot_id) {}

std::vector<PeerSummary> NodePipeline::AddTick(const TickRecord& tick) {
  if (auto period = invariants_.Add(tick); period && period->Anomalous()) local_anomalies_.push_back(*period);
  std::vector<PeerSummary> summaries;
  for (const Window& window : windows_.Add(tick)) {
    summaries.push_back(summarizer_.Summarize(window, boot_id_, invariants_.LatestBits()));
  }
  return summaries;
}

std::vector<InvariantPeriod> NodePipeline::TakeLocalAnomalies() {
  std::vector<InvariantPeriod> taken;
  taken.swap(local_anomalies_);
  return taken;
}

}  // namespace limpwatch::analyzer
