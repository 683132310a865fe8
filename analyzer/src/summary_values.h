// Values read from peer summaries: a feature's value, and each compared
// metric's scalar (the I/O service times, and the per-tick means of
// limpwatch's own features). Shared by both decision rules.
#ifndef LIMPWATCH_ANALYZER_SRC_SUMMARY_VALUES_H_
#define LIMPWATCH_ANALYZER_SRC_SUMMARY_VALUES_H_

#include <cstdint>
#include <vector>

#include "limpwatch/analyzer/peer_summary.h"
#include "limpwatch/analyzer/thresholds.h"
#include "limpwatch/analyzer/tick_record.h"
#include "limpwatch/shm/name_hash.h"

namespace limpwatch::analyzer {

inline const std::vector<Feature>* FeaturesOf(const PeerSummary& summary, Metric metric) {
  for (const auto& features : summary.metrics) {
    if (features.metric == metric) return &features.features;
  }
  return nullptr;
}

inline Metric VectorMetricOf(ComparedMetric metric) {
  return metric == ComparedMetric::kSamples ? Metric::kSamples
         : metric == ComparedMetric::kCount ? Metric::kCount
                                            : Metric::kTime;
}

// The keys of the features the rtt, loss, cpuwait, dsync and majflt metrics are read from.
inline constexpr uint32_t kRoundTripKey = FoldNameHash(shm::FunctionNameHash(kRoundTripName));
inline constexpr uint32_t kLostPacketsKey = FoldNameHash(shm::FunctionNameHash(kLostPacketsName));
inline constexpr uint32_t kRunqueueWaitKey = FoldNameHash(shm::FunctionNameHash(kRunqueueWaitName));
inline constexpr uint32_t kFileSyncKey = FoldNameHash(shm::FunctionNameHash(kFileSyncName));
inline constexpr uint32_t kMajorFaultsKey = FoldNameHash(shm::FunctionNameHash(kMajorFaultsName));
inline constexpr uint32_t kCpuTimeKey = FoldNameHash(shm::FunctionNameHash(kCpuTimeName));

// Whether a key is one of the features limpwatch adds to a profile itself
// (above), not a function of the server's.
inline bool IsOwnFeatureKey(uint32_t key) {
  return key == kRoundTripKey || key == kLostPacketsKey || key == kRunqueueWaitKey || key == kFileSyncKey ||
         key == kMajorFaultsKey || key == kCpuTimeKey;
}

// A feature's value for one vector metric in one summary, 0 when absent.
inline double ValueOf(const PeerSummary& summary, Metric wanted, uint32_t key) {
  for (const auto& metric : summary.metrics) {
    if (metric.metric != wanted) continue;
    for (const Feature& feature : metric.features) {
      if (feature.key == key) return feature.value;
    }
  }
  return 0;
}

// A feature's self time (ms) in one summary, 0 when absent.
inline double TimeOf(const PeerSummary& summary, uint32_t key) { return ValueOf(summary, Metric::kTime, key); }

// The window's mean time per call of a feature, 0 (nothing to compare) when
// it was called fewer than `min_calls` times.
inline double TimePerCallOf(const PeerSummary& summary, uint32_t key, double min_calls) {
  double calls = ValueOf(summary, Metric::kCount, key);
  return calls > 0 && calls >= min_calls ? TimeOf(summary, key) / calls : 0;
}

// A server's syncs are compared when it made this many in the window. A
// large sequential write or read syncs a few times a file: one sync flushing
// a whole file on one server and a small one on another differ by 4-5 ms
// with nothing wrong (test-bed ddr: one sync a server in a window), which,
// trained, hid a throttled disk's 8 ms per sync under postmark. A server
// syncing its metadata syncs tens of times a second (OrangeFS: 15-280).
constexpr double kMinComparedSyncs = 8;

inline double ScalarOf(const PeerSummary& summary, ComparedMetric metric) {
  switch (metric) {
    case ComparedMetric::kDread: return summary.io.dread_ms;
    case ComparedMetric::kDwrite: return summary.io.dwrite_ms;
    case ComparedMetric::kNsread: return summary.io.nsread_ms;
    case ComparedMetric::kNcread: return summary.io.ncread_ms;
    case ComparedMetric::kRoundTrip:
      return summary.window_ticks == 0 ? 0 : TimeOf(summary, kRoundTripKey) / summary.window_ticks;
    case ComparedMetric::kLoss:
      return summary.window_ticks == 0 ? 0 : TimeOf(summary, kLostPacketsKey) / summary.window_ticks;
    case ComparedMetric::kCpuWait:
      return summary.window_ticks == 0 ? 0 : TimeOf(summary, kRunqueueWaitKey) / summary.window_ticks;
    case ComparedMetric::kDsync: return TimePerCallOf(summary, kFileSyncKey, kMinComparedSyncs);
    case ComparedMetric::kMajorFaults:
      return summary.window_ticks == 0 ? 0 : TimeOf(summary, kMajorFaultsKey) / kMajorFaultMs / summary.window_ticks;
    default: return 0;
  }
}

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_SRC_SUMMARY_VALUES_H_
