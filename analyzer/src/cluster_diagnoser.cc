#include "limpwatch/analyzer/cluster_diagnoser.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

#include "limpwatch/analyzer/error_features.h"
#include "summary_values.h"
#include "limpwatch/analyzer/peer_distances.h"
#include "limpwatch/analyzer/statistics.h"
#include "limpwatch/analyzer/tick_record.h"
#include "limpwatch/shm/name_hash.h"

namespace limpwatch::analyzer {
namespace {

constexpr size_t kTopFunctions = 10;
// How far past its threshold a wait for a CPU in the alarm's window must be
// to name the CPU before the cpuwait metric fires (BuildAlarm).
constexpr double kWaitNowFactor = 2.0;

// The median of the others: the median of `sorted` with one copy of `value`
// taken out, found without a copy per server.
double MedianWithoutOne(const std::vector<double>& sorted, double value) {
  size_t removed = size_t(std::lower_bound(sorted.begin(), sorted.end(), value) - sorted.begin());
  size_t size = sorted.size() - 1;
  if (size == 0) return 0.0;
  auto at = [&](size_t index) { return sorted[index < removed ? index : index + 1]; };
  return size % 2 == 1 ? at(size / 2) : (at(size / 2 - 1) + at(size / 2)) / 2.0;
}

template <typename T>
void Trim(std::deque<T>& values, size_t size) {
  while (values.size() > size) values.pop_front();
}

}  // namespace

ClusterDiagnoser::ClusterDiagnoser(const AnalyzerConfig& config, Thresholds thresholds, ResourceManifest manifest,
                                   const NameBook* names, std::string reporter)
    : config_(config),
      thresholds_(std::move(thresholds)),
      manifest_(std::move(manifest)),
      names_(names),
      reporter_(std::move(reporter)) {
  if (config_.decision_rule == DecisionRule::kCalibrated) calibrated_ = MakeCalibratedDecision(config_, thresholds_);
  if (config_.rpca_detector) {
    static const NameBook kNoNames;
    rpca_ = std::make_unique<RpcaDetector>(config_, RpcaSettingsForWindows(config_), &manifest_,
                                           names_ != nullptr ? names_ : &kNoNames);
  }
}

void ClusterDiagnoser::KeepVerdicts(bool keep) {
  if (calibrated_) calibrated_->KeepVerdicts(keep);
}

void ClusterDiagnoser::Add(const PeerSummary& summary) {
  if (analyzed_any_ && summary.window <= last_analyzed_) {
    ++late_summaries_;
    return;
  }
  pending_[summary.window][summary.node] = summary;
}

std::vector<uint64_t> ClusterDiagnoser::PendingWindows() const {
  std::vector<uint64_t> windows;
  for (const auto& [window, summaries] : pending_) windows.push_back(window);
  return windows;
}

double ClusterDiagnoser::ThresholdFor(const std::string& server, ComparedMetric metric, double default_threshold,
                                      bool* trained) const {
  auto value = thresholds_.Get(server, metric);
  *trained = value.has_value();
  // A short or very quiet training run can learn 0 ("never slower than its
  // peers"); the floor keeps a trained threshold above measurement noise.
  return value ? std::max(*value, DefaultThresholdFloor(metric)) : default_threshold;
}

namespace {
constexpr uint8_t kLeftOutEverywhere = 1;  // idle
constexpr uint8_t kLeftOutOfCounts = 2;    // uncounted
}  // namespace

bool ClusterDiagnoser::IsLeftOut(uint32_t key, Metric metric) {
  // The CPU time is the calibrated rule's (its cpuwait): the seed rule's
  // profiles never had it.
  if (key == kCpuTimeKey) return true;
  uint8_t bits = 0;
  if (auto known = left_out_keys_.find(key); known != left_out_keys_.end()) {
    bits = known->second;
  } else {
    if (names_ == nullptr || names_->HashOfKey(key) == 0) return false;  // decided once its name is known
    std::string name = names_->NameOfKey(key);
    bits = (manifest_.IsIdle(name) ? kLeftOutEverywhere : 0) | (manifest_.IsUncounted(name) ? kLeftOutOfCounts : 0);
    left_out_keys_.emplace(key, bits);
  }
  return (bits & kLeftOutEverywhere) != 0 || (metric == Metric::kCount && (bits & kLeftOutOfCounts) != 0);
}

std::vector<Feature> ClusterDiagnoser::WithoutLeftOutFunctions(const std::vector<Feature>& features, Metric metric,
                                                               LeftOutMask* mask) {
  // Every server reports the same feature set in the same order: the first
  // vector of a window decides per position, the others only look up keys
  // where they differ from it.
  if (mask->keys.empty()) {
    for (const Feature& feature : features) {
      mask->keys.push_back(feature.key);
      mask->left_out.push_back(IsLeftOut(feature.key, metric));
    }
  }
  std::vector<Feature> kept;
  kept.reserve(features.size());
  for (size_t index = 0; index < features.size(); ++index) {
    const Feature& feature = features[index];
    bool same_place = index < mask->keys.size() && mask->keys[index] == feature.key;
    if (!(same_place ? mask->left_out[index] != 0 : IsLeftOut(feature.key, metric))) kept.push_back(feature);
  }
  return kept;
}

void ClusterDiagnoser::ScoreVectorMetric(ComparedMetric metric, const std::vector<const PeerSummary*>& summaries,
                                         WindowResult* result, std::vector<std::vector<Feature>>* components) {
  Metric vector_metric = VectorMetricOf(metric);
  std::vector<size_t> members;  // indices into summaries with this metric
  std::vector<const std::vector<Feature>*> vectors;
  std::vector<std::vector<Feature>> working;  // the vectors without the functions left out
  working.reserve(summaries.size());
  LeftOutMask left_out_mask;
  bool leaves_some_out =
      manifest_.has_idle_rules() || (vector_metric == Metric::kCount && manifest_.has_uncounted_rules());
  for (size_t index = 0; index < summaries.size(); ++index) {
    const auto* features = FeaturesOf(*summaries[index], vector_metric);
    if (features == nullptr || features->empty()) continue;
    members.push_back(index);
    if (leaves_some_out) {
      working.push_back(WithoutLeftOutFunctions(*features, vector_metric, &left_out_mask));
      features = &working.back();
    }
    vectors.push_back(features);
  }
  components->assign(summaries.size(), {});
  if (members.size() < 3) return;  // with two servers nobody can tell which one limps

  FeatureWeights weights;
  auto& spread = spread_[static_cast<int>(vector_metric)];
  if (config_.variance_weighting) {
    for (const auto& [key, value] : spread) weights.weights.push_back({key, static_cast<float>(1.0 / (1.0 + value))});
    std::sort(weights.weights.begin(), weights.weights.end(),
              [](const Feature& a, const Feature& b) { return a.key < b.key; });
  }
  std::vector<double> scores = MedianPeerDistances(vectors, config_.distance, &weights);
  double default_threshold = std::max(DefaultThresholdFloor(metric), config_.default_threshold_factor * Median(scores));
  std::vector<MetricScore> metric_scores;
  bool anyone_anomalous = false;
  std::vector<double> sorted_scores = scores;
  std::sort(sorted_scores.begin(), sorted_scores.end());
  for (size_t i = 0; i < members.size(); ++i) {
    MetricScore score;
    score.server = summaries[members[i]]->node;
    score.metric = metric;
    score.score = scores[i];
    score.threshold = std::max(ThresholdFor(score.server, metric, default_threshold, &score.trained),
                               config_.relative_factor * MedianWithoutOne(sorted_scores, scores[i]));
    score.anomalous = score.score > score.threshold;
    anyone_anomalous |= score.anomalous;
    metric_scores.push_back(std::move(score));
  }
  // The median server is only needed to explain an anomaly (or to learn
  // feature spreads); most windows have none.
  std::vector<Feature> median_server;
  if (anyone_anomalous || config_.variance_weighting) median_server = MedianVector(vectors);
  auto median_of = [&median_server](uint32_t key) {
    auto found = std::lower_bound(median_server.begin(), median_server.end(), key,
                                  [](const Feature& feature, uint32_t wanted) { return feature.key < wanted; });
    return (found != median_server.end() && found->key == key) ? double(found->value) : 0.0;
  };

  for (size_t i = 0; i < members.size(); ++i) {
    MetricScore& score = metric_scores[i];
    if (score.anomalous) {
      // Root cause: the distance of each function to the median server.
      double scale = score.threshold > 0 ? score.threshold : 1.0;
      std::vector<Feature>& contribution = (*components)[members[i]];
      for (const Feature& feature : *vectors[i]) {
        double difference = std::fabs(double(feature.value) - median_of(feature.key));
        if (difference > 0) contribution.push_back({feature.key, static_cast<float>(difference / scale)});
      }
    }
    result->scores.push_back(std::move(score));
  }
  if (config_.variance_weighting && !anyone_anomalous) {
    std::unordered_map<uint32_t, std::vector<double>> deviations;
    for (const auto* vector : vectors) {
      for (const Feature& feature : *vector) {
        deviations[feature.key].push_back(std::fabs(feature.value - median_of(feature.key)));
      }
    }
    for (const Feature& center : median_server) {
      double relative = center.value > 0 ? Median(deviations[center.key]) / center.value : 0.0;
      auto [entry, inserted] = spread.try_emplace(center.key, relative);
      if (!inserted) entry->second = 0.9 * entry->second + 0.1 * relative;
    }
  }
}

void ClusterDiagnoser::ScoreScalarMetric(ComparedMetric metric, const std::vector<const PeerSummary*>& summaries,
                                         WindowResult* result) {
  std::vector<std::pair<const PeerSummary*, double>> members;
  // A server with no I/O call of a kind, or no connection that moved bytes,
  // has nothing to compare; one that lost no packet compares as 0.
  bool zero_is_a_value = metric == ComparedMetric::kLoss || metric == ComparedMetric::kMajorFaults;
  for (const PeerSummary* summary : summaries) {
    double value = ScalarOf(*summary, metric);
    if (value > 0 || zero_is_a_value) members.push_back({summary, value});
  }
  size_t count = members.size();
  if (count < 3) return;
  std::vector<double> sorted;
  for (const auto& member : members) sorted.push_back(member.second);
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [summary, value] : members) {
    double peers_median = MedianWithoutOne(sorted, value);
    MetricScore score;
    score.server = summary->node;
    score.metric = metric;
    score.score = value - peers_median;  // only a slower server scores above 0
    double default_threshold =
        std::max(DefaultThresholdFloor(metric), (config_.default_threshold_factor - 1.0) * peers_median);
    double relative_factor =
        metric == ComparedMetric::kCpuWait ? config_.cpu_wait_relative_factor : config_.relative_factor;
    score.threshold = std::max(ThresholdFor(score.server, metric, default_threshold, &score.trained),
                               (relative_factor - 1.0) * peers_median);
    score.anomalous = score.score > score.threshold;
    result->scores.push_back(std::move(score));
  }
}

