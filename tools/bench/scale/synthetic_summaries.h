// Every server's summary of a window, shaped as the summarizer makes them
// (200 features: CPU samples of 100 functions, calls and time of 50, the I/O
// service-time medians, the request bytes), for a cluster of any size.
//
// The disk latency and the load come from the decision suite's generated
// cluster (bursty noise, load swings every server shares, persistent healthy
// differences, each server's own wander); calls and samples follow the load,
// with noise of their own per function and tick. A window sums its last four
// ticks, as the analyzer's windows do, so that consecutive windows share
// their noise. Planted limping servers see their disk latency, and the time
// of the ten functions that wait for it, multiplied from a tick on.
#ifndef LIMPWATCH_TOOLS_BENCH_SCALE_SYNTHETIC_SUMMARIES_H_
#define LIMPWATCH_TOOLS_BENCH_SCALE_SYNTHETIC_SUMMARIES_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "generated_cluster.h"
#include "limpwatch/analyzer/name_book.h"
#include "limpwatch/analyzer/peer_summary.h"

namespace limpwatch::scale {

struct SyntheticSpec {
  int servers = 100;
  uint32_t seed = 1;
  uint32_t window_ticks = 4;
  std::vector<size_t> limping;  // planted servers
  double limp_ratio = 2.0;
  uint64_t limp_from_tick = 0;
};

class SyntheticCluster {
 public:
  static constexpr int kSampledFunctions = 100;
  static constexpr int kTimedFunctions = 50;  // calls and time; the first ten wait for the disk
  static constexpr int kDiskFunctions = 10;

  explicit SyntheticCluster(const SyntheticSpec& spec);

  // The next tick of every server.
  void NextTick();
  uint64_t tick() const { return tick_; }
  // Once window_ticks ticks have passed: the summary of `server` for the
  // window that ends at this tick (numbered by it).
  analyzer::PeerSummary Summary(size_t server) const;

  const std::vector<std::string>& names() const { return names_; }
  const std::vector<analyzer::FunctionName>& functions() const { return functions_; }
  bool Limping(size_t server) const;

 private:
  static constexpr int kValuesPerTick = kSampledFunctions + 2 * kTimedFunctions + 2;  // + latency, load

  SyntheticSpec spec_;
  decision::GeneratedCluster latency_;
  std::mt19937_64 random_;
  std::vector<std::string> names_;
  std::vector<analyzer::FunctionName> functions_;
  // Per metric: the function indices in rising key order, and their keys.
  std::vector<int> sample_order_, timed_order_;
  std::vector<uint32_t> sample_keys_, timed_keys_;
  std::vector<double> calls_per_load_, cost_ms_, samples_per_load_;
  std::vector<bool> limping_;
  // The last window_ticks ticks, kValuesPerTick values per server each, at
  // ((tick % window_ticks) * servers + server) * kValuesPerTick.
  std::vector<float> ticks_;
  uint64_t tick_ = 0;
};

}  // namespace limpwatch::scale

#endif  // LIMPWATCH_TOOLS_BENCH_SCALE_SYNTHETIC_SUMMARIES_H_
