// The calibrated rule of ClusterDiagnoser (cluster_diagnoser.h): each
// window's summaries as log ratios, the decision, and alarms whose resource
// follows from their evidence.
#include <algorithm>
#include <cmath>
#include <limits>

#include "limpwatch/analyzer/cluster_diagnoser.h"
#include "limpwatch/analyzer/error_features.h"
#include "limpwatch/shm/name_hash.h"
#include "profile_evidence.h"
#include "summary_values.h"

namespace limpwatch::analyzer {
namespace {

constexpr size_t kTopFunctions = 10;
// Windows whose extra time the root cause sums: the last two windows' worth
// of ticks, about what k of 2k-1 windows covered.
constexpr size_t kExcessWindows = 8;

// What each compared metric stands for, and how it is compared.
//   The service times per call (dread, dwrite, nsread, ncread, dsync) are
//   levels: a server without such calls in a window is not compared.
//   The waits per tick (loss, majflt) are 0 on a quiet server, a value like
//   any other: they are compared with an epsilon added, the waiting that
//   slows nothing, 1 % of a tick.
//   The wait for a CPU is a level: how much longer the server's CPU work took
//   than the CPU it got, (CPU time + time runnable but waiting) / CPU time.
//   A server busier than its peers (the one holding the root directory)
//   waits longer because it runs longer, not slower; a quota or competing
//   processes make it wait for each ms of CPU it gets.
//   The round trip is a level compared with 25 ms added: bulk transfers
//   lengthen a healthy connection's round trip by up to 15.5 ms on loopback
//   (OrangeFS, measured), which slows no request that moves that much data,
//   while a link delaying 20 ms each way adds 40.
DecisionMetric MetricOf(ComparedMetric metric, uint32_t tick_ms) {
  double one_percent = 0.01 * tick_ms;
  switch (metric) {
    case ComparedMetric::kSamples: return {"samples", EvidenceKind::kLogRatio, shm::Resource::kUnknown, 0};
    case ComparedMetric::kCount: return {"count", EvidenceKind::kLogRatio, shm::Resource::kUnknown, 0};
    case ComparedMetric::kTime: return {"time", EvidenceKind::kLogRatio, shm::Resource::kUnknown, 0};
    case ComparedMetric::kDread: return {"dread", EvidenceKind::kLevel, shm::Resource::kDisk, 0};
    case ComparedMetric::kDwrite: return {"dwrite", EvidenceKind::kLevel, shm::Resource::kDisk, 0};
    case ComparedMetric::kNsread: return {"nsread", EvidenceKind::kLevel, shm::Resource::kNetwork, 0};
    case ComparedMetric::kNcread: return {"ncread", EvidenceKind::kLevel, shm::Resource::kNetwork, 0};
    case ComparedMetric::kRoundTrip: return {"rtt", EvidenceKind::kWait, shm::Resource::kNetwork, 25.0};
    case ComparedMetric::kLoss: return {"loss", EvidenceKind::kWait, shm::Resource::kNetwork, one_percent};
    case ComparedMetric::kCpuWait: return {"cpuwait", EvidenceKind::kLevel, shm::Resource::kCpu, 0};
    case ComparedMetric::kDsync: return {"dsync", EvidenceKind::kLevel, shm::Resource::kDisk, 0};
    case ComparedMetric::kMajorFaults:
      return {"majflt", EvidenceKind::kWait, shm::Resource::kMemory, one_percent / kMajorFaultMs};
  }
  return {};
}

// The feature a scalar metric is read from, named first among the causes
// when that metric fired; 0 for the I/O service times.
uint32_t FeatureOfMetric(ComparedMetric metric) {
  switch (metric) {
    case ComparedMetric::kRoundTrip: return kRoundTripKey;
    case ComparedMetric::kLoss: return kLostPacketsKey;
    case ComparedMetric::kCpuWait: return kRunqueueWaitKey;
    case ComparedMetric::kDsync: return kFileSyncKey;
    case ComparedMetric::kMajorFaults: return kMajorFaultsKey;
    default: return 0;
  }
}

// Among resources, which can make another look slow: a server losing its
// pages to reclaim waits on its disk and its CPU and drains its sockets
// late; a server short of CPU, or waiting for its disk, drains its sockets
// late too, so it loses packets and its round trips lengthen. Nothing the
// network does makes a server wait for its CPU, its disk or its memory.
// Between the CPU and the disk it goes both ways (a CPU quota throttles a
// write mid-call; a process reading the server's disk on the server's
// cores makes it wait for a CPU): the stronger evidence decides, and the
// alarm says the evidence is mixed.
int CausalRank(shm::Resource resource) {
  switch (resource) {
    case shm::Resource::kMemory: return 0;
    case shm::Resource::kCpu:
    case shm::Resource::kDisk: return 1;
    case shm::Resource::kNetwork: return 2;
    default: return 3;
  }
}

std::string Describe(const AlarmEvidence& evidence) {
  char text[128];
  std::snprintf(text, sizeof text, "%s %.2fx its peers (evidence %.1fx the threshold)", evidence.metric.c_str(),
                evidence.ratio, evidence.statistic);
  return text;
}

}  // namespace

std::unique_ptr<CalibratedDecision> MakeCalibratedDecision(const AnalyzerConfig& config, const Thresholds& thresholds) {
  DecisionSettings settings;
  settings.server_days_per_false_alarm = config.server_days_per_false_alarm;
  settings.window_shift_s = double(config.tick_ms) * config.shift_ticks / 1000.0;
  settings.overlap = double(std::max(config.window_ticks, config.shift_ticks)) / double(std::max(config.shift_ticks, 1u));
  settings.warmup_windows = 0;  // the diagnoser marks warming-up servers itself
  std::vector<DecisionMetric> metrics;
  for (int index = 0; index < kComparedMetricCount; ++index) {
    metrics.push_back(MetricOf(static_cast<ComparedMetric>(index), config.tick_ms));
  }
  // The bytes a server's requests move: a server serving more than its
  // peers waits and queues more, and that share of its ratios is no limp.
  metrics.push_back({"requests", EvidenceKind::kLoad, shm::Resource::kUnknown, 0});
  auto decision = std::make_unique<CalibratedDecision>(settings, std::move(metrics));
  for (int index = 0; index < kComparedMetricCount; ++index) {
    if (auto spread = thresholds.GetSpread(static_cast<ComparedMetric>(index))) {
      decision->SetNoisePrior(size_t(index), spread->sigma, spread->windows);
    }
  }
  for (const auto& [key, log_ratio] : thresholds.usual()) {
    if (key.first != "*") decision->SetUsualRatio(key.first, size_t(key.second), log_ratio);
  }
  return decision;
}

std::vector<Alarm> ClusterDiagnoser::DecideCalibrated(uint64_t window, uint64_t now_unix_ms,
                                                      const std::vector<const PeerSummary*>& summaries,
                                                      WindowResult* result) {
  std::vector<Alarm> alarms;
  const size_t count = summaries.size();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto not_work = [this](uint32_t key, Metric metric) {
    return IsOwnFeatureKey(key) || FindErrorFeature(key) != nullptr || IsLeftOut(key, metric);
  };
  ProfileRatios profile = ComputeProfileRatios(summaries, not_work);
  std::vector<std::string> names(count);
  std::vector<std::vector<double>> values(count, std::vector<double>(kComparedMetricCount + 1, nan));
  std::vector<bool> warming(count);
  for (size_t i = 0; i < count; ++i) {
    const PeerSummary& summary = *summaries[i];
    names[i] = summary.node;
    warming[i] = servers_[summary.node].warming_up;
    std::vector<double>& row = values[i];
    row[size_t(ComparedMetric::kSamples)] = profile.samples[i];
    row[size_t(ComparedMetric::kCount)] = profile.count[i];
    row[size_t(ComparedMetric::kTime)] = profile.time[i];
    for (ComparedMetric metric : {ComparedMetric::kDread, ComparedMetric::kDwrite, ComparedMetric::kNsread,
                                  ComparedMetric::kNcread, ComparedMetric::kDsync, ComparedMetric::kRoundTrip}) {
      double value = ScalarOf(summary, metric);
      row[size_t(metric)] = value > 0 ? value : nan;  // no such calls, no connection: not measured
    }
    row[kComparedMetricCount] = summary.io.request_bytes_per_s > 0 ? summary.io.request_bytes_per_s : nan;
    // A summary of no tick has no waits either.
    for (ComparedMetric metric : {ComparedMetric::kLoss, ComparedMetric::kMajorFaults}) {
      row[size_t(metric)] = summary.window_ticks > 0 ? ScalarOf(summary, metric) : nan;
    }
    // The CPU work's slowdown, once the server used 1 % of a CPU.
    double cpu = TimeOf(summary, kCpuTimeKey), wait = TimeOf(summary, kRunqueueWaitKey);
    double window_ms = double(summary.window_ticks) * summary.tick_ms;
    row[size_t(ComparedMetric::kCpuWait)] = window_ms > 0 && cpu >= 0.01 * window_ms ? (cpu + wait) / cpu : nan;
  }
  // The time limpwatch's own features took a server beyond its peers' median:
  // with its functions' extra time, what each resource cost it.
  for (uint32_t key : {kRunqueueWaitKey, kLostPacketsKey, kMajorFaultsKey, kFileSyncKey}) {
    std::vector<double> times(count);
    for (size_t i = 0; i < count; ++i) times[i] = TimeOf(*summaries[i], key);
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < count && count >= 3; ++i) {
      sorted.erase(std::lower_bound(sorted.begin(), sorted.end(), times[i]));
      double peers = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                       : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2.0;
      sorted.insert(std::lower_bound(sorted.begin(), sorted.end(), times[i]), times[i]);
      if (times[i] > peers) profile.excess_time[i][key] = times[i] - peers;
    }
  }
  DecisionWindow decided = calibrated_->Observe(window, names, values, warming);
  const double threshold = calibrated_->threshold();
  for (size_t i = 0; i < count; ++i) {
    const ServerEvidence& evidence = decided.servers[i];
    ServerState& state = servers_[names[i]];
    state.excess_time.push_back(std::move(profile.excess_time[i]));
    while (state.excess_time.size() > kExcessWindows) state.excess_time.pop_front();
    state.excess_calls.push_back(std::move(profile.excess_calls[i]));
    while (state.excess_calls.size() > kExcessWindows) state.excess_calls.pop_front();
    state.excess_samples.push_back(std::move(profile.excess_samples[i]));
    while (state.excess_samples.size() > kExcessWindows) state.excess_samples.pop_front();
    for (int index = 0; index < kComparedMetricCount; ++index) {
      const MetricEvidence& metric = evidence.metrics[size_t(index)];
      if (!metric.compared) continue;
      MetricScore score;
      score.server = names[i];
      score.metric = static_cast<ComparedMetric>(index);
      score.score = metric.statistic * threshold;
      score.threshold = threshold;
      score.trained = thresholds_.GetSpread(score.metric).has_value();
      score.anomalous = metric.statistic >= 1.0;
      score.warming_up = evidence.warming_up;
      score.ratio = std::exp(metric.log_ratio);
      score.sigma = metric.sigma;
      result->scores.push_back(score);
    }
    if (!evidence.indicted) continue;
    result->indicted.push_back(names[i]);
    if (!evidence.limping_now) continue;
    RaiseUnlessSuppressed(state, BuildCalibratedAlarm(names[i], state, evidence, window, now_unix_ms), now_unix_ms,
                          &alarms);
  }
  return alarms;
}

