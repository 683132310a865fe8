// The calibrated decision on generated per-peer series (the decision suite's
// clusters): direction, scale, the false-alarm budget, intermittent limps,
// bursts, load, and two groups.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "generated_cluster.h"
#include "limpwatch/analyzer/false_alarm_budget.h"
#include "limpwatch/analyzer/residual_history.h"
#include "limpwatch/analyzer/series_diagnosis.h"
#include "limpwatch/analyzer/shift_detector.h"

namespace limpwatch::analyzer {
namespace {

using decision::ClusterSpec;
using decision::GeneratedCluster;
using decision::NoiseModel;

struct Diagnosed {
  std::vector<Alarm> alarms;
  std::vector<ServerVerdict> verdicts;
  double latency_load_slope = 0;
};

// Runs a generated cluster for `ticks`; `with_load` gives the throughput
// column as a load, else only latency is given.
Diagnosed Diagnose(const ClusterSpec& spec, uint64_t ticks, bool with_load = true, double scale = 1.0) {
  GeneratedCluster cluster(spec);
  SeriesSettings series;
  series.tick_s = spec.tick_s;
  DecisionSettings settings;
  settings.keep_verdicts = true;
  std::vector<DecisionMetric> columns = {{"latency", EvidenceKind::kLevel, shm::Resource::kDisk, 0}};
  if (with_load) columns.push_back({"throughput", EvidenceKind::kLoad, shm::Resource::kUnknown, 0});
  SeriesDiagnosis diagnosis(series, settings, columns);
  Diagnosed run;
  std::vector<double> latency, throughput;
  std::vector<std::vector<double>> rows(spec.servers);
  for (uint64_t tick = 0; tick < ticks; ++tick) {
    cluster.Next(&latency, &throughput);
    for (int peer = 0; peer < spec.servers; ++peer) {
      rows[peer] = {latency[peer] * scale};
      if (with_load) rows[peer].push_back(throughput[peer]);
    }
    for (Alarm& alarm : diagnosis.AddTick(tick, cluster.names(), rows)) run.alarms.push_back(std::move(alarm));
  }
  run.verdicts = diagnosis.decision().Verdicts();
  run.latency_load_slope = diagnosis.decision().load_slope(0);
  return run;
}

size_t AlarmsOn(const Diagnosed& run, const std::string& peer) {
  size_t count = 0;
  for (const Alarm& alarm : run.alarms) count += alarm.server == peer;
  return count;
}

TEST(DecisionTest, AFasterPeerIsNeverIndictedASlowerOneIs) {
  for (NoiseModel noise : {NoiseModel::kGaussian, NoiseModel::kBursty}) {
    ClusterSpec spec;
    spec.noise = noise;
    spec.fast = 2;
    spec.fast_ratio = 0.5;
    spec.limping = 5;
    spec.limp_ratio = 1.5;
    spec.limp_start = 600;
    Diagnosed run = Diagnose(spec, 1800);
    EXPECT_EQ(AlarmsOn(run, "peer2"), 0u) << decision::NoiseModelName(noise);
    EXPECT_GE(AlarmsOn(run, "peer5"), 1u) << decision::NoiseModelName(noise);
    EXPECT_EQ(AlarmsOn(run, "peer5"), run.alarms.size()) << decision::NoiseModelName(noise);
    for (const Alarm& alarm : run.alarms) EXPECT_GE(alarm.time_unix_ms, 600u * 1000u);
  }
}

TEST(DecisionTest, TheSameClusterInOtherUnitsGivesTheSameVerdicts) {
  ClusterSpec spec;
  spec.noise = NoiseModel::kLogNormal;
  spec.limping = 3;
  spec.limp_ratio = 2.0;
  spec.limp_start = 400;
  Diagnosed base = Diagnose(spec, 1200);
  ASSERT_FALSE(base.alarms.empty());
  for (double scale : {0.001, 1000.0}) {
    Diagnosed scaled = Diagnose(spec, 1200, true, scale);
    ASSERT_EQ(scaled.alarms.size(), base.alarms.size()) << scale;
    for (size_t index = 0; index < base.alarms.size(); ++index) {
      EXPECT_EQ(scaled.alarms[index].server, base.alarms[index].server);
      EXPECT_EQ(scaled.alarms[index].window, base.alarms[index].window);
    }
  }
}

// The budget is 1 false alarm per 100 server-days: 8 server-days of heavy-
// tailed, drifting healthy peers (a fast one and a hot one among them)
// expect 0.08 of one. Three would be far beyond it.
TEST(DecisionTest, HealthyPeersStayWithinTheFalseAlarmBudget) {
  ClusterSpec spec;
  spec.noise = NoiseModel::kBursty;
  spec.fast = 1;
  spec.hot = 2;
  spec.seed = 11;
  Diagnosed run = Diagnose(spec, 86400);
  EXPECT_LE(run.alarms.size(), 2u);
}

TEST(DecisionTest, AHalfTheTimeLimpIsIndicted) {
  ClusterSpec spec;
  spec.noise = NoiseModel::kLogNormal;
  spec.limping = 4;
  spec.limp_ratio = 1.5;
  spec.limp_start = 600;
  spec.intermittent_ticks = 120;
  Diagnosed run = Diagnose(spec, 600 + 3600);
  EXPECT_GE(AlarmsOn(run, "peer4"), 1u);
  EXPECT_EQ(AlarmsOn(run, "peer4"), run.alarms.size());
}

// Latency follows load with an exponent of 0.54 on these peers (1.4x the
// load, 1.2x the latency) and each window's throughput is measured with 10 %
// noise: a plain least-squares slope on it comes out near 0.3, which leaves a
// hot peer slower than its load explains.
TEST(DecisionTest, TheLoadSlopeIsNotFlattenedByTheLoadsMeasurementNoise) {
  ClusterSpec spec;
  spec.noise = NoiseModel::kGaussian;
  spec.healthy_spread = 0;
  spec.hot = 2;
  Diagnosed run = Diagnose(spec, 7200);
  EXPECT_GT(run.latency_load_slope, 0.45);
  EXPECT_LT(run.latency_load_slope, 0.65);
  EXPECT_EQ(AlarmsOn(run, "peer2"), 0u);
}

TEST(DecisionTest, LoadExplainsAHotPeersLatencyAndIsNeverNamed) {
  // peer2 carries 1.4x the load and is 1.2x slower for it, persistently.
  ClusterSpec spec;
  spec.noise = NoiseModel::kGaussian;
  spec.hot = 2;
  spec.limping = 6;
  spec.limp_ratio = 2.0;
  spec.limp_start = 1200;
  Diagnosed with_load = Diagnose(spec, 2400);
  EXPECT_EQ(AlarmsOn(with_load, "peer2"), 0u);
  ASSERT_GE(AlarmsOn(with_load, "peer6"), 1u);
  for (const Alarm& alarm : with_load.alarms) {
    for (const RootCauseFunction& cause : alarm.top_functions) EXPECT_NE(cause.name, "throughput");
    for (const AlarmEvidence& evidence : alarm.evidence) EXPECT_NE(evidence.metric, "throughput");
  }
  // Latency alone cannot tell the load's share from a limp.
  Diagnosed latency_only = Diagnose(spec, 2400, false);
  EXPECT_GE(AlarmsOn(latency_only, "peer2"), 1u);
}

TEST(DecisionTest, TwoGroupsAreNoLimpingPeer) {
  // Four peers, two of them 1.5x slower than the other two from tick 300.
  SeriesSettings series;
  SeriesDiagnosis diagnosis(series, {}, {{"latency", EvidenceKind::kLevel, shm::Resource::kDisk, 0}});
  std::mt19937 random(5);
  std::normal_distribution<double> noise(1.0, 0.05);
  std::vector<std::string> peers = {"a", "b", "c", "d"};
  size_t alarms = 0;
  for (uint64_t tick = 0; tick < 1500; ++tick) {
    std::vector<std::vector<double>> rows;
    for (size_t peer = 0; peer < peers.size(); ++peer) {
      double slow = tick >= 300 && peer < 2 ? 1.5 : 1.0;
      rows.push_back({10.0 * slow * noise(random)});
    }
    alarms += diagnosis.AddTick(tick, peers, rows).size();
  }
  EXPECT_EQ(alarms, 0u);
}

TEST(DecisionTest, AGapInTheDataIsMissingDataNotALimp) {
  ClusterSpec spec;
  spec.noise = NoiseModel::kGaussian;
  GeneratedCluster cluster(spec);
  SeriesSettings series;
  SeriesDiagnosis diagnosis(series, {}, {{"latency", EvidenceKind::kLevel, shm::Resource::kDisk, 0}});
  std::vector<double> latency, throughput;
  size_t alarms = 0;
  for (uint64_t tick = 0; tick < 2000; ++tick) {
    cluster.Next(&latency, &throughput);
    // peer3 stops reporting for ten minutes; every peer misses a stretch too.
    std::vector<std::string> names;
    std::vector<std::vector<double>> rows;
    for (int peer = 0; peer < spec.servers; ++peer) {
      if (peer == 3 && tick >= 600 && tick < 1200) continue;
      names.push_back(cluster.names()[peer]);
      rows.push_back({latency[peer]});
    }
    if (tick >= 1500 && tick < 1560) continue;
    alarms += diagnosis.AddTick(tick, names, rows).size();
  }
  EXPECT_EQ(alarms, 0u);
}

TEST(ShiftDetectorTest, EvidenceHasADirectionAndBurstsSayLittle) {
  std::vector<double> limps = {std::log(1.2), std::log(1.5), std::log(2.5), std::log(6.0)};
  ShiftDetector detector(&limps, std::log(1.07));
  ShiftNoise noise;
  noise.sigma = 0.05;
  noise.wander = 1;
  noise.tail_start = 0.1;
  noise.tail_share = 0.05;
  noise.tail_scale = 0.5;
  noise.rarest = 1e-3;
  noise.rarest_beyond = 1e-3;
  // Faster than the peers: evidence against every limp.
  for (size_t chart = 0; chart < limps.size(); ++chart) EXPECT_LT(detector.Evidence(-0.3, noise, chart), 0) << chart;
  // At the tolerated difference: against.
  EXPECT_LT(detector.Evidence(std::log(1.07), noise, 0), 0);
  // 1.3x: for the 1.2x chart.
  EXPECT_GT(detector.Evidence(std::log(1.3), noise, 0), 1.0);
  // Far beyond every chart (20x) is still evidence, for the last one.
  EXPECT_GT(detector.Evidence(std::log(20.0), noise, 3), 1.0);
  // With bursts as common as a 3x window, a 3x window says less than it
  // says where healthy servers never burst.
  ShiftNoise quiet = noise;
  quiet.tail_share = 1e-4;
  EXPECT_LT(detector.Evidence(std::log(3.0), noise, 2), detector.Evidence(std::log(3.0), quiet, 2));
  // Overlapping windows share their evidence.
  ShiftNoise overlapping = noise;
  overlapping.wander = 4;
  EXPECT_NEAR(detector.Evidence(std::log(1.3), overlapping, 0), detector.Evidence(std::log(1.3), noise, 0) / 4, 1e-9);
  // The sums never go below 0.
  detector.Update(-1.0, noise, 10);
  EXPECT_EQ(detector.statistic(), 0.0);
}

TEST(ResidualHistoryTest, CenterSpreadTailAndWander) {
  ResidualHistory iid(128, 16);
  std::mt19937 random(3);
  std::normal_distribution<double> normal(0.5, 0.1);
  for (int index = 0; index < 1000; ++index) iid.Add(normal(random));
  EXPECT_NEAR(iid.center(), 0.5, 0.03);
  EXPECT_NEAR(iid.scale(), 0.1, 0.025);
  BurstTail core = TailOf(iid.CountBeyond(2 * iid.scale()), 2 * iid.scale(), iid.scale());
  EXPECT_LT(core.share, 0.06);  // 2.3 % of a normal sample lies two spreads out
  // One value in ten a burst of 0.5 to 1.5 over the center: the tail has them.
  ResidualHistory bursty(128, 16);
  for (int index = 0; index < 128; ++index) bursty.Add(index % 10 == 0 ? 0.5 + 1.0 + index / 128.0 : normal(random));
  BurstTail heavy = TailOf(bursty.CountBeyond(2 * bursty.scale()), 2 * bursty.scale(), bursty.scale());
  EXPECT_GT(heavy.share, 0.09);
  EXPECT_GT(heavy.scale, 0.5);
  ASSERT_TRUE(iid.WanderFactor());
  EXPECT_LT(*iid.WanderFactor(), 3.0);
  // A value that wanders slowly: block means spread as much as single values.
  ResidualHistory drifting(128, 16);
  double level = 0;
  for (int index = 0; index < 1000; ++index) {
    level = 0.98 * level + 0.02 * normal(random) * 5;
    drifting.Add(level + 0.02 * normal(random));
  }
  ASSERT_TRUE(drifting.WanderFactor());
  EXPECT_GT(*drifting.WanderFactor(), 4.0);
}

TEST(FalseAlarmBudgetTest, TheThresholdFollowsFromTheBudget) {
  FalseAlarmBudget budget;
  budget.server_days_per_false_alarm = 100;
  budget.window_shift_s = 1;
  budget.charts = 48;
  EXPECT_NEAR(budget.Threshold(), std::log(100 * 86400.0 * 48), 1e-9);
  budget.window_shift_s = 15;
  budget.charts = 4;
  EXPECT_NEAR(budget.Threshold(), std::log(100 * 86400.0 / 15 * 4), 1e-9);
  // A tighter budget asks for more evidence.
  double loose = budget.Threshold();
  budget.server_days_per_false_alarm = 1000;
  EXPECT_GT(budget.Threshold(), loose);
}

}  // namespace
}  // namespace limpwatch::analyzer