// A limping server stands out from most of its peers. When half of the
// servers compared on a metric or more stand out together, the window shows
// two groups, not one server behind the rest, and none of them is taken as
// anomalous on it. Seen on the test-bed: two of four servers writing 8 ms a
// call slower than the other two for one second, all four healthy.
namespace {
void LeaveOutSharedAnomalies(WindowResult* result) {
  std::array<size_t, kComparedMetricCount> compared{}, anomalous{};
  for (const MetricScore& score : result->scores) {
    compared[static_cast<int>(score.metric)]++;
    if (score.anomalous) anomalous[static_cast<int>(score.metric)]++;
  }
  for (MetricScore& score : result->scores) {
    int index = static_cast<int>(score.metric);
    if (anomalous[index] >= 2 && 2 * anomalous[index] >= compared[index]) score.anomalous = false;
  }
}
}  // namespace

std::vector<Alarm> ClusterDiagnoser::DecideBySeedRule(uint64_t window, uint64_t now_unix_ms,
                                                      const std::vector<const PeerSummary*>& summaries,
                                                      WindowResult* result) {
  std::vector<Alarm> alarms;
  std::vector<std::vector<Feature>> components[kComparedMetricCount];
  for (int index = 0; index < kComparedMetricCount; ++index) {
    auto metric = static_cast<ComparedMetric>(index);
    if (IsVectorMetric(metric)) {
      ScoreVectorMetric(metric, summaries, result, &components[index]);
    } else {
      ScoreScalarMetric(metric, summaries, result);
    }
  }

  LeaveOutSharedAnomalies(result);
  for (MetricScore& score : result->scores) score.warming_up = servers_[score.server].warming_up;
  // Each server's score per metric, found once rather than searched per server.
  std::map<std::string, std::array<const MetricScore*, kComparedMetricCount>> scores_of;
  for (const MetricScore& score : result->scores) {
    auto [entry, inserted] = scores_of.try_emplace(score.server);
    if (inserted) entry->second.fill(nullptr);
    entry->second[static_cast<int>(score.metric)] = &score;
  }
  size_t history_length = 2 * config_.k - 1;
  for (size_t position = 0; position < summaries.size(); ++position) {
    const PeerSummary& summary = *summaries[position];
    ServerState& state = servers_[summary.node];
    std::vector<ComparedMetric> fired;
    for (int index = 0; index < kComparedMetricCount; ++index) {
      History& history = state.metrics[index];
      MetricScore score;
      auto found_scores = scores_of.find(summary.node);
      const MetricScore* found_score = found_scores == scores_of.end() ? nullptr : found_scores->second[index];
      bool scored = found_score != nullptr;
      if (scored) score = *found_score;
      history.anomalous.push_back(scored && score.anomalous && !score.warming_up);
      history.scores.push_back(score);
      history.components.push_back(scored && score.anomalous && !components[index].empty()
                                       ? components[index][position]
                                       : std::vector<Feature>{});
      Trim(history.anomalous, history_length);
      Trim(history.scores, history_length);
      Trim(history.components, history_length);
      size_t anomalous = std::count(history.anomalous.begin(), history.anomalous.end(), true);
      if (anomalous >= config_.k && history.anomalous.back()) fired.push_back(static_cast<ComparedMetric>(index));
    }
    if (fired.empty()) continue;
    result->indicted.push_back(summary.node);
    RaiseUnlessSuppressed(state, BuildAlarm(summary.node, state, fired, window, now_unix_ms, summaries), now_unix_ms,
                          &alarms);
  }

  return alarms;
}

