#include "limpwatch/analyzer/period_comparison.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "limpwatch/analyzer/flow_categories.h"
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

// Where a comparison reads its samples: the functions or the categories.
class SampleTable {
 public:
  virtual ~SampleTable() = default;
  virtual const FunctionInPeriod* Find(const PeriodProfile& period, uint64_t key) const = 0;
  virtual void Keys(const PeriodProfile& period, std::vector<uint64_t>* keys) const = 0;
  // What a structural mutation's presence test counts: ticks, or flows.
  virtual size_t Units(const PeriodProfile& period) const = 0;
};

class FunctionTable : public SampleTable {
 public:
  const FunctionInPeriod* Find(const PeriodProfile& period, uint64_t key) const override {
    auto found = period.functions().find(key);
    return found == period.functions().end() ? nullptr : &found->second;
  }
  void Keys(const PeriodProfile& period, std::vector<uint64_t>* keys) const override {
    for (const auto& [hash, function] : period.functions()) keys->push_back(hash);
  }
  size_t Units(const PeriodProfile& period) const override { return period.ticks(); }
};

class CategoryTable : public SampleTable {
 public:
  const FunctionInPeriod* Find(const PeriodProfile& period, uint64_t key) const override {
    auto found = period.categories().find(key);
    return found == period.categories().end() ? nullptr : &found->second.latency;
  }
  void Keys(const PeriodProfile& period, std::vector<uint64_t>* keys) const override {
    for (const auto& [key, category] : period.categories()) keys->push_back(key);
  }
  size_t Units(const PeriodProfile& period) const override { return period.flows(); }
};

void AddTo(const SampleTable& table, const PeriodProfile& period, uint64_t name_hash, bool per_tick,
           Sample* sample) {
  const FunctionInPeriod* found = table.Find(period, name_hash);
  if (found == nullptr) return;
  const FunctionInPeriod& function = *found;
  const std::vector<double>& values = per_tick ? function.ms_without_calls : function.ms_per_call;
  sample->sorted.insert(sample->sorted.end(), values.begin(), values.end());
  sample->calls += per_tick ? function.ms_without_calls.size() : function.calls;
  sample->self_ms += function.self_ms;
}

void Finish(Sample* sample) {
  std::sort(sample->sorted.begin(), sample->sorted.end());
  sample->median_ms = MedianOfSorted(sample->sorted);
}

bool CalledIn(const SampleTable& table, const PeriodProfile& period, uint64_t name_hash) {
  const FunctionInPeriod* found = table.Find(period, name_hash);
  return found != nullptr && found->calls > 0;
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

void PeriodProfile::AddFlows(const FlowsRecord& record) {
  for (const FlowSample& flow : record.flows) {
    // Keyed by name hashes: no names are needed to tell categories apart.
    CategorizedFlow categorized = CategorizeFlow(flow, [](uint64_t) { return std::string(); });
    if (categorized.calls.empty()) continue;
    CategoryInPeriod& category = categories_[categorized.category];
    if (category.latency.calls == 0) category.example = flow;
    double latency_ms = categorized.latency_ns / 1e6;
    category.latency.ms_per_call.push_back(latency_ms);
    category.latency.calls += 1;
    category.latency.self_ms += latency_ms;
    ++flows_;
  }
}

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
  for (auto& [key, theirs] : other.categories_) {
    CategoryInPeriod& ours = categories_[key];
    if (ours.latency.calls == 0) ours.example = std::move(theirs.example);
    ours.latency.ms_per_call.insert(ours.latency.ms_per_call.end(), theirs.latency.ms_per_call.begin(),
                                    theirs.latency.ms_per_call.end());
    ours.latency.calls += theirs.latency.calls;
    ours.latency.self_ms += theirs.latency.self_ms;
  }
  flows_ += other.flows_;
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

namespace {

PeriodComparison Compare(const SampleTable& table, const std::vector<PeriodProfile>& baseline_runs,
                         const PeriodProfile& after, const ComparisonSettings& settings) {
  std::vector<uint64_t> hashes;
  for (const PeriodProfile& run : baseline_runs) table.Keys(run, &hashes);
  table.Keys(after, &hashes);
  std::sort(hashes.begin(), hashes.end());
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());

  PeriodComparison comparison;
  comparison.baseline_runs = baseline_runs.size();
  comparison.functions_compared = hashes.size();
  double seconds_before = 0;
  size_t ticks_before = 0;
  for (const PeriodProfile& run : baseline_runs) {
    seconds_before += run.seconds();
    ticks_before += table.Units(run);
  }
  const size_t ticks_after = table.Units(after);
  seconds_before = std::max(seconds_before, 1e-9);
  const double seconds_after = SecondsOf(after);
  std::vector<Sample> per_run(baseline_runs.size());
  for (uint64_t hash : hashes) {
    bool called = CalledIn(table, after, hash);
    for (const PeriodProfile& run : baseline_runs) called |= CalledIn(table, run, hash);
    const bool per_tick = !called;
    Sample was, is;
    for (size_t index = 0; index < baseline_runs.size(); ++index) {
      AddTo(table, baseline_runs[index], hash, per_tick, &was);
      // Each run on its own only to measure the noise between runs.
      if (baseline_runs.size() < 2) continue;
      per_run[index] = Sample();
      AddTo(table, baseline_runs[index], hash, per_tick, &per_run[index]);
      Finish(&per_run[index]);
    }
    AddTo(table, after, hash, per_tick, &is);
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
      change.p_value = was.sorted.empty() ? PresencePValue(is.sorted.size(), ticks_after, ticks_before)
                                          : PresencePValue(was.sorted.size(), ticks_before, ticks_after);
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

// The calls of a flow as a multiset of name hashes, sorted.
std::vector<uint64_t> CallMultiset(const FlowSample& flow) {
  std::vector<uint64_t> calls;
  for (const FlowCallRecord& call : flow.calls) calls.push_back(call.name_hash);
  std::sort(calls.begin(), calls.end());
  return calls;
}

double Jaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  std::vector<uint64_t> both, either;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(either));
  return either.empty() ? 0.0 : double(both.size()) / double(either.size());
}

double ShareOf(const std::unordered_map<uint64_t, CategoryInPeriod>& categories, uint64_t flows, uint64_t category) {
  auto found = categories.find(category);
  if (found == categories.end() || flows == 0) return 0;
  return double(found->second.latency.calls) / double(flows);
}

}  // namespace