std::unordered_map<uint32_t, double> ClusterDiagnoser::SumWindows(
    const std::deque<std::unordered_map<uint32_t, double>>& extra) {
  std::unordered_map<uint32_t, double> summed;
  for (const auto& window : extra) {
    for (const auto& [key, amount] : window) summed[key] += amount;
  }
  return summed;
}

ClusterDiagnoser::ExtraByResource ClusterDiagnoser::SumExtra(const std::unordered_map<uint32_t, double>& summed,
                                                             bool functions_only) const {
  ExtraByResource sums;
  for (const auto& [key, amount] : summed) {
    if (functions_only && IsOwnFeatureKey(key)) continue;
    std::string name = names_ ? names_->NameOfKey(key) : "";
    if (manifest_.IsIdle(name)) continue;  // waiting for work is a symptom, never a cause
    shm::Resource resource = manifest_.Classify(name);
    sums.total += amount;
    if (resource == shm::Resource::kUnknown) continue;
    sums.weight[static_cast<int>(resource)] += amount;
    sums.classified += amount;
  }
  return sums;
}

shm::Resource ClusterDiagnoser::ExtraByResource::Clear() const {
  int best = 0;
  for (int resource = 1; resource < 6; ++resource) {
    if (weight[resource] > weight[best]) best = resource;
  }
  // Most of the extra named, and most of what is named one resource's.
  bool clear = best != 0 && classified >= 0.3 * total && weight[best] >= 0.5 * classified;
  return clear ? static_cast<shm::Resource>(best) : shm::Resource::kUnknown;
}

