// Turns a server's window into its PeerSummary: the reduced feature vectors
// (seed 000 section 5.1), its I/O medians (seed 001) and invariant bits.
//
// The feature set is the same on every server: a function enters it when it
// carries diagnostic weight (at least min_feature_samples samples or
// min_feature_time_ms of self time in a window) on this server or on any
// peer whose summary was seen, and then stays. Every summary reports every
// feature of the set, zeros included, so a missing key only ever means "not
// heard of yet".
#ifndef LIMPWATCH_ANALYZER_SUMMARIZER_H_
#define LIMPWATCH_ANALYZER_SUMMARIZER_H_

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "limpwatch/analyzer/analyzer_config.h"
#include "limpwatch/analyzer/peer_summary.h"
#include "limpwatch/analyzer/window.h"

namespace limpwatch::analyzer {

class Summarizer {
 public:
  explicit Summarizer(const AnalyzerConfig& config) : config_(config) {}

  // Adds the features a peer reports to this server's feature set.
  void LearnFromPeer(const PeerSummary& summary);

  // The summary of one of this server's windows. Updates the feature set first.
  PeerSummary Summarize(const Window& window, uint64_t boot_id, uint32_t invariant_bits);

  // The 64-bit name hash behind a feature key, when this server has seen it.
  uint64_t NameHashOf(uint32_t key) const;

  size_t FeatureCount(Metric metric) const;

 private:
  struct FeatureState {
    double weight = 0;  // the largest value / threshold seen: who stays when the set is full
  };
  void Admit(const Window& window);
  std::vector<uint32_t> Chosen(Metric metric) const;

  AnalyzerConfig config_;
  std::unordered_map<uint32_t, FeatureState> sampled_;  // samples metric
  std::unordered_map<uint32_t, FeatureState> timed_;    // count and time metrics
  std::unordered_map<uint32_t, uint64_t> name_hashes_;
};

// A window's file reads (writes) are compared when it made this many. A
// server the load has left idle makes a few stray ones, whose service time
// says nothing about its disk: a test-bed cluster whose client waited on a
// hung peer had one server's handful of reads in a window score 1.28 ms over
// its peers' and indicted it. A loaded server makes hundreds a window, a
// throttled disk's server tens.
inline constexpr uint64_t kMinComparedFileCalls = 8;

// Medians over the window's ticks of the per-tick I/O values; a tick without
// calls of a kind does not count for that kind's median, and a window with
// fewer than kMinComparedFileCalls file reads (writes) has none (0: nothing
// to compare).
IoMedians ComputeIoMedians(const Window& window);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_SUMMARIZER_H_
