// Peer summaries for tests, benchmarks and the fuzz seed corpus: realistic
// shapes (sorted folded-hash keys, values across many magnitudes) from a seed.
#ifndef LIMPWATCH_TESTS_PEER_SUMMARY_BUILDER_H_
#define LIMPWATCH_TESTS_PEER_SUMMARY_BUILDER_H_

#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <string>

#include "limpwatch/analyzer/peer_summary.h"

namespace limpwatch::analyzer::testing {

struct SummaryShape {
  std::string node = "server1";
  size_t features = 200;  // over all metrics
  size_t metrics = 3;     // 0..3
  uint64_t boot_id = 0x5eed0000b007ull;
  uint64_t window = 7;
  uint32_t seed = 1;
};

inline PeerSummary MakeSummary(const SummaryShape& shape) {
  std::mt19937_64 random(shape.seed);
  PeerSummary summary;
  summary.node = shape.node;
  summary.boot_id = shape.boot_id;
  summary.window = shape.window;
  summary.window_end_unix_ms = 1'763'000'000'000ull + shape.window * 1000;
  summary.window_ticks = 4;
  summary.tick_ms = 1000;
  summary.invariant_bits = kInvariantCpu | kInvariantDisk;
  summary.io = {1.25f, 2.5f, 0.125f, 3.0f, 1.5e6f};
  for (size_t m = 0; m < shape.metrics; ++m) {
    size_t count = shape.features / shape.metrics + (m < shape.features % shape.metrics ? 1 : 0);
    std::set<uint32_t> keys;
    while (keys.size() < count) keys.insert(FoldNameHash(random()));
    MetricFeatures& metric = summary.metrics.emplace_back();
    metric.metric = static_cast<Metric>(m);
    std::uniform_real_distribution<double> mantissa(1.0, 2.0);
    std::uniform_int_distribution<int> exponent(-12, 40);
    for (uint32_t key : keys) {
      float value = static_cast<float>(std::ldexp(mantissa(random), exponent(random)));
      metric.features.push_back({key, value});
    }
  }
  return summary;
}

}  // namespace limpwatch::analyzer::testing

#endif  // LIMPWATCH_TESTS_PEER_SUMMARY_BUILDER_H_
