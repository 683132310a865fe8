// One server's side of the analysis: its ticks become windows, invariant
// periods and, per window, the summary it sends to its peers.
#ifndef LIMPWATCH_ANALYZER_NODE_PIPELINE_H_
#define LIMPWATCH_ANALYZER_NODE_PIPELINE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "limpwatch/analyzer/analyzer_config.h"
#include "limpwatch/analyzer/invariants.h"
#include "limpwatch/analyzer/peer_summary.h"
#include "limpwatch/analyzer/summarizer.h"
#include "limpwatch/analyzer/window.h"

namespace limpwatch::analyzer {

class NodePipeline {
 public:
  NodePipeline(const AnalyzerConfig& config, uint64_t boot_id);

  // Adds this server's next tick; returns the summaries of the windows it completes.
  std::vector<PeerSummary> AddTick(const TickRecord& tick);

  // Makes the feature set follow the cluster's (see Summarizer).
  void LearnFromPeer(const PeerSummary& summary) { summarizer_.LearnFromPeer(summary); }

  // The invariant periods completed so far that were anomalous (seed 003's
  // local detector), oldest first; cleared by TakeLocalAnomalies().
  std::vector<InvariantPeriod> TakeLocalAnomalies();

  const Summarizer& summarizer() const { return summarizer_; }

 private:
  WindowBuilder windows_;
  InvariantChecker invariants_;
  Summarizer summarizer_;
  uint64_t boot_id_;
  std::vector<InvariantPeriod> local_anomalies_;
};

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_NODE_PIPELINE_H_
