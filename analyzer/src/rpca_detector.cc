#include "limpwatch/analyzer/rpca_detector.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "limpwatch/analyzer/cloud_diag.h"
#include "limpwatch/analyzer/statistics.h"

namespace limpwatch::analyzer {
namespace {

struct StepRow {
  const std::string* server;
  const std::vector<RpcaCell>* cells;
};

// The columns of one step: functions called in at least half of the rows,
// the max_features with the most self time.
std::vector<uint32_t> ChooseColumns(const std::vector<StepRow>& rows, size_t max_features) {
  struct Usage {
    size_t rows = 0;
    double self_ms = 0;
  };
  std::unordered_map<uint32_t, Usage> usage;
  for (const StepRow& row : rows) {
    for (const RpcaCell& cell : *row.cells) {
      if (cell.calls <= 0) continue;
      Usage& entry = usage[cell.key];
      ++entry.rows;
      entry.self_ms += cell.self_ms;
    }
  }
  std::vector<std::pair<double, uint32_t>> candidates;
  for (const auto& [key, entry] : usage) {
    if (2 * entry.rows >= rows.size() && entry.self_ms > 0) candidates.emplace_back(entry.self_ms, key);
  }
  std::sort(candidates.begin(), candidates.end(), std::greater<>());
  if (candidates.size() > max_features) candidates.resize(max_features);
  std::vector<uint32_t> columns;
  for (const auto& candidate : candidates) columns.push_back(candidate.second);
  std::sort(columns.begin(), columns.end());
  return columns;
}

// Time per call, each column over its median, so that fast and slow
// functions weigh alike; a row without calls takes the median (it says
// nothing about that function's speed).
Eigen::MatrixXd BuildMatrix(const std::vector<StepRow>& rows, const std::vector<uint32_t>& columns) {
  const auto row_count = Eigen::Index(rows.size());
  const auto column_count = Eigen::Index(columns.size());
  Eigen::MatrixXd matrix = Eigen::MatrixXd::Constant(row_count, column_count, -1);
  for (Eigen::Index r = 0; r < row_count; ++r) {
    for (const RpcaCell& cell : *rows[size_t(r)].cells) {
      if (cell.calls <= 0) continue;
      auto found = std::lower_bound(columns.begin(), columns.end(), cell.key);
      if (found == columns.end() || *found != cell.key) continue;
      matrix(r, found - columns.begin()) = cell.self_ms / cell.calls;
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

shm::Resource MajorityResource(const std::vector<uint32_t>& keys, const ResourceManifest& manifest,
                               const NameBook& names) {
  std::map<shm::Resource, size_t> counts;
  for (uint32_t key : keys) {
    shm::Resource resource = manifest.Classify(names.NameOfKey(key));
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

RpcaSettings RpcaSettingsForTicks(const AnalyzerConfig& config) {
  RpcaSettings settings;
  settings.newest_rows = std::max<uint32_t>(config.window_ticks, 1);
  settings.least_rows = std::max(2 * settings.newest_rows, config.warmup_windows + settings.newest_rows);
  settings.history_rows = std::max(settings.history_rows, settings.least_rows);
  return settings;
}

RpcaSettings RpcaSettingsForWindows(const AnalyzerConfig& config) {
  // A window already sums window_ticks ticks; its newest one stands for them.
  RpcaSettings settings = RpcaSettingsForTicks(config);
  settings.newest_rows = 1;
  return settings;
}

RpcaDetector::RpcaDetector(const AnalyzerConfig& config, RpcaSettings settings, const ResourceManifest* manifest,
                           const NameBook* names)
    : config_(config), settings_(settings), manifest_(manifest), names_(names) {}

void RpcaDetector::AddRow(const std::string& server, uint64_t index, uint64_t unix_ms, std::vector<RpcaCell> cells) {
  ServerState& state = servers_[server];
  if (!state.rows.empty() && index <= state.rows.back().index) return;  // a repeat or an older row
  std::sort(cells.begin(), cells.end(), [](const RpcaCell& a, const RpcaCell& b) { return a.key < b.key; });
  state.rows.push_back({index, unix_ms, std::move(cells)});
  while (!state.rows.empty() && state.rows.front().index + settings_.history_rows <= index) state.rows.pop_front();
}

void RpcaDetector::Forget(const std::string& server) { servers_.erase(server); }

std::vector<Alarm> RpcaDetector::Step(uint64_t index) {
  std::vector<Alarm> alarms;
  const uint64_t oldest = index + 1 >= settings_.history_rows ? index + 1 - settings_.history_rows : 0;
  const uint64_t newest = index + 1 >= settings_.newest_rows ? index + 1 - settings_.newest_rows : 0;
  // A server takes part when it has its newest row and rows for at least
  // half of the span since the first of anyone's.
  uint64_t first = index;
  for (const auto& [server, state] : servers_) {
    for (const Row& row : state.rows) {
      if (row.index >= oldest && row.index <= index) first = std::min(first, row.index);
    }
  }
  const uint64_t span = index - first + 1;
  if (span < settings_.least_rows) return alarms;
  std::vector<StepRow> rows;
  std::map<std::string, std::vector<size_t>> newest_rows;
  uint64_t unix_ms = 0;
  for (const auto& [server, state] : servers_) {
    size_t count = std::count_if(state.rows.begin(), state.rows.end(),
                                 [&](const Row& row) { return row.index >= oldest && row.index <= index; });
    if (2 * count < span || state.rows.empty() || state.rows.back().index != index) continue;
    for (const Row& row : state.rows) {
      if (row.index < oldest || row.index > index) continue;
      if (row.index >= newest) newest_rows[server].push_back(rows.size());
      unix_ms = std::max(unix_ms, row.unix_ms);
      rows.push_back({&server, &row.cells});
    }
  }
  if (newest_rows.size() < 3) return alarms;  // two servers cannot tell which one is odd
  std::vector<uint32_t> columns = ChooseColumns(rows, config_.max_features);
  if (columns.empty()) return alarms;
  CloudDiagAnalysis analysis = AnalyzeLatencyMatrix(BuildMatrix(rows, columns));

  RpcaStep step;
  step.index = index;
  step.unix_ms = unix_ms;
  step.servers = newest_rows.size();
  step.columns = columns.size();
  step.rank = analysis.parts.rank;
  std::map<uint32_t, double> departure;  // per voting function: 1 - its cosine
  for (const AnomalousColumn& column : analysis.anomalous) {
    const uint32_t key = columns[column.column];
    RankedFunction& ranked = ranking_[key];
    ranked.key = key;
    ++ranked.times_anomalous;
    // The servers whose newest rows are mostly slow in this column.
    std::set<size_t> slow(column.slow_rows.begin(), column.slow_rows.end());
    std::vector<std::string> slow_servers;
    for (const auto& [server, indices] : newest_rows) {
      size_t slow_count = std::count_if(indices.begin(), indices.end(), [&](size_t i) { return slow.count(i); });
      if (2 * slow_count > indices.size()) slow_servers.push_back(server);
    }
    if (slow_servers.size() != 1) continue;
    ++ranked.times_voting;
    step.votes[slow_servers.front()].push_back(key);
    departure[key] = 1.0 - column.beta;
  }
  const uint32_t votes_span = 2 * std::max<uint32_t>(config_.k, 1) - 1;
  for (const auto& [server, unused] : newest_rows) {
    ServerState& state = servers_[server];
    state.voted.push_back(step.votes.count(server) > 0);
    if (state.voted.size() > votes_span) state.voted.pop_front();
    if (size_t(std::count(state.voted.begin(), state.voted.end(), true)) < config_.k) continue;
    step.indicted.push_back(server);
    if (state.last_alarm_ms != 0 && step.unix_ms < state.last_alarm_ms + uint64_t(config_.alarm_suppression_s) * 1000) {
      continue;
    }
    state.last_alarm_ms = step.unix_ms;
    std::vector<uint32_t> voters;
    if (auto found = step.votes.find(server); found != step.votes.end()) voters = found->second;
    Alarm alarm;
    alarm.kind = AlarmKind::kAnomaly;
    alarm.time_unix_ms = alarm.raised_unix_ms = step.unix_ms;
    alarm.window = index;
    alarm.reporter = kRpcaDetectorName;
    alarm.server = server;
    alarm.metrics = {kRpcaDetectorName};
    alarm.resource = MajorityResource(voters, *manifest_, *names_);
    for (uint32_t key : voters) {
      RootCauseFunction function;
      function.key = key;
      function.name_hash = names_->HashOfKey(key);
      function.name = names_->NameOfKey(key);
      function.score = departure[key];
      function.resource = manifest_->Classify(function.name);
      alarm.top_functions.push_back(std::move(function));
    }
    std::sort(alarm.top_functions.begin(), alarm.top_functions.end(),
              [](const RootCauseFunction& a, const RootCauseFunction& b) { return a.score > b.score; });
    alarm.reason = "its functions ran slower than the pattern every server shares (robust PCA, no training)";
    alarms.push_back(std::move(alarm));
  }
  if (keep_steps_) steps_.push_back(std::move(step));
  return alarms;
}

std::vector<RankedFunction> RpcaDetector::Ranking() const {
  std::vector<RankedFunction> ranking;
  for (const auto& [key, ranked] : ranking_) {
    ranking.push_back(ranked);
    ranking.back().name = names_->NameOfKey(key);
  }
  std::sort(ranking.begin(), ranking.end(), [](const RankedFunction& a, const RankedFunction& b) {
    return a.times_anomalous != b.times_anomalous ? a.times_anomalous > b.times_anomalous
                                                  : a.times_voting > b.times_voting;
  });
  return ranking;
}

std::vector<RpcaCell> RpcaCellsOfSummary(const PeerSummary& summary) {
  const std::vector<Feature>* times = nullptr;
  const std::vector<Feature>* counts = nullptr;
  for (const MetricFeatures& metric : summary.metrics) {
    if (metric.metric == Metric::kTime) times = &metric.features;
    if (metric.metric == Metric::kCount) counts = &metric.features;
  }
  std::vector<RpcaCell> cells;
  if (times == nullptr || counts == nullptr) return cells;
  // Both are sorted by key: one merge.
  auto count = counts->begin();
  for (const Feature& time : *times) {
    while (count != counts->end() && count->key < time.key) ++count;
    if (count == counts->end() || count->key != time.key || !(count->value > 0)) continue;
    cells.push_back({time.key, double(time.value), double(count->value)});
  }
  return cells;
}

RpcaReplay ReplayRpca(const AnalyzerConfig& config, const std::map<std::string, std::vector<TickRecord>>& ticks,
                      const ResourceManifest& manifest, const NameBook& names) {
  RpcaReplay replay;
  RpcaDetector detector(config, RpcaSettingsForTicks(config), &manifest, &names);
  detector.KeepSteps(true);
  // Every server's tick t is added before tick t is analyzed.
  std::map<uint64_t, std::vector<std::pair<const std::string*, const TickRecord*>>> by_tick;
  for (const auto& [server, records] : ticks) {
    for (const TickRecord& record : records) by_tick[record.tick].emplace_back(&server, &record);
  }
  for (const auto& [tick, records] : by_tick) {
    for (const auto& [server, record] : records) {
      std::vector<RpcaCell> cells;
      cells.reserve(record->functions.size());
      for (const FunctionTick& function : record->functions) {
        if (function.calls > 0) cells.push_back({FoldNameHash(function.name_hash), function.self_ms, double(function.calls)});
      }
      detector.AddRow(*server, tick, record->unix_ms, std::move(cells));
    }
    for (Alarm& alarm : detector.Step(tick)) replay.alarms.push_back(std::move(alarm));
  }
  replay.steps = detector.steps();
  replay.ranking = detector.Ranking();
  return replay;
}

}  // namespace limpwatch::analyzer
