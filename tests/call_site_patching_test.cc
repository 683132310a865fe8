// Dynamic patching (LIMPWATCH_PATCH=1) of the compiler's hook calls in a
// program built with -finstrument-functions at -O2: an unselected function's
// enter call becomes a NOP and its tail jump to the exit hook a `ret`, a
// selected one keeps the compiler's calls, a re-selection restores and
// rewrites them while four threads run through them, and nothing is
// rewritten without LIMPWATCH_PATCH or while a thread blocks SIGTRAP.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "limpwatch/shm/segment.h"
#include "support/selection_run.h"
#include "support/started_program.h"
#include "support/traced_run.h"

namespace limpwatch::testing {
namespace {

uint64_t Calls(const std::map<std::string, shm::CounterValues>& counters, const std::string& function) {
  auto found = counters.find(function);
  return found == counters.end() ? 0 : found->second.calls;
}

// The call_sites program, started with a manifest, stopped by a file.
class CallSiteRun {
 public:
  CallSiteRun(const std::string& manifest_path, bool patch, bool block_sigtrap = false)
      : name_(UniqueSegmentName("callsites")), stop_file_(UniqueSegmentName("/tmp/lw-callsites-stop-")) {
    std::vector<std::string> arguments = {"60000", stop_file_};
    if (block_sigtrap) arguments.push_back("block-sigtrap");
    std::vector<std::string> environment = {"LIMPWATCH_NAME=" + name_, "LIMPWATCH_KEEP=1",
                                            "LIMPWATCH_SELECT=" + manifest_path, log_.Variable()};
    if (patch) environment.push_back("LIMPWATCH_PATCH=1");
    pid_ = StartProgram(TestProgram("call_sites"), arguments, environment, &out_);
    guard_ = std::make_unique<ChildGuard>(pid_);
  }
  ~CallSiteRun() {
    std::remove(stop_file_.c_str());
    if (out_ >= 0) close(out_);
    guard_.reset();
    RemoveSegmentsNamed(name_);
  }

  // Reads the program's lines until every one of `wanted` was printed;
  // false when the program ends first.
  bool WaitForLines(std::set<std::string> wanted) {
    while (!wanted.empty()) {
      std::string line = ReadLine(out_);
      if (line.empty() || line.rfind("calls ", 0) == 0) return false;
      seen_.push_back(line);
      wanted.erase(line);
    }
    return true;
  }

