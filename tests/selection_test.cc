// Selective tracing: LIMPWATCH_SELECT manifests (names, globs, source files),
// unselected children's time in their caller's self time, reloading while the
// program runs, bad manifests, and the explicit call-site hooks.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "limpwatch/shm/name_hash.h"
#include "limpwatch/shm/segment.h"
#include "support/selection_run.h"
#include "support/traced_run.h"

namespace limpwatch::testing {
namespace {

constexpr double kMs = 1e6;

// Sends this process's stderr (and so its children's) to a file meanwhile.
class StderrCapture {
 public:
  StderrCapture() : path_(UniqueSegmentName("/tmp/lw-stderr-")) {
    std::fflush(stderr);
    saved_ = dup(STDERR_FILENO);
    int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, STDERR_FILENO);
    close(fd);
  }
  ~StderrCapture() {
    Restore();
    std::remove(path_.c_str());
  }
  std::string Text() {
    std::ifstream file(path_);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }
  void Restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, STDERR_FILENO);
    close(saved_);
    saved_ = -1;
  }

 private:
  std::string path_;
  int saved_ = -1;
};

struct SelectedRun {
  std::string name;
  ProgramRun run;
  shm::Snapshot snapshot;
  std::map<std::string, shm::CounterValues> counters;
};

SelectedRun RunSelected(const std::string& program, const std::vector<std::string>& args,
                        const std::string& manifest_path) {
  SelectedRun selected;
  selected.name = UniqueSegmentName("select");
  std::vector<std::string> environment{"LIMPWATCH_NAME=" + selected.name, "LIMPWATCH_KEEP=1"};
  if (!manifest_path.empty()) environment.push_back("LIMPWATCH_SELECT=" + manifest_path);
  selected.run = RunProgram(TestProgram(program), args, environment);
  EXPECT_EQ(selected.run.exit_status, 0) << program;
  selected.snapshot = ReadSegment(selected.name, selected.run.pid);
  selected.counters = CountersByName(selected.snapshot);
  return selected;
}

uint64_t Calls(const SelectedRun& run, const std::string& function) {
  auto found = run.counters.find(function);
  return found == run.counters.end() ? 0 : found->second.calls;
}

double SelfMs(const SelectedRun& run, const std::string& function) {
  return run.snapshot.TicksToNs(run.counters.at(function).self_ticks) / kMs;
}

double TotalMs(const SelectedRun& run, const std::string& function) {
  return run.snapshot.TicksToNs(run.counters.at(function).total_ticks) / kMs;
}

TEST(SelectionTest, WithoutManifestEverythingIsTraced) {
  SelectedRun run = RunSelected("selection", {"tree"}, "");
  SegmentCleanup cleanup(run.name);
  EXPECT_EQ(Calls(run, "main"), 1u);
  EXPECT_EQ(Calls(run, "parent_work"), 1u);
  EXPECT_EQ(Calls(run, "child_hot"), 1000u);
  EXPECT_EQ(Calls(run, "child_slow"), 3u);
  EXPECT_EQ(Calls(run, "static_helper_one"), 4u);
  EXPECT_EQ(ReadSelectionCounters(run.name, run.run.pid).applied, 0u);
}

TEST(SelectionTest, SelectsByExactName) {
  ManifestFile manifest("# only these two\ninclude parent_work\nchild_slow   # a bare name includes\n");
  SelectedRun run = RunSelected("selection", {"tree"}, manifest.path());
  SegmentCleanup cleanup(run.name);
  EXPECT_EQ(Calls(run, "parent_work"), 1u);
  EXPECT_EQ(Calls(run, "child_slow"), 3u);
  EXPECT_EQ(Calls(run, "child_hot"), 0u);
  EXPECT_EQ(Calls(run, "main"), 0u);
  EXPECT_EQ(Calls(run, "sleep_ms"), 0u);
  EXPECT_EQ(run.snapshot.diagnostics.unmatched_exits, 0u);
  EXPECT_EQ(run.snapshot.diagnostics.untracked_calls, 0u);
  SelectionCounters counters = ReadSelectionCounters(run.name, run.run.pid);
  EXPECT_EQ(counters.applied, 1u);
  EXPECT_GE(counters.unselected, 4u);  // main, child_hot, sleep_ms, run_static_helpers, ...
}