PeriodComparison ComparePeriods(const std::vector<PeriodProfile>& baseline_runs, const PeriodProfile& after,
                                const ComparisonSettings& settings) {
  return Compare(FunctionTable(), baseline_runs, after, settings);
}

const CategoryInPeriod* FindCategory(const std::vector<PeriodProfile>& baseline_runs, const PeriodProfile& after,
                                     uint64_t category) {
  auto found = after.categories().find(category);
  if (found != after.categories().end()) return &found->second;
  for (const PeriodProfile& run : baseline_runs) {
    auto in_run = run.categories().find(category);
    if (in_run != run.categories().end()) return &in_run->second;
  }
  return nullptr;
}

CategoryComparison CompareCategories(const std::vector<PeriodProfile>& baseline_runs, const PeriodProfile& after,
                                     const ComparisonSettings& settings) {
  CategoryComparison result;
  result.changes = Compare(CategoryTable(), baseline_runs, after, settings);
  std::unordered_map<uint64_t, CategoryInPeriod> before;  // the baseline runs' categories: counts and shapes
  for (const PeriodProfile& run : baseline_runs) {
    result.flows_before += run.flows();
    for (const auto& [key, category] : run.categories()) {
      CategoryInPeriod& merged = before[key];
      if (merged.latency.calls == 0) merged.example = category.example;
      merged.latency.calls += category.latency.calls;
    }
  }
  result.flows_after = after.flows();
  for (const FunctionChange& change : result.changes.mutations) {
    if (change.kind != MutationKind::kNew) continue;
    const CategoryInPeriod* added = FindCategory(baseline_runs, after, change.name_hash);
    if (added == nullptr || added->example.calls.empty()) continue;
    std::vector<uint64_t> calls = CallMultiset(added->example);
    std::vector<Precursor> candidates;
    for (const auto& [key, candidate] : before) {
      if (candidate.example.calls.empty() || candidate.example.calls[0].name_hash != added->example.calls[0].name_hash) {
        continue;  // another kind of request
      }
      Precursor precursor;
      precursor.category = key;
      precursor.similarity = Jaccard(calls, CallMultiset(candidate.example));
      precursor.share_before = ShareOf(before, result.flows_before, key);
      precursor.share_after = ShareOf(after.categories(), result.flows_after, key);
      candidates.push_back(precursor);
    }
    // The most similar first; among equals, the one whose share fell most
    // (its flows are the ones that now take the new shape).
    std::sort(candidates.begin(), candidates.end(), [](const Precursor& a, const Precursor& b) {
      if (a.similarity != b.similarity) return a.similarity > b.similarity;
      return a.share_before - a.share_after > b.share_before - b.share_after;
    });
    if (candidates.size() > 3) candidates.resize(3);
    if (!candidates.empty()) result.precursors[change.name_hash] = std::move(candidates);
  }
  return result;
}

std::string DescribeCategory(const CategoryInPeriod& category, const std::unordered_map<uint64_t, std::string>& names,
                             bool short_names) {
  CategorizedFlow flow = CategorizeFlow(category.example, [&names](uint64_t hash) {
    auto found = names.find(hash);
    return found != names.end() ? found->second : std::string();
  });
  return short_names ? flow.display : flow.structure;
}

}  // namespace limpwatch::analyzer
