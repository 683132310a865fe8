// Golden tests: traced programs with known call trees give exact call counts
// and self times within tolerance.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "limpwatch/shm/name_hash.h"
#include "support/traced_run.h"

namespace limpwatch::testing {
namespace {

constexpr double kMs = 1e6;

struct GoldenRun {
  std::string name;
  ProgramRun run;
  shm::Snapshot snapshot;
  std::map<std::string, shm::CounterValues> counters;
};

GoldenRun RunScenario(const std::string& program, const std::vector<std::string>& args,
                      std::vector<std::string> extra_environment = {}) {
  GoldenRun golden;
  golden.name = UniqueSegmentName("golden");
  extra_environment.push_back("LIMPWATCH_NAME=" + golden.name);
  extra_environment.push_back("LIMPWATCH_KEEP=1");
  golden.run = RunProgram(TestProgram(program), args, extra_environment);
  EXPECT_EQ(golden.run.exit_status, 0) << program;
  golden.snapshot = ReadSegment(golden.name, golden.run.pid);
  golden.counters = CountersByName(golden.snapshot);
  return golden;
}

double SelfMs(const GoldenRun& golden, const std::string& function) {
  return golden.snapshot.TicksToNs(golden.counters.at(function).self_ticks) / kMs;
}

double TotalMs(const GoldenRun& golden, const std::string& function) {
  return golden.snapshot.TicksToNs(golden.counters.at(function).total_ticks) / kMs;
}

TEST(GoldenTest, CallTreeCountsAreExact) {
  GoldenRun golden = RunScenario("calltree", {"tree"});
  SegmentCleanup cleanup(golden.name);
  EXPECT_EQ(golden.snapshot.liveness, shm::Liveness::kExited);
  EXPECT_EQ(golden.counters["main"].calls, 1u);
  EXPECT_EQ(golden.counters["run_tree"].calls, 1u);
  EXPECT_EQ(golden.counters["parent"].calls, 3u);
  EXPECT_EQ(golden.counters["leaf_sleep"].calls, 6u);
  EXPECT_EQ(golden.counters["sleep_ms"].calls, 6u);
  EXPECT_EQ(golden.counters["leaf_fast"].calls, 30u);
  EXPECT_EQ(golden.counters["recurse"].calls, 6u);
  EXPECT_EQ(golden.snapshot.diagnostics.unmatched_exits, 0u);
  EXPECT_EQ(golden.snapshot.diagnostics.resynced_frames, 0u);
  EXPECT_EQ(golden.snapshot.diagnostics.overflowed_calls, 0u);
}

TEST(GoldenTest, SelfTimeExcludesChildrenAndIncludesBlockedTime) {
  GoldenRun golden = RunScenario("calltree", {"tree"});
  SegmentCleanup cleanup(golden.name);
  // sleep_ms blocks in nanosleep 6 x 20 ms: that time is its own (blocked time counts).
  EXPECT_GE(SelfMs(golden, "sleep_ms"), 120.0);
  EXPECT_LT(SelfMs(golden, "sleep_ms"), 120.0 + 100.0);
  // Its callers only wrap it: their self time is tiny, their total time holds the sleeps.
  EXPECT_LT(SelfMs(golden, "leaf_sleep"), 5.0);
  EXPECT_LT(SelfMs(golden, "parent"), 5.0);
  EXPECT_GE(TotalMs(golden, "parent"), 120.0);
  EXPECT_GE(TotalMs(golden, "run_tree"), 120.0);
  EXPECT_LT(SelfMs(golden, "run_tree"), 5.0);
  // Total = self + children, for a function that is not recursive.
  double parent_children = TotalMs(golden, "leaf_sleep") + TotalMs(golden, "leaf_fast");
  EXPECT_NEAR(TotalMs(golden, "parent"), SelfMs(golden, "parent") + parent_children, 0.01);
}

TEST(GoldenTest, NamesAreHashedForPeers) {
  GoldenRun golden = RunScenario("calltree", {"tree"});
  SegmentCleanup cleanup(golden.name);
  bool found = false;
  for (const auto& function : golden.snapshot.functions) {
    if (function.name != "leaf_fast") continue;
    found = true;
    EXPECT_EQ(function.state, shm::SymbolState::kResolved);
    EXPECT_EQ(function.name_hash, shm::FunctionNameHash("leaf_fast"));
  }
  EXPECT_TRUE(found);
}

class GoldenThreadsTest : public ::testing::TestWithParam<int> {};

TEST_P(GoldenThreadsTest, CountsAreExactAcrossThreadsThatExit) {
  int threads = GetParam();
  GoldenRun golden = RunScenario("calltree", {"threads", std::to_string(threads), "20000"});
  SegmentCleanup cleanup(golden.name);
  EXPECT_EQ(golden.counters["worker"].calls, uint64_t(threads));
  EXPECT_EQ(golden.counters["leaf_fast"].calls, uint64_t(threads) * 20000u);
  // Every worker exited before main returned: its counts live in the retired totals.
  EXPECT_EQ(golden.snapshot.retired_threads, uint64_t(threads));
  EXPECT_EQ(golden.snapshot.threads_retired, uint64_t(threads));
  EXPECT_EQ(golden.snapshot.threads_started, uint64_t(threads) + 1);
  EXPECT_EQ(golden.snapshot.threads_without_slot, 0u);
  EXPECT_EQ(golden.snapshot.threads.size(), 1u);  // main only
}

INSTANTIATE_TEST_SUITE_P(Threads, GoldenThreadsTest, ::testing::Values(1, 16, 64));

// A retiring thread folds the functions it called into the retired totals
// and leaves its slot clean for the next thread: one by one when it called
// few of them, all of them when it called more than it lists.
class GoldenRetiringTest : public ::testing::TestWithParam<int> {};

TEST_P(GoldenRetiringTest, ThreadsRetiringOneAfterAnotherLeaveExactTotals) {
  int width = GetParam();
  const int threads = 12;
  // Two slots: main's and one that every worker takes after the previous one retired.
  GoldenRun golden = RunScenario("calltree", {"wide", std::to_string(threads), std::to_string(width)},
                                 {"LIMPWATCH_MAX_THREADS=2"});
  SegmentCleanup cleanup(golden.name);
  EXPECT_EQ(golden.snapshot.threads_retired, uint64_t(threads));
  EXPECT_EQ(golden.snapshot.threads_without_slot, 0u);
  EXPECT_EQ(golden.counters["wide_worker"].calls, uint64_t(threads));
  EXPECT_EQ(golden.counters["leaf_fast"].calls, uint64_t(threads));
  EXPECT_GT(golden.counters["wide_worker"].total_ticks, 0u);
  for (int index = 0; index < width; ++index) {
    // wide_10 .. wide_209, in the order the program calls them.
    std::string name = "wide_" + std::to_string(10 + index);
    EXPECT_EQ(golden.counters[name].calls, uint64_t(threads)) << name;
  }
  EXPECT_EQ(golden.counters.count("wide_" + std::to_string(10 + width)), 0u);
}

INSTANTIATE_TEST_SUITE_P(Widths, GoldenRetiringTest, ::testing::Values(5, 200));

TEST(GoldenTest, ThreadsBeyondTheSlotsAreCountedAsLost) {
  // 4 slots for main + 16 workers running at once: some workers get none.
  GoldenRun golden = RunScenario("calltree", {"threads", "16", "200000"}, {"LIMPWATCH_MAX_THREADS=4"});
  SegmentCleanup cleanup(golden.name);
  uint64_t recorded_workers = golden.counters["worker"].calls;
  uint64_t lost_threads = golden.snapshot.threads_without_slot;
  EXPECT_EQ(recorded_workers + lost_threads, 16u);
  EXPECT_EQ(golden.counters["leaf_fast"].calls + golden.snapshot.calls_without_slot,
            16u * 200000u + lost_threads);  // a lost worker's own entry is a lost call too
}

TEST(GoldenTest, ForkChildRecordsIntoItsOwnSegmentWithoutInheritedFrames) {
  std::string name = UniqueSegmentName("golden-fork");
  SegmentCleanup cleanup(name);
  ProgramRun run = RunProgram(TestProgram("calltree"), {"fork"}, {"LIMPWATCH_NAME=" + name, "LIMPWATCH_KEEP=1"});
  ASSERT_EQ(run.exit_status, 0);
  pid_t child = 0;
  std::istringstream(run.output.substr(run.output.find("child ") + 6)) >> child;
  ASSERT_GT(child, 0);

  auto parent = CountersByName(ReadSegment(name, run.pid));
  EXPECT_EQ(parent["main"].calls, 1u);
  EXPECT_EQ(parent["before_fork"].calls, 1u);
  EXPECT_EQ(parent["do_fork"].calls, 1u);
  EXPECT_EQ(parent["parent_work"].calls, 1u);
  EXPECT_EQ(parent["leaf_fast"].calls, 7u);
  EXPECT_EQ(parent["child_work"].calls, 0u);

  shm::Snapshot child_snapshot = ReadSegment(name, child);
  auto child_counts = CountersByName(child_snapshot);
  EXPECT_EQ(child_snapshot.parent_pid, uint32_t(run.pid));
  EXPECT_EQ(child_counts["child_work"].calls, 1u);
  EXPECT_EQ(child_counts["leaf_fast"].calls, 5u);
  // Entered in the parent before fork: popped in the child, never counted again.
  EXPECT_EQ(child_counts["main"].calls, 0u);
  EXPECT_EQ(child_counts["before_fork"].calls, 0u);
  EXPECT_EQ(child_counts["do_fork"].calls, 0u);
  EXPECT_EQ(child_counts["before_fork"].total_ticks, 0u);
  EXPECT_EQ(child_snapshot.diagnostics.unmatched_exits, 0u);
}

TEST(GoldenTest, DaemonizedChildKeepsRecordingAfterTheParentExits) {
  std::string name = UniqueSegmentName("golden-daemon");
  SegmentCleanup cleanup(name);
  ProgramRun run = RunProgram(TestProgram("calltree"), {"daemon"}, {"LIMPWATCH_NAME=" + name, "LIMPWATCH_KEEP=1"});
  ASSERT_EQ(run.exit_status, 0);
  pid_t child = 0;
  std::istringstream(run.output.substr(run.output.find("child ") + 6)) >> child;
  ASSERT_GT(child, 0);
  // The daemon is not our child: wait for it to leave its segment.
  for (int i = 0; i < 500 && kill(child, 0) == 0; ++i) usleep(10000);
  auto child_counts = CountersByName(ReadSegment(name, child));
  EXPECT_EQ(child_counts["child_work"].calls, 1u);
  EXPECT_EQ(child_counts["leaf_fast"].calls, 5u);
  EXPECT_EQ(child_counts["before_fork"].calls, 0u);
}

TEST(GoldenTest, LongjmpResynchronisesTheStack) {
  GoldenRun golden = RunScenario("calltree", {"longjmp"});
  SegmentCleanup cleanup(golden.name);
  EXPECT_EQ(golden.counters["jumper"].calls, 1u);
  EXPECT_EQ(golden.counters["deep1"].calls, 1u);
  EXPECT_EQ(golden.counters["deep2"].calls, 1u);
  EXPECT_EQ(golden.counters["leaf_fast"].calls, 1u);
  EXPECT_EQ(golden.snapshot.diagnostics.resynced_frames, 2u);  // deep1 and deep2 never returned
  EXPECT_EQ(golden.snapshot.diagnostics.unmatched_exits, 0u);
  EXPECT_GT(golden.counters["jumper"].total_ticks, 0u);  // jumper's own exit paired up again
  EXPECT_GT(golden.counters["main"].total_ticks, 0u);
}

TEST(GoldenTest, ExceptionThroughCFrameResynchronisesTheStack) {
  GoldenRun golden = RunScenario("exceptions", {});
  SegmentCleanup cleanup(golden.name);
  EXPECT_EQ(golden.counters["cpp_outer()"].calls, 4u);
  EXPECT_EQ(golden.counters["c_middle"].calls, 4u);
  EXPECT_EQ(golden.counters["cpp_thrower"].calls, 4u);
  EXPECT_EQ(golden.counters["cpp_after()"].calls, 1u);
  EXPECT_EQ(golden.snapshot.diagnostics.resynced_frames, 4u);  // c_middle, once per throw
  EXPECT_EQ(golden.snapshot.diagnostics.unmatched_exits, 0u);
  EXPECT_GT(golden.counters["cpp_outer()"].total_ticks, 0u);
}

TEST(GoldenTest, DeepRecursionOverflowsTheStackButCountsEveryCall) {
  GoldenRun golden = RunScenario("calltree", {"deep", "1000"}, {"LIMPWATCH_STACK_DEPTH=64"});
  SegmentCleanup cleanup(golden.name);
  EXPECT_EQ(golden.counters["recurse"].calls, 1001u);
  EXPECT_GT(golden.snapshot.diagnostics.overflowed_calls, 900u);
  EXPECT_EQ(golden.snapshot.diagnostics.unmatched_exits, 0u);
  EXPECT_GT(golden.counters["main"].total_ticks, 0u);  // the stack unwound back to main
}

TEST(GoldenTest, MonotonicClockFallbackGivesTheSameCounts) {
  GoldenRun golden = RunScenario("calltree", {"tree"}, {"LIMPWATCH_CLOCK=monotonic"});
  SegmentCleanup cleanup(golden.name);
  EXPECT_EQ(golden.snapshot.clock_source, shm::ClockSource::kMonotonicRaw);
  EXPECT_EQ(golden.snapshot.ns_per_tick, 1.0);
  EXPECT_EQ(golden.counters["leaf_fast"].calls, 30u);
  EXPECT_GE(SelfMs(golden, "sleep_ms"), 120.0);
}

TEST(GoldenTest, TscClockIsCalibratedAgainstRealTime) {
  GoldenRun golden = RunScenario("calltree", {"tree"});
  SegmentCleanup cleanup(golden.name);
  if (golden.snapshot.clock_source != shm::ClockSource::kTsc) GTEST_SKIP() << "no invariant TSC";
  // 6 sleeps of 20 ms: the calibrated factor must turn ticks into that much time.
  EXPECT_GE(SelfMs(golden, "sleep_ms"), 120.0);
  EXPECT_LT(SelfMs(golden, "sleep_ms"), 220.0);
}

// The start-up measurement of the TSC's rate is short; the service thread
// measures it again over the time since, which converges on the rate this
// test measures itself over the same seconds.
TEST(GoldenTest, TscRateIsRefinedWhileTheProgramRuns) {
  std::string name = UniqueSegmentName("golden-clock");
  int out = -1;
  pid_t pid = StartProgram(TestProgram("calltree"), {"hang"}, {"LIMPWATCH_NAME=" + name}, &out);
  ASSERT_GT(pid, 0);
  ASSERT_EQ(ReadLine(out), "ready");
  shm::Snapshot first = ReadSegment(name, pid);
  timespec start_time{}, end_time{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &start_time);
  uint64_t start_ticks = __rdtsc();
  usleep(3'000'000);
  clock_gettime(CLOCK_MONOTONIC_RAW, &end_time);
  uint64_t end_ticks = __rdtsc();
  shm::Snapshot later = ReadSegment(name, pid);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  close(out);
  RemoveSegmentsNamed(name);
  if (first.clock_source != shm::ClockSource::kTsc) GTEST_SKIP() << "no invariant TSC";
  double elapsed_ns = double(end_time.tv_sec - start_time.tv_sec) * 1e9 + double(end_time.tv_nsec - start_time.tv_nsec);
  double own_ns_per_tick = elapsed_ns / double(end_ticks - start_ticks);
  EXPECT_NE(later.ns_per_tick, first.ns_per_tick);
  EXPECT_NEAR(later.ns_per_tick / own_ns_per_tick, 1.0, 2e-5)
      << "refined " << later.ns_per_tick << ", measured here " << own_ns_per_tick << ", at start-up " << first.ns_per_tick;
}

TEST(GoldenTest, SegmentIsPrivateToItsOwnerAndRemovedAtExit) {
  std::string name = UniqueSegmentName("golden-private");
  int out = -1;
  pid_t pid = StartProgram(TestProgram("calltree"), {"hang"}, {"LIMPWATCH_NAME=" + name}, &out);
  ASSERT_GT(pid, 0);
  ASSERT_EQ(ReadLine(out), "ready");
  std::string path = "/dev/shm/" + shm::SegmentObjectName(name, pid);
  struct stat status{};
  ASSERT_EQ(stat(path.c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777, 0600u);
  shm::Snapshot live = ReadSegment(name, pid);
  EXPECT_EQ(live.liveness, shm::Liveness::kLive);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  close(out);
  // Killed: the segment stays behind and is recognised as stale.
  shm::Snapshot dead = ReadSegment(name, pid);
  EXPECT_EQ(dead.liveness, shm::Liveness::kStale);
  EXPECT_EQ(RemoveSegmentsNamed(name), 1);

  // A normal exit without LIMPWATCH_KEEP removes the segment.
  std::string clean_name = UniqueSegmentName("golden-clean");
  ProgramRun run = RunProgram(TestProgram("calltree"), {"tree"}, {"LIMPWATCH_NAME=" + clean_name});
  ASSERT_EQ(run.exit_status, 0);
  EXPECT_NE(stat(("/dev/shm/" + shm::SegmentObjectName(clean_name, run.pid)).c_str(), &status), 0);
}

// A restarted server removes the segment its killed predecessor (same
// name) left; an exited segment kept on purpose, and another server's
// stale one, stay.
TEST(GoldenTest, AStartingProcessRemovesItsDeadPredecessorsSegments) {
  std::string name = UniqueSegmentName("golden-successor");
  std::string other = UniqueSegmentName("golden-other");
  SegmentCleanup cleanup(name), other_cleanup(other);
  auto start_and_kill = [](const std::string& segment_name) {
    int out = -1;
    pid_t pid = StartProgram(TestProgram("calltree"), {"hang"}, {"LIMPWATCH_NAME=" + segment_name}, &out);
    EXPECT_EQ(ReadLine(out), "ready");
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    close(out);
    return pid;
  };
  ProgramRun kept = RunProgram(TestProgram("calltree"), {"tree"}, {"LIMPWATCH_NAME=" + name, "LIMPWATCH_KEEP=1"});
  ASSERT_EQ(kept.exit_status, 0);
  pid_t killed = start_and_kill(name);
  pid_t other_killed = start_and_kill(other);
  auto exists = [](const std::string& segment_name, pid_t pid) {
    struct stat status {};
    return stat(("/dev/shm/" + shm::SegmentObjectName(segment_name, pid)).c_str(), &status) == 0;
  };
  ASSERT_TRUE(exists(name, killed) && exists(other, other_killed) && exists(name, kept.pid));

  std::string log = "/tmp/" + name + ".log";
  int out = -1;
  pid_t successor =
      StartProgram(TestProgram("calltree"), {"hang"}, {"LIMPWATCH_NAME=" + name, "LIMPWATCH_LOG=" + log}, &out);
  // Stopped and its log removed however the test ends.
  struct Stop {
    pid_t pid;
    int out;
    std::string log;
    ~Stop() {
      if (pid > 0 && kill(pid, SIGTERM) == 0) waitpid(pid, nullptr, 0);
      if (out >= 0) close(out);
      unlink(log.c_str());
    }
  } stop{successor, out, log};
  ASSERT_EQ(ReadLine(out), "ready");
  std::string logged;
  for (int wait = 0; wait < 100 && logged.find("predecessor") == std::string::npos; ++wait) {
    usleep(50'000);
    std::ifstream file(log);
    logged.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  }
  EXPECT_FALSE(exists(name, killed));
  EXPECT_TRUE(exists(other, other_killed) && exists(name, kept.pid) && exists(name, successor));
  EXPECT_NE(logged.find("removed the segments of 1 dead predecessor named '" + name + "' (pid " +
                        std::to_string(killed) + ")"),
            std::string::npos)
      << logged;
}

TEST(GoldenTest, BadConfigurationIsReportedAndTheProgramRuns) {
  std::string name = UniqueSegmentName("golden-config");
  SegmentCleanup cleanup(name);
  ProgramRun run = RunProgram(TestProgram("calltree"), {"tree"},
                              {"LIMPWATCH_NAME=" + name, "LIMPWATCH_KEEP=1", "LIMPWATCH_MAX_THREADS=lots"});
  EXPECT_EQ(run.exit_status, 0);
  auto counts = CountersByName(ReadSegment(name, run.pid));
  EXPECT_EQ(counts["leaf_fast"].calls, 30u);
}

TEST(GoldenTest, ErrnoSurvivesTheColdPath) {
  GoldenRun golden = RunScenario("calltree", {"errno"});
  SegmentCleanup cleanup(golden.name);
  EXPECT_NE(golden.run.output.find("errno 33"), std::string::npos) << golden.run.output;  // EDOM
  EXPECT_EQ(golden.counters["first_call_of_thread"].calls, 1u);
}

TEST(GoldenTest, DisabledRecordsNothing) {
  std::string name = UniqueSegmentName("golden-disabled");
  SegmentCleanup cleanup(name);
  ProgramRun run = RunProgram(TestProgram("calltree"), {"tree"},
                              {"LIMPWATCH_NAME=" + name, "LIMPWATCH_KEEP=1", "LIMPWATCH_DISABLE=1"});
  EXPECT_EQ(run.exit_status, 0);
  struct stat status{};
  EXPECT_NE(stat(("/dev/shm/" + shm::SegmentObjectName(name, run.pid)).c_str(), &status), 0);
}

}  // namespace
}  // namespace limpwatch::testing
