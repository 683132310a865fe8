// Generated clusters for the decision suite and the decision tests: per-peer
// latency (and throughput) series with a known truth, under noise models that
// real storage shows. Seeded: the same settings give the same series.
//
// Healthy peers share the load's swings (a daily cycle and a slower drift,
// seen by every peer alike), carry shares of the load up to 10 % apart, differ
// from one another by up to `healthy_spread` persistently (older disks, more
// metadata), and wander a little each on their own. On top, per sample:
//   gaussian:  +-10 % (a latency of 10 +- 1);
//   lognormal: a log-normal factor of spread 0.3;
//   bursty:    a log-normal core of 0.15 and bursts of 2-8x in runs of 1-2
//              samples, 5-13 % of each peer's samples (what busy drives show).
// A planted limp multiplies one peer's latency by `limp_ratio` from a tick on,
// always or half the time (slow and normal stretches of `intermittent_ticks`);
// a fast peer is `fast_ratio` times its peers; a hot peer carries `hot_load`
// times the load, and its latency follows the load (queueing: load^0.54, so
// 1.4x the load makes it 1.2x slower).
#ifndef LIMPWATCH_TOOLS_BENCH_DECISION_GENERATED_CLUSTER_H_
#define LIMPWATCH_TOOLS_BENCH_DECISION_GENERATED_CLUSTER_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace limpwatch::decision {

enum class NoiseModel { kGaussian, kLogNormal, kBursty };
const char* NoiseModelName(NoiseModel model);

struct ClusterSpec {
  int servers = 8;
  double tick_s = 1;
  NoiseModel noise = NoiseModel::kGaussian;
  uint32_t seed = 1;
  double unit = 10;  // the latency's typical value (its units: ms, s, us ...)
  double healthy_spread = 0.07;
  int limping = -1;  // -1: none
  double limp_ratio = 1;
  uint64_t limp_start = 0;  // tick
  uint64_t intermittent_ticks = 0;  // 0: persistent; else slow / normal stretches this long
  int fast = -1;
  double fast_ratio = 0.6;
  int hot = -1;
  double hot_load = 1.4;
};

class GeneratedCluster {
 public:
  explicit GeneratedCluster(const ClusterSpec& spec);

  // The next tick's samples: latency and throughput, per peer.
  void Next(std::vector<double>* latency, std::vector<double>* throughput);
  uint64_t tick() const { return tick_; }
  bool Limping(uint64_t tick) const;
  const std::vector<std::string>& names() const { return names_; }

 private:
  ClusterSpec spec_;
  std::mt19937_64 random_;
  std::vector<std::string> names_;
  std::vector<double> offset_, load_share_, wander_, burst_chance_;
  std::vector<int> burst_left_;
  std::vector<double> burst_size_;
  double drift_ = 0;
  uint64_t tick_ = 0;
};

}  // namespace limpwatch::decision

#endif  // LIMPWATCH_TOOLS_BENCH_DECISION_GENERATED_CLUSTER_H_
