#include "seed_rule_series.h"

#include <cstdlib>

#include "limpwatch/analyzer/cluster_replay.h"
#include "limpwatch/analyzer/series_table.h"

namespace limpwatch::decision {

SeedRuleCount RunSeedRule(const ClusterSpec& spec, uint64_t ticks) {
  GeneratedCluster cluster(spec);
  analyzer::SeriesTable table;
  table.columns = {"latency", "throughput"};
  table.peers = cluster.names();
  table.tick_s = spec.tick_s;
  table.first_time_s = 1'700'000'000;
  std::vector<double> latency, throughput;
  for (uint64_t tick = 0; tick < ticks; ++tick) {
    cluster.Next(&latency, &throughput);
    for (int peer = 0; peer < spec.servers; ++peer) {
      table.rows.push_back({tick, uint32_t(peer), {latency[peer], throughput[peer]}});
    }
  }
  analyzer::NameBook names;
  auto series = analyzer::SeedRuleTicks(table, &names);
  table.rows.clear();
  analyzer::AnalyzerConfig config;
  config.decision_rule = analyzer::DecisionRule::kSeed;
  config.min_feature_time_ms = 0;  // every column is a feature, as `diagnose --rule seed` reads a CSV
  analyzer::ReplayResult result = analyzer::ReplayCluster(config, series, {}, {}, names, nullptr);
  SeedRuleCount count;
  count.alarms_by_peer.assign(spec.servers, 0);
  for (const analyzer::Alarm& alarm : result.alarms) {
    if (alarm.kind != analyzer::AlarmKind::kAnomaly) continue;
    ++count.alarms;
    int peer = std::atoi(alarm.server.c_str() + 4);
    ++count.alarms_by_peer[peer];
    // Alarm times are the ends of their windows in unix seconds (ms).
    double at_s = double(alarm.time_unix_ms) / 1000.0 - table.first_time_s - double(spec.limp_start) * spec.tick_s;
    if (peer == spec.limping && at_s >= 0 && count.seconds_to_indict < 0) count.seconds_to_indict = at_s;
  }
  count.server_days = double(ticks) * spec.tick_s * spec.servers / 86400.0;
  return count;
}

}  // namespace limpwatch::decision