  // Stops the program; returns its exit status and the real call counts.
  int Stop(uint64_t* real_a, uint64_t* real_b) {
    std::ofstream(stop_file_) << "stop\n";
    for (std::string line = ReadLine(out_); !line.empty(); line = ReadLine(out_)) {
      if (line.rfind("calls ", 0) == 0) {
        std::istringstream(line.substr(6)) >> *real_a >> *real_b;
      } else {
        seen_.push_back(line);
      }
    }
    int status = guard_->Wait();
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  std::map<std::string, shm::CounterValues> Counters() { return CountersByName(ReadSegment(name_, pid_)); }
  shm::Snapshot Snapshot() { return ReadSegment(name_, pid_); }
  const std::vector<std::string>& seen() const { return seen_; }
  const LogFile& log() const { return log_; }
  const std::string& name() const { return name_; }
  pid_t pid() const { return pid_; }

 private:
  std::string name_;
  std::string stop_file_;
  LogFile log_;
  int out_ = -1;
  pid_t pid_ = -1;
  std::unique_ptr<ChildGuard> guard_;
  std::vector<std::string> seen_;
};

std::string Joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

TEST(CallSitePatchingTest, AnUnselectedFunctionsHookCallsBecomeNopsAndTheProgramRunsOn) {
  ManifestFile manifest("exclude phase_b\n");
  CallSiteRun run(manifest.path(), true);
  // Whether the program still saw phase_b's call before the rewrite is a
  // race with the service thread, so only the end state is awaited.
  ASSERT_TRUE(run.WaitForLines({"phase_a call", "phase_b nop"})) << Joined(run.seen()) << run.log().Text();
  // phase_b's exit is a tail jump: rewritten into `ret`, the threads go on
  // returning through it; a wrong rewrite would crash or lose calls.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  uint64_t real_a = 0;
  uint64_t real_b = 0;
  ASSERT_EQ(run.Stop(&real_a, &real_b), 0) << run.log().Text();
  EXPECT_EQ(real_a, real_b);
  EXPECT_GT(real_b, 0u);
  for (const std::string& line : run.seen()) EXPECT_NE(line, "phase_a nop");
  auto counters = run.Counters();
  EXPECT_GT(Calls(counters, "phase_a"), 0u);
  EXPECT_LE(Calls(counters, "phase_a"), real_a);
  EXPECT_EQ(Calls(counters, "phase_b"), 0u);
}

TEST(CallSitePatchingTest, ReselectionRestoresTheCompilersCallsWhileThreadsRunThroughThem) {
  ManifestFile manifest("exclude phase_b\n");
  CallSiteRun run(manifest.path(), true);
  ASSERT_TRUE(run.WaitForLines({"phase_a call", "phase_b nop"})) << Joined(run.seen()) << run.log().Text();
  manifest.Write("exclude phase_a\n");
  ASSERT_TRUE(run.WaitForLines({"phase_b call", "phase_a nop"})) << Joined(run.seen()) << run.log().Text();
  // phase_a's hooks are gone: its count stands still while phase_b's grows.
  auto before = run.Counters();
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  auto after = run.Counters();
  EXPECT_EQ(Calls(after, "phase_a"), Calls(before, "phase_a"));
  EXPECT_GT(Calls(after, "phase_b"), Calls(before, "phase_b"));
  manifest.Write("exclude phase_b\n");
  ASSERT_TRUE(run.WaitForLines({"phase_a call", "phase_b nop"})) << Joined(run.seen()) << run.log().Text();
  uint64_t real_a = 0;
  uint64_t real_b = 0;
  ASSERT_EQ(run.Stop(&real_a, &real_b), 0) << run.log().Text();
  EXPECT_EQ(real_a, real_b);
  auto counters = run.Counters();
  EXPECT_GT(Calls(counters, "phase_a"), 0u);
  EXPECT_GT(Calls(counters, "phase_b"), 0u);
  EXPECT_LE(Calls(counters, "phase_a"), real_a);
  EXPECT_LE(Calls(counters, "phase_b"), real_b);
  EXPECT_EQ(run.log().Text().find("cannot"), std::string::npos) << run.log().Text();
}

TEST(CallSitePatchingTest, WithoutPatchingTheHookCallsStayAsCompiled) {
  ManifestFile manifest("exclude phase_b\n");
  CallSiteRun run(manifest.path(), false);
  ASSERT_TRUE(run.WaitForLines({"phase_a call", "phase_b call"})) << Joined(run.seen());
  ASSERT_TRUE(WaitForSelectionsApplied(run.name(), run.pid(), 1, 20000));
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // several passes, had patching been on
  uint64_t real_a = 0;
  uint64_t real_b = 0;
  ASSERT_EQ(run.Stop(&real_a, &real_b), 0);
  EXPECT_EQ(Joined(run.seen()), "phase_a call\nphase_b call\n");
  EXPECT_EQ(Calls(run.Counters(), "phase_b"), 0u);  // unselected all the same
}

TEST(CallSitePatchingTest, NothingIsRewrittenWhileAThreadBlocksSigtrap) {
  ManifestFile manifest("exclude phase_b\n");
  CallSiteRun run(manifest.path(), true, true);
  ASSERT_TRUE(run.WaitForLines({"phase_a call", "phase_b call"})) << Joined(run.seen());
  EXPECT_TRUE(run.log().WaitFor("a thread of the program blocks SIGTRAP; retrying until none does", 20000))
      << run.log().Text();
  uint64_t real_a = 0;
  uint64_t real_b = 0;
  ASSERT_EQ(run.Stop(&real_a, &real_b), 0) << run.log().Text();
  EXPECT_EQ(Joined(run.seen()), "phase_a call\nphase_b call\n");
  EXPECT_EQ(real_a, real_b);
}

}  // namespace
}  // namespace limpwatch::testing