void ClusterDiagnoser::RaiseUnlessSuppressed(ServerState& state, Alarm alarm, uint64_t now_unix_ms,
                                             std::vector<Alarm>* alarms) const {
  bool suppressed = state.last_alarm_ms != 0 &&
                    now_unix_ms - state.last_alarm_ms < uint64_t{config_.alarm_suppression_s} * 1000 &&
                    alarm.resource == state.last_alarm_resource;
  if (suppressed) return;
  state.last_alarm_ms = now_unix_ms;
  state.last_alarm_resource = alarm.resource;
  alarms->push_back(std::move(alarm));
}

void ClusterDiagnoser::Forget(const std::string& server) {
  if (server == reporter_) return;
  servers_.erase(server);
  for (auto& [window, by_server] : pending_) by_server.erase(server);
  std::erase_if(pending_, [](const auto& entry) { return entry.second.empty(); });
  if (calibrated_) calibrated_->Forget(server);
  if (rpca_) rpca_->Forget(server);
}

std::vector<Alarm> ClusterDiagnoser::Analyze(uint64_t window, uint64_t now_unix_ms) {
  WindowResult result;
  result.window = window;
  std::vector<const PeerSummary*> summaries;
  auto found = pending_.find(window);
  if (found != pending_.end()) {
    for (const auto& [server, summary] : found->second) {
      summaries.push_back(&summary);
      result.servers.push_back(server);
    }
  }
  // A restarted server (a new boot id) starts up again: its warm-up too.
  for (const PeerSummary* summary : summaries) {
    ServerState& state = servers_[summary->node];
    if (state.boot_id != summary->boot_id) {
      state.windows_seen = 0;
      state.windows_missed = 0;
      state.excess_time.clear();
      state.excess_calls.clear();
      state.excess_samples.clear();
      if (calibrated_ && state.boot_id != 0) calibrated_->Forget(summary->node);
    }
    state.boot_id = summary->boot_id;
    state.warming_up = state.windows_seen < config_.warmup_windows;
    state.invariant_bits = summary->invariant_bits;
  }
  std::vector<Alarm> alarms = calibrated_ ? DecideCalibrated(window, now_unix_ms, summaries, &result)
                                          : DecideBySeedRule(window, now_unix_ms, summaries, &result);
  for (const PeerSummary* summary : summaries) {
    ServerState& state = servers_[summary->node];
    if (state.windows_seen > 0 && window > state.last_window + 1) {
      state.windows_missed += window - state.last_window - 1;
    }
    state.last_window = window;
    state.windows_seen++;
    state.silent_reported = false;
  }

  if (rpca_) {
    for (const PeerSummary* summary : summaries) {
      rpca_->AddRow(summary->node, window, summary->window_end_unix_ms, RpcaCellsOfSummary(*summary));
    }
    for (Alarm& alarm : rpca_->Step(window)) {
      alarm.reporter = reporter_;
      alarm.raised_unix_ms = now_unix_ms;
      RaiseUnlessSuppressed(servers_[alarm.server], std::move(alarm), now_unix_ms, &alarms);
    }
  }
  for (Alarm& alarm : CheckErrors(window, now_unix_ms, summaries)) alarms.push_back(std::move(alarm));
  for (Alarm& alarm : CheckSilentPeers(window, now_unix_ms)) alarms.push_back(std::move(alarm));
  if (found != pending_.end()) pending_.erase(found);
  pending_.erase(pending_.begin(), pending_.lower_bound(window));
  last_analyzed_ = window;
  analyzed_any_ = true;
  if (keep_results_) results_.push_back(result);
  last_result_ = std::move(result);
  return alarms;
}

