#include "limpwatch/analyzer/period_comparison.h"

#include <algorithm>
#include <cmath>

#include "limpwatch/analyzer/ks_test.h"
#include "limpwatch/analyzer/statistics.h"

namespace limpwatch::analyzer {
namespace {

// The function's sample in one period and how often it is drawn per call.
struct Side {
  const std::vector<double>* sample = nullptr;
  uint64_t calls = 0;
  double self_ms = 0;
};

const std::vector<double> kNoSample;

Side SideOf(const PeriodProfile& period, uint64_t name_hash, bool per_tick) {
  auto found = period.functions().find(name_hash);
  if (found == period.functions().end()) return {&kNoSample, 0, 0};
  const FunctionInPeriod& function = found->second;
  if (per_tick) return {&function.ms_without_calls, function.ms_without_calls.size(), function.self_ms};
  return {&function.ms_per_call, function.calls, function.self_ms};
}

}  // namespace

void PeriodProfile::Add(const std::string& server, const TickRecord& tick) {
  ++ticks_;
  servers_.insert(server);
  tick_ms_by_end_.emplace(tick.unix_ms, tick.tick_ms);
  for (const FunctionTick& entry : tick.functions) {
    FunctionInPeriod& function = functions_[entry.name_hash];
    if (entry.calls > 0) {
      function.ms_per_call.push_back(entry.self_ms / double(entry.calls));
    } else if (entry.self_ms > 0) {
      function.ms_without_calls.push_back(entry.self_ms);
    }
    function.calls += entry.calls;
    function.self_ms += entry.self_ms;
  }
}

double PeriodProfile::seconds() const {
  double ms = 0;
  for (const auto& [end, length] : tick_ms_by_end_) ms += length;
  return ms / 1000.0;
}

const char* MutationKindName(MutationKind kind) {
  switch (kind) {
    case MutationKind::kResponseTime: return "response time";
    case MutationKind::kNew: return "new";
    case MutationKind::kVanished: return "vanished";
  }
  return "?";
}

PeriodComparison ComparePeriods(const PeriodProfile& before, const PeriodProfile& after,
                                const ComparisonSettings& settings) {
  std::vector<uint64_t> hashes;
  for (const auto& [hash, function] : before.functions()) hashes.push_back(hash);
  for (const auto& [hash, function] : after.functions()) {
    if (before.functions().find(hash) == before.functions().end()) hashes.push_back(hash);
  }
  std::sort(hashes.begin(), hashes.end());

  PeriodComparison comparison;
  comparison.functions_compared = hashes.size();
  const double seconds_before = std::max(before.seconds(), 1e-9);
  const double seconds_after = std::max(after.seconds(), 1e-9);
  std::vector<double> sorted_before, sorted_after;
  for (uint64_t hash : hashes) {
    bool per_tick = SideOf(before, hash, false).calls == 0 && SideOf(after, hash, false).calls == 0;
    Side was = SideOf(before, hash, per_tick);
    Side is = SideOf(after, hash, per_tick);
    FunctionChange change;
    change.name_hash = hash;
    change.per_tick = per_tick;
    change.ticks_before = was.sample->size();
    change.ticks_after = is.sample->size();
    change.calls_before = was.calls;
    change.calls_after = is.calls;
    change.self_ms_before = was.self_ms;
    change.self_ms_after = is.self_ms;
    change.calls_per_s_before = double(was.calls) / seconds_before;
    change.calls_per_s_after = double(is.calls) / seconds_after;
    sorted_before.assign(was.sample->begin(), was.sample->end());
    sorted_after.assign(is.sample->begin(), is.sample->end());
    std::sort(sorted_before.begin(), sorted_before.end());
    std::sort(sorted_after.begin(), sorted_after.end());
    change.median_ms_before = MedianOfSorted(sorted_before);
    change.median_ms_after = MedianOfSorted(sorted_after);
    if (change.median_ms_before > 0 && change.median_ms_after > 0) {
      change.ratio = change.median_ms_after / change.median_ms_before;
    }
    change.contribution_ms_per_s = change.calls_per_s_after * change.median_ms_after -
                                   change.calls_per_s_before * change.median_ms_before;

    if (sorted_before.empty() && sorted_after.empty()) continue;  // never timed in either
    if (sorted_before.empty() || sorted_after.empty()) {
      change.kind = sorted_before.empty() ? MutationKind::kNew : MutationKind::kVanished;
      comparison.mutations.push_back(change);
      continue;
    }
    if (sorted_before.size() < settings.min_ticks || sorted_after.size() < settings.min_ticks) continue;
    ++comparison.functions_tested;
    change.ks_statistic = KsStatistic(sorted_before, sorted_after);
    change.p_value = KsPValue(change.ks_statistic, sorted_before.size(), sorted_after.size());
    if (change.p_value < settings.alpha) {
      change.kind = MutationKind::kResponseTime;
      comparison.mutations.push_back(change);
    }
  }
  std::stable_sort(comparison.mutations.begin(), comparison.mutations.end(),
                   [](const FunctionChange& a, const FunctionChange& b) {
                     return std::fabs(a.contribution_ms_per_s) > std::fabs(b.contribution_ms_per_s);
                   });
  return comparison;
}

}  // namespace limpwatch::analyzer
