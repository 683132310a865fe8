#include "limpwatch/analyzer/period_comparison.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "limpwatch/analyzer/ks_test.h"
#include "limpwatch/analyzer/statistics.h"

namespace limpwatch::analyzer {
namespace {

// One function's sample in one period, sorted, with how often it is drawn.
struct Sample {
  std::vector<double> sorted;
  uint64_t calls = 0;  // per tick: the ticks with time
  double self_ms = 0;
  double median_ms = 0;
};

void AddTo(const PeriodProfile& period, uint64_t name_hash, bool per_tick, Sample* sample) {
  auto found = period.functions().find(name_hash);
  if (found == period.functions().end()) return;
  const FunctionInPeriod& function = found->second;
  const std::vector<double>& values = per_tick ? function.ms_without_calls : function.ms_per_call;
  sample->sorted.insert(sample->sorted.end(), values.begin(), values.end());
  sample->calls += per_tick ? function.ms_without_calls.size() : function.calls;
  sample->self_ms += function.self_ms;
}

void Finish(Sample* sample) {
  std::sort(sample->sorted.begin(), sample->sorted.end());
  sample->median_ms = MedianOfSorted(sample->sorted);
}

bool CalledIn(const PeriodProfile& period, uint64_t name_hash) {
  auto found = period.functions().find(name_hash);
  return found != period.functions().end() && found->second.calls > 0;
}

// How far apart two samples lie: the KS statistic; for samples that do not
// overlap at all (statistic 1), 1 plus the log of their medians' ratio, so
// that runs apart by a factor of two and by a factor of ten do not tie;
// infinite when only one has values (a structural difference), 0 when
// neither has.
double Distance(const Sample& a, const Sample& b) {
  if (a.sorted.empty() || b.sorted.empty()) {
    return a.sorted.empty() && b.sorted.empty() ? 0.0 : std::numeric_limits<double>::infinity();
  }
  double statistic = KsStatistic(a.sorted, b.sorted);
  if (statistic < 1.0 || a.median_ms <= 0 || b.median_ms <= 0) return statistic;
  return 1.0 + std::fabs(std::log(b.median_ms / a.median_ms));
}

// Calls per second times the median time per call: the time the function
// takes a second at its usual cost.
double Load(const Sample& sample, double seconds) { return double(sample.calls) / seconds * sample.median_ms; }

double SecondsOf(const PeriodProfile& period) { return std::max(period.seconds(), 1e-9); }

// A structural mutation's test: were the ticks of both periods one pool,
// the chance that all `timed` ticks in which the function was timed fall in
// the period of `side_ticks` ticks, none in the other's `other_ticks`
// (hypergeometric). A function timed in 2 ticks of one run and never in the
// other is chance; in 20 ticks it is not.
double PresencePValue(size_t timed, size_t side_ticks, size_t other_ticks) {
  double log_p = 0;
  for (size_t drawn = 0; drawn < timed && drawn < side_ticks; ++drawn) {
    log_p += std::log(double(side_ticks - drawn) / double(side_ticks + other_ticks - drawn));
    if (log_p < -700) break;  // far below any level; exp() would round to 0 anyway
  }
  return std::exp(log_p);
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

uint64_t PeriodProfile::first_unix_ms() const { return tick_ms_by_end_.empty() ? 0 : tick_ms_by_end_.begin()->first; }

uint64_t PeriodProfile::last_unix_ms() const { return tick_ms_by_end_.empty() ? 0 : tick_ms_by_end_.rbegin()->first; }

void PeriodProfile::Absorb(PeriodProfile&& other) {
  ticks_ += other.ticks_;
  servers_.merge(other.servers_);
  tick_ms_by_end_.merge(other.tick_ms_by_end_);
  for (auto& [hash, theirs] : other.functions_) {
    FunctionInPeriod& ours = functions_[hash];
    ours.ms_per_call.insert(ours.ms_per_call.end(), theirs.ms_per_call.begin(), theirs.ms_per_call.end());
    ours.ms_without_calls.insert(ours.ms_without_calls.end(), theirs.ms_without_calls.begin(),
                                 theirs.ms_without_calls.end());
    ours.calls += theirs.calls;
    ours.self_ms += theirs.self_ms;
  }
  other = PeriodProfile();
}

std::vector<PeriodProfile> GroupIntoRuns(std::vector<PeriodProfile> recordings) {
  std::erase_if(recordings, [](const PeriodProfile& recording) { return recording.ticks() == 0; });
  std::sort(recordings.begin(), recordings.end(), [](const PeriodProfile& a, const PeriodProfile& b) {
    return a.first_unix_ms() < b.first_unix_ms();
  });
  std::vector<PeriodProfile> runs;
  uint64_t run_end = 0;
  for (PeriodProfile& recording : recordings) {
    // A tick ending at a time another recording covers is of the same run.
    if (runs.empty() || recording.first_unix_ms() > run_end) {
      runs.push_back(std::move(recording));
    } else {
      runs.back().Absorb(std::move(recording));
    }
    run_end = std::max(run_end, runs.back().last_unix_ms());
  }
  return runs;
}

const char* MutationKindName(MutationKind kind) {
  switch (kind) {
    case MutationKind::kResponseTime: return "response time";
    case MutationKind::kNew: return "new";
    case MutationKind::kVanished: return "vanished";
  }
  return "?";
}

PeriodComparison ComparePeriods(const std::vector<PeriodProfile>& baseline_runs, const PeriodProfile& after,
                                const ComparisonSettings& settings) {
  std::vector<uint64_t> hashes;
  for (const PeriodProfile& run : baseline_runs) {
    for (const auto& [hash, function] : run.functions()) hashes.push_back(hash);
  }
  for (const auto& [hash, function] : after.functions()) hashes.push_back(hash);
  std::sort(hashes.begin(), hashes.end());
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());

  PeriodComparison comparison;
  comparison.baseline_runs = baseline_runs.size();
  comparison.functions_compared = hashes.size();
  double seconds_before = 0;
  size_t ticks_before = 0;
  for (const PeriodProfile& run : baseline_runs) {
    seconds_before += run.seconds();
    ticks_before += run.ticks();
  }
  seconds_before = std::max(seconds_before, 1e-9);
  const double seconds_after = SecondsOf(after);
  std::vector<Sample> per_run(baseline_runs.size());
  for (uint64_t hash : hashes) {
    bool called = CalledIn(after, hash);
    for (const PeriodProfile& run : baseline_runs) called |= CalledIn(run, hash);
    const bool per_tick = !called;
    Sample was, is;
    for (size_t index = 0; index < baseline_runs.size(); ++index) {
      AddTo(baseline_runs[index], hash, per_tick, &was);
      // Each run on its own only to measure the noise between runs.
      if (baseline_runs.size() < 2) continue;
      per_run[index] = Sample();
      AddTo(baseline_runs[index], hash, per_tick, &per_run[index]);
      Finish(&per_run[index]);
    }
    AddTo(after, hash, per_tick, &is);
    Finish(&was);
    Finish(&is);
    if (was.sorted.empty() && is.sorted.empty()) continue;  // never timed in either

    FunctionChange change;
    change.name_hash = hash;
    change.per_tick = per_tick;
    change.ticks_before = was.sorted.size();
    change.ticks_after = is.sorted.size();
    change.calls_before = was.calls;
    change.calls_after = is.calls;
    change.self_ms_before = was.self_ms;
    change.self_ms_after = is.self_ms;
    change.calls_per_s_before = double(was.calls) / seconds_before;
    change.calls_per_s_after = double(is.calls) / seconds_after;
    change.median_ms_before = was.median_ms;
    change.median_ms_after = is.median_ms;
    if (was.median_ms > 0 && is.median_ms > 0) change.ratio = is.median_ms / was.median_ms;
    change.contribution_ms_per_s = Load(is, seconds_after) - Load(was, seconds_before);

    if (was.sorted.empty() || is.sorted.empty()) {
      change.kind = was.sorted.empty() ? MutationKind::kNew : MutationKind::kVanished;
      change.p_value = was.sorted.empty() ? PresencePValue(is.sorted.size(), after.ticks(), ticks_before)
                                          : PresencePValue(was.sorted.size(), ticks_before, after.ticks());
      if (change.p_value >= settings.alpha) continue;
    } else {
      if (was.sorted.size() < settings.min_ticks || is.sorted.size() < settings.min_ticks) continue;
      ++comparison.functions_tested;
      change.ks_statistic = KsStatistic(was.sorted, is.sorted);
      change.p_value = KsPValue(change.ks_statistic, was.sorted.size(), is.sorted.size());
      if (change.p_value >= settings.alpha) continue;
      change.kind = MutationKind::kResponseTime;
    }

    if (baseline_runs.size() >= 2) {
      change.ks_to_nearest_run = std::numeric_limits<double>::infinity();
      for (size_t i = 0; i < per_run.size(); ++i) {
        change.ks_to_nearest_run = std::min(change.ks_to_nearest_run, Distance(per_run[i], is));
        double load_i = Load(per_run[i], SecondsOf(baseline_runs[i]));
        for (size_t j = i + 1; j < per_run.size(); ++j) {
          change.ks_between_runs = std::max(change.ks_between_runs, Distance(per_run[i], per_run[j]));
          double load_j = Load(per_run[j], SecondsOf(baseline_runs[j]));
          change.contribution_between_runs_ms_per_s =
              std::max(change.contribution_between_runs_ms_per_s, std::fabs(load_j - load_i));
        }
      }
      if (change.ks_to_nearest_run <= change.ks_between_runs ||
          std::fabs(change.contribution_ms_per_s) <= change.contribution_between_runs_ms_per_s) {
        ++comparison.within_baseline_noise;
        continue;
      }
    }
    comparison.mutations.push_back(change);
  }
  std::stable_sort(comparison.mutations.begin(), comparison.mutations.end(),
                   [](const FunctionChange& a, const FunctionChange& b) {
                     return std::fabs(a.contribution_ms_per_s) > std::fabs(b.contribution_ms_per_s);
                   });
  return comparison;
}

}  // namespace limpwatch::analyzer
