#include "profile_evidence.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "limpwatch/analyzer/statistics.h"

namespace limpwatch::analyzer {
namespace {

constexpr double kLeastShareOfPeersWork = 0.1;

const std::vector<Feature>* FeaturesOf(const PeerSummary& summary, Metric metric) {
  for (const auto& features : summary.metrics) {
    if (features.metric == metric) return &features.features;
  }
  return nullptr;
}

double MedianWithoutOne(const std::vector<double>& sorted, double value) {
  size_t removed = size_t(std::lower_bound(sorted.begin(), sorted.end(), value) - sorted.begin());
  size_t size = sorted.size() - 1;
  if (size == 0) return std::numeric_limits<double>::quiet_NaN();
  auto at = [&](size_t index) { return sorted[index < removed ? index : index + 1]; };
  return size % 2 == 1 ? at(size / 2) : (at(size / 2 - 1) + at(size / 2)) / 2.0;
}

// Per server, a rate (cost per unit of work) over the peers' median rate, as
// a log; servers with too little work, or none of the cost, are NaN.
std::vector<double> RatesAgainstPeers(const std::vector<double>& cost, const std::vector<double>& work) {
  const size_t count = cost.size();
  std::vector<double> ratios(count, std::numeric_limits<double>::quiet_NaN());
  std::vector<double> works;
  for (double amount : work) {
    if (amount > 0) works.push_back(amount);
  }
  if (works.size() < 3) return ratios;
  double typical = MedianInPlace(works);
  std::vector<double> rates(count, std::numeric_limits<double>::quiet_NaN()), sorted;
  for (size_t i = 0; i < count; ++i) {
    if (work[i] >= kLeastShareOfPeersWork * typical && cost[i] > 0) {
      rates[i] = std::log(cost[i] / work[i]);
      sorted.push_back(rates[i]);
    }
  }
  if (sorted.size() < 3) return ratios;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < count; ++i) {
    if (std::isfinite(rates[i])) ratios[i] = rates[i] - MedianWithoutOne(sorted, rates[i]);
  }
  return ratios;
}

}  // namespace

