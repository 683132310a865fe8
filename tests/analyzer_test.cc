// The analyzer on synthetic interval streams: windows, distances, invariants,
// peer comparison, k-of-(2k-1) filtering, training, root cause and resource.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>

#include "analyzer/synthetic_cluster.h"
#include "limpwatch/analyzer/cluster_replay.h"
#include "limpwatch/analyzer/distance.h"
#include "limpwatch/analyzer/invariants.h"
#include "limpwatch/analyzer/statistics.h"
#include "limpwatch/analyzer/thresholds.h"
#include "limpwatch/analyzer/tick_record.h"
#include "limpwatch/analyzer/window.h"
#include "limpwatch/shm/name_hash.h"

namespace limpwatch::analyzer {
namespace {

using testing::GenerateCluster;
using testing::ServerName;
using testing::SyntheticCluster;
using testing::SyntheticFault;

// These tests pin down the seed rule (trained thresholds, k of 2k-1
// windows); calibrated_analyzer_test.cc holds the calibrated rule's.
AnalyzerConfig SeedRule() {
  AnalyzerConfig config;
  config.decision_rule = DecisionRule::kSeed;
  return config;
}

ReplayResult Replay(const SyntheticCluster& cluster, const AnalyzerConfig& config = SeedRule(),
                    const Thresholds& thresholds = {}) {
  return testing::ReplaySynthetic(cluster, config, thresholds);
}

TEST(StatisticsTest, MedianAndCorrelation) {
  EXPECT_EQ(Median({}), 0.0);
  EXPECT_EQ(Median({3, 1, 2}), 2.0);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_NEAR(*Correlation({1, 2, 3, 4}, {2, 4, 6, 8}), 1.0, 1e-12);
  EXPECT_NEAR(*Correlation({1, 2, 3, 4}, {8, 6, 4, 2}), -1.0, 1e-12);
  EXPECT_FALSE(Correlation({1, 1, 1, 1}, {1, 2, 3, 4}));
}

TEST(DistanceTest, KindsOnCommonKeysOnly) {
  std::vector<Feature> p{{1, 4}, {2, 0}, {5, 9}};
  std::vector<Feature> q{{1, 1}, {2, 2}, {7, 100}};  // key 7 unknown to p, key 5 to q: ignored
  EXPECT_DOUBLE_EQ(Distance(p, q, DistanceKind::kManhattan), 3 + 2);
  EXPECT_DOUBLE_EQ(Distance(p, q, DistanceKind::kRelative), 3.0 / 4 + 2.0 / 2);
  EXPECT_DOUBLE_EQ(Distance(p, q, DistanceKind::kScaled), 9.0 / 4 + 4.0 / 2);
  EXPECT_NEAR(Distance(p, p, DistanceKind::kSymmetricKl), 0.0, 1e-12);
  EXPECT_GT(Distance(p, q, DistanceKind::kSymmetricKl), 0.0);
  FeatureWeights weights;
  weights.weights = {{1, 0.5f}};
  EXPECT_DOUBLE_EQ(Distance(p, q, DistanceKind::kManhattan, &weights), 1.5 + 2);
}

TEST(WindowTest, WindowsAreAlignedToTheTickNumberAndShift) {
  WindowBuilder builder(4, 2);
  std::vector<uint64_t> completed;
  for (uint64_t tick = 100; tick < 110; ++tick) {
    TickRecord record;
    record.node = "a";
    record.tick = tick;
    record.functions = {{42, 1, 2.0, 3}};
    for (const Window& window : builder.Add(record)) {
      completed.push_back(window.index);
      EXPECT_EQ(window.last_tick + 1, window.index * 2);
      EXPECT_EQ(window.functions.at(42).calls, window.ticks_present);
      if (window.first_tick >= 100) {
        EXPECT_EQ(window.ticks_present, 4u);
      }
    }
  }
  EXPECT_EQ(completed, (std::vector<uint64_t>{51, 52, 53, 54, 55}));
}

// Two snapshots `seconds` apart: one function with 100 calls and 1 s of self
// time per second, its threads waiting 0.5 s per second for a CPU, 20
// file syncs a second of 4 ms each, and 30 major page faults a second.
TickRecord TickOver(double seconds) {
  shm::Snapshot before, after;
  before.ns_per_tick = after.ns_per_tick = 1.0;
  before.taken_realtime_ns = 1'700'000'000'000'000'000;
  after.taken_realtime_ns = before.taken_realtime_ns + uint64_t(seconds * 1e9);
  shm::FunctionRecord function;
  function.name_hash = shm::FunctionNameHash("storage_write");
  before.functions = {function};
  function.counters.calls = uint64_t(100 * seconds);
  function.counters.self_ticks = uint64_t(1e9 * seconds);
  after.functions = {function};
  before.node_metrics.valid = after.node_metrics.valid = true;
  after.node_metrics.run_delay_ns = uint64_t(0.5e9 * seconds);
  after.node_metrics.tcp_round_trip_us = 400;
  before.node_metrics.major_faults = 1000;  // those of the process's start
  after.node_metrics.major_faults = 1000 + uint64_t(30 * seconds);
  shm::IoValues& syncs =
      after.io.counters[uint32_t(shm::FdKind::kFile)][uint32_t(shm::IoOperation::kSync)];
  syncs.calls = uint64_t(20 * seconds);
  syncs.ticks = uint64_t(80e6 * seconds);
  return BuildTickRecord("server0", before, after, 1000);
}

const FunctionTick* TickOf(const TickRecord& tick, const std::string& name) {
  for (const FunctionTick& function : tick.functions) {
    if (function.name_hash == shm::FunctionNameHash(name)) return &function;
  }
  return nullptr;
}

TEST(TickRecordTest, ALateTickIsScaledToOneTick) {
  // On time, and six seconds late (the analyzer thread stalled): both are
  // one second of the same work and the same waiting.
  for (double seconds : {1.0, 6.0}) {
    SCOPED_TRACE(seconds);
    TickRecord tick = TickOver(seconds);
    const FunctionTick* work = TickOf(tick, "storage_write");
    ASSERT_NE(work, nullptr);
    EXPECT_EQ(work->calls, 100u);
    EXPECT_NEAR(work->self_ms, 1000.0, 1e-6);
    const FunctionTick* waiting = TickOf(tick, kRunqueueWaitName);
    ASSERT_NE(waiting, nullptr);
    EXPECT_NEAR(waiting->self_ms, 500.0, 1e-6);
    // A level, not a count: the round trip stays what it was.
    const FunctionTick* round_trip = TickOf(tick, kRoundTripName);
    ASSERT_NE(round_trip, nullptr);
    EXPECT_NEAR(round_trip->self_ms, 0.4, 1e-9);
    // The syncs are a feature of their own: their count and service time.
    const FunctionTick* syncs = TickOf(tick, kFileSyncName);
    ASSERT_NE(syncs, nullptr);
    EXPECT_EQ(syncs->calls, 20u);
    EXPECT_NEAR(syncs->self_ms, 80.0, 1e-6);
    const FunctionTick* faults = TickOf(tick, kMajorFaultsName);
    ASSERT_NE(faults, nullptr);
    EXPECT_EQ(faults->calls, 30u);
    EXPECT_NEAR(faults->self_ms, 30.0 * kMajorFaultMs, 1e-6);
  }
}

TEST(InvariantsTest, CorrelatedSeriesHoldAntiCorrelatedBreak) {
  auto tick = [](double request, double interrupts, double pages, double iosize, double svctm) {
    TickRecord record;
    record.tick_ms = 1000;
    record.io.request_bytes = request;
    record.node_stats.valid = true;
    record.node_stats.interrupts = interrupts;
    record.node_stats.pages_allocated = pages;
    record.node_stats.disk_requests = 10;
    record.node_stats.disk_iosize_kb = iosize;
    record.node_stats.disk_svctm_ms = svctm;
    return record;
  };
  std::vector<TickRecord> healthy{tick(100, 10, 50, 64, 1), tick(200, 20, 90, 128, 2), tick(150, 15, 70, 96, 1.5),
                                  tick(300, 31, 140, 256, 4)};
  InvariantPeriod period = EvaluatePeriod(healthy, 200.0, 0.5);
  EXPECT_TRUE(period.cpu_holds && period.memory_holds && period.disk_holds);
  EXPECT_FALSE(period.request_dropped);  // 200 -> 187.5

  // CPU-starved: more requests, fewer interrupts; the disk gets slower on smaller requests.
  std::vector<TickRecord> starved{tick(100, 40, 50, 256, 1), tick(60, 60, 30, 128, 2), tick(80, 50, 40, 64, 4),
                                  tick(40, 70, 20, 32, 8)};
  period = EvaluatePeriod(starved, 400.0, 0.5);
  EXPECT_TRUE(period.request_dropped);  // (400 - 70) / 70 >= 0.5
  EXPECT_FALSE(period.cpu_holds);
  EXPECT_TRUE(period.memory_holds);
  EXPECT_FALSE(period.disk_holds);
  EXPECT_TRUE(period.Anomalous());
  EXPECT_TRUE(period.Bits() & kInvariantCpu);
  EXPECT_TRUE(period.Bits() & kInvariantDisk);
  EXPECT_FALSE(period.Bits() & kInvariantNetwork);
}

TEST(InvariantsTest, CheckerCompletesAlignedPeriods) {
  InvariantChecker checker(4, 0.5);
  int periods = 0;
  for (uint64_t t = 1000; t < 1012; ++t) {
    TickRecord record;
    record.tick = t;
    record.io.request_bytes = t < 1008 ? 1000 : 100;  // a drop in the third period
    auto period = checker.Add(record);
    if (period) {
      ++periods;
      EXPECT_EQ(period->request_dropped, t == 1011);
    }
  }
  EXPECT_EQ(periods, 3);
  EXPECT_TRUE(checker.LatestBits() & kInvariantRequestRate);
  EXPECT_TRUE(checker.LatestBits() & kInvariantNetwork);  // no invariant to blame: the network is suspected
}

TEST(PeerComparisonTest, FaultFreeClusterOfTenRaisesNoAlarmOverAThousandWindows) {
  SyntheticCluster cluster;
  cluster.servers = 10;
  cluster.ticks = 1003;
  ReplayResult result = Replay(cluster);
  EXPECT_GE(result.windows.size(), 1000u);
  EXPECT_TRUE(result.alarms.empty()) << AlarmToLogLine(result.alarms.front());
}

TEST(PeerComparisonTest, DiskTimeAnomalyIsIndictedWithinKWindowsWithItsFunctionsAndResource) {
  SyntheticCluster cluster;
  cluster.fault = SyntheticFault::kDiskTime;
  cluster.faulty_server = 3;
  cluster.fault_start = 100;
  AnalyzerConfig config = SeedRule();
  ReplayResult result = Replay(cluster, config);
  ASSERT_FALSE(result.alarms.empty());
  const Alarm& first = result.alarms.front();
  EXPECT_EQ(first.server, ServerName(3));
  for (const Alarm& alarm : result.alarms) EXPECT_EQ(alarm.server, ServerName(3)) << AlarmToLogLine(alarm);
  EXPECT_EQ(first.resource, shm::Resource::kDisk);
  // The first window holding a faulty tick ends at the fault's tick; k windows later at most.
  uint64_t fault_tick = cluster.first_tick + cluster.fault_start;
  uint64_t first_faulty_window = (fault_tick + 1) / config.shift_ticks;
  EXPECT_LE(first.window, first_faulty_window + config.k - 1);
  EXPECT_GE(first.window, first_faulty_window);
  std::vector<std::string> storage_names = testing::StorageFunctionNames();
  std::set<std::string> storage(storage_names.begin(), storage_names.end());
  ASSERT_GE(first.top_functions.size(), 2u);
  EXPECT_TRUE(storage.count(first.top_functions[0].name)) << first.top_functions[0].name;
  EXPECT_TRUE(storage.count(first.top_functions[1].name)) << first.top_functions[1].name;
  EXPECT_TRUE(std::find(first.metrics.begin(), first.metrics.end(), "time") != first.metrics.end() ||
              std::find(first.metrics.begin(), first.metrics.end(), "dread") != first.metrics.end());
}

TEST(PeerComparisonTest, AlarmOnServiceTimesAloneNamesTheFunctionsAbovePeers) {
  // The function metrics are out of reach: only the disk service times can
  // fire, and they carry no functions of their own.
  SyntheticCluster cluster;
  cluster.fault = SyntheticFault::kDiskTime;
  Thresholds thresholds;
  for (ComparedMetric metric : {ComparedMetric::kSamples, ComparedMetric::kCount, ComparedMetric::kTime}) {
    thresholds.Set("*", metric, 1e12);
  }
  ReplayResult result = Replay(cluster, SeedRule(), thresholds);
  ASSERT_FALSE(result.alarms.empty());
  const Alarm& first = result.alarms.front();
  EXPECT_EQ(first.server, ServerName(cluster.faulty_server));
  for (const std::string& metric : first.metrics) EXPECT_TRUE(metric == "dread" || metric == "dwrite") << metric;
  EXPECT_EQ(first.resource, shm::Resource::kDisk);
  // Named from the window: the storage functions, where the faulty server
  // spent more time than its peers.
  std::vector<std::string> storage_names = testing::StorageFunctionNames();
  std::set<std::string> storage(storage_names.begin(), storage_names.end());
  ASSERT_GE(first.top_functions.size(), 2u) << AlarmToLogLine(first);
  EXPECT_TRUE(storage.count(first.top_functions[0].name)) << AlarmToLogLine(first);
  EXPECT_TRUE(storage.count(first.top_functions[1].name)) << AlarmToLogLine(first);
  EXPECT_GT(first.top_functions[0].score, 0.0);
}

TEST(PeerComparisonTest, NetworkReceiveAnomalyIsIndictedOnNetwork) {
  SyntheticCluster cluster;
  cluster.fault = SyntheticFault::kNetworkCount;
  cluster.faulty_server = 7;
  ReplayResult result = Replay(cluster);
  ASSERT_FALSE(result.alarms.empty());
  EXPECT_EQ(result.alarms.front().server, ServerName(7));
  EXPECT_EQ(result.alarms.front().resource, shm::Resource::kNetwork);
}

// A read loop calls its read as many times as the network splits the
// message: a healthy server receiving from a limping peer reads more, smaller
// pieces. Marked uncounted, its count is left out of the count vector (its
// time and samples stay compared); unmarked, the same stream fires on count.
TEST(PeerComparisonTest, AnUncountedReadLoopsCallCountIsNotCompared) {
  SyntheticCluster cluster;
  cluster.fault = SyntheticFault::kNetworkCount;
  cluster.faulty_server = 7;
  auto fires_on_count = [](const ReplayResult& result) {
    for (const Alarm& alarm : result.alarms) {
      if (std::find(alarm.metrics.begin(), alarm.metrics.end(), "count") != alarm.metrics.end()) return true;
    }
    return false;
  };
  ReplayResult unmarked = Replay(cluster);
  EXPECT_TRUE(fires_on_count(unmarked));
  ReplayResult marked = ReplayCluster(SeedRule(), GenerateCluster(cluster), {},
                                      testing::SyntheticManifest(true, {"net_recv_message"}), testing::SyntheticNames(),
                                      nullptr);
  EXPECT_FALSE(fires_on_count(marked)) << AlarmToLogLine(marked.alarms.front());
}

TEST(ResourceManifestTest, UncountedFollowsAResourceAndAnythingElseIsReportedByLine) {
  std::string path = ::testing::TempDir() + "uncounted.manifest";
  std::ofstream(path) << "read_loop* network uncounted   # a read loop\n"
                         "wait* idle\n"
                         "lonely\n"
                         "x disk uncounted extra\n"
                         "y idle uncounted\n"
                         "z network sometimes\n";
  analyzer::ResourceManifest manifest;
  std::vector<std::string> problems;
  ASSERT_TRUE(manifest.Load(path, &problems));
  std::remove(path.c_str());
  EXPECT_TRUE(manifest.IsUncounted("read_loop_payload"));
  EXPECT_EQ(manifest.Classify("read_loop_payload"), shm::Resource::kNetwork);
  EXPECT_TRUE(manifest.has_uncounted_rules());
  EXPECT_TRUE(manifest.IsIdle("wait_for_work"));
  EXPECT_FALSE(manifest.IsUncounted("wait_for_work"));
  EXPECT_EQ(manifest.size(), 2u);
  ASSERT_EQ(problems.size(), 4u);
  EXPECT_EQ(problems[0], path + ":3: expected '<function or glob> <disk|network|cpu|memory|idle> [uncounted]'");
  EXPECT_EQ(problems[1], path + ":4: expected '<function or glob> <disk|network|cpu|memory|idle> [uncounted]'");
  EXPECT_EQ(problems[2], path + ":5: an idle function is left out of every comparison; 'uncounted' adds nothing");
  EXPECT_EQ(problems[3], path + ":6: expected '<function or glob> <disk|network|cpu|memory|idle> [uncounted]'");
}

// A fault that limpwatch measures itself (tick_record.h) indicts only the
// faulty server, on the measured resource, with the measurement first among
// the functions.
void ExpectIndictedByItsOwnMeasurement(SyntheticFault fault, int faulty_server, shm::Resource resource,
                                       const char* measurement) {
  SyntheticCluster cluster;
  cluster.fault = fault;
  cluster.faulty_server = faulty_server;
  ReplayResult result = Replay(cluster);
  ASSERT_FALSE(result.alarms.empty());
  for (const Alarm& alarm : result.alarms) EXPECT_EQ(alarm.server, ServerName(faulty_server)) << AlarmToLogLine(alarm);
  const Alarm& first = result.alarms.front();
  EXPECT_EQ(first.resource, resource) << AlarmToLogLine(first);
  ASSERT_FALSE(first.top_functions.empty());
  EXPECT_EQ(first.top_functions.front().name, measurement);
}

TEST(PeerComparisonTest, AServerWhoseThreadsWaitForACpuIsIndictedOnCpu) {
  ExpectIndictedByItsOwnMeasurement(SyntheticFault::kCpuStarved, 6, shm::Resource::kCpu, kRunqueueWaitName);
}

// Replays `cluster`; every alarm must indict its faulty server on `resource`.
ReplayResult ReplayExpectingOnlyTheFaultyServerOn(const SyntheticCluster& cluster, shm::Resource resource) {
  ReplayResult result = Replay(cluster);
  EXPECT_FALSE(result.alarms.empty());
  for (const Alarm& alarm : result.alarms) {
    EXPECT_EQ(alarm.server, ServerName(cluster.faulty_server)) << AlarmToLogLine(alarm);
    EXPECT_EQ(alarm.resource, resource) << AlarmToLogLine(alarm);
  }
  return result;
}

// Its storage calls slow down most, yet its major faults name the resource,
// and stand among the functions most affected.
TEST(PeerComparisonTest, AServerFaultingItsPagesInAgainIsIndictedOnMemory) {
  SyntheticCluster cluster;
  cluster.fault = SyntheticFault::kMemoryThrashing;
  cluster.faulty_server = 3;
  ReplayResult result = ReplayExpectingOnlyTheFaultyServerOn(cluster, shm::Resource::kMemory);
  ASSERT_FALSE(result.alarms.empty());
  const auto& top = result.alarms.front().top_functions;
  EXPECT_TRUE(std::any_of(top.begin(), top.end(), [](const auto& function) { return function.name == kMajorFaultsName; }))
      << AlarmToLogLine(result.alarms.front());
}

// A few tens of pages read back a second cost the server a few tens of
// milliseconds, nothing the time vector shows; the majflt metric compares
// them on their own, and names memory.
TEST(PeerComparisonTest, AServerReadingItsPagesBackFromSwapIsIndictedOnMajorFaults) {
  SyntheticCluster cluster;
  cluster.fault = SyntheticFault::kPagesSwappedOut;
  cluster.faulty_server = 4;
  ReplayResult result = ReplayExpectingOnlyTheFaultyServerOn(cluster, shm::Resource::kMemory);
  ASSERT_FALSE(result.alarms.empty());
  const Alarm& alarm = result.alarms.front();
  EXPECT_NE(std::find(alarm.metrics.begin(), alarm.metrics.end(), "majflt"), alarm.metrics.end())
      << AlarmToLogLine(alarm);
  ASSERT_FALSE(alarm.top_functions.empty());
  EXPECT_EQ(alarm.top_functions.front().name, kMajorFaultsName) << AlarmToLogLine(alarm);
}

// The network functions' call counts are what stand out most, but the
// server's own wait for a CPU names the resource.
TEST(PeerComparisonTest, AServerSharingItsCpuIsIndictedOnCpuThoughItsNetworkCallsStandOut) {
  SyntheticCluster cluster;
  cluster.fault = SyntheticFault::kCpuShared;
  cluster.faulty_server = 2;
  ReplayExpectingOnlyTheFaultyServerOn(cluster, shm::Resource::kCpu);
  // Without the wait, the same call counts indict it on the network.
  cluster.fault = SyntheticFault::kNetworkCount;
  ReplayResult network = Replay(cluster);
  ASSERT_FALSE(network.alarms.empty());
  EXPECT_EQ(network.alarms.front().resource, shm::Resource::kNetwork) << AlarmToLogLine(network.alarms.front());
}

TEST(PeerComparisonTest, AServerWhoseConnectionsLosePacketsIsIndictedOnNetwork) {
  ExpectIndictedByItsOwnMeasurement(SyntheticFault::kPacketLoss, 3, shm::Resource::kNetwork, kLostPacketsName);
}

// Trained thresholds so high that no profile metric (samples, count, time)
// can fire: what is left is the scalar metric under test.
Thresholds DeafProfiles() {
  Thresholds deaf;
  for (ComparedMetric metric : {ComparedMetric::kSamples, ComparedMetric::kCount, ComparedMetric::kTime}) {
    deaf.Set("*", metric, 1e9);
  }
  return deaf;
}

// `fault` on `faulty_server`, replayed with the profiles deaf.
ReplayResult ReplayWithDeafProfiles(SyntheticFault fault, int faulty_server) {
  SyntheticCluster cluster;
  cluster.fault = fault;
  cluster.faulty_server = faulty_server;
  return Replay(cluster, SeedRule(), DeafProfiles());
}

// The faulty server alone is indicted, on `resource`, and the first alarm
// names `metric` alone with `feature` first; the healthy cluster stays
// quiet, and so does the faulty one with `metric`'s threshold trained above
// its excess.
void ExpectIndictedByScalarAboveDeafProfiles(SyntheticFault fault, int faulty_server, const std::string& metric,
                                             shm::Resource resource, const std::string& feature) {
  SyntheticCluster cluster;
  cluster.fault = fault;
  cluster.faulty_server = faulty_server;
  ReplayResult result = Replay(cluster, SeedRule(), DeafProfiles());
  ASSERT_FALSE(result.alarms.empty());
  for (const Alarm& alarm : result.alarms) {
    EXPECT_EQ(alarm.server, ServerName(faulty_server)) << AlarmToLogLine(alarm);
    EXPECT_EQ(alarm.resource, resource) << AlarmToLogLine(alarm);
  }
  const Alarm& first = result.alarms.front();
  EXPECT_EQ(first.metrics, std::vector<std::string>{metric}) << AlarmToLogLine(first);
  ASSERT_FALSE(first.top_functions.empty());
  EXPECT_EQ(first.top_functions.front().name, feature);
  // Healthy servers' odd lost segment or short wait stays under the floor.
  cluster.fault = SyntheticFault::kNone;
  ReplayResult quiet = Replay(cluster, SeedRule(), DeafProfiles());
  EXPECT_TRUE(quiet.alarms.empty()) << AlarmToLogLine(quiet.alarms.front());
  cluster.fault = fault;
  Thresholds deaf_to_everything = DeafProfiles();
  deaf_to_everything.Set("*", *ParseComparedMetric(metric), 1e9);
  ReplayResult deaf = Replay(cluster, SeedRule(), deaf_to_everything);
  EXPECT_TRUE(deaf.alarms.empty()) << AlarmToLogLine(deaf.alarms.front());
}

// One limping server stands out from most of its peers. Two of four with the
// same slow disk at once (the test-bed showed such a moment, all healthy) are
// two groups of two: neither is indicted. One of the same four is.
TEST(PeerComparisonTest, HalfTheServersSlowTogetherIsNoLimpingServer) {
  SyntheticCluster cluster;
  cluster.servers = 4;
  cluster.fault = SyntheticFault::kDiskTime;
  cluster.faulty_server = 1;
  auto ticks = GenerateCluster(cluster);
  ReplayResult one = ReplayCluster(SeedRule(), ticks, {}, testing::SyntheticManifest(), testing::SyntheticNames(), nullptr);
  ASSERT_FALSE(one.alarms.empty());
  for (const Alarm& alarm : one.alarms) EXPECT_EQ(alarm.server, ServerName(1)) << AlarmToLogLine(alarm);

  SyntheticCluster second = cluster;
  second.faulty_server = 2;  // the same run, with server2 as slow as server1
  ticks[ServerName(2)] = GenerateCluster(second).at(ServerName(2));
  ReplayResult two = ReplayCluster(SeedRule(), ticks, {}, testing::SyntheticManifest(), testing::SyntheticNames(), nullptr);
  for (const Alarm& alarm : two.alarms) ADD_FAILURE() << AlarmToLogLine(alarm);
  bool both_stood_out = false;
  for (const WindowResult& window : two.windows) {
    std::set<std::string> over;
    for (const MetricScore& score : window.scores) {
      if (score.metric == ComparedMetric::kDread && score.score > score.threshold) over.insert(score.server);
    }
    both_stood_out |= over.size() == 2;
  }
  EXPECT_TRUE(both_stood_out) << "the two slow servers never scored over the threshold together";
}

// A server waiting for its disk drains its sockets late and loses packets
// too: when its file I/O service times fired, the disk is named, not the
// network its lost packets would point at.
TEST(PeerComparisonTest, AThrottledDiskIsNamedThoughTheServerAlsoLosesPackets) {
  SyntheticCluster cluster;
  cluster.fault = SyntheticFault::kDiskThrottled;
  cluster.faulty_server = 7;
  ReplayResult result = Replay(cluster, SeedRule(), DeafProfiles());
  ASSERT_FALSE(result.alarms.empty());
  for (const Alarm& alarm : result.alarms) {
    EXPECT_EQ(alarm.server, ServerName(7)) << AlarmToLogLine(alarm);
    bool file_io_fired = std::find(alarm.metrics.begin(), alarm.metrics.end(), "dwrite") != alarm.metrics.end() ||
                         std::find(alarm.metrics.begin(), alarm.metrics.end(), "dread") != alarm.metrics.end();
    EXPECT_TRUE(file_io_fired) << AlarmToLogLine(alarm);
    EXPECT_EQ(alarm.resource, shm::Resource::kDisk) << AlarmToLogLine(alarm);
  }
  // The same losses with no slower disk are the network's.
  cluster.fault = SyntheticFault::kPacketLoss;
  ReplayResult lossy = Replay(cluster, SeedRule(), DeafProfiles());
  ASSERT_FALSE(lossy.alarms.empty());
  EXPECT_EQ(lossy.alarms.front().resource, shm::Resource::kNetwork) << AlarmToLogLine(lossy.alarms.front());
}

// Under a heavy write load the trained thresholds of the vector metrics sit
// far above what a few hundred ms of lost packets add to a server's profile
// (seen on the test-bed): the losses are compared on their own, as a scalar.
TEST(PeerComparisonTest, LostPacketsAreComparedOnTheirOwnAboveTrainedProfileThresholds) {
  ExpectIndictedByScalarAboveDeafProfiles(SyntheticFault::kPacketLoss, 4, "loss", shm::Resource::kNetwork,
                                          kLostPacketsName);
}

// And the syncs: a PVFS server syncs its metadata on every change, so a
// throttled disk shows in the time its syncs take while its reads and writes,
// landing in the page cache, stay as fast as its peers'. The function that
// syncs is named.
TEST(PeerComparisonTest, SlowSyncsAreComparedOnTheirOwnAboveTrainedProfileThresholds) {
  ExpectIndictedByScalarAboveDeafProfiles(SyntheticFault::kSlowSyncs, 6, "dsync", shm::Resource::kDisk,
                                          "storage_fsync_object");
}

// A large sequential load syncs a few times a file: a window holding one sync
// a server compares one flush with another, which says nothing of the disks.
TEST(PeerComparisonTest, AFewSyncsAWindowAreNotCompared) {
  SyntheticCluster cluster;
  cluster.fault = SyntheticFault::kSlowSyncs;
  cluster.faulty_server = 6;
  cluster.syncs_per_second = 0.25;
  ReplayResult result = Replay(cluster, SeedRule(), DeafProfiles());
  EXPECT_TRUE(result.alarms.empty()) << AlarmToLogLine(result.alarms.front());
  cluster.syncs_per_second = 2;  // 8 a window
  EXPECT_FALSE(Replay(cluster, SeedRule(), DeafProfiles()).alarms.empty());
}

// The busiest server of an overloaded machine waits for a CPU a few times
// longer than its peers, and more so while its disk is throttled: that wait,
// short of what the cpuwait metric calls a shortage, does not name the CPU
// over the syncs that fired.
TEST(PeerComparisonTest, ABusyServerWithSlowSyncsIsShortOfDiskNotCpu) {
  ReplayResult result = ReplayWithDeafProfiles(SyntheticFault::kSlowSyncsOnBusyCpu, 2);
  ASSERT_FALSE(result.alarms.empty());
  for (const Alarm& alarm : result.alarms) {
    EXPECT_EQ(alarm.server, ServerName(2)) << AlarmToLogLine(alarm);
    EXPECT_EQ(alarm.metrics, std::vector<std::string>{"dsync"}) << AlarmToLogLine(alarm);
    EXPECT_EQ(alarm.resource, shm::Resource::kDisk) << AlarmToLogLine(alarm);
  }
}

// Likewise the wait for a CPU: a server held to a CPU quota waits seconds a
// tick more than its peers, which the profiles' trained thresholds (set by
// functions whose time moves with the load) can hide.
TEST(PeerComparisonTest, TheWaitForACpuIsComparedOnItsOwnAboveTrainedProfileThresholds) {
  ExpectIndictedByScalarAboveDeafProfiles(SyntheticFault::kCpuStarved, 5, "cpuwait", shm::Resource::kCpu,
                                          kRunqueueWaitName);
  SyntheticCluster cluster;
  cluster.faulty_server = 5;
  // On an overloaded machine a busy server waits a few times what its peers
  // wait, far above the floor and a threshold trained on such a machine
  // (the test-bed's: 296 ms): no quota, no alarm. A quota still stands out.
  Thresholds trained = DeafProfiles();
  trained.Set("*", ComparedMetric::kCpuWait, 250);
  cluster.fault = SyntheticFault::kBusyOnOverloadedCpu;
  ReplayResult busy = Replay(cluster, SeedRule(), trained);
  EXPECT_TRUE(busy.alarms.empty()) << AlarmToLogLine(busy.alarms.front());
  cluster.fault = SyntheticFault::kCpuStarved;
  ReplayResult starved = Replay(cluster, SeedRule(), trained);
  ASSERT_FALSE(starved.alarms.empty());
  EXPECT_EQ(starved.alarms.front().metrics, std::vector<std::string>{"cpuwait"});
}

// A CPU quota slows the server's writes at once and its wait for a CPU a
// little later: the writes can fire first. A wait already anomalous then is
// the shortage, from the first alarm on.
// Server 4's first alarm fires on dwrite alone and names `resource`.
void ExpectFirstAlarmOnSlowWrites(SyntheticFault fault, shm::Resource resource) {
  ReplayResult result = ReplayWithDeafProfiles(fault, 4);
  ASSERT_FALSE(result.alarms.empty());
  const Alarm& first = result.alarms.front();
  EXPECT_EQ(first.server, ServerName(4)) << AlarmToLogLine(first);
  EXPECT_EQ(first.metrics, std::vector<std::string>{"dwrite"}) << AlarmToLogLine(first);
  EXPECT_EQ(first.resource, resource) << AlarmToLogLine(first);
}

TEST(PeerComparisonTest, ACpuQuotaIsNamedThoughItsSlowWritesFireFirst) {
  ExpectFirstAlarmOnSlowWrites(SyntheticFault::kCpuQuota, shm::Resource::kCpu);
  // Slow writes with no wait for a CPU stay the disk's.
  ReplayResult disk = ReplayWithDeafProfiles(SyntheticFault::kDiskTime, 4);
  ASSERT_FALSE(disk.alarms.empty());
  EXPECT_EQ(disk.alarms.front().resource, shm::Resource::kDisk) << AlarmToLogLine(disk.alarms.front());
}

// The same slow writes with a wait for a CPU just past the cpuwait metric's
// own threshold in the alarm's window: what a competing disk reader sharing
// the host's cores makes. The disk is named.
TEST(PeerComparisonTest, SlowWritesWaitingALittleForACpuAreTheDisks) {
  ExpectFirstAlarmOnSlowWrites(SyntheticFault::kDiskHogOnSharedCores, shm::Resource::kDisk);
}

TEST(PeerComparisonTest, OneSecondOfRetransmissionsIsNotALossyLink) {
  // One tick of retransmission timeouts sits in four overlapping windows; a
  // window's sum would carry it into all of them, past the k-of-(2k-1) filter.
  SyntheticCluster cluster;
  cluster.fault = SyntheticFault::kLossBurst;
  cluster.faulty_server = 2;
  cluster.fault_start = 100;
  cluster.fault_end = 101;
  ReplayResult burst = Replay(cluster);
  EXPECT_TRUE(burst.alarms.empty()) << AlarmToLogLine(burst.alarms.front());
  // The same losses every second are a lossy link.
  cluster.fault_end = 130;
  ReplayResult sustained = Replay(cluster);
  ASSERT_FALSE(sustained.alarms.empty());
  EXPECT_EQ(sustained.alarms.front().server, ServerName(2));
  EXPECT_EQ(sustained.alarms.front().resource, shm::Resource::kNetwork);
}

TEST(PeerComparisonTest, AServerBehindASlowLinkIsIndictedOnNetworkByItsRoundTrip) {
  ExpectIndictedByItsOwnMeasurement(SyntheticFault::kNetworkDelay, 6, shm::Resource::kNetwork, kRoundTripName);
}

// Untrained: a healthy server whose connections carry a bulk copy sees a
// round trip a few milliseconds longer than its peers', which no slow link
// is (either of two servers, in turn).
TEST(PeerComparisonTest, ARoundTripLengthenedByBulkTrafficIsNoSlowLink) {
  SyntheticCluster cluster;
  cluster.fault = SyntheticFault::kBusyLinks;
  for (int busy : {2, 7}) {
    cluster.faulty_server = busy;
    ReplayResult result = Replay(cluster);
    EXPECT_TRUE(result.alarms.empty()) << AlarmToLogLine(result.alarms.front());
  }
}

TEST(PeerComparisonTest, HowIdleTimeSplitsAmongWaitingThreadsIsNotAnAnomaly) {
  SyntheticCluster cluster;
  cluster.fault = SyntheticFault::kIdleSplit;
  cluster.faulty_server = 5;
  ReplayResult quiet = Replay(cluster);
  EXPECT_TRUE(quiet.alarms.empty()) << AlarmToLogLine(quiet.alarms.front());
  // The same stream, with the waiting functions counted as work, does indict:
  // leaving idle functions out is what keeps it quiet.
  ReplayResult unmarked = ReplayCluster(SeedRule(), GenerateCluster(cluster), {}, testing::SyntheticManifest(false),
                                        testing::SyntheticNames(), nullptr);
  ASSERT_FALSE(unmarked.alarms.empty());
  EXPECT_EQ(unmarked.alarms.front().server, ServerName(5));
}

TEST(PeerComparisonTest, KOfTwoKMinusOneFiltersAShortBlip) {
  SyntheticCluster cluster;
  cluster.fault = SyntheticFault::kDiskTime;
  cluster.fault_start = 100;
  cluster.fault_end = 101;  // one faulty tick
  AnalyzerConfig config = SeedRule();
  config.window_ticks = 1;  // one window holds the blip
  config.shift_ticks = 1;
  config.k = 2;
  EXPECT_TRUE(Replay(cluster, config).alarms.empty());
  cluster.fault_end = 102;  // two faulty windows of three: k = 2 indicts
  ReplayResult result = Replay(cluster, config);
  ASSERT_EQ(result.alarms.size(), 1u);
  EXPECT_EQ(result.alarms.front().server, ServerName(3));
}

TEST(TrainingTest, ReproducesTheSeedRule) {
  EXPECT_EQ(TrainThreshold({3.2, 7.9, 5.0}, 1.0), 16.0);  // smallest integer removing all: 8, doubled
  EXPECT_EQ(TrainThreshold({7.0}, 1.0), 14.0);            // 7 itself removes the anomaly (score > t)
  EXPECT_DOUBLE_EQ(TrainThreshold({0.123}, 0.01), 0.26);
  EXPECT_EQ(TrainThreshold({}, 1.0), 0.0);
}

TEST(TrainingTest, DiskServiceTimesKeepAThinnerMarginThanTheSeedsDoubling) {
  // A healthy 2.76 ms write burst in training, then a mild competing reader
  // adding 4.5 ms a write: doubled (5.52), the burst would hide it.
  std::vector<double> fault_free_dwrite{0.4, 2.76, 1.1};
  double dwrite = TrainMetricThreshold(ComparedMetric::kDwrite, fault_free_dwrite);
  EXPECT_DOUBLE_EQ(dwrite, 1.5 * 2.76);
  EXPECT_LT(dwrite, 4.5);
  EXPECT_DOUBLE_EQ(TrainMetricThreshold(ComparedMetric::kDread, {0.5}), 0.75);
  // Every other metric keeps the seed's rule.
  EXPECT_EQ(TrainMetricThreshold(ComparedMetric::kCount, {3.2, 7.9, 5.0}), 16.0);
  EXPECT_DOUBLE_EQ(TrainMetricThreshold(ComparedMetric::kDsync, fault_free_dwrite), 2.0 * 2.76);
}

TEST(TrainingTest, TrainedThresholdsKeepFaultFreeRunsQuietAndStillIndict) {
  SyntheticCluster training;
  training.seed = 11;
  training.ticks = 300;
  ReplayResult fault_free = Replay(training);
  std::map<std::pair<std::string, ComparedMetric>, std::vector<double>> scores;
  for (const WindowResult& window : fault_free.windows) {
    for (const MetricScore& score : window.scores) scores[{score.server, score.metric}].push_back(score.score);
  }
  Thresholds thresholds;
  for (const auto& [key, values] : scores) {
    thresholds.Set(key.first, key.second, TrainMetricThreshold(key.second, values));
  }
  SyntheticCluster quiet = training;
  quiet.seed = 12;  // another fault-free run
  EXPECT_TRUE(Replay(quiet, SeedRule(), thresholds).alarms.empty());
  SyntheticCluster faulty = quiet;
  faulty.fault = SyntheticFault::kDiskTime;
  ReplayResult result = Replay(faulty, SeedRule(), thresholds);
  ASSERT_FALSE(result.alarms.empty());
  EXPECT_EQ(result.alarms.front().server, ServerName(3));
  EXPECT_TRUE(result.windows.back().scores.front().trained);
}

TEST(ThresholdsTest, FileRoundTripAndBadLinesAreNamed) {
  Thresholds thresholds;
  thresholds.Set("server1", ComparedMetric::kTime, 12.5);
  thresholds.Set("*", ComparedMetric::kDread, 0.3);
  thresholds.SetSpread(ComparedMetric::kDwrite, {0.21, 480});
  thresholds.SetUsual("server1", ComparedMetric::kTime, 0.125);
  std::string path = ::testing::TempDir() + "/thresholds-" + std::to_string(getpid());
  std::string error;
  ASSERT_TRUE(thresholds.Save(path, &error)) << error;
  {
    std::ofstream append(path, std::ios::app);
    append << "server2 speed 3\nserver3 time -1\nserver4 count\n* dread spread 0.1\n";
  }
  Thresholds loaded;
  std::vector<std::string> problems;
  ASSERT_TRUE(loaded.Load(path, &problems));
  EXPECT_EQ(loaded.Get("server1", ComparedMetric::kTime), 12.5);
  EXPECT_EQ(loaded.Get("server9", ComparedMetric::kDread), 0.3);  // the '*' line
  EXPECT_FALSE(loaded.Get("server9", ComparedMetric::kTime));
  // The calibrated rule's refinements travel in the same file.
  ASSERT_TRUE(loaded.GetSpread(ComparedMetric::kDwrite));
  EXPECT_DOUBLE_EQ(loaded.GetSpread(ComparedMetric::kDwrite)->sigma, 0.21);
  EXPECT_DOUBLE_EQ(loaded.GetSpread(ComparedMetric::kDwrite)->windows, 480);
  EXPECT_EQ(loaded.GetUsual("server1", ComparedMetric::kTime), 0.125);
  EXPECT_FALSE(loaded.GetUsual("server2", ComparedMetric::kTime));
  ASSERT_EQ(problems.size(), 4u);
  EXPECT_NE(problems[0].find(":7: unknown metric 'speed'"), std::string::npos) << problems[0];
  EXPECT_NE(problems[1].find(":8:"), std::string::npos);
  EXPECT_NE(problems[2].find(":9:"), std::string::npos);
  EXPECT_NE(problems[3].find(":10:"), std::string::npos);  // a spread without its windows
  std::remove(path.c_str());
}

TEST(PeerComparisonTest, SilentPeerRaisesItsOwnAlarm) {
  SyntheticCluster cluster;
  cluster.servers = 4;
  cluster.ticks = 60;
  auto ticks = GenerateCluster(cluster);
  auto& dying = ticks[ServerName(2)];
  dying.resize(30);  // crashed at tick 30
  ReplayResult result = ReplayCluster(SeedRule(), ticks, {}, testing::SyntheticManifest(), testing::SyntheticNames(), nullptr);
  int silent = 0;
  for (const Alarm& alarm : result.alarms) {
    if (alarm.kind != AlarmKind::kSilent) continue;
    ++silent;
    EXPECT_EQ(alarm.server, ServerName(2));
    EXPECT_EQ(alarm.resource, shm::Resource::kProcess);
  }
  EXPECT_EQ(silent, 1);
}

TEST(SummaryTest, FeatureSetIsSharedAndFitsTheBudget) {
  SyntheticCluster cluster;
  cluster.ticks = 30;
  ReplayResult result = Replay(cluster);
  ASSERT_FALSE(result.summaries.empty());
  const auto& last = result.summaries.rbegin()->second;
  ASSERT_EQ(last.size(), 10u);
  for (const PeerSummary& summary : last) {
    EXPECT_LE(summary.FeatureCount(), 200u);
    for (size_t metric = 0; metric < summary.metrics.size(); ++metric) {
      EXPECT_EQ(summary.metrics[metric].features.size(), last.front().metrics[metric].features.size());
    }
  }
  // Tiny, frequent helpers (list_push, mutex_lock) carry no diagnostic weight and are left out.
  uint32_t mutex_key = FoldNameHash(shm::FunctionNameHash("mutex_lock"));
  for (const auto& metric : last.front().metrics) {
    for (const Feature& feature : metric.features) EXPECT_NE(feature.key, mutex_key);
  }
}

// A window's file service times are compared only when it made enough
// calls: a server the load left idle, with a few stray slow reads, has no
// disk time to compare, while a loaded one has its median.
TEST(SummaryTest, FileServiceTimesNeedEnoughCallsInTheWindow) {
  auto window_of = [](uint64_t reads_per_tick, uint64_t writes_per_tick) {
    Window window;
    for (int index = 0; index < 4; ++index) {
      TickRecord tick;
      tick.tick_ms = 1000;
      tick.io.file_reads = reads_per_tick;
      tick.io.dread_ms = reads_per_tick > 0 ? 3.0 + index : 0;
      tick.io.file_writes = writes_per_tick;
      tick.io.dwrite_ms = writes_per_tick > 0 ? 1.0 : 0;
      window.ticks.push_back(tick);
    }
    return window;
  };
  IoMedians idle = ComputeIoMedians(window_of(1, 1));  // 4 reads and 4 writes in the window
  EXPECT_EQ(idle.dread_ms, 0.0f);
  EXPECT_EQ(idle.dwrite_ms, 0.0f);
  IoMedians loaded = ComputeIoMedians(window_of(2, 50));  // 8 reads, 200 writes: enough
  EXPECT_GT(loaded.dread_ms, 3.0f);
  EXPECT_LT(loaded.dread_ms, 6.0f);
  EXPECT_FLOAT_EQ(loaded.dwrite_ms, 1.0f);
}

}  // namespace
}  // namespace limpwatch::analyzer