namespace {

// limpwatch's own measurements of waiting for a resource (tick_record.h):
// the resource of the first whose value on `server` is at least kFactor
// times its peers' median and above its floor (ms in a window), or
// kUnknown. Memory comes first: a server faulting its pages in again and
// again (40 major faults a window) lost them to reclaim, which neither a
// slow disk, nor a lossy link, nor a busy CPU makes happen. Then the CPU:
// a server starved of CPU drains its sockets late, overflows their receive
// queues and so loses packets itself (seen on the test-bed), while a lossy
// link never makes a server wait for a CPU.
// The round trip's floor, 15 ms a tick in a 4-tick window, is above what a
// loaded healthy loopback server shows (up to 8 ms, measured). When the
// server's file I/O service times fired (`disk_io_fired`), its lost packets
// and round trip are left out for the same reason: a server waiting for its
// disk drains its sockets late too (a blkio-throttled test-bed server lost
// 140 ms of packets a window under ddw), while a lossy or slow link never
// makes a pwrite take longer. The CPU wait is left out too, unless the
// cpuwait metric fired as well (`cpu_wait_fired`): a busy healthy server on
// an overloaded machine waits 2-3.2x its peers (the busiest OrangeFS server,
// which holds the root directory, did with its disk throttled), short of the
// metric's 4x, while a CPU quota makes it wait 15-25x.
shm::Resource DirectlyMeasuredShortage(const std::string& server, const std::vector<const PeerSummary*>& summaries,
                                       bool disk_io_fired, bool cpu_wait_fired) {
  constexpr double kFactor = 3.0;
  struct Measured {
    const char* name;
    shm::Resource resource;
    double floor_ms;
  };
  const Measured measured[] = {{kMajorFaultsName, shm::Resource::kMemory, 40.0},
                               {kRunqueueWaitName, shm::Resource::kCpu, 100.0},
                               {kLostPacketsName, shm::Resource::kNetwork, 100.0},
                               {kRoundTripName, shm::Resource::kNetwork, 60.0}};
  for (const auto& [name, resource, floor_ms] : measured) {
    if (disk_io_fired && resource == shm::Resource::kNetwork) continue;
    if (disk_io_fired && resource == shm::Resource::kCpu && !cpu_wait_fired) continue;
    uint32_t key = FoldNameHash(shm::FunctionNameHash(name));
    double own = 0;
    std::vector<double> peers;
    for (const PeerSummary* summary : summaries) {
      if (summary->node == server) {
        own = TimeOf(*summary, key);
      } else {
        peers.push_back(TimeOf(*summary, key));
      }
    }
    if (peers.empty()) continue;
    double reference = std::max(Median(peers), floor_ms / kFactor);
    if (own >= floor_ms && own >= kFactor * reference) return resource;
  }
  return shm::Resource::kUnknown;
}

// The self time (ms) by which `server`'s functions exceeded their peers'
// median in this window, for the functions where it did. A peer without a
// function spent no time in it.
std::unordered_map<uint32_t, double> TimeAbovePeers(const std::string& server,
                                                    const std::vector<const PeerSummary*>& summaries) {
  std::unordered_map<uint32_t, double> above;
  const PeerSummary* own = nullptr;
  for (const PeerSummary* summary : summaries) {
    if (summary->node == server) own = summary;
  }
  const std::vector<Feature>* own_times = own == nullptr ? nullptr : FeaturesOf(*own, Metric::kTime);
  if (own_times == nullptr) return above;
  std::vector<double> peers;
  for (const Feature& feature : *own_times) {
    peers.clear();
    for (const PeerSummary* summary : summaries) {
      if (summary != own) peers.push_back(TimeOf(*summary, feature.key));
    }
    double excess = feature.value - (peers.empty() ? 0.0 : Median(peers));
    if (excess > 0) above[feature.key] = excess;
  }
  return above;
}

}  // namespace

