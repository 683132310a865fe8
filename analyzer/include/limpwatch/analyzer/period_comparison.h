// Spectroscope's comparison of a non-problem period with a problem period:
// per request-flow category (flow_categories.h) and per function, the
// response-time mutations a two-sample Kolmogorov-Smirnov test finds in its
// latencies (a category's flows) or time per call (a function's ticks), the
// structural ones (seen in one period only, a new category with its likely
// precursors), ranked by their expected contribution to the change, the
// time the cluster spends in them per second.
#ifndef LIMPWATCH_ANALYZER_PERIOD_COMPARISON_H_
#define LIMPWATCH_ANALYZER_PERIOD_COMPARISON_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "limpwatch/analyzer/flow_record.h"
#include "limpwatch/analyzer/tick_record.h"

namespace limpwatch::analyzer {

// One function in one period, pooled over the period's servers.
struct FunctionInPeriod {
  // Per tick with calls, its time per call (self_ms / calls).
  std::vector<double> ms_per_call;
  // Per tick without calls, its self time: a feature that only measures
  // time ([waiting for a CPU]) is compared by its time per tick.
  std::vector<double> ms_without_calls;
  uint64_t calls = 0;
  double self_ms = 0;
};

// One request-flow category in one period.
struct CategoryInPeriod {
  // ms_per_call: each flow's latency in ms; calls: its flows; self_ms: their sum.
  FunctionInPeriod latency;
  FlowSample example;  // its first flow: its shape, named when the names are known
};

// The ticks (and request flows) of one period, read one at a time: it keeps
// a number per function a tick and per flow, never the ticks or the calls.
class PeriodProfile {
 public:
  // `server` as the recording's header names it.
  void Add(const std::string& server, const TickRecord& tick);
  void AddFlows(const FlowsRecord& record);

  // The period's length: the time that some server recorded, each tick once
  // however many servers recorded it.
  double seconds() const;
  uint64_t ticks() const { return ticks_; }
  const std::set<std::string>& servers() const { return servers_; }
  const std::unordered_map<uint64_t, FunctionInPeriod>& functions() const { return functions_; }
  const std::unordered_map<uint64_t, CategoryInPeriod>& categories() const { return categories_; }
  uint64_t flows() const { return flows_; }
  // The ends of its first and last ticks (unix ms); 0 with no tick.
  uint64_t first_unix_ms() const;
  uint64_t last_unix_ms() const;

  // Takes in another period's ticks (`other` is left empty).
  void Absorb(PeriodProfile&& other);

