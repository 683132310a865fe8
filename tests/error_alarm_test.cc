// Failed I/O calls as features and the "errors" alarm (error_features.h):
// naming, what a tick makes of a segment's errno counts, and the peer
// comparison that indicts a server returning errors its peers do not.
#include <gtest/gtest.h>

#include <cerrno>

#include "analyzer/synthetic_cluster.h"
#include "limpwatch/analyzer/cluster_replay.h"
#include "limpwatch/analyzer/error_features.h"
#include "limpwatch/analyzer/peer_summary.h"
#include "limpwatch/analyzer/tick_record.h"
#include "limpwatch/shm/name_hash.h"

namespace limpwatch::analyzer {
namespace {

using testing::GenerateCluster;
using testing::ServerName;
using testing::SyntheticCluster;
using testing::SyntheticFault;

uint32_t KeyOf(const std::string& name) { return FoldNameHash(shm::FunctionNameHash(name)); }

TEST(ErrorFeaturesTest, NamesRoundTripThroughTheirKeys) {
  ErrorFeature full{shm::FdKind::kFile, shm::IoOperation::kWrite, ENOSPC};
  std::string name = ErrorFeatureName(full);
  EXPECT_EQ(name, "[error ENOSPC in file write]");
  const ErrorFeature* found = FindErrorFeature(KeyOf(name));
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->kind, shm::FdKind::kFile);
  EXPECT_EQ(found->operation, shm::IoOperation::kWrite);
  EXPECT_EQ(found->error, ENOSPC);
  EXPECT_TRUE(IsErrorFeatureHash(shm::FunctionNameHash(name)));
  EXPECT_EQ(ErrorFeatureName({shm::FdKind::kTcp, shm::IoOperation::kAccept, EMFILE}), "[error EMFILE in tcp accept]");
  // A function's key is not an error's.
  EXPECT_EQ(FindErrorFeature(KeyOf("storage_pread_block")), nullptr);
  EXPECT_FALSE(IsErrorFeatureHash(shm::FunctionNameHash("storage_pread_block")));
}

TEST(ErrorFeaturesTest, FlowControlIsNoError) {
  for (int error : {EAGAIN, EWOULDBLOCK, EINTR, EINPROGRESS, EALREADY}) {
    EXPECT_TRUE(IsFlowControlErrno(error)) << error;
    EXPECT_EQ(FindErrorFeature(KeyOf(ErrorFeatureName({shm::FdKind::kTcp, shm::IoOperation::kRead, error}))),
              nullptr);
  }
  EXPECT_FALSE(IsFlowControlErrno(ENOSPC));
  EXPECT_FALSE(IsFlowControlErrno(ECONNRESET));
}

TEST(ErrorFeaturesTest, ResourceFollowsTheErrnoAndTheDescriptor) {
  EXPECT_EQ(ResourceOfError({shm::FdKind::kFile, shm::IoOperation::kWrite, ENOSPC}), shm::Resource::kDisk);
  EXPECT_EQ(ResourceOfError({shm::FdKind::kFile, shm::IoOperation::kRead, EIO}), shm::Resource::kDisk);
  EXPECT_EQ(ResourceOfError({shm::FdKind::kTcp, shm::IoOperation::kWrite, EPIPE}), shm::Resource::kNetwork);
  EXPECT_EQ(ResourceOfError({shm::FdKind::kTcp, shm::IoOperation::kOpen, ENOMEM}), shm::Resource::kMemory);
  // A descriptor limit is the process's, not a device's.
  EXPECT_EQ(ResourceOfError({shm::FdKind::kTcp, shm::IoOperation::kAccept, EMFILE}), shm::Resource::kUnknown);
  // ENOSPC on a pipe says nothing about a disk.
  EXPECT_EQ(ResourceOfError({shm::FdKind::kPipe, shm::IoOperation::kWrite, ENOSPC}), shm::Resource::kUnknown);
}

TEST(ErrorFeaturesTest, ATickCountsTheIntervalsFailuresButNotWouldBlock) {
  shm::Snapshot before, after;
  before.ns_per_tick = after.ns_per_tick = 1.0;
  before.taken_realtime_ns = 1'700'000'000'000'000'000;
  after.taken_realtime_ns = before.taken_realtime_ns + 1'000'000'000;
  before.io.errnos = {{shm::FdKind::kFile, shm::IoOperation::kWrite, ENOSPC, 5},
                      {shm::FdKind::kTcp, shm::IoOperation::kRead, EAGAIN, 100}};
  after.io.errnos = {{shm::FdKind::kFile, shm::IoOperation::kWrite, ENOSPC, 12},
                     {shm::FdKind::kTcp, shm::IoOperation::kRead, EAGAIN, 900},
                     {shm::FdKind::kTcp, shm::IoOperation::kAccept, EMFILE, 3}};
  TickRecord tick = BuildTickRecord("server0", before, after, 1000);
  auto calls_of = [&](const std::string& name) -> int64_t {
    for (const FunctionTick& function : tick.functions) {
      if (function.name_hash == shm::FunctionNameHash(name)) return int64_t(function.calls);
    }
    return -1;
  };
  EXPECT_EQ(calls_of("[error ENOSPC in file write]"), 7);
  EXPECT_EQ(calls_of("[error EMFILE in tcp accept]"), 3);
  EXPECT_EQ(calls_of("[error EAGAIN in tcp read]"), -1);
  EXPECT_EQ(tick.io.errors, 7u + 3u + 800u);  // the tick's total still counts every failure

  std::vector<FunctionName> names = CollectFunctionNames(after);
  bool named = false;
  for (const FunctionName& name : names) named |= name.name == "[error EMFILE in tcp accept]";
  EXPECT_TRUE(named);
}

// Four servers for 60 s; `faulty`'s storage is full from tick 30 to `fault_end`.
SyntheticCluster StorageFullCluster(int faulty, int fault_end) {
  SyntheticCluster cluster;
  cluster.servers = 4;
  cluster.ticks = 60;
  cluster.fault = SyntheticFault::kStorageFull;
  cluster.faulty_server = faulty;
  cluster.fault_start = 30;
  cluster.fault_end = fault_end;
  return cluster;
}

ReplayResult Replay(const SyntheticCluster& cluster) {
  return ReplayCluster({}, GenerateCluster(cluster), {}, testing::SyntheticManifest(), testing::SyntheticNames(),
                       nullptr);
}

TEST(ErrorAlarmTest, AServerWhoseStorageIsFullIsIndictedForItsErrorsInTheFirstWindow) {
  SyntheticCluster cluster = StorageFullCluster(2, 50);  // 20 s: inside one alarm suppression period (30 s)
  AnalyzerConfig config;
  ReplayResult result = Replay(cluster);
  const Alarm* first = nullptr;
  for (const Alarm& alarm : result.alarms) {
    EXPECT_EQ(alarm.server, ServerName(2)) << AlarmToLogLine(alarm);
    if (alarm.kind == AlarmKind::kErrors && first == nullptr) first = &alarm;
  }
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->resource, shm::Resource::kDisk);
  ASSERT_EQ(first->top_functions.size(), 1u);  // the ENOENT every server returns is not named
  EXPECT_EQ(first->top_functions.front().name, "[error ENOSPC in file write]");
  EXPECT_GE(first->score, kMinAbnormalErrors);
  uint64_t fault_tick = cluster.first_tick + cluster.fault_start;
  EXPECT_EQ(first->window, (fault_tick + 1) / config.shift_ticks);  // the first window holding a failing tick
  EXPECT_NE(AlarmToLogLine(*first).find("server server2 fails its I/O calls on disk"), std::string::npos)
      << AlarmToLogLine(*first);
  // One alarm per suppression period, not one per window.
  int errors_alarms = 0;
  for (const Alarm& alarm : result.alarms) errors_alarms += alarm.kind == AlarmKind::kErrors;
  EXPECT_EQ(errors_alarms, 1);
}