Alarm ClusterDiagnoser::NewAlarm(AlarmKind kind, const std::string& server, uint64_t window,
                                 uint64_t now_unix_ms) const {
  Alarm alarm;
  alarm.kind = kind;
  alarm.time_unix_ms = now_unix_ms;
  alarm.window = window;
  alarm.reporter = reporter_;
  alarm.server = server;
  return alarm;
}

Alarm ClusterDiagnoser::BuildAlarm(const std::string& server, ServerState& state,
                                   const std::vector<ComparedMetric>& fired, uint64_t window, uint64_t now_unix_ms,
                                   const std::vector<const PeerSummary*>& summaries) {
  Alarm alarm = NewAlarm(AlarmKind::kAnomaly, server, window, now_unix_ms);
  alarm.invariant_bits = state.invariant_bits;
  double strongest = -1;
  std::unordered_map<uint32_t, double> by_key;
  bool disk_io = false, network_io = false, cpu_wait = false;
  for (ComparedMetric metric : fired) {
    alarm.metrics.push_back(ComparedMetricName(metric));
    History& history = state.metrics[static_cast<int>(metric)];
    const MetricScore& latest = history.scores.back();
    double ratio = latest.threshold > 0 ? latest.score / latest.threshold : latest.score;
    if (ratio > strongest) {
      strongest = ratio;
      alarm.score = latest.score;
      alarm.threshold = latest.threshold;
    }
    for (const auto& components : history.components) {
      for (const Feature& component : components) by_key[component.key] += component.value;
    }
    disk_io |= metric == ComparedMetric::kDread || metric == ComparedMetric::kDwrite ||
               metric == ComparedMetric::kDsync;
    network_io |= metric == ComparedMetric::kNsread || metric == ComparedMetric::kNcread ||
                  metric == ComparedMetric::kRoundTrip || metric == ComparedMetric::kLoss;
    cpu_wait |= metric == ComparedMetric::kCpuWait;
    // A scalar has no components: the feature it is read from stands for it.
    if (metric == ComparedMetric::kRoundTrip) by_key[kRoundTripKey] += latest.score;
    if (metric == ComparedMetric::kLoss) by_key[kLostPacketsKey] += latest.score;
    if (metric == ComparedMetric::kCpuWait) by_key[kRunqueueWaitKey] += latest.score;
    if (metric == ComparedMetric::kMajorFaults) by_key[kMajorFaultsKey] += latest.score * kMajorFaultMs;
  }
  // Only I/O service times fired: they carry no functions, so the functions
  // named are those where the server spent more time than its peers in this
  // window. They are shown, but the resource still follows the metrics that
  // fired (rule 2), as it did before they were named.
  bool named_from_window = by_key.empty();
  if (named_from_window) by_key = TimeAbovePeers(server, summaries);

  std::vector<std::pair<uint32_t, double>> ranked(by_key.begin(), by_key.end());
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  double resource_weight[6] = {};
  double classified = 0, total = 0;
  for (size_t index = 0; index < ranked.size() && alarm.top_functions.size() < kTopFunctions; ++index) {
    RootCauseFunction function;
    function.key = ranked[index].first;
    function.score = ranked[index].second;
    function.name_hash = names_ ? names_->HashOfKey(function.key) : 0;
    function.name = names_ ? names_->NameOfKey(function.key) : "";
    if (const ErrorFeature* error = FindErrorFeature(function.key); error != nullptr && function.name_hash == 0) {
      // A peer's failure this server never had: its name follows from its key.
      function.name = ErrorFeatureName(*error);
      function.name_hash = shm::FunctionNameHash(function.name);
    }
    if (manifest_.IsIdle(function.name)) continue;  // waiting for work is a symptom, never a cause
    function.resource = manifest_.Classify(function.name);
    total += function.score;
    if (function.resource != shm::Resource::kUnknown) {
      resource_weight[static_cast<int>(function.resource)] += function.score;
      classified += function.score;
    }
    alarm.top_functions.push_back(std::move(function));
  }

  // A CPU quota slows the server's writes too, and dwrite can reach k
  // anomalous windows before the wait for a CPU does (test-bed, iozonew):
  // a wait now at least twice its threshold counts as fired. A quota's is
  // 2.4-4x (1.0-2.0 s a tick over the peers); a server sharing this host's
  // two cores with a competing disk reader waited up to 1.1x (300 ms), which
  // named a disk-hog's second alarm the CPU.
  const History& cpu_wait_history = state.metrics[static_cast<int>(ComparedMetric::kCpuWait)];
  if (!cpu_wait_history.anomalous.empty() && cpu_wait_history.anomalous.back()) {
    const MetricScore& wait_now = cpu_wait_history.scores.back();
    cpu_wait |= wait_now.score >= kWaitNowFactor * wait_now.threshold;
  }
  // 0. The server's threads waited for a CPU, or its connections lost
  //    packets, far more than its peers': that is the shortage, whatever
  //    functions it then spent its time in (a server sharing its CPU with
  //    spinners reads its sockets in smaller pieces, so a network function's
  //    call count is what fires).
  if (shm::Resource measured = DirectlyMeasuredShortage(server, summaries, disk_io, cpu_wait);
      measured != shm::Resource::kUnknown) {
    alarm.resource = measured;
    return alarm;
  }
  // 1. The functions most affected, where the manifest knows them.
  int best = 0;
  for (int resource = 1; resource < 6; ++resource) {
    if (resource_weight[resource] > resource_weight[best]) best = resource;
  }
  if (!named_from_window && best != 0 && classified >= 0.3 * total && resource_weight[best] >= 0.5 * classified) {
    alarm.resource = static_cast<shm::Resource>(best);
    return alarm;
  }
  // 2. The I/O service times that fired, or the CPU wait alone.
  if (disk_io != network_io) {
    alarm.resource = disk_io ? shm::Resource::kDisk : shm::Resource::kNetwork;
    return alarm;
  }
  if (cpu_wait && !disk_io && !network_io) {
    alarm.resource = shm::Resource::kCpu;
    return alarm;
  }
  // 3. The node-local invariants of the indicted server.
  if (state.invariant_bits & kInvariantDisk) {
    alarm.resource = shm::Resource::kDisk;
  } else if (state.invariant_bits & kInvariantCpu) {
    alarm.resource = shm::Resource::kCpu;
  } else if (state.invariant_bits & kInvariantMemory) {
    alarm.resource = shm::Resource::kMemory;
  } else if (state.invariant_bits & kInvariantNetwork) {
    // Seed 003: a network problem is confirmed by the peers' indicators.
    size_t confirming = 0;
    for (const PeerSummary* summary : summaries) {
      if (summary->node != server && (summary->invariant_bits & kInvariantNetwork)) ++confirming;
    }
    if (2 * confirming >= summaries.size() - 1) alarm.resource = shm::Resource::kNetwork;
  }
  return alarm;
}