Alarm ClusterDiagnoser::BuildCalibratedAlarm(const std::string& server, ServerState& state,
                                             const ServerEvidence& evidence, uint64_t window, uint64_t now_unix_ms) {
  const auto& metrics = calibrated_->metrics();
  Alarm alarm = NewAlarm(AlarmKind::kAnomaly, server, window, now_unix_ms);
  alarm.invariant_bits = state.invariant_bits;
  alarm.threshold = calibrated_->threshold();

  // What each resource cost the server over its peers in its last windows
  // (its functions' and limpwatch's own features' extra time), and the
  // resource each profile's extra stands for: the time's, the calls', the
  // samples' functions.
  const std::unordered_map<uint32_t, double> excess = SumWindows(state.excess_time);
  const ExtraByResource costs = SumExtra(excess, false);
  const double* resource_weight = costs.weight;
  shm::Resource profile_resource = SumExtra(excess, true).Clear();
  shm::Resource count_resource = SumExtra(SumWindows(state.excess_calls), true).Clear();
  shm::Resource samples_resource = SumExtra(SumWindows(state.excess_samples), true).Clear();

  // The functions with the most extra time, for the causes.
  std::vector<std::pair<uint32_t, double>> ranked(excess.begin(), excess.end());
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::vector<RootCauseFunction> functions;
  for (const auto& [key, ms] : ranked) {
    if (functions.size() >= kTopFunctions) break;
    if (IsOwnFeatureKey(key)) continue;
    RootCauseFunction function;
    function.key = key;
    function.score = ms;
    function.name_hash = names_ ? names_->HashOfKey(key) : 0;
    function.name = names_ ? names_->NameOfKey(key) : "";
    if (manifest_.IsIdle(function.name)) continue;
    function.resource = manifest_.Classify(function.name);
    functions.push_back(std::move(function));
  }

  // The evidence, strongest first: every metric with some.
  std::vector<size_t> order;
  for (size_t m = 0; m < metrics.size(); ++m) {
    if (evidence.metrics[m].compared && evidence.metrics[m].statistic > 0.05) order.push_back(m);
  }
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return evidence.metrics[a].statistic > evidence.metrics[b].statistic; });
  for (size_t m : order) {
    const MetricEvidence& metric = evidence.metrics[m];
    shm::Resource resource = m == size_t(ComparedMetric::kCount)             ? count_resource
                             : m == size_t(ComparedMetric::kSamples)          ? samples_resource
                             : metrics[m].kind == EvidenceKind::kLogRatio ? profile_resource
                                                                          : metrics[m].resource;
    alarm.evidence.push_back({metrics[m].name, std::exp(metric.log_ratio), metric.statistic, resource});
    if (metric.statistic >= 1.0) alarm.metrics.push_back(metrics[m].name);
  }
  if (!order.empty()) alarm.score = evidence.metrics[order.front()].statistic * alarm.threshold;

  // The resource: among the metrics with at least half the evidence that
  // indicts, the one whose resource can explain the others' (CausalRank).
  // Between the CPU and the disk, by the time each cost the server over its
  // peers in its last windows (its functions' extra time by the manifest,
  // its extra wait for a CPU, its extra syncs). A thread waiting for its disk
  // is blocked, not waiting for a CPU, so a slow disk adds no CPU wait of its
  // own; a thread throttled in the middle of a write waits for a CPU, and the
  // write is slower by as much. So the CPU explains slow I/O when its extra
  // wait is at least about the I/O's extra time (half of it, for what the
  // two measurements miss of each other); a reader hogging the server's disk
  // on its cores makes it wait a little, far less than its writes lose.
  // Without such times (no manifest), the one further from its peers.
  const AlarmEvidence* named = nullptr;
  const AlarmEvidence* rival = nullptr;  // the other of CPU and disk, when both have evidence
  auto costlier = [&](const AlarmEvidence& a, const AlarmEvidence& b) {
    double cost_a = resource_weight[static_cast<int>(a.resource)], cost_b = resource_weight[static_cast<int>(b.resource)];
    if (cost_a <= 0 && cost_b <= 0) return a.ratio > b.ratio;
    if (a.resource == shm::Resource::kCpu) return cost_a >= 0.5 * cost_b;
    if (b.resource == shm::Resource::kCpu) return cost_b < 0.5 * cost_a;
    return cost_a > cost_b;
  };
  for (const AlarmEvidence& item : alarm.evidence) {
    if (item.statistic < 0.5 || item.resource == shm::Resource::kUnknown) continue;
    if (named == nullptr || CausalRank(item.resource) < CausalRank(named->resource)) {
      named = &item;
      rival = nullptr;
    } else if (CausalRank(item.resource) == CausalRank(named->resource) && item.resource != named->resource) {
      if (costlier(item, *named)) {
        rival = named;
        named = &item;
      } else if (rival == nullptr || costlier(item, *rival)) {
        rival = &item;
      }
    }
  }
  std::vector<std::string> explained;
  if (named != nullptr) {
    for (const AlarmEvidence& item : alarm.evidence) {
      if (item.statistic >= 1.0 && item.resource != named->resource &&
          (rival == nullptr || item.resource != rival->resource)) {
        explained.push_back(item.metric);
      }
    }
    alarm.resource = named->resource;
    alarm.reason = std::string(ResourceName(named->resource)) + ": " + Describe(*named);
    if (rival != nullptr) {
      alarm.reason += "; mixed with " + std::string(ResourceName(rival->resource)) + ": " + Describe(*rival);
    }
    if (!explained.empty()) {
      alarm.reason += "; which explains ";
      for (size_t index = 0; index < explained.size(); ++index) alarm.reason += (index ? ", " : "") + explained[index];
    }
  } else {
    alarm.resource = shm::Resource::kUnknown;
    alarm.reason = "no resource: ";
    alarm.reason += alarm.evidence.empty() ? std::string("no evidence left") : Describe(alarm.evidence.front());
    alarm.reason += ", and its functions name none";
  }

  // Causes: the features of the scalar metrics that fired, then the functions.
  for (size_t m : order) {
    uint32_t key = FeatureOfMetric(static_cast<ComparedMetric>(m));
    if (key == 0 || evidence.metrics[m].statistic < 1.0) continue;
    RootCauseFunction cause;
    cause.key = key;
    cause.name_hash = names_ ? names_->HashOfKey(key) : 0;
    cause.name = names_ ? names_->NameOfKey(key) : "";
    cause.resource = metrics[m].resource;
    cause.score = evidence.metrics[m].statistic;
    alarm.top_functions.push_back(std::move(cause));
  }
  for (RootCauseFunction& function : functions) {
    if (alarm.top_functions.size() >= kTopFunctions) break;
    bool already = std::any_of(alarm.top_functions.begin(), alarm.top_functions.end(),
                               [&](const RootCauseFunction& cause) { return cause.key == function.key; });
    if (!already) alarm.top_functions.push_back(std::move(function));
  }
  return alarm;
}

}  // namespace limpwatch::analyzer
