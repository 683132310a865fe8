// Dynamic patching (LIMPWATCH_PATCH=1) of programs built with
// -fpatchable-function-entry=5 and without -finstrument-functions: selected
// functions counted with their times, re-selection while threads call the
// patched functions, exceptions, longjmp and pthread_exit through patched
// frames, a process that already has threads, and prepared but unpatched sleds.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "limpwatch/shm/segment.h"
#include "support/selection_run.h"
#include "support/started_program.h"
#include "support/traced_run.h"

namespace limpwatch::testing {
namespace {

constexpr double kMs = 1e6;

struct PatchedRun {
  std::string name;
  ProgramRun run;
  shm::Snapshot snapshot;
  std::map<std::string, shm::CounterValues> counters;
  std::string log;
};

PatchedRun RunPatched(const std::string& program, const std::vector<std::string>& args,
                      const std::string& manifest_path, std::vector<std::string> environment = {"LIMPWATCH_PATCH=1"}) {
  PatchedRun patched;
  patched.name = UniqueSegmentName("patch");
  LogFile log;
  environment.push_back("LIMPWATCH_NAME=" + patched.name);
  environment.push_back("LIMPWATCH_KEEP=1");
  environment.push_back(log.Variable());
  if (!manifest_path.empty()) environment.push_back("LIMPWATCH_SELECT=" + manifest_path);
  patched.run = RunProgram(TestProgram(program), args, environment);
  patched.snapshot = ReadSegment(patched.name, patched.run.pid);
  patched.counters = CountersByName(patched.snapshot);
  patched.log = log.Text();
  return patched;
}

uint64_t Calls(const std::map<std::string, shm::CounterValues>& counters, const std::string& function) {
  auto found = counters.find(function);
  return found == counters.end() ? 0 : found->second.calls;
}

uint64_t Calls(const PatchedRun& run, const std::string& function) { return Calls(run.counters, function); }

void ExpectCalls(const PatchedRun& run, const std::map<std::string, uint64_t>& expected) {
  for (const auto& [function, calls] : expected) EXPECT_EQ(Calls(run, function), calls) << function;
}

// No exit went unmatched, no frame was closed by resynchronisation, no call
// was left untraced for want of room.
void ExpectCleanDiagnostics(const PatchedRun& run) {
  EXPECT_EQ(run.snapshot.diagnostics.unmatched_exits, 0u);
  EXPECT_EQ(run.snapshot.diagnostics.resynced_frames, 0u);
  EXPECT_EQ(run.snapshot.diagnostics.overflowed_calls, 0u);
}

double SelfMs(const PatchedRun& run, const std::string& function) {
  return run.snapshot.TicksToNs(run.counters.at(function).self_ticks) / kMs;
}

double TotalMs(const PatchedRun& run, const std::string& function) {
  return run.snapshot.TicksToNs(run.counters.at(function).total_ticks) / kMs;
}

void ExpectEveryStackClosed(const PatchedRun& run) {
  for (const auto& thread : run.snapshot.threads) EXPECT_EQ(thread.depth, 0u) << "thread " << thread.tid;
}

TEST(PatchingTest, EveryPatchedFunctionIsCountedWithoutAManifest) {
  PatchedRun run = RunPatched("patched", {"tree"}, "");
  SegmentCleanup cleanup(run.name);
  ASSERT_EQ(run.run.exit_status, 0) << run.log;
  EXPECT_EQ(Calls(run, "main"), 1u);
  EXPECT_EQ(Calls(run, "parent_work"), 1u);
  EXPECT_EQ(Calls(run, "child_hot"), 1000u);
  EXPECT_EQ(Calls(run, "child_slow"), 3u);
  EXPECT_EQ(Calls(run, "sleep_ms"), 3u);
  EXPECT_GE(TotalMs(run, "parent_work"), 60.0);
  EXPECT_LT(SelfMs(run, "parent_work"), 20.0);  // the sleeps are traced children
  EXPECT_EQ(run.snapshot.diagnostics.unmatched_exits, 0u);
  EXPECT_EQ(run.snapshot.diagnostics.resynced_frames, 0u);
  ExpectEveryStackClosed(run);
}

TEST(PatchingTest, OnlySelectedFunctionsArePatchedAndAParentKeepsItsUnselectedChildren) {
  ManifestFile manifest("include parent_work\ninclude child_hot\n");
  PatchedRun run = RunPatched("patched", {"tree"}, manifest.path());
  SegmentCleanup cleanup(run.name);
  ASSERT_EQ(run.run.exit_status, 0) << run.log;
  EXPECT_EQ(Calls(run, "parent_work"), 1u);
  EXPECT_EQ(Calls(run, "child_hot"), 1000u);
  EXPECT_EQ(Calls(run, "child_slow"), 0u);
  EXPECT_EQ(Calls(run, "sleep_ms"), 0u);
  EXPECT_EQ(Calls(run, "main"), 0u);
  // child_slow sleeps 3 x 20 ms; unselected, that time is parent_work's own.
  EXPECT_GE(SelfMs(run, "parent_work"), 60.0);
  EXPECT_LE(SelfMs(run, "parent_work"), TotalMs(run, "parent_work"));
  EXPECT_GT(TotalMs(run, "child_hot"), 0.0);
  EXPECT_LT(TotalMs(run, "child_hot"), TotalMs(run, "parent_work"));
  ExpectEveryStackClosed(run);
}

TEST(PatchingTest, TrampolinesKeepArgumentAndResultRegisters) {
  PatchedRun run = RunPatched("patched", {"registers"}, "");
  SegmentCleanup cleanup(run.name);
  EXPECT_EQ(run.run.exit_status, 0) << run.run.output;
  EXPECT_EQ(run.run.output, "failures 0\n");
  for (const char* function : {"six_integers", "eight_doubles", "sum_variadic", "make_pair", "scaled_long_double",
                               "make_quad", "sum_quad_by_value", "nested_stack_arguments"}) {
    EXPECT_EQ(Calls(run, function), 1u) << function;
  }
  EXPECT_EQ(Calls(run, "ten_integers"), 2u);  // once directly, once from nested_stack_arguments
}

TEST(PatchingTest, ExceptionsCaughtSeveralFramesUpCloseEveryPatchedFrame) {
  PatchedRun run = RunPatched("patched_exceptions", {}, "");
  SegmentCleanup cleanup(run.name);
  ASSERT_EQ(run.run.exit_status, 0) << run.log;
  EXPECT_EQ(run.run.output, "caught 100\n");
  EXPECT_EQ(Calls(run, "catcher"), 1u);
  for (const char* function : {"middle_1", "middle_2", "thrower", "cleanup_helper", "after_catch"}) {
    EXPECT_EQ(Calls(run, function), 100u) << function;
  }
  // The unwound frames' exits are recorded at the catch, in order.
  EXPECT_EQ(run.snapshot.diagnostics.unmatched_exits, 0u);
  EXPECT_EQ(run.snapshot.diagnostics.resynced_frames, 0u);
  EXPECT_GE(TotalMs(run, "middle_1"), TotalMs(run, "middle_2"));
  EXPECT_GE(TotalMs(run, "middle_2"), TotalMs(run, "thrower"));
  EXPECT_GE(TotalMs(run, "catcher"), TotalMs(run, "middle_1"));
  ExpectEveryStackClosed(run);
}

TEST(PatchingTest, LongjmpAcrossPatchedFrames) {
  // 300 rounds leave 900 abandoned frames: more than the 512 returns a thread
  // keeps, so the stale ones must be collected, and more than the default
  // shadow stack stores.
  PatchedRun run = RunPatched("patched", {"longjmp", "300"}, "", {"LIMPWATCH_PATCH=1", "LIMPWATCH_STACK_DEPTH=2048"});
  SegmentCleanup cleanup(run.name);
  ASSERT_EQ(run.run.exit_status, 0) << run.log;
  EXPECT_EQ(Calls(run, "jumper"), 1u);
  EXPECT_EQ(Calls(run, "deep_1"), 300u);
  EXPECT_EQ(Calls(run, "deep_3"), 300u);
  EXPECT_EQ(Calls(run, "child_hot"), 10u);
  EXPECT_EQ(run.snapshot.diagnostics.overflowed_calls, 0u);
  // jumper's own exit closes the abandoned frames above it.
  EXPECT_EQ(run.snapshot.diagnostics.resynced_frames, 900u);
  EXPECT_EQ(run.snapshot.diagnostics.unmatched_exits, 0u);
  EXPECT_GT(TotalMs(run, "jumper"), 0.0);
  ExpectEveryStackClosed(run);
}

TEST(PatchingTest, TailCallsAndDeepRecursionThroughPatchedFunctionsAtO2) {
  PatchedRun run = RunPatched("patched_tail_calls", {}, "");
  SegmentCleanup cleanup(run.name);
  ASSERT_EQ(run.run.exit_status, 0) << run.run.output << run.log;
  EXPECT_EQ(run.run.output, "total 6280\n");
  // Each tail call ends its caller where it begins; the callee returns in
  // its stead, through the caller's return point.
  ExpectCalls(run, {{"tail_chain", 1000}, {"tail_caller", 2000}, {"tail_target", 2000}, {"descend", 2010}});
  ExpectCleanDiagnostics(run);
  EXPECT_LE(TotalMs(run, "tail_target"), TotalMs(run, "main"));
  ExpectEveryStackClosed(run);
}

TEST(PatchingTest, PthreadExitFromAPatchedFunction) {
  PatchedRun run = RunPatched("patched", {"pthread_exit"}, "");
  SegmentCleanup cleanup(run.name);
  ASSERT_EQ(run.run.exit_status, 0) << run.log;
  EXPECT_EQ(Calls(run, "thread_body"), 1u);
  EXPECT_EQ(Calls(run, "exiting_leaf"), 1u);
  EXPECT_EQ(Calls(run, "child_hot"), 6u);
  EXPECT_EQ(Calls(run, "run_pthread_exit"), 1u);
  EXPECT_GT(TotalMs(run, "run_pthread_exit"), 0.0);
  ExpectEveryStackClosed(run);
}

TEST(PatchingTest, ProgramWithThreadsAtStartIsNotPatchedAndSaysWhy) {
  PatchedRun run = RunPatched("patched_early_thread", {"tree"}, "");
  SegmentCleanup cleanup(run.name);
  ASSERT_EQ(run.run.exit_status, 0);
  EXPECT_NE(run.log.find("LIMPWATCH_PATCH: the program already runs other threads when limpwatch starts"),
            std::string::npos)
      << run.log;
  EXPECT_EQ(Calls(run, "parent_work"), 0u);
  EXPECT_EQ(Calls(run, "child_hot"), 0u);
}

TEST(PatchingTest, PreparedSledsWithNothingSelectedLeaveTheProgramWorking) {
  ManifestFile nothing("include no_such_function\n");
  PatchedRun prepared = RunPatched("patched", {"registers"}, nothing.path());
  SegmentCleanup cleanup_prepared(prepared.name);
  EXPECT_EQ(prepared.run.exit_status, 0);
  EXPECT_EQ(prepared.run.output, "failures 0\n");
  EXPECT_TRUE(prepared.snapshot.functions.empty());
  PatchedRun jumps = RunPatched("patched", {"longjmp", "20"}, nothing.path());
  SegmentCleanup cleanup_jumps(jumps.name);
  EXPECT_EQ(jumps.run.exit_status, 0);
  EXPECT_TRUE(jumps.snapshot.functions.empty());

  PatchedRun untouched = RunPatched("patched", {"registers"}, "", {});
  SegmentCleanup cleanup_untouched(untouched.name);
  EXPECT_EQ(untouched.run.exit_status, 0);
  EXPECT_EQ(untouched.run.output, "failures 0\n");
  EXPECT_TRUE(untouched.snapshot.functions.empty());
}

// Four threads call phase_a and phase_b without pause while the selection
// flips between them, each flip patching one sled and unpatching the other.
TEST(PatchingTest, ReselectionWhileFourThreadsCallPatchedFunctions) {
  ManifestFile manifest("include phase_a\n");
  std::string name = UniqueSegmentName("patch-threads");
  SegmentCleanup cleanup(name);
  LogFile log;
  std::string stop_file = UniqueSegmentName("/tmp/lw-patch-stop-");
  int out = -1;
  pid_t pid = StartProgram(TestProgram("patched"), {"threads", "120000", stop_file},
                           {"LIMPWATCH_PATCH=1", "LIMPWATCH_NAME=" + name, "LIMPWATCH_KEEP=1",
                            "LIMPWATCH_SELECT=" + manifest.path(), log.Variable()},
                           &out);
  ASSERT_GT(pid, 0);
  ChildGuard child(pid);
  ASSERT_EQ(ReadLine(out), "ready");
  constexpr int kFlips = 12;
  uint64_t applied = 1;
  for (int flip = 0; flip < kFlips; ++flip) {
    manifest.Write(flip % 2 == 0 ? "include phase_b\n" : "include phase_a\n");
    ASSERT_TRUE(WaitForSelectionsApplied(name, pid, ++applied, 20000)) << "flip " << flip;
  }
  // The last flip selected phase_a; now phase_a's count must stand still.
  manifest.Write("include phase_b\n");
  ASSERT_TRUE(WaitForSelectionsApplied(name, pid, ++applied, 20000));
  auto counts = [&] { return CountersByName(ReadSegment(name, pid)); };
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  uint64_t frozen_a = Calls(counts(), "phase_a");
  uint64_t b_before = Calls(counts(), "phase_b");
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(Calls(counts(), "phase_a"), frozen_a);
  EXPECT_GT(Calls(counts(), "phase_b"), b_before);

  std::ofstream(stop_file) << "stop\n";
  int status = child.Wait();
  std::remove(stop_file.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log.Text();
  uint64_t real_a = 0;
  uint64_t real_b = 0;
  std::istringstream(ReadLine(out).substr(8)) >> real_a;  // "phase_a N"
  std::istringstream(ReadLine(out).substr(8)) >> real_b;
  close(out);
  shm::Snapshot snapshot = ReadSegment(name, pid);
  auto final_counts = CountersByName(snapshot);
  EXPECT_GT(Calls(final_counts, "phase_a"), 0u);
  EXPECT_GT(Calls(final_counts, "phase_b"), 0u);
  EXPECT_LE(Calls(final_counts, "phase_a"), real_a);
  EXPECT_LE(Calls(final_counts, "phase_b"), real_b);
  EXPECT_EQ(Calls(final_counts, "worker"), 0u);
  EXPECT_EQ(snapshot.diagnostics.unmatched_exits, 0u);
  EXPECT_EQ(log.Text().find("cannot"), std::string::npos) << log.Text();
}

// A thread that blocks SIGTRAP would be killed by the int3 of a sled being
// rewritten: while one does, the patches stay and the log says why.
TEST(PatchingTest, NoSledIsRewrittenWhileAThreadBlocksSigtrap) {
  ManifestFile manifest("include phase_a\n");
  std::string name = UniqueSegmentName("patch-sigtrap");
  SegmentCleanup cleanup(name);
  LogFile log;
  std::string stop_file = UniqueSegmentName("/tmp/lw-patch-stop-");
  int out = -1;
  pid_t pid = StartProgram(TestProgram("patched"), {"threads", "120000", stop_file, "block-sigtrap"},
                           {"LIMPWATCH_PATCH=1", "LIMPWATCH_NAME=" + name, "LIMPWATCH_KEEP=1",
                            "LIMPWATCH_SELECT=" + manifest.path(), log.Variable()},
                           &out);
  ASSERT_GT(pid, 0);
  ChildGuard child(pid);
  ASSERT_EQ(ReadLine(out), "ready");
  manifest.Write("include phase_b\n");
  ASSERT_TRUE(WaitForSelectionsApplied(name, pid, 2, 20000));
  // The refusal is logged by the runtime's own thread some time after the
  // selection is applied; waiting for it (not a fixed sleep) also keeps the
  // exit from cutting the line short on a loaded machine.
  const std::string refusal = "a thread of the program blocks SIGTRAP; retrying until none does";
  log.WaitFor(refusal, 20000);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));  // a retry or more
  std::ofstream(stop_file) << "stop\n";
  int status = child.Wait();
  std::remove(stop_file.c_str());
  close(out);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log.Text();
  EXPECT_NE(log.Text().find(refusal), std::string::npos) << log.Text();
  auto counters = CountersByName(ReadSegment(name, pid));
  EXPECT_GT(Calls(counters, "phase_a"), 0u);   // patched at start, while it ran alone
  EXPECT_EQ(Calls(counters, "phase_b"), 0u);   // never patched
}

}  // namespace
}  // namespace limpwatch::testing