uint64_t ClusterDiagnoser::SilenceWindows(const ServerState& state) const {
  // The share of this peer's summaries lost so far (Jeffreys' estimate: half
  // a loss before any is seen), and the budget of false alarms per peer and
  // window that the calibrated rule also keeps: a peer is silent when that
  // many windows in a row are lost by chance less often than the budget.
  double lost = (double(state.windows_missed) + 0.5) / (double(state.windows_seen + state.windows_missed) + 1.0);
  double watched = double(std::max<size_t>(servers_.size(), 2) - 1);
  double shift_s = double(config_.shift_ticks) * config_.tick_ms / 1000.0;
  double budget = shift_s / (config_.server_days_per_false_alarm * 86400.0 * watched);
  if (!(lost > 0 && lost < 1) || !(budget > 0)) return config_.peer_silence_windows;
  double windows = std::ceil(std::log(budget) / std::log(lost));
  return std::max<uint64_t>(config_.peer_silence_windows, uint64_t(std::min(windows, 1000.0)));
}

std::vector<Alarm> ClusterDiagnoser::CheckSilentPeers(uint64_t window, uint64_t now_unix_ms) {
  std::vector<Alarm> alarms;
  for (auto& [server, state] : servers_) {
    if (state.silent_reported || state.windows_seen < 2 || server == reporter_) continue;
    uint64_t silence_windows = SilenceWindows(state);
    if (window < state.last_window + silence_windows) continue;
    state.silent_reported = true;
    Alarm alarm = NewAlarm(AlarmKind::kSilent, server, window, now_unix_ms);
    alarm.metrics = {"silence"};
    alarm.resource = shm::Resource::kProcess;
    alarm.score = double(window - state.last_window);
    alarm.threshold = double(silence_windows);
    alarms.push_back(std::move(alarm));
  }
  return alarms;
}