ProfileRatios ComputeProfileRatios(const std::vector<const PeerSummary*>& summaries,
                                   const std::function<bool(uint32_t, Metric)>& left_out) {
  const size_t count = summaries.size();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ProfileRatios ratios;
  ratios.time.assign(count, nan);
  ratios.samples.assign(count, nan);
  ratios.count.assign(count, nan);
  ratios.excess_time.assign(count, {});
  ratios.excess_calls.assign(count, {});
  ratios.excess_samples.assign(count, {});
  if (count < 3) return ratios;

  // Calls and self time per function and server; total samples and calls.
  struct Cell {
    double calls = 0;
    double time = 0;
  };
  std::unordered_map<uint32_t, std::vector<Cell>> functions;
  std::vector<double> samples(count, 0), calls(count, 0), bytes(count, 0);
  for (size_t i = 0; i < count; ++i) {
    if (const auto* features = FeaturesOf(*summaries[i], Metric::kCount)) {
      for (const Feature& feature : *features) {
        if (left_out(feature.key, Metric::kTime)) continue;
        auto& cells = functions[feature.key];
        cells.resize(count);
        cells[i].calls = feature.value;
        if (!left_out(feature.key, Metric::kCount)) calls[i] += feature.value;
      }
    }
    if (const auto* features = FeaturesOf(*summaries[i], Metric::kTime)) {
      for (const Feature& feature : *features) {
        if (left_out(feature.key, Metric::kTime)) continue;
        auto& cells = functions[feature.key];
        cells.resize(count);
        cells[i].time = feature.value;
      }
    }
    if (const auto* features = FeaturesOf(*summaries[i], Metric::kSamples)) {
      for (const Feature& feature : *features) {
        if (!left_out(feature.key, Metric::kSamples)) samples[i] += feature.value;
      }
    }
    bytes[i] = summaries[i]->io.request_bytes_per_s;
  }

  // Time: actual over what the same calls take the peers. Calls: each
  // function's over what the server's request bytes would take at the
  // peers' calls per byte.
  std::vector<double> actual(count, 0), expected(count, 0), per_call, sorted, per_byte, sorted_per_byte;
  for (auto& [key, cells] : functions) {
    if (!left_out(key, Metric::kCount)) {
      per_byte.assign(count, nan);
      sorted_per_byte.clear();
      for (size_t i = 0; i < count; ++i) {
        if (bytes[i] > 0) {
          per_byte[i] = cells[i].calls / bytes[i];
          sorted_per_byte.push_back(per_byte[i]);
        }
      }
      std::sort(sorted_per_byte.begin(), sorted_per_byte.end());
      for (size_t i = 0; i < count && sorted_per_byte.size() >= 3; ++i) {
        if (!std::isfinite(per_byte[i])) continue;
        double at_peers_rate = bytes[i] * MedianWithoutOne(sorted_per_byte, per_byte[i]);
        if (cells[i].calls > at_peers_rate) ratios.excess_calls[i][key] = cells[i].calls - at_peers_rate;
      }
    }
    per_call.assign(count, nan);
    sorted.clear();
    for (size_t i = 0; i < count; ++i) {
      if (cells[i].calls >= 1) {
        per_call[i] = cells[i].time / cells[i].calls;
        sorted.push_back(per_call[i]);
      }
    }
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < count; ++i) {
      double time = cells[i].time;
      actual[i] += time;
      double peers = std::isfinite(per_call[i]) && sorted.size() >= 2 ? MedianWithoutOne(sorted, per_call[i]) : nan;
      if (!std::isfinite(peers)) {
        expected[i] += time;  // nothing to compare it with: neutral
        continue;
      }
      double at_peers_pace = cells[i].calls * peers;
      expected[i] += at_peers_pace;
      if (time > at_peers_pace) ratios.excess_time[i][key] = time - at_peers_pace;
    }
  }
  std::vector<double> typical_work;
  for (double amount : expected) {
    if (amount > 0) typical_work.push_back(amount);
  }
  if (typical_work.size() >= 3) {
    double typical = MedianInPlace(typical_work);
    for (size_t i = 0; i < count; ++i) {
      if (expected[i] >= kLeastShareOfPeersWork * typical && actual[i] > 0) {
        ratios.time[i] = std::log(actual[i] / expected[i]);
      }
    }
  }
  ratios.samples = RatesAgainstPeers(samples, calls);
  // Each sampled function's share of the extra samples.
  std::unordered_map<uint32_t, std::vector<double>> sampled;
  for (size_t i = 0; i < count; ++i) {
    const auto* features = FeaturesOf(*summaries[i], Metric::kSamples);
    if (features == nullptr) continue;
    for (const Feature& feature : *features) {
      if (left_out(feature.key, Metric::kSamples)) continue;
      auto& per_server = sampled[feature.key];
      per_server.resize(count, 0.0);
      per_server[i] = feature.value;
    }
  }
  std::vector<double> per_call_rates;
  for (auto& [key, per_server] : sampled) {
    per_call_rates.clear();
    std::vector<double> rate(count, nan);
    for (size_t i = 0; i < count; ++i) {
      if (calls[i] > 0) {
        rate[i] = per_server[i] / calls[i];
        per_call_rates.push_back(rate[i]);
      }
    }
    if (per_call_rates.size() < 3) continue;
    std::sort(per_call_rates.begin(), per_call_rates.end());
    for (size_t i = 0; i < count; ++i) {
      if (!std::isfinite(rate[i])) continue;
      double at_peers_rate = calls[i] * MedianWithoutOne(per_call_rates, rate[i]);
      if (per_server[i] > at_peers_rate) ratios.excess_samples[i][key] = per_server[i] - at_peers_rate;
    }
  }
  ratios.count = RatesAgainstPeers(calls, bytes);
  return ratios;
}

}  // namespace limpwatch::analyzer