// Four servers for 40 s; server 2's tcp reads are refused 16 times a second
// in ticks [start, end).
std::map<std::string, std::vector<TickRecord>> RefusedReadsCluster(int start, int end) {
  SyntheticCluster cluster;
  cluster.servers = 4;
  cluster.ticks = 40;
  auto ticks = GenerateCluster(cluster);
  std::vector<TickRecord>& own = ticks[ServerName(2)];
  for (int tick = start; tick < end; ++tick) {
    FunctionTick refused;
    refused.name_hash = shm::FunctionNameHash("[error ECONNREFUSED in tcp read]");
    refused.calls = 16;
    own[tick].functions.push_back(refused);
  }
  return ticks;
}

const Alarm* FirstErrorsAlarm(const ReplayResult& result) {
  for (const Alarm& alarm : result.alarms) {
    if (alarm.kind == AlarmKind::kErrors) return &alarm;
  }
  return nullptr;
}

// A PVFS server started before its peers is refused by them until they
// listen (seen on OrangeFS 2.10: 16 ECONNREFUSED in the first server's first
// seconds, as it filled its precreate pools on a new file system).
TEST(ErrorAlarmTest, ConnectionsRefusedWhileAServerStartsUpAreNoAlarm) {
  ReplayResult result = ReplayCluster({}, RefusedReadsCluster(1, 4), {}, testing::SyntheticManifest(),
                                      testing::SyntheticNames(), nullptr);
  for (const Alarm& alarm : result.alarms) EXPECT_NE(alarm.kind, AlarmKind::kErrors) << AlarmToLogLine(alarm);
}

