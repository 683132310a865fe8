// Today's seed rule on a generated cluster, for the decision suite's
// comparison: the cluster written as the CSV `limpwatch diagnose` reads, and
// replayed through the seed rule (distances, default thresholds, k of 2k-1).
#ifndef LIMPWATCH_TOOLS_BENCH_DECISION_SEED_RULE_SERIES_H_
#define LIMPWATCH_TOOLS_BENCH_DECISION_SEED_RULE_SERIES_H_

#include <cstdint>
#include <vector>

#include "generated_cluster.h"

namespace limpwatch::decision {

struct SeedRuleCount {
  uint64_t alarms = 0;
  std::vector<uint64_t> alarms_by_peer;
  double server_days = 0;
  // The first alarm on the limping peer at or after its limp began, in
  // seconds from then (-1: none).
  double seconds_to_indict = -1;
};

SeedRuleCount RunSeedRule(const ClusterSpec& spec, uint64_t ticks);

}  // namespace limpwatch::decision

#endif  // LIMPWATCH_TOOLS_BENCH_DECISION_SEED_RULE_SERIES_H_
