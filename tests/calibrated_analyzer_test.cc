// The calibrated rule inside peer comparison (cluster_diagnoser.h), untrained,
// on synthetic clusters: the right server, the right resource and why, no
// alarm where nothing limps; and what training adds.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "analyzer/synthetic_cluster.h"
#include "limpwatch/analyzer/cluster_replay.h"

namespace limpwatch::analyzer {
namespace {

using testing::GenerateCluster;
using testing::ServerName;
using testing::SyntheticCluster;
using testing::SyntheticFault;

// The default rule (calibrated), untrained unless `thresholds` says otherwise.
ReplayResult Replay(const SyntheticCluster& cluster, const Thresholds& thresholds = {}) {
  return testing::ReplaySynthetic(cluster, AnalyzerConfig{}, thresholds);
}

SyntheticCluster Faulty(SyntheticFault fault, int servers = 10) {
  SyntheticCluster cluster;
  cluster.servers = servers;
  cluster.ticks = 240;
  cluster.fault = fault;
  cluster.faulty_server = 3;
  cluster.fault_start = 120;
  return cluster;
}

std::string Describe(const ReplayResult& result) {
  std::string text;
  for (const Alarm& alarm : result.alarms) text += AlarmToLogLine(alarm) + "\n";
  return text;
}

// Every alarm names the faulty server, the first one on `resource`, and says why.
void ExpectIndicted(const ReplayResult& result, const SyntheticCluster& cluster, shm::Resource resource) {
  ASSERT_FALSE(result.alarms.empty()) << "nothing indicted";
  for (const Alarm& alarm : result.alarms) EXPECT_EQ(alarm.server, ServerName(cluster.faulty_server)) << Describe(result);
  const Alarm& first = result.alarms.front();
  EXPECT_EQ(first.resource, resource) << Describe(result);
  EXPECT_FALSE(first.reason.empty());
  EXPECT_EQ(first.reason.rfind(std::string(ResourceName(resource)) + ": ", 0), 0u) << first.reason;
  ASSERT_FALSE(first.evidence.empty());
  EXPECT_GE(first.evidence.front().statistic, 1.0);
  EXPECT_GT(first.evidence.front().ratio, 1.2);
  // Not before the fault.
  EXPECT_GT(first.window, cluster.first_tick + cluster.fault_start);
}

TEST(CalibratedRuleTest, AFaultFreeClusterRaisesNoAlarmOverAThousandWindows) {
  SyntheticCluster cluster;
  cluster.servers = 10;
  cluster.ticks = 1003;
  ReplayResult result = Replay(cluster);
  EXPECT_GE(result.windows.size(), 1000u);
  EXPECT_TRUE(result.alarms.empty()) << Describe(result);
}

TEST(CalibratedRuleTest, SlowStorageIsTheDisksWithItsFunctions) {
  SyntheticCluster cluster = Faulty(SyntheticFault::kDiskTime);
  ReplayResult result = Replay(cluster);
  ExpectIndicted(result, cluster, shm::Resource::kDisk);
  std::vector<std::string> storage_names = testing::StorageFunctionNames();
  std::set<std::string> storage(storage_names.begin(), storage_names.end());
  const Alarm& first = result.alarms.front();
  ASSERT_FALSE(first.top_functions.empty());
  EXPECT_TRUE(storage.count(first.top_functions.front().name)) << AlarmToLogLine(first);
}

// Each fault on the resource its mechanism stands for, whatever else it
// disturbs on the way (a CPU quota slows writes first; a reader hogging the
// disk on the server's cores makes it wait for a CPU too; a throttled disk
// drains its sockets late and loses packets).
TEST(CalibratedRuleTest, EachFaultIsNamedOnItsResource) {
  const struct {
    SyntheticFault fault;
    shm::Resource resource;
    const char* what;
  } cases[] = {
      {SyntheticFault::kCpuStarved, shm::Resource::kCpu, "a wait for a CPU"},
      {SyntheticFault::kCpuQuota, shm::Resource::kCpu, "a CPU quota, its writes slow first"},
      {SyntheticFault::kDiskHogOnSharedCores, shm::Resource::kDisk, "a disk reader on the server's cores"},
      {SyntheticFault::kPacketLoss, shm::Resource::kNetwork, "lost packets"},
      {SyntheticFault::kDiskThrottled, shm::Resource::kDisk, "a throttled disk that also loses packets"},
      {SyntheticFault::kSlowSyncs, shm::Resource::kDisk, "slow syncs"},
      {SyntheticFault::kMemoryThrashing, shm::Resource::kMemory, "pages faulted in again"},
      {SyntheticFault::kNetworkDelay, shm::Resource::kNetwork, "a slow link"},
  };
  for (const auto& item : cases) {
    SCOPED_TRACE(item.what);
    SyntheticCluster cluster = Faulty(item.fault);
    ExpectIndicted(Replay(cluster), cluster, item.resource);
  }
}

TEST(CalibratedRuleTest, ExtraCallsAndSamplesAreTheResourceOfTheFunctionsThatMadeThem) {
  // Its receive calls return less data each: many more of them for the same
  // bytes, and more kernel samples under them. Its profile's usual ratio is
  // learnt before the fault.
  SyntheticCluster cluster = Faulty(SyntheticFault::kNetworkCount);
  cluster.ticks = 300;
  cluster.fault_start = 150;
  ReplayResult result = Replay(cluster);
  ExpectIndicted(result, cluster, shm::Resource::kNetwork);
  const Alarm& first = result.alarms.front();
  EXPECT_TRUE(std::any_of(first.evidence.begin(), first.evidence.end(), [](const AlarmEvidence& evidence) {
    return evidence.metric == "count" && evidence.statistic >= 0.5;
  })) << AlarmToJson(first);
  for (const AlarmEvidence& evidence : first.evidence) {
    if (evidence.metric == "count" || evidence.metric == "samples") {
      EXPECT_EQ(evidence.resource, shm::Resource::kNetwork) << AlarmToJson(first);
    }
  }
}

// A server idler than its peers (half their requests) and faster at each
// of its calls is never indicted, on any metric; the same server slower at
// each call is.
TEST(CalibratedRuleTest, AFasterOrIdlerServerIsNeverIndictedASlowerOneIs) {
  SyntheticCluster cluster;
  cluster.ticks = 300;
  auto scaled = [&](double pace) {
    auto ticks = GenerateCluster(cluster);
    for (TickRecord& tick : ticks[ServerName(4)]) {
      if (tick.tick < cluster.first_tick + 100) continue;
      for (FunctionTick& function : tick.functions) {
        function.calls = uint64_t(double(function.calls) * 0.5);
        function.self_ms *= 0.5 * pace;
        function.samples = uint64_t(double(function.samples) * 0.5 * pace);
      }
      tick.io.dread_ms *= pace;
      tick.io.dwrite_ms *= pace;
      tick.io.nsread_ms *= pace;
      tick.io.request_bytes *= 0.5;
    }
    return ReplayCluster(AnalyzerConfig{}, ticks, {}, testing::SyntheticManifest(), testing::SyntheticNames(), nullptr);
  };
  ReplayResult faster = scaled(0.6);
  EXPECT_TRUE(faster.alarms.empty()) << Describe(faster);
  ReplayResult slower = scaled(2.5);
  ASSERT_FALSE(slower.alarms.empty());
  for (const Alarm& alarm : slower.alarms) EXPECT_EQ(alarm.server, ServerName(4)) << Describe(slower);
}

TEST(CalibratedRuleTest, OneSecondOfRetransmissionsIsNoLimp) {
  SyntheticCluster cluster = Faulty(SyntheticFault::kLossBurst);
  cluster.fault_end = cluster.fault_start + 1;
  ReplayResult result = Replay(cluster);
  EXPECT_TRUE(result.alarms.empty()) << Describe(result);
}

TEST(CalibratedRuleTest, HalfTheServersSlowTogetherIsNoLimpingServer) {
  // Two of four servers with the same slow disk: two groups, not one server
  // behind the rest. One of four is found.
  SyntheticCluster one = Faulty(SyntheticFault::kDiskTime, 4);
  one.faulty_server = 1;
  ExpectIndicted(Replay(one), one, shm::Resource::kDisk);
  auto ticks = GenerateCluster(one);
  SyntheticCluster other = one;
  other.faulty_server = 2;
  ticks[ServerName(2)] = GenerateCluster(other)[ServerName(2)];
  ReplayResult two = ReplayCluster({}, ticks, {}, testing::SyntheticManifest(), testing::SyntheticNames(), nullptr);
  EXPECT_TRUE(two.alarms.empty()) << Describe(two);
}

TEST(CalibratedRuleTest, TrainingNarrowsTheStartAndLearnsEachServersUsualProfile) {
  SyntheticCluster training;
  training.ticks = 400;
  ReplayResult learnt = Replay(training);
  ASSERT_TRUE(learnt.alarms.empty()) << Describe(learnt);
  // A spread for each metric the servers measured, and usual profile ratios.
  ASSERT_TRUE(learnt.learnt.GetSpread(ComparedMetric::kDread));
  EXPECT_GT(learnt.learnt.GetSpread(ComparedMetric::kDread)->windows, 1000.0);
  EXPECT_TRUE(learnt.learnt.GetUsual(ServerName(0), ComparedMetric::kTime));

  // Trained, the same slow disk is found sooner: the noise is known from the
  // first window, and more windows stand behind its tail.
  SyntheticCluster cluster = Faulty(SyntheticFault::kDiskTime);
  cluster.fault_start = 40;
  cluster.seed = 7;
  ReplayResult untrained = Replay(cluster);
  ReplayResult trained = Replay(cluster, learnt.learnt);
  ASSERT_FALSE(trained.alarms.empty());
  EXPECT_EQ(trained.alarms.front().server, ServerName(3));
  ASSERT_FALSE(untrained.alarms.empty());
  EXPECT_LT(trained.alarms.front().window, untrained.alarms.front().window);
}

}  // namespace
}  // namespace limpwatch::analyzer