TEST(SelectionTest, SelectsByGlobWithExclusions) {
  ManifestFile manifest("exclude child_*\nexclude static_helper_?[nw]*\n");
  SelectedRun run = RunSelected("selection", {"tree"}, manifest.path());
  SegmentCleanup cleanup(run.name);
  EXPECT_EQ(Calls(run, "main"), 1u);  // no include rule: the rest is traced
  EXPECT_EQ(Calls(run, "parent_work"), 1u);
  EXPECT_EQ(Calls(run, "sleep_ms"), 3u);
  EXPECT_EQ(Calls(run, "child_hot"), 0u);
  EXPECT_EQ(Calls(run, "child_slow"), 0u);
  EXPECT_EQ(Calls(run, "static_helper_one"), 0u);
  EXPECT_EQ(Calls(run, "static_helper_two"), 0u);
  EXPECT_EQ(Calls(run, "run_static_helpers"), 1u);
}

TEST(SelectionTest, SelectsStaticFunctionsBySourceFile) {
  ManifestFile manifest("include file:selection_static.c\nexclude static_helper_two\n");
  SelectedRun run = RunSelected("selection", {"tree"}, manifest.path());
  SegmentCleanup cleanup(run.name);
  EXPECT_EQ(Calls(run, "static_helper_one"), 4u);
  EXPECT_EQ(Calls(run, "static_helper_two"), 0u);  // the later rule wins
  // A global function has no STT_FILE: a file rule does not reach it.
  EXPECT_EQ(Calls(run, "run_static_helpers"), 0u);
  EXPECT_EQ(Calls(run, "parent_work"), 0u);
}

TEST(SelectionTest, SelectsByObject) {
  ManifestFile manifest("include object:selection\nexclude child_hot\n");
  SelectedRun run = RunSelected("selection", {"tree"}, manifest.path());
  SegmentCleanup cleanup(run.name);
  EXPECT_EQ(Calls(run, "parent_work"), 1u);
  EXPECT_EQ(Calls(run, "child_hot"), 0u);
  EXPECT_EQ(Calls(run, "static_helper_two"), 7u);
}

TEST(SelectionTest, ParentSelfTimeKeepsUnselectedChildren) {
  ManifestFile only_parent("include parent_work\n");
  SelectedRun selected = RunSelected("selection", {"tree"}, only_parent.path());
  SegmentCleanup cleanup_selected(selected.name);
  // child_slow sleeps 3 x 20 ms; untraced, that time is parent_work's own.
  EXPECT_GE(SelfMs(selected, "parent_work"), 60.0);
  EXPECT_NEAR(SelfMs(selected, "parent_work"), TotalMs(selected, "parent_work"), 0.01);

  SelectedRun everything = RunSelected("selection", {"tree"}, "");
  SegmentCleanup cleanup_everything(everything.name);
  EXPECT_LT(SelfMs(everything, "parent_work"), 20.0);
  EXPECT_GE(TotalMs(everything, "parent_work"), 60.0);
}