 private:
  uint64_t ticks_ = 0;
  std::set<std::string> servers_;
  std::map<uint64_t, uint32_t> tick_ms_by_end_;  // unix_ms at a tick's end -> its length
  std::unordered_map<uint64_t, FunctionInPeriod> functions_;
  std::unordered_map<uint64_t, CategoryInPeriod> categories_;
  uint64_t flows_ = 0;
};

// Profiles of single recordings grouped into runs: recordings whose spans
// of time overlap are of one run (a cluster's servers record side by side);
// a run that does not overlap another is a run of its own. Ordered by time.
std::vector<PeriodProfile> GroupIntoRuns(std::vector<PeriodProfile> recordings);

enum class MutationKind {
  kResponseTime,  // its time per call differs (KS test)
  kNew,           // timed after, never before, in more ticks than chance explains
  kVanished,      // timed before, never after, likewise
};

const char* MutationKindName(MutationKind kind);

struct ComparisonSettings {
  // A function's time per call differs when the KS test's p-value is below
  // alpha. Every function of the recordings is tested at once, a few hundred
  // of them: at 0.05 a comparison of two healthy periods would name about one
  // in twenty as mutated; at 0.001 a few hundred tests name none in most
  // comparisons (0.2 expected of 200), while a real slowdown, tested on
  // hundreds of ticks, lies far below it.
  double alpha = 0.001;
  // The ticks with calls each period needs before its function is tested:
  // two samples of 7 that do not overlap at all are the smallest to reach
  // p < 0.001 (6 and 6 reach only 0.0013), and the asymptotic p-value is
  // rough below that; 8 leaves one to spare.
  size_t min_ticks = 8;
};

struct FunctionChange {
  uint64_t name_hash = 0;
  MutationKind kind = MutationKind::kResponseTime;
  // Whether the function is compared by its time per call or, having had no
  // calls in either period, by its time per tick.
  bool per_tick = false;
  size_t ticks_before = 0, ticks_after = 0;  // the samples' sizes
  uint64_t calls_before = 0, calls_after = 0;
  double self_ms_before = 0, self_ms_after = 0;
  double calls_per_s_before = 0, calls_per_s_after = 0;
  double median_ms_before = 0, median_ms_after = 0;  // 0 with no sample
  double ratio = 0;  // median after / median before; 0 when either is 0
  double ks_statistic = 0;
  // The KS test's p-value; for a structural mutation, the chance that the
  // ticks in which the function was timed all fell in one period by chance
  // (a function timed in a handful of ticks is not a mutation).
  double p_value = 1;
  // With two or more baseline runs, the noise the change is judged by: the
  // largest distance between two baseline runs' samples (the KS statistic;
  // past full separation, 1 + |log| of their medians' ratio; infinite when
  // the function is timed in one and not in the other) and the largest
  // difference of calls/s x median time per call between two of them; and
  // the smallest distance between the AFTER period and one baseline run.
  double ks_between_runs = 0;
  double contribution_between_runs_ms_per_s = 0;
  double ks_to_nearest_run = 0;
  // Calls per second times the median time per call, after minus before:
  // what the change adds to the time spent in the function each second.
  double contribution_ms_per_s = 0;
};

struct PeriodComparison {
  std::vector<FunctionChange> mutations;  // the largest |contribution| first
  size_t functions_compared = 0;          // seen in either period
  size_t functions_tested = 0;            // enough ticks in both for the KS test
  size_t baseline_runs = 0;
  // Changes the KS test (or a structural difference) found that lie within
  // the differences between the baseline's own runs, and so are not
  // mutations: two healthy runs of one workload on a shared machine differ
  // in most functions by more than any p-value allows (the machine's other
  // load, the files' placement), and a slowdown is only one where the
  // healthy runs never differ as much.
  size_t within_baseline_noise = 0;
};

// The AFTER period against a baseline of one or more runs (pooled for the
// KS test). With one run the test alone decides; with two or more, a change
// must also lie further from every baseline run than two baseline runs lie
// from each other, in the KS statistic and in the contribution.
PeriodComparison ComparePeriods(const std::vector<PeriodProfile>& baseline_runs, const PeriodProfile& after,
                                const ComparisonSettings& settings);

// A category of the BEFORE period that a new category may have come from:
// one with the same root function, its calls' overlap with the new one's
// (the multisets' Jaccard index, 1 for the same calls in another shape),
// and how its share of the flows changed.
struct Precursor {
  uint64_t category = 0;
  double similarity = 0;
  double share_before = 0, share_after = 0;  // of each period's flows
};

struct CategoryComparison {
  // name_hash: the category's key; calls: its flows; ms per call: latency.
  PeriodComparison changes;
  // For each new category among the mutations: its likeliest precursors,
  // most similar first (at most 3).
  std::map<uint64_t, std::vector<Precursor>> precursors;
  uint64_t flows_before = 0, flows_after = 0;
};

// The same comparison over the request-flow categories, each flow one
// sample of its category's latency; a structural mutation's presence test
// counts flows where the functions' counts ticks.
CategoryComparison CompareCategories(const std::vector<PeriodProfile>& baseline_runs, const PeriodProfile& after,
                                     const ComparisonSettings& settings);

// The category's example flow, described with `names` (hash -> name).
std::string DescribeCategory(const CategoryInPeriod& category, const std::unordered_map<uint64_t, std::string>& names,
                             bool short_names);

// Where a category is found among the periods' (null when in none).
const CategoryInPeriod* FindCategory(const std::vector<PeriodProfile>& baseline_runs, const PeriodProfile& after,
                                     uint64_t category);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_PERIOD_COMPARISON_H_