bool ClusterDiagnoser::AnotherServerAway(const std::string& server, uint64_t window) const {
  for (const auto& [other, state] : servers_) {
    if (other != server && (state.last_window != window || state.warming_up)) return true;
  }
  return false;
}

std::vector<Alarm> ClusterDiagnoser::CheckErrors(uint64_t window, uint64_t now_unix_ms,
                                                 const std::vector<const PeerSummary*>& summaries) {
  std::vector<Alarm> alarms;
  if (summaries.size() < 2) return alarms;
  // Failures per error feature and server; a server whose summary lacks a
  // feature returned none of it.
  std::map<uint32_t, std::vector<double>> counts;
  for (size_t position = 0; position < summaries.size(); ++position) {
    const std::vector<Feature>* features = FeaturesOf(*summaries[position], Metric::kCount);
    if (features == nullptr) continue;
    for (const Feature& feature : *features) {
      if (feature.value <= 0 || FindErrorFeature(feature.key) == nullptr) continue;
      auto [entry, inserted] = counts.try_emplace(feature.key, summaries.size(), 0.0);
      entry->second[position] = feature.value;
    }
  }
  for (size_t position = 0; position < summaries.size(); ++position) {
    const PeerSummary& summary = *summaries[position];
    // Refused and reset connections tell of the other end: of this server's
    // peers not listening yet while it starts up, of a peer that is away
    // (seen on OrangeFS 2.10: a server refused while it filled its precreate
    // pool from a crashed peer). Only with every peer present can they be
    // this server's.
    bool absence_explained = servers_[summary.node].warming_up || AnotherServerAway(summary.node, window);
    Alarm alarm = NewAlarm(AlarmKind::kErrors, summary.node, window, now_unix_ms);
    for (const auto& [key, by_server] : counts) {
      const ErrorFeature& error = *FindErrorFeature(key);
      if (absence_explained && IsPeerAbsenceErrno(error.error)) continue;
      double own = by_server[position];
      std::vector<double> peers;
      for (size_t other = 0; other < by_server.size(); ++other) {
        if (other != position) peers.push_back(by_server[other]);
      }
      double threshold = std::max(kMinAbnormalErrors, kErrorPeerFactor * Median(peers));
      if (own < threshold) continue;
      RootCauseFunction cause;
      cause.key = key;
      cause.name = ErrorFeatureName(error);
      cause.name_hash = shm::FunctionNameHash(cause.name);
      cause.score = own;
      cause.resource = ResourceOfError(error);
      if (own > alarm.score) {
        alarm.score = own;
        alarm.threshold = threshold;
        alarm.resource = cause.resource;
      }
      alarm.top_functions.push_back(std::move(cause));
    }
    if (alarm.top_functions.empty()) continue;
    ServerState& state = servers_[summary.node];
    if (state.last_error_alarm_ms != 0 &&
        now_unix_ms - state.last_error_alarm_ms < uint64_t{config_.alarm_suppression_s} * 1000) {
      continue;
    }
    state.last_error_alarm_ms = now_unix_ms;
    std::sort(alarm.top_functions.begin(), alarm.top_functions.end(),
              [](const RootCauseFunction& a, const RootCauseFunction& b) {
                return a.score != b.score ? a.score > b.score : a.key < b.key;
              });
    if (alarm.top_functions.size() > kTopFunctions) alarm.top_functions.resize(kTopFunctions);
    alarm.metrics = {"errors"};
    alarm.invariant_bits = summary.invariant_bits;
    alarms.push_back(std::move(alarm));
  }
  return alarms;
}

}  // namespace limpwatch::analyzer