// phase_a and phase_b are selected in turn by rewriting the manifest.
static void CheckReloadWhileTheProgramRuns(const std::vector<std::string>& extra_environment) {
  ManifestFile manifest("include phase_a\n");
  std::string name = UniqueSegmentName("select-reload");
  SegmentCleanup cleanup(name);
  StderrCapture stderr_capture;
  int out = -1;
  std::vector<std::string> environment = {"LIMPWATCH_NAME=" + name, "LIMPWATCH_SELECT=" + manifest.path()};
  environment.insert(environment.end(), extra_environment.begin(), extra_environment.end());
  pid_t pid = StartProgram(TestProgram("selection"), {"loop", "6000"}, environment, &out);
  ASSERT_GT(pid, 0);
  EXPECT_EQ(ReadLine(out), "ready");
  auto counts = [&](const char* function) {
    auto counters = CountersByName(ReadSegment(name, pid));
    return counters.count(function) ? counters[function].calls : 0;
  };
  auto wait_for = [](auto condition) {
    for (int tries = 0; tries < 60 && !condition(); ++tries) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return condition();
  };
  EXPECT_TRUE(wait_for([&] { return counts("phase_a") > 10; }));
  EXPECT_EQ(counts("phase_b"), 0u);

  manifest.Write("include phase_b\n");
  EXPECT_TRUE(wait_for([&] { return counts("phase_b") > 10; }));
  uint64_t frozen_a = counts("phase_a");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(counts("phase_a"), frozen_a);
  EXPECT_EQ(ReadSelectionCounters(name, pid).applied, 2u);

  manifest.Write("include phase_a\nincldue phase_b\n");
  EXPECT_TRUE(wait_for([&] { return ReadSelectionCounters(name, pid).errors == 1; }));
  uint64_t b_before = counts("phase_b");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_GT(counts("phase_b"), b_before);  // the last good selection stays
  EXPECT_EQ(counts("phase_a"), frozen_a);

  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  close(out);
  stderr_capture.Restore();
  EXPECT_NE(stderr_capture.Text().find(manifest.path() + ":2: unknown keyword 'incldue'"), std::string::npos)
      << stderr_capture.Text();
}

TEST(SelectionTest, ReloadsTheManifestWhileTheProgramRuns) { CheckReloadWhileTheProgramRuns({}); }

// With the smallest index, phase_a and phase_b share a home position and so
// a slot of the unselected filter: the one selected must still be traced
// and the other not, whichever of them holds the slot.
TEST(SelectionTest, FunctionsSharingAnIndexPositionAreSelectedApart) {
  CheckReloadWhileTheProgramRuns({"LIMPWATCH_MAX_FUNCTIONS=16"});
}

// held_on_stack is deselected while it sleeps: its exit is then a bare index
// probe that leaves its frame, and holder's exit must still close it.
TEST(SelectionTest, FunctionDeselectedWhileOnTheStackIsClosedByItsCaller) {
  ManifestFile manifest("include holder\ninclude held_on_stack\ninclude child_hot\n");
  std::string name = UniqueSegmentName("select-held");
  SegmentCleanup cleanup(name);
  int out = -1;
  pid_t pid = StartProgram(TestProgram("selection"), {"held", "1500"},
                           {"LIMPWATCH_NAME=" + name, "LIMPWATCH_KEEP=1", "LIMPWATCH_SELECT=" + manifest.path()}, &out);
  ASSERT_GT(pid, 0);
  EXPECT_EQ(ReadLine(out), "ready");
  manifest.Write("include holder\n");
  bool reselected = WaitForSelectionsApplied(name, pid, 2, 1000);
  int status = 0;
  waitpid(pid, &status, 0);
  close(out);
  ASSERT_TRUE(reselected) << "the new manifest was not applied while held_on_stack slept";
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  SelectedRun run;
  run.snapshot = ReadSegment(name, pid);
  run.counters = CountersByName(run.snapshot);
  EXPECT_EQ(Calls(run, "holder"), 1u);
  EXPECT_EQ(Calls(run, "held_on_stack"), 1u);  // counted when it entered
  EXPECT_EQ(Calls(run, "child_hot"), 1u);      // the second call came after the change
  EXPECT_EQ(run.snapshot.diagnostics.resynced_frames, 1u);
  EXPECT_EQ(run.snapshot.diagnostics.unmatched_exits, 0u);
  for (const auto& thread : run.snapshot.threads) EXPECT_EQ(thread.depth, 0u);
  // The stale frame's own time is the caller's, as an unselected call's is.
  EXPECT_GE(TotalMs(run, "holder"), 1500.0);
  EXPECT_GE(SelfMs(run, "holder"), 1500.0);
}

