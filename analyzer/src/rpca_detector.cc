#include "limpwatch/analyzer/rpca_detector.h"

#include <algorithm>
#include <deque>
#include <set>
#include <unordered_map>

#include "limpwatch/analyzer/peer_summary.h"
#include "limpwatch/analyzer/statistics.h"

namespace limpwatch::analyzer {
namespace {

struct Row {
  const std::string* server = nullptr;
  const TickRecord* tick = nullptr;
};

// The columns of one step: functions called in at least half of the rows,
// the max_features with the most self time.
std::vector<uint64_t> ChooseColumns(const std::vector<Row>& rows, size_t max_features) {
  struct Usage {
    size_t rows = 0;
    double self_ms = 0;
  };
  std::unordered_map<uint64_t, Usage> usage;
  for (const Row& row : rows) {
    for (const FunctionTick& function : row.tick->functions) {
      if (function.calls == 0) continue;
      Usage& entry = usage[function.name_hash];
      ++entry.rows;
      entry.self_ms += function.self_ms;
    }
  }
  std::vector<std::pair<double, uint64_t>> candidates;
  for (const auto& [hash, entry] : usage) {
    if (2 * entry.rows >= rows.size() && entry.self_ms > 0) candidates.emplace_back(entry.self_ms, hash);
  }
  std::sort(candidates.begin(), candidates.end(), std::greater<>());
  if (candidates.size() > max_features) candidates.resize(max_features);
  std::vector<uint64_t> columns;
  for (const auto& candidate : candidates) columns.push_back(candidate.second);
  std::sort(columns.begin(), columns.end());
  return columns;
}

// Time per call, each column over its median, so that fast and slow
// functions weigh alike; a row without calls takes the median (it says
// nothing about that function's speed).
Eigen::MatrixXd BuildMatrix(const std::vector<Row>& rows, const std::vector<uint64_t>& columns) {
  const auto row_count = Eigen::Index(rows.size());
  const auto column_count = Eigen::Index(columns.size());
  Eigen::MatrixXd matrix = Eigen::MatrixXd::Constant(row_count, column_count, -1);
  for (Eigen::Index r = 0; r < row_count; ++r) {
    for (const FunctionTick& function : rows[size_t(r)].tick->functions) {
      if (function.calls == 0) continue;
      auto found = std::lower_bound(columns.begin(), columns.end(), function.name_hash);
      if (found == columns.end() || *found != function.name_hash) continue;
      matrix(r, found - columns.begin()) = function.self_ms / double(function.calls);
    }
  }
  std::vector<double> present;
  for (Eigen::Index c = 0; c < column_count; ++c) {
    present.clear();
    for (Eigen::Index r = 0; r < row_count; ++r) {
      if (matrix(r, c) >= 0) present.push_back(matrix(r, c));
    }
    double median = Median(present);
    for (Eigen::Index r = 0; r < row_count; ++r) {
      matrix(r, c) = median > 0 && matrix(r, c) >= 0 ? matrix(r, c) / median : 1.0;
    }
  }
  return matrix;
}

shm::Resource MajorityResource(const std::vector<uint64_t>& functions, const ResourceManifest& manifest,
                               const NameBook& names) {
  std::map<shm::Resource, size_t> counts;
  for (uint64_t hash : functions) {
    shm::Resource resource = manifest.Classify(names.NameOfKey(FoldNameHash(hash)));
    if (resource != shm::Resource::kUnknown) ++counts[resource];
  }
  shm::Resource best = shm::Resource::kUnknown;
  size_t most = 0;
  for (const auto& [resource, count] : counts) {
    if (count > most) best = resource, most = count;
  }
  return best;
}

}  // namespace

RpcaReplay ReplayRpca(const AnalyzerConfig& config, const RpcaSettings& settings,
                      const std::map<std::string, std::vector<TickRecord>>& ticks, const ResourceManifest& manifest,
                      const NameBook& names) {
  RpcaReplay replay;
  std::map<uint64_t, std::vector<Row>> by_tick;
  for (const auto& [server, records] : ticks) {
    for (const TickRecord& record : records) by_tick[record.tick].push_back({&server, &record});
  }
  if (by_tick.empty()) return replay;
  const uint32_t newest = std::max<uint32_t>(config.window_ticks, 1);
  // A step needs the servers' warm-up behind it and a few windows of rows
  // besides the newest; until history_ticks have passed it takes them all.
  const uint64_t least = std::max<uint64_t>(2 * newest, config.warmup_windows + newest);
  const uint64_t history = std::max<uint64_t>(settings.history_ticks, least);
  const uint64_t first_tick = by_tick.begin()->first;
  const uint32_t votes_span = 2 * std::max<uint32_t>(config.k, 1) - 1;
  std::map<std::string, std::deque<bool>> recent;  // per server: voted for, per step
  std::map<std::string, uint64_t> last_alarm_ms;
  std::map<uint64_t, RankedFunction> ranking;

  for (auto end = by_tick.begin(); end != by_tick.end(); ++end) {
    const uint64_t last = end->first;
    if (last + 1 < first_tick + least) continue;
    const uint64_t oldest = std::max(first_tick, last + 1 - std::min<uint64_t>(history, last + 1));
    const uint64_t span = last - oldest + 1;
    std::vector<Row> rows;
    std::map<std::string, std::vector<size_t>> newest_rows;
    std::map<std::string, size_t> row_counts;
    for (auto it = by_tick.lower_bound(oldest); it != std::next(end); ++it) {
      for (const Row& row : it->second) ++row_counts[*row.server];
    }
    // A server takes part when it recorded at least half of the span.
    for (auto it = by_tick.lower_bound(oldest); it != std::next(end); ++it) {
      for (const Row& row : it->second) {
        if (2 * row_counts[*row.server] < span) continue;
        if (it->first + newest > last) newest_rows[*row.server].push_back(rows.size());
        rows.push_back(row);
      }
    }
    if (newest_rows.size() < 3) continue;  // two servers cannot tell which one is odd
    std::vector<uint64_t> columns = ChooseColumns(rows, config.max_features);
    if (columns.empty()) continue;
    CloudDiagAnalysis analysis = AnalyzeLatencyMatrix(BuildMatrix(rows, columns), settings.cloud);

    RpcaStep step;
    step.tick = last;
    step.unix_ms = end->second.front().tick->unix_ms;
    step.servers = newest_rows.size();
    step.columns = columns.size();
    step.rank = analysis.parts.rank;
    std::map<uint64_t, double> departure;  // per anomalous function: 1 - its cosine
    for (const AnomalousColumn& column : analysis.anomalous) {
      const uint64_t hash = columns[column.column];
      RankedFunction& ranked = ranking[hash];
      ranked.name_hash = hash;
      ++ranked.times_anomalous;
      // The servers whose newest ticks are mostly slow in this column.
      std::set<size_t> slow(column.slow_rows.begin(), column.slow_rows.end());
      std::vector<std::string> slow_servers;
      for (const auto& [server, indices] : newest_rows) {
        size_t slow_count = std::count_if(indices.begin(), indices.end(), [&](size_t i) { return slow.count(i); });
        if (2 * slow_count > indices.size()) slow_servers.push_back(server);
      }
      if (slow_servers.size() != 1) continue;
      ++ranked.times_voting;
      step.votes[slow_servers.front()].push_back(hash);
      departure[hash] = 1.0 - column.beta;
    }
    for (const auto& [server, unused] : newest_rows) {
      std::deque<bool>& flags = recent[server];
      flags.push_back(step.votes.count(server) > 0);
      if (flags.size() > votes_span) flags.pop_front();
      if (size_t(std::count(flags.begin(), flags.end(), true)) < config.k) continue;
      step.indicted.push_back(server);
      auto previous = last_alarm_ms.find(server);
      if (previous != last_alarm_ms.end() &&
          step.unix_ms < previous->second + uint64_t(config.alarm_suppression_s) * 1000) {
        continue;
      }
      last_alarm_ms[server] = step.unix_ms;
      const std::vector<uint64_t>& voters = step.votes.count(server) ? step.votes.at(server)
                                                                      : std::vector<uint64_t>{};
      Alarm alarm;
      alarm.kind = AlarmKind::kAnomaly;
      alarm.time_unix_ms = alarm.raised_unix_ms = step.unix_ms;
      alarm.window = last;
      alarm.reporter = kRpcaDetectorName;
      alarm.server = server;
      alarm.metrics = {kRpcaDetectorName};
      alarm.resource = MajorityResource(voters, manifest, names);
      for (uint64_t hash : voters) {
        RootCauseFunction function;
        function.key = FoldNameHash(hash);
        function.name_hash = hash;
        function.name = names.NameOfKey(function.key);
        function.score = departure[hash];
        function.resource = manifest.Classify(function.name);
        alarm.top_functions.push_back(std::move(function));
      }
      std::sort(alarm.top_functions.begin(), alarm.top_functions.end(),
                [](const RootCauseFunction& a, const RootCauseFunction& b) { return a.score > b.score; });
      alarm.reason = "its functions ran slower than the pattern every server shares (robust PCA, no training)";
      replay.alarms.push_back(std::move(alarm));
    }
    replay.steps.push_back(std::move(step));
  }
  for (auto& [hash, ranked] : ranking) {
    ranked.name = names.NameOfKey(FoldNameHash(hash));
    replay.ranking.push_back(ranked);
  }
  std::sort(replay.ranking.begin(), replay.ranking.end(), [](const RankedFunction& a, const RankedFunction& b) {
    return a.times_anomalous != b.times_anomalous ? a.times_anomalous > b.times_anomalous
                                                  : a.times_voting > b.times_voting;
  });
  return replay;
}

}  // namespace limpwatch::analyzer