TEST(ErrorAlarmTest, ConnectionsRefusedAfterTheWarmUpAreIndicted) {
  ReplayResult result = ReplayCluster({}, RefusedReadsCluster(20, 23), {}, testing::SyntheticManifest(),
                                      testing::SyntheticNames(), nullptr);
  const Alarm* first = FirstErrorsAlarm(result);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->server, ServerName(2));
  EXPECT_EQ(first->resource, shm::Resource::kNetwork);
  EXPECT_EQ(first->top_functions.front().name, "[error ECONNREFUSED in tcp read]");
}

// Server 3 crashed at tick 12; server 2, filling a pool from it, is refused:
// that is server 3's absence, named by the silence alarm, not server 2's fault.
TEST(ErrorAlarmTest, ConnectionsRefusedWhileAPeerIsAwayAreThatPeers) {
  auto ticks = RefusedReadsCluster(20, 23);
  ticks[ServerName(3)].resize(12);
  ReplayResult result = ReplayCluster({}, ticks, {}, testing::SyntheticManifest(), testing::SyntheticNames(), nullptr);
  int silent = 0;
  for (const Alarm& alarm : result.alarms) {
    EXPECT_NE(alarm.kind, AlarmKind::kErrors) << AlarmToLogLine(alarm);
    if (alarm.kind == AlarmKind::kSilent && alarm.server == ServerName(3)) ++silent;
  }
  EXPECT_EQ(silent, 1);
}

// A full storage is the server's own state: named at once, warm-up or not.
TEST(ErrorAlarmTest, AStorageFullFromTheStartIsIndictedInTheFirstWindow) {
  SyntheticCluster cluster = StorageFullCluster(2, 1 << 30);
  cluster.fault_start = 0;
  AnalyzerConfig config;
  ReplayResult result = Replay(cluster);
  ASSERT_FALSE(result.windows.empty());
  const Alarm* first = FirstErrorsAlarm(result);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->server, ServerName(2));
  EXPECT_EQ(first->top_functions.front().name, "[error ENOSPC in file write]");
  EXPECT_LT(first->window, result.windows.front().window + config.warmup_windows);
}

TEST(ErrorAlarmTest, ErrorsEveryServerReturnsAlikeRaiseNothing) {
  SyntheticCluster cluster;
  cluster.servers = 4;
  cluster.ticks = 200;
  auto ticks = GenerateCluster(cluster);
  // The stream does hold errors, on every server.
  uint64_t enoent = 0;
  for (const FunctionTick& function : ticks[ServerName(1)][10].functions) {
    if (function.name_hash == shm::FunctionNameHash("[error ENOENT in file open]")) enoent = function.calls;
  }
  EXPECT_GT(enoent, 0u);
  ReplayResult result = Replay(cluster);
  EXPECT_TRUE(result.alarms.empty()) << AlarmToLogLine(result.alarms.front());
}

TEST(ErrorAlarmTest, AFewFailuresAreNoAlarm) {
  SyntheticCluster cluster = StorageFullCluster(1, 31);
  auto ticks = GenerateCluster(cluster);
  // Two failed writes in one tick: under kMinAbnormalErrors.
  for (FunctionTick& function : ticks[ServerName(1)][30].functions) {
    if (function.name_hash == shm::FunctionNameHash("[error ENOSPC in file write]")) function.calls = 2;
  }
  ReplayResult result =
      ReplayCluster({}, ticks, {}, testing::SyntheticManifest(), testing::SyntheticNames(), nullptr);
  for (const Alarm& alarm : result.alarms) EXPECT_NE(alarm.kind, AlarmKind::kErrors) << AlarmToLogLine(alarm);
}

}  // namespace
}  // namespace limpwatch::analyzer