TEST(SelectionTest, BadManifestAtStartIsReportedAndEverythingIsTraced) {
  ManifestFile manifest("include parent_work\n\ninclude file:\n");
  StderrCapture stderr_capture;
  SelectedRun run = RunSelected("selection", {"tree"}, manifest.path());
  SegmentCleanup cleanup(run.name);
  stderr_capture.Restore();
  std::string text = stderr_capture.Text();
  EXPECT_NE(text.find(manifest.path() + ":3: 'file:' needs a pattern; tracing every function"), std::string::npos)
      << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_EQ(Calls(run, "child_hot"), 1000u);
  EXPECT_EQ(ReadSelectionCounters(run.name, run.run.pid).errors, 1u);
}

TEST(ScopeApiTest, NamedScopesInACProgramWithoutInstrumentation) {
  SelectedRun run = RunSelected("scopes", {"nested"}, "");
  SegmentCleanup cleanup(run.name);
  EXPECT_EQ(Calls(run, "scope.outer"), 1u);
  EXPECT_EQ(Calls(run, "scope.inner"), 10u);
  EXPECT_GE(TotalMs(run, "scope.inner"), 20.0);
  EXPECT_GE(SelfMs(run, "scope.outer"), 5.0);
  EXPECT_LT(SelfMs(run, "scope.outer"), 5.0 + 10.0);
  EXPECT_GE(TotalMs(run, "scope.outer"), 25.0);
  bool hashed = false;
  for (const auto& function : run.snapshot.functions) {
    if (function.name == "scope.outer") {
      EXPECT_EQ(function.state, shm::SymbolState::kResolved);
      EXPECT_EQ(function.name_hash, shm::FunctionNameHash("scope.outer"));
      hashed = true;
    }
  }
  EXPECT_TRUE(hashed);
  EXPECT_EQ(run.snapshot.diagnostics.unmatched_exits, 0u);
}

TEST(ScopeApiTest, MismatchedScopesAreCountedAndTheStackStaysSound) {
  SelectedRun run = RunSelected("scopes", {"mismatched"}, "");
  SegmentCleanup cleanup(run.name);
  EXPECT_EQ(Calls(run, "scope.a"), 1u);
  EXPECT_EQ(Calls(run, "scope.b"), 1u);
  EXPECT_EQ(run.snapshot.diagnostics.resynced_frames, 1u);  // b, closed by a's end
  EXPECT_EQ(run.snapshot.diagnostics.unmatched_exits, 2u);  // b's late end, never's end
  EXPECT_EQ(Calls(run, "scope.after"), 1u);
  EXPECT_GE(TotalMs(run, "scope.after"), 3.0);
  EXPECT_NEAR(SelfMs(run, "scope.after"), TotalMs(run, "scope.after"), 0.01);
  for (const auto& thread : run.snapshot.threads) EXPECT_EQ(thread.depth, 0u);
}

TEST(ScopeApiTest, ScopesAreSelectedByName) {
  ManifestFile manifest("exclude scope.inner\n");
  SelectedRun run = RunSelected("scopes", {"nested"}, manifest.path());
  SegmentCleanup cleanup(run.name);
  EXPECT_EQ(Calls(run, "scope.outer"), 1u);
  EXPECT_EQ(Calls(run, "scope.inner"), 0u);
  EXPECT_GE(SelfMs(run, "scope.outer"), 25.0);  // the inner scopes' time is the outer's own
}

TEST(ScopeApiTest, CppScopeEndsOnReturnAndOnException) {
  SelectedRun run = RunSelected("scopes_cpp", {}, "");
  SegmentCleanup cleanup(run.name);
  EXPECT_EQ(Calls(run, "cpp.work"), 5u);
  EXPECT_EQ(run.snapshot.diagnostics.unmatched_exits, 0u);
  EXPECT_EQ(run.snapshot.diagnostics.resynced_frames, 0u);
}

}  // namespace
}  // namespace limpwatch::testing
