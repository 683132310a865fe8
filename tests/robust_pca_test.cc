// Robust PCA, CloudDiag's column analysis and the untrained rpca detector.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "limpwatch/analyzer/cloud_diag.h"
#include "limpwatch/analyzer/cluster_diagnoser.h"
#include "limpwatch/analyzer/robust_pca.h"
#include "limpwatch/analyzer/rpca_detector.h"

namespace limpwatch::analyzer {
namespace {

using Eigen::MatrixXd;

MatrixXd RandomGaussian(Eigen::Index rows, Eigen::Index columns, std::mt19937_64& random) {
  std::normal_distribution<double> normal;
  MatrixXd matrix(rows, columns);
  for (Eigen::Index c = 0; c < columns; ++c) {
    for (Eigen::Index r = 0; r < rows; ++r) matrix(r, c) = normal(random);
  }
  return matrix;
}

struct Planted {
  MatrixXd low_rank;
  MatrixXd sparse;
};

// Candes et al.'s experiment: L = X Y^T with Gaussian factors of variance
// 1/rows, and sparse entries +-1 at random places.
Planted PlantedProblem(Eigen::Index rows, Eigen::Index columns, Eigen::Index rank, double density, uint64_t seed) {
  std::mt19937_64 random(seed);
  Planted planted;
  planted.low_rank =
      RandomGaussian(rows, rank, random) * RandomGaussian(columns, rank, random).transpose() / std::sqrt(double(rows));
  planted.sparse = MatrixXd::Zero(rows, columns);
  std::bernoulli_distribution place(density), sign(0.5);
  for (Eigen::Index c = 0; c < columns; ++c) {
    for (Eigen::Index r = 0; r < rows; ++r) {
      if (place(random)) planted.sparse(r, c) = sign(random) ? 1.0 : -1.0;
    }
  }
  return planted;
}

void ExpectRecovered(const Planted& planted, const RobustPca& result, Eigen::Index rank) {
  ASSERT_TRUE(result.converged) << result.iterations << " iterations, residual " << result.relative_residual;
  // Tolerance: 1 % of the low-rank part's norm, and the exact support of E
  // (entries over 0.1 where +-1 was planted, under it elsewhere).
  EXPECT_LT((result.low_rank - planted.low_rank).norm() / planted.low_rank.norm(), 0.01);
  EXPECT_EQ(result.rank, rank);
  for (Eigen::Index c = 0; c < planted.sparse.cols(); ++c) {
    for (Eigen::Index r = 0; r < planted.sparse.rows(); ++r) {
      EXPECT_EQ(std::abs(result.sparse(r, c)) > 0.1, planted.sparse(r, c) != 0) << r << "," << c;
    }
  }
}

TEST(RobustPcaTest, RecoversAPlantedSparsePartOfASmallMatrixExactly) {
  Planted planted = PlantedProblem(40, 30, 2, 0.05, 1);
  ExpectRecovered(planted, DecomposeRobustPca(planted.low_rank + planted.sparse), 2);
}

TEST(RobustPcaTest, RecoversAPlantedSparsePartThroughTheTrackedSubspace) {
  // 400 x 120 takes the partial thresholding (more than 48 columns).
  Planted planted = PlantedProblem(400, 120, 4, 0.05, 2);
  ExpectRecovered(planted, DecomposeRobustPca(planted.low_rank + planted.sparse), 4);
}

TEST(RobustPcaTest, AZeroOrEmptyMatrixGivesZeroParts) {
  RobustPca zero = DecomposeRobustPca(MatrixXd::Zero(5, 4));
  EXPECT_TRUE(zero.converged);
  EXPECT_EQ(zero.low_rank.norm() + zero.sparse.norm(), 0);
  RobustPca empty = DecomposeRobustPca(MatrixXd(0, 0));
  EXPECT_TRUE(empty.converged);
}

// Requests x methods: every method's latency follows the request's size
// (rank 1) with 3 % noise.
MatrixXd ConsistentLatencies(uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> size(1, 3), noise(0.97, 1.03);
  MatrixXd latencies(200, 20);
  for (Eigen::Index r = 0; r < latencies.rows(); ++r) {
    double request = size(random);
    for (Eigen::Index c = 0; c < latencies.cols(); ++c) latencies(r, c) = request * (1 + 0.1 * c) * noise(random);
  }
  return latencies;
}

TEST(CloudDiagTest, FlagsThePlantedColumnAndNamesItsRows) {
  // Method 7 is slow on rows 10-14 only.
  MatrixXd latencies = ConsistentLatencies(3);
  for (Eigen::Index r = 10; r < 15; ++r) latencies(r, 7) *= 4;
  CloudDiagAnalysis analysis = AnalyzeLatencyMatrix(latencies);
  ASSERT_EQ(analysis.anomalous.size(), 1u) << "fence " << analysis.beta_fence;
  EXPECT_EQ(analysis.anomalous[0].column, 7u);
  EXPECT_EQ(std::set<size_t>(analysis.anomalous[0].slow_rows.begin(), analysis.anomalous[0].slow_rows.end()),
            (std::set<size_t>{10, 11, 12, 13, 14}));
}

TEST(CloudDiagTest, NoColumnOfAConsistentMatrixIsAnomalous) {
  EXPECT_TRUE(AnalyzeLatencyMatrix(ConsistentLatencies(4)).anomalous.empty());
}

TEST(CloudDiagTest, ColumnCosineOfAColumnWithoutLowRankPartIsZero) {
  Eigen::VectorXd column(3), zero = Eigen::VectorXd::Zero(3);
  column << 1, 2, 3;
  EXPECT_EQ(ColumnCosine(column, zero), 0);
  EXPECT_DOUBLE_EQ(ColumnCosine(column, 2 * column), 1);
  EXPECT_EQ(ColumnCosine(zero, column), 1);
}

// Four servers, 30 functions; every function's time per call follows a
// load that changes over time, with 5 % noise per server and tick.
struct SlowDown {
  std::set<std::string> servers;
  std::set<uint64_t> functions;
  uint64_t from_tick = 0;
  uint64_t to_tick = 0;
  double factor = 1;
};

std::map<std::string, std::vector<TickRecord>> SyntheticCluster(const SlowDown& slow, uint64_t ticks = 100) {
  std::mt19937_64 random(5);
  std::normal_distribution<double> noise(1.0, 0.05);
  std::map<std::string, std::vector<TickRecord>> cluster;
  for (uint64_t tick = 1000; tick < 1000 + ticks; ++tick) {
    double load = 1.0 + 0.5 * std::sin(double(tick) / 9.0);
    for (const char* server : {"s0", "s1", "s2", "s3"}) {
      TickRecord record;
      record.node = server;
      record.tick = tick;
      record.unix_ms = tick * 1000;
      for (uint64_t function = 1; function <= 30; ++function) {
        double per_call = 0.01 * double(function) * load * noise(random);
        if (slow.servers.count(server) && slow.functions.count(function) && tick >= slow.from_tick &&
            tick < slow.to_tick) {
          per_call *= slow.factor;
        }
        record.functions.push_back({function, 100, 100 * per_call, 0});
      }
      cluster[server].push_back(record);
    }
  }
  return cluster;
}

RpcaReplay Detect(const std::map<std::string, std::vector<TickRecord>>& cluster) {
  ResourceManifest manifest;
  NameBook names;
  for (uint64_t function = 1; function <= 30; ++function) names.Add(function, "f" + std::to_string(function));
  manifest.AddRule("f5", shm::Resource::kDisk);
  manifest.AddRule("f6", shm::Resource::kDisk);
  return ReplayRpca(AnalyzerConfig{}, cluster, manifest, names);
}

TEST(RpcaDetectorTest, AServerWhoseFunctionsSlowDownIsIndictedWithThemAndTheirResource) {
  RpcaReplay replay = Detect(SyntheticCluster({{"s2"}, {5, 6}, 1060, 1075, 3.0}));
  ASSERT_FALSE(replay.alarms.empty());
  const Alarm& alarm = replay.alarms.front();
  EXPECT_EQ(alarm.server, "s2");
  EXPECT_EQ(alarm.resource, shm::Resource::kDisk);
  EXPECT_GE(alarm.window, 1060u);
  EXPECT_LT(alarm.window, 1060u + 2 * AnalyzerConfig{}.k + AnalyzerConfig{}.window_ticks);
  std::set<std::string> named;
  for (const auto& function : alarm.top_functions) named.insert(function.name);
  EXPECT_EQ(named, (std::set<std::string>{"f5", "f6"}));
  for (const Alarm& other : replay.alarms) EXPECT_EQ(other.server, "s2");
  ASSERT_FALSE(replay.ranking.empty());
  EXPECT_TRUE(replay.ranking.front().name == "f5" || replay.ranking.front().name == "f6");
}

TEST(RpcaDetectorTest, AFaultFreeClusterRaisesNoAlarm) {
  RpcaReplay replay = Detect(SyntheticCluster({}));
  EXPECT_FALSE(replay.steps.empty());
  EXPECT_TRUE(replay.alarms.empty()) << replay.alarms.front().server;
}

TEST(RpcaDetectorTest, ASlowdownOfEveryServerIndictsNone) {
  RpcaReplay replay = Detect(SyntheticCluster({{"s0", "s1", "s2", "s3"}, {5, 6}, 1060, 1075, 3.0}));
  EXPECT_TRUE(replay.alarms.empty()) << replay.alarms.front().server;
}

TEST(RpcaDetectorTest, ASummarysRowPairsEachFunctionsTimeWithItsCalls) {
  PeerSummary summary;
  summary.metrics = {{Metric::kCount, {{1, 10}, {2, 0}, {4, 5}}}, {Metric::kTime, {{1, 20}, {2, 3}, {3, 7}, {4, 1}}}};
  std::vector<RpcaCell> cells = RpcaCellsOfSummary(summary);
  ASSERT_EQ(cells.size(), 2u);  // key 2 has no calls, key 3 no count
  EXPECT_EQ(cells[0].key, 1u);
  EXPECT_DOUBLE_EQ(cells[0].self_ms, 20);
  EXPECT_DOUBLE_EQ(cells[0].calls, 10);
  EXPECT_EQ(cells[1].key, 4u);
  EXPECT_DOUBLE_EQ(cells[1].self_ms, 1);
}

// Online: the same cluster as the summaries of 4-tick windows shifted by a
// tick, as the peers exchange them, through the analyzer's diagnoser.
std::vector<Alarm> DiagnoseSummaries(const std::map<std::string, std::vector<TickRecord>>& cluster, bool rpca) {
  AnalyzerConfig config;
  config.rpca_detector = rpca;
  ResourceManifest manifest;
  manifest.AddRule("f5", shm::Resource::kDisk);
  manifest.AddRule("f6", shm::Resource::kDisk);
  NameBook names;
  for (uint64_t function = 1; function <= 30; ++function) names.Add(function, "f" + std::to_string(function));
  ClusterDiagnoser diagnoser(config, Thresholds{}, manifest, &names, "s0");
  std::vector<Alarm> alarms;
  const size_t ticks = cluster.begin()->second.size();
  for (size_t last = config.window_ticks - 1; last < ticks; ++last) {
    uint64_t window = cluster.begin()->second[last].tick;
    for (const auto& [server, records] : cluster) {
      std::map<uint32_t, std::pair<double, double>> sums;  // key -> time, calls
      for (size_t t = last + 1 - config.window_ticks; t <= last; ++t) {
        for (const FunctionTick& function : records[t].functions) {
          auto& sum = sums[FoldNameHash(function.name_hash)];
          sum.first += function.self_ms;
          sum.second += double(function.calls);
        }
      }
      PeerSummary summary;
      summary.node = server;
      summary.boot_id = 1;
      summary.window = window;
      summary.window_end_unix_ms = records[last].unix_ms;
      summary.window_ticks = uint16_t(config.window_ticks);
      summary.tick_ms = 1000;
      MetricFeatures times{Metric::kTime, {}}, counts{Metric::kCount, {}};
      for (const auto& [key, sum] : sums) {
        times.features.push_back({key, float(sum.first)});
        counts.features.push_back({key, float(sum.second)});
      }
      summary.metrics = {counts, times};
      diagnoser.Add(summary);
    }
    for (Alarm& alarm : diagnoser.Analyze(window, cluster.begin()->second[last].unix_ms)) {
      alarms.push_back(std::move(alarm));
    }
  }
  return alarms;
}

TEST(RpcaDetectorTest, TheAnalyzersDiagnoserRunsItOnTheExchangedSummariesWhenAskedTo) {
  auto cluster = SyntheticCluster({{"s2"}, {5, 6}, 1060, 1075, 3.0});
  std::vector<Alarm> with = DiagnoseSummaries(cluster, true);
  auto is_rpca = [](const Alarm& alarm) { return alarm.metrics == std::vector<std::string>{kRpcaDetectorName}; };
  auto rpca = std::find_if(with.begin(), with.end(), is_rpca);
  ASSERT_NE(rpca, with.end());
  EXPECT_EQ(rpca->server, "s2");
  EXPECT_EQ(rpca->reporter, "s0");
  EXPECT_EQ(rpca->resource, shm::Resource::kDisk);
  for (const Alarm& alarm : with) EXPECT_EQ(alarm.server, "s2");
  std::vector<Alarm> without = DiagnoseSummaries(cluster, false);
  EXPECT_EQ(std::count_if(without.begin(), without.end(), is_rpca), 0);
  std::vector<Alarm> quiet = DiagnoseSummaries(SyntheticCluster({}), true);
  EXPECT_EQ(std::count_if(quiet.begin(), quiet.end(), is_rpca), 0);
}

}  // namespace
}  // namespace limpwatch::analyzer
