#include "scale/synthetic_summaries.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "limpwatch/shm/name_hash.h"

namespace limpwatch::scale {
namespace {

constexpr int kLatency = SyntheticCluster::kSampledFunctions + 2 * SyntheticCluster::kTimedFunctions;
constexpr int kLoad = kLatency + 1;
constexpr double kLatencyUnitMs = 0.5;  // a disk read's usual service time
constexpr double kFunctionNoise = 0.1;  // log-normal spread of a function's calls in a tick

decision::ClusterSpec LatencySpec(const SyntheticSpec& spec) {
  decision::ClusterSpec latency;
  latency.servers = spec.servers;
  latency.seed = spec.seed;
  latency.noise = decision::NoiseModel::kBursty;
  latency.unit = kLatencyUnitMs;
  return latency;
}

// Function indices sorted by their keys, and the keys in that order.
void OrderByKey(const std::vector<analyzer::FunctionName>& functions, int count, std::vector<int>* order,
                std::vector<uint32_t>* keys) {
  order->resize(count);
  std::iota(order->begin(), order->end(), 0);
  auto key_of = [&](int index) { return analyzer::FoldNameHash(functions[index].name_hash); };
  std::sort(order->begin(), order->end(), [&](int a, int b) { return key_of(a) < key_of(b); });
  keys->clear();
  for (int index : *order) keys->push_back(key_of(index));
}

}  // namespace

SyntheticCluster::SyntheticCluster(const SyntheticSpec& spec)
    : spec_(spec), latency_(LatencySpec(spec)), random_(spec.seed * 0x2545F4914F6CDD1Dull + 11) {
  for (int server = 0; server < spec_.servers; ++server) {
    char name[32];
    std::snprintf(name, sizeof name, "ost%05d", server);
    names_.push_back(name);
  }
  for (int index = 0; index < kSampledFunctions; ++index) {
    std::string name = index < kDiskFunctions ? "dbpf_disk_wait_" + std::to_string(index)
                                              : "pvfs_server_function_" + std::to_string(index);
    functions_.push_back({shm::FunctionNameHash(name), name});
  }
  OrderByKey(functions_, kSampledFunctions, &sample_order_, &sample_keys_);
  OrderByKey(functions_, kTimedFunctions, &timed_order_, &timed_keys_);
  // Per function: a few calls a tick to thousands, 5 us to 2 ms each.
  std::uniform_real_distribution<double> exponent(0.5, 3.5), cost(-2.3, 0.3);
  for (int index = 0; index < kSampledFunctions; ++index) {
    calls_per_load_.push_back(std::pow(10.0, exponent(random_)) / 100.0);
    cost_ms_.push_back(std::pow(10.0, cost(random_)));
    samples_per_load_.push_back(std::pow(10.0, exponent(random_) - 1.0) / 100.0);
  }
  limping_.assign(spec_.servers, false);
  for (size_t server : spec_.limping) {
    if (server < limping_.size()) limping_[server] = true;
  }
  ticks_.assign(size_t(spec_.window_ticks) * spec_.servers * kValuesPerTick, 0.0f);
}

bool SyntheticCluster::Limping(size_t server) const {
  return limping_[server] && tick_ >= spec_.limp_from_tick;
}

void SyntheticCluster::NextTick() {
  ++tick_;
  std::vector<double> latency, load;
  latency_.Next(&latency, &load);
  std::normal_distribution<double> normal(0.0, kFunctionNoise);
  size_t slot = size_t(tick_ % spec_.window_ticks) * spec_.servers;
  for (int server = 0; server < spec_.servers; ++server) {
    float* values = &ticks_[(slot + server) * kValuesPerTick];
    double share = load[server] / 100.0;
    double disk_ms = latency[server] * (Limping(server) ? spec_.limp_ratio : 1.0);
    for (int index = 0; index < kSampledFunctions; ++index) {
      values[index] = float(samples_per_load_[index] * share * std::exp(normal(random_)));
    }
    for (int index = 0; index < kTimedFunctions; ++index) {
      double calls = calls_per_load_[index] * share * std::exp(normal(random_));
      double per_call = index < kDiskFunctions ? disk_ms : cost_ms_[index] * std::exp(normal(random_));
      values[kSampledFunctions + index] = float(calls);
      values[kSampledFunctions + kTimedFunctions + index] = float(calls * per_call);
    }
    values[kLatency] = float(disk_ms);
    values[kLoad] = float(load[server]);
  }
}

analyzer::PeerSummary SyntheticCluster::Summary(size_t server) const {
  analyzer::PeerSummary summary;
  summary.node = names_[server];
  summary.boot_id = 0x5157000000000000ull + server + 1;
  summary.window = tick_;
  summary.window_end_unix_ms = tick_ * 1000;
  summary.window_ticks = uint16_t(spec_.window_ticks);
  summary.tick_ms = 1000;
  std::vector<double> sums(kValuesPerTick, 0.0);
  std::vector<float> latencies;
  double load = 0;
  for (uint32_t tick = 0; tick < spec_.window_ticks; ++tick) {
    const float* values = &ticks_[(size_t(tick) * spec_.servers + server) * kValuesPerTick];
    for (int index = 0; index < kLatency; ++index) sums[index] += values[index];
    latencies.push_back(values[kLatency]);
    load += values[kLoad];
  }
  std::sort(latencies.begin(), latencies.end());
  float median = (latencies[(latencies.size() - 1) / 2] + latencies[latencies.size() / 2]) / 2;
  summary.io.dread_ms = median;
  summary.io.dwrite_ms = 1.5f * median;
  summary.io.nsread_ms = 0.05f;
  summary.io.request_bytes_per_s = float(load / spec_.window_ticks * 1e5);

  analyzer::MetricFeatures samples{analyzer::Metric::kSamples, {}};
  for (size_t place = 0; place < sample_order_.size(); ++place) {
    samples.features.push_back({sample_keys_[place], float(sums[sample_order_[place]])});
  }
  analyzer::MetricFeatures count{analyzer::Metric::kCount, {}}, time{analyzer::Metric::kTime, {}};
  for (size_t place = 0; place < timed_order_.size(); ++place) {
    int index = timed_order_[place];
    count.features.push_back({timed_keys_[place], float(sums[kSampledFunctions + index])});
    time.features.push_back({timed_keys_[place], float(sums[kSampledFunctions + kTimedFunctions + index])});
  }
  summary.metrics = {std::move(samples), std::move(count), std::move(time)};
  return summary;
}

}  // namespace limpwatch::scale
