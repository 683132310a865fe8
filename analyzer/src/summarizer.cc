#include "limpwatch/analyzer/summarizer.h"

#include <algorithm>

#include "limpwatch/analyzer/error_features.h"
#include "limpwatch/analyzer/statistics.h"
#include "limpwatch/analyzer/tick_record.h"
#include "limpwatch/shm/name_hash.h"

namespace limpwatch::analyzer {
namespace {

const uint64_t kRoundTripHash = shm::FunctionNameHash(kRoundTripName);
const uint64_t kLostPacketsHash = shm::FunctionNameHash(kLostPacketsName);
const uint64_t kRunqueueWaitHash = shm::FunctionNameHash(kRunqueueWaitName);
const uint64_t kFileSyncHash = shm::FunctionNameHash(kFileSyncName);
const uint64_t kMajorFaultsHash = shm::FunctionNameHash(kMajorFaultsName);
const uint64_t kCpuTimeHash = shm::FunctionNameHash(kCpuTimeName);
constexpr double kErrorFeatureWeight = 1e12;

// The window's [lost packets] time as its median tick times its ticks: a
// link that loses packets loses them every second, while a machine too
// loaded to drain its loopback queues for a moment makes one connection
// retransmit once (a 200 ms timeout or more, all in one tick), which a sum
// would carry into every window holding that tick.
double TypicalTickTimes(const Window& window, uint64_t name_hash) {
  std::vector<double> per_tick;
  per_tick.reserve(window.ticks.size());
  for (const TickRecord& tick : window.ticks) {
    auto found = std::find_if(tick.functions.begin(), tick.functions.end(),
                              [name_hash](const FunctionTick& function) { return function.name_hash == name_hash; });
    per_tick.push_back(found != tick.functions.end() ? found->self_ms : 0.0);
  }
  return Median(per_tick) * double(per_tick.size());
}

}  // namespace

void Summarizer::LearnFromPeer(const PeerSummary& summary) {
  for (const auto& metric : summary.metrics) {
    auto& set = metric.metric == Metric::kSamples ? sampled_ : timed_;
    for (const auto& feature : metric.features) set.try_emplace(feature.key);
  }
}

void Summarizer::Admit(const Window& window) {
  for (const auto& [hash, totals] : window.functions) {
    uint32_t key = FoldNameHash(hash);
    name_hashes_[key] = hash;
    double sample_weight = double(totals.samples) / config_.min_feature_samples;
    double time_weight = totals.self_ms / config_.min_feature_time_ms;
    if (sample_weight >= 1.0 || sampled_.count(key)) {
      auto& state = sampled_[key];
      state.weight = std::max(state.weight, sample_weight);
    }
    // The round trip, the losses, the CPU wait and time, the syncs and the
    // major faults are compared on every server, small or not
    // (cluster_diagnoser.cc): they always travel.
    bool counted_scalar = hash == kLostPacketsHash || hash == kFileSyncHash || hash == kMajorFaultsHash;
    if (hash == kRoundTripHash || hash == kRunqueueWaitHash || hash == kCpuTimeHash ||
        (counted_scalar && totals.calls > 0)) {
      time_weight = std::max(time_weight, 1.0);
    }
    // So do failed calls, however few, ahead of any function when room is
    // short: the peers compare their counts (error_features.h).
    if (totals.calls > 0 && IsErrorFeatureHash(hash)) time_weight = kErrorFeatureWeight;
    if (time_weight >= 1.0 || timed_.count(key)) {
      auto& state = timed_[key];
      state.weight = std::max(state.weight, time_weight);
    }
  }
}

std::vector<uint32_t> Summarizer::Chosen(Metric metric) const {
  // The datagram holds max_features values: samples take one per function,
  // count and time two. Split the room in proportion, heaviest first.
  size_t sampled = sampled_.size(), timed = timed_.size();
  size_t room = config_.max_features;
  size_t wanted = sampled + 2 * timed;
  size_t room_sampled = sampled, room_timed = timed;
  if (wanted > room) {
    room_sampled = std::min(sampled, room * sampled / std::max<size_t>(wanted, 1));
    room_timed = std::min(timed, (room - room_sampled) / 2);
  }
  const auto& set = metric == Metric::kSamples ? sampled_ : timed_;
  size_t limit = metric == Metric::kSamples ? room_sampled : room_timed;
  std::vector<std::pair<double, uint32_t>> ranked;
  ranked.reserve(set.size());
  for (const auto& [key, state] : set) ranked.push_back({state.weight, key});
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<uint32_t> keys;
  for (size_t index = 0; index < std::min(limit, ranked.size()); ++index) keys.push_back(ranked[index].second);
  std::sort(keys.begin(), keys.end());
  return keys;
}

PeerSummary Summarizer::Summarize(const Window& window, uint64_t boot_id, uint32_t invariant_bits) {
  Admit(window);
  std::unordered_map<uint32_t, const FunctionTotals*> by_key;
  for (const auto& [hash, totals] : window.functions) by_key[FoldNameHash(hash)] = &totals;

  PeerSummary summary;
  summary.node = window.node;
  summary.boot_id = boot_id;
  summary.window = window.index;
  summary.window_end_unix_ms = window.end_unix_ms;
  summary.window_ticks = static_cast<uint16_t>(config_.window_ticks);
  summary.tick_ms = static_cast<uint16_t>(config_.tick_ms);
  summary.invariant_bits = invariant_bits;
  summary.io = ComputeIoMedians(window);
  for (Metric metric : {Metric::kSamples, Metric::kCount, Metric::kTime}) {
    MetricFeatures features;
    features.metric = metric;
    for (uint32_t key : Chosen(metric)) {
      auto found = by_key.find(key);
      double value = 0;
      if (found != by_key.end()) {
        const FunctionTotals& totals = *found->second;
        value = metric == Metric::kSamples ? double(totals.samples)
                : metric == Metric::kCount ? double(totals.calls)
                                           : totals.self_ms;
        if (metric == Metric::kTime && NameHashOf(key) == kLostPacketsHash) {
          value = TypicalTickTimes(window, kLostPacketsHash);
        }
      }
      features.features.push_back({key, static_cast<float>(value)});
    }
    summary.metrics.push_back(std::move(features));
  }
  return summary;
}

uint64_t Summarizer::NameHashOf(uint32_t key) const {
  auto found = name_hashes_.find(key);
  return found == name_hashes_.end() ? 0 : found->second;
}

size_t Summarizer::FeatureCount(Metric metric) const {
  return metric == Metric::kSamples ? sampled_.size() : timed_.size();
}

IoMedians ComputeIoMedians(const Window& window) {
  std::vector<double> dread, dwrite, nsread, ncread, request;
  uint64_t file_reads = 0, file_writes = 0;
  for (const TickRecord& tick : window.ticks) {
    if (tick.io.file_reads > 0) dread.push_back(tick.io.dread_ms);
    if (tick.io.file_writes > 0) dwrite.push_back(tick.io.dwrite_ms);
    if (tick.io.socket_reads > 0) nsread.push_back(tick.io.nsread_ms);
    if (tick.io.ncread_ms > 0) ncread.push_back(tick.io.ncread_ms);
    request.push_back(tick.io.request_bytes * 1000.0 / tick.tick_ms);
    file_reads += tick.io.file_reads;
    file_writes += tick.io.file_writes;
  }
  IoMedians medians;
  medians.dread_ms = file_reads >= kMinComparedFileCalls ? static_cast<float>(Median(dread)) : 0.0f;
  medians.dwrite_ms = file_writes >= kMinComparedFileCalls ? static_cast<float>(Median(dwrite)) : 0.0f;
  medians.nsread_ms = static_cast<float>(Median(nsread));
  medians.ncread_ms = static_cast<float>(Median(ncread));
  medians.request_bytes_per_s = static_cast<float>(Median(request));
  return medians;
}

}  // namespace limpwatch::analyzer
