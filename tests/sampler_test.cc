// The CPU sampler, end to end: traced programs with a known CPU profile run
// with the sampler, and the sample tables of their segments are checked.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "limpwatch/shm/name_hash.h"
#include "support/sampled_run.h"

namespace limpwatch::testing {
namespace {

constexpr int kSigprofBit = SIGPROF - 1;

uint32_t Source(const shm::Snapshot& snapshot) { return snapshot.samples.source; }

double Ratio(uint64_t a, uint64_t b) { return b == 0 ? 0.0 : double(a) / double(b); }

// The split program spends about twice as much CPU in burn_two as in
// burn_one, and prints the CPU seconds each really took: the sampled split
// must match that one within ten percent, or within four standard
// deviations of the sampling itself when there are too few samples for ten
// percent to be that sure (the SIGPROF fallback's 250 Hz; at 1000 Hz for
// 3 s, ten percent was only 2.6 deviations, and failed now and then).
// The CPU seconds burn_two and burn_one really took, as the split program
// prints them; false when it printed no such line.
bool MeasuredSplit(const SampledRun& sampled, double* two_seconds, double* one_seconds) {
  return std::sscanf(sampled.run.out.c_str(), "burn_two %lf burn_one %lf", two_seconds, one_seconds) == 2;
}

void ExpectSampledSplitMatchesMeasured(const SampledRun& sampled) {
  double two_seconds = 0, one_seconds = 0;
  ASSERT_TRUE(MeasuredSplit(sampled, &two_seconds, &one_seconds)) << sampled.run.out;
  ASSERT_GT(one_seconds, 0.0);
  double measured = two_seconds / one_seconds;
  // Same loop, twice the iterations: a split far from 2:1 means the program
  // did not run as written, and the check below would prove nothing.
  ASSERT_NEAR(measured, 2.0, 0.6) << sampled.run.out;
  const shm::Snapshot& snapshot = sampled.snapshot;
  uint64_t two = SamplesOf(snapshot, "burn_two");
  uint64_t one = SamplesOf(snapshot, "burn_one");
  EXPECT_GE(one, 200u) << DescribeSamples(snapshot);
  double deviation = Ratio(two, one) * std::sqrt(1.0 / double(std::max<uint64_t>(two, 1)) + 1.0 / double(one));
  EXPECT_NEAR(Ratio(two, one), measured, std::max(measured / 10, 4 * deviation))
      << "measured " << sampled.run.out << DescribeSamples(snapshot);
  // Nearly every sample is in one of the two.
  EXPECT_GE(two + one, snapshot.samples.samples_total * 9 / 10) << DescribeSamples(snapshot);
}

TEST(SamplerTest, TwoToOneSplitOfCpuIsSampledWithinTenPercent) {
  // 4000 Hz for 3 s: enough samples for ten percent to be four deviations.
  // The sampler's own /proc/kallsyms load is not the program's and is left
  // out (TheRuntimesOwnThreadsAreLeftOutOfTheProfile).
  SampledRun sampled = RunSampledWork({"split", "3"}, {"LIMPWATCH_SAMPLE_HZ=4000"});
  SegmentCleanup cleanup(sampled.name);
  EXPECT_EQ(Source(sampled.snapshot), uint32_t(shm::SampleSource::kPerfCpuClock)) << sampled.run.err;
  EXPECT_EQ(sampled.snapshot.samples.rate_hz, 4000u);
  ExpectSampledSplitMatchesMeasured(sampled);
  // Keyed like the traced functions, so the analyzer joins samples with calls.
  const shm::SampledFunctionRecord* two = Sampled(sampled.snapshot, "burn_two");
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(two->name_hash, shm::FunctionNameHash("burn_two"));
  EXPECT_EQ(two->image, "sampled_work");
  EXPECT_EQ(two->image_kind, shm::ImageKind::kExecutable);
  // Rings hold seconds of samples: even a starved reader loses few.
  EXPECT_LE(sampled.snapshot.samples.samples_lost, sampled.snapshot.samples.samples_total / 20)
      << DescribeSamples(sampled.snapshot);
  // Root with perf allowed: the sampler starts without a word.
  EXPECT_EQ(sampled.run.err, "");
}

TEST(SamplerTest, SamplesInASharedLibraryNameIt) {
  SampledRun sampled = RunSampledWork({"library", "1.5"}, {});
  SegmentCleanup cleanup(sampled.name);
  const shm::SampledFunctionRecord* library = Sampled(sampled.snapshot, "lib_burn");
  ASSERT_NE(library, nullptr) << DescribeSamples(sampled.snapshot);
  EXPECT_EQ(library->image, "libsampled_lib.so");
  EXPECT_EQ(library->image_kind, shm::ImageKind::kSharedLibrary);
  EXPECT_EQ(library->name_hash, shm::FunctionNameHash("lib_burn"));
  // lib_burn runs 4 iterations for every one of burn_one's.
  EXPECT_GE(library->samples, sampled.snapshot.samples.samples_total * 6 / 10) << DescribeSamples(sampled.snapshot);
  const shm::SampledFunctionRecord* executable = Sampled(sampled.snapshot, "burn_one");
  ASSERT_NE(executable, nullptr) << DescribeSamples(sampled.snapshot);
  EXPECT_EQ(executable->image, "sampled_work");
  EXPECT_EQ(executable->image_kind, shm::ImageKind::kExecutable);
}

bool PerCpuEvents(const shm::Snapshot& snapshot) {
  return (snapshot.samples.flags & shm::kSamplesPerCpuEvents) != 0;
}

TEST(SamplerTest, ThreadsStartedAfterTheSamplerAreSampled) {
  // Per-thread events reach new threads by inheritance, per-CPU events see
  // every task anyway: both must cover threads started later.
  for (std::string placement : {"thread", "cpu"}) {
    SCOPED_TRACE("LIMPWATCH_SAMPLE_EVENTS=" + placement);
    // A thread started 200 ms after the sampler, and one started by that thread.
    SampledRun sampled =
        RunSampledWork({"late_threads", "1"}, {"LIMPWATCH_SAMPLE_HZ=500", "LIMPWATCH_SAMPLE_EVENTS=" + placement});
    SegmentCleanup cleanup(sampled.name);
    EXPECT_EQ(PerCpuEvents(sampled.snapshot), placement == "cpu") << sampled.run.err;
    // One CPU second each at 500 Hz: 500 samples each if nothing is missed.
    EXPECT_GE(SamplesOf(sampled.snapshot, "late_thread_burn"), 300u) << DescribeSamples(sampled.snapshot);
    EXPECT_GE(SamplesOf(sampled.snapshot, "grandchild_burn"), 300u) << DescribeSamples(sampled.snapshot);
  }
}

// A process that burns CPU until it is killed, beside the sampled program.
class CompetingSpinner {
 public:
  CompetingSpinner() : pid_(fork()) {
    if (pid_ == 0) {
      volatile uint64_t spin = 0;
      for (;;) spin = spin + 1;
    }
  }
  ~CompetingSpinner() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  CompetingSpinner(const CompetingSpinner&) = delete;
  CompetingSpinner& operator=(const CompetingSpinner&) = delete;

 private:
  pid_t pid_;
};

TEST(SamplerTest, PerCpuEventsKeepOnlyThisProcesssSamples) {
  // Per-CPU events sample whatever runs on the CPU, here mostly a competing
  // spinner: its samples must be dropped, and the program's own counted at
  // the rate of its own CPU time, as per-thread events would.
  CompetingSpinner spinner;
  SampledRun sampled = RunSampledWork({"split", "3"}, {"LIMPWATCH_SAMPLE_HZ=4000", "LIMPWATCH_SAMPLE_EVENTS=cpu"});
  SegmentCleanup cleanup(sampled.name);
  ASSERT_TRUE(PerCpuEvents(sampled.snapshot)) << sampled.run.err;
  EXPECT_EQ(sampled.run.err, "");
  ExpectSampledSplitMatchesMeasured(sampled);
  double two_seconds = 0, one_seconds = 0;
  ASSERT_TRUE(MeasuredSplit(sampled, &two_seconds, &one_seconds)) << sampled.run.out;
  double expected = (two_seconds + one_seconds) * 4000;
  EXPECT_NEAR(double(sampled.snapshot.samples.samples_total), expected, expected * 0.15)
      << DescribeSamples(sampled.snapshot);
}

bool SharedEvents(const shm::Snapshot& snapshot) {
  return (snapshot.samples.flags & shm::kSamplesSharedEvents) != 0;
}

// The samples a run should have at `rate_hz`: the CPU seconds it printed.
double ExpectedSamples(const SampledRun& sampled, uint32_t rate_hz) {
  double two_seconds = 0, one_seconds = 0;
  if (!MeasuredSplit(sampled, &two_seconds, &one_seconds)) return 0;
  return (two_seconds + one_seconds) * rate_hz;
}

TEST(SamplerTest, ProcessesOfANodeShareOneSetOfPerCpuEventsAndEachKeepsItsOwnSamples) {
  // Three programs at a rate no other test uses, so they share with each
  // other only: one opens the events (its start line says so), the others
  // open none, and each still gets its own samples at its own CPU time's
  // rate, split 2:1 as it burned them.
  constexpr uint32_t kRate = 3001;
  std::vector<SampledRun> runs(3);
  std::vector<std::thread> threads;
  for (auto& run : runs) {
    threads.emplace_back([&run] {
      run = RunSampledWork({"split", "3"}, {"LIMPWATCH_SAMPLE_HZ=" + std::to_string(kRate),
                                            "LIMPWATCH_SAMPLE_EVENTS=cpu", "LIMPWATCH_VERBOSE=1"});
    });
  }
  for (auto& thread : threads) thread.join();
  int holders = 0;
  for (const auto& sampled : runs) {
    SegmentCleanup cleanup(sampled.name);
    SCOPED_TRACE(sampled.run.err);
    EXPECT_TRUE(PerCpuEvents(sampled.snapshot));
    EXPECT_TRUE(SharedEvents(sampled.snapshot));
    if (sampled.run.err.find("per-CPU events shared, held by this process") != std::string::npos) ++holders;
    ExpectSampledSplitMatchesMeasured(sampled);
    double expected = ExpectedSamples(sampled, kRate);
    EXPECT_NEAR(double(sampled.snapshot.samples.samples_total), expected, expected * 0.15)
        << DescribeSamples(sampled.snapshot);
  }
  EXPECT_EQ(holders, 1);
}

TEST(SamplerTest, WhenTheProcessHoldingTheNodesEventsExitsAnotherTakesThemOver) {
  // The first program holds the events and exits after about a second; the
  // second, a member until then, opens them in its place within
  // milliseconds and loses no more than that.
  constexpr uint32_t kRate = 2999;
  const std::vector<std::string> environment = {"LIMPWATCH_SAMPLE_HZ=" + std::to_string(kRate),
                                                "LIMPWATCH_SAMPLE_EVENTS=cpu", "LIMPWATCH_VERBOSE=1"};
  SampledRun first, second;
  std::thread first_thread([&] { first = RunSampledWork({"split", "1"}, environment); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  second = RunSampledWork({"split", "3"}, environment);
  first_thread.join();
  SegmentCleanup first_cleanup(first.name);
  SegmentCleanup second_cleanup(second.name);
  ASSERT_NE(first.run.err.find("held by this process"), std::string::npos) << first.run.err;
  ASSERT_NE(second.run.err.find("held by another process"), std::string::npos) << second.run.err;
  for (const SampledRun* sampled : {&first, &second}) {
    SCOPED_TRACE(sampled->run.err);
    ExpectSampledSplitMatchesMeasured(*sampled);
    double expected = ExpectedSamples(*sampled, kRate);
    EXPECT_NEAR(double(sampled->snapshot.samples.samples_total), expected, expected * 0.15)
        << DescribeSamples(sampled->snapshot);
  }
}

TEST(SamplerTest, PerThreadEventsWhenAskedFor) {
  SampledRun sampled = RunSampledWork({"split", "3"}, {"LIMPWATCH_SAMPLE_HZ=4000", "LIMPWATCH_SAMPLE_EVENTS=thread"});
  SegmentCleanup cleanup(sampled.name);
  EXPECT_EQ(Source(sampled.snapshot), uint32_t(shm::SampleSource::kPerfCpuClock)) << sampled.run.err;
  EXPECT_FALSE(PerCpuEvents(sampled.snapshot));
  ExpectSampledSplitMatchesMeasured(sampled);
}

TEST(SamplerTest, TheRuntimesOwnThreadsAreLeftOutOfTheProfile) {
  // The sampler's reader loads /proc/kallsyms on the first kernel sample
  // (KernelSymbols::Load, tens of samples at 4000 Hz): that is the
  // runtime's work, not the program's, whether the events follow the
  // program's threads by inheritance or watch every CPU. The program writes
  // to /dev/null in a loop, so that it has kernel samples of its own (a
  // loop that only computes had none in 1 run of 4 here).
  for (std::string placement : {"thread", "cpu"}) {
    SCOPED_TRACE("LIMPWATCH_SAMPLE_EVENTS=" + placement);
    SampledRun sampled =
        RunSampledWork({"syscalls", "1.5"}, {"LIMPWATCH_SAMPLE_HZ=4000", "LIMPWATCH_SAMPLE_EVENTS=" + placement});
    SegmentCleanup cleanup(sampled.name);
    ASSERT_EQ(Source(sampled.snapshot), uint32_t(shm::SampleSource::kPerfCpuClock)) << sampled.run.err;
    uint64_t kernel_samples = 0, runtime_internals = 0;
    for (const auto& function : sampled.snapshot.samples.functions) {
      if (function.image_kind == shm::ImageKind::kKernel) kernel_samples += function.samples;
      if (function.name.find("KernelSymbols::") != std::string::npos) runtime_internals += function.samples;
    }
    // The program's own kernel samples are what makes the reader load the symbols.
    ASSERT_GT(kernel_samples, 0u) << DescribeSamples(sampled.snapshot);
    EXPECT_EQ(runtime_internals, 0u) << DescribeSamples(sampled.snapshot);
    // Everything else is the program's: its loop, or the kernel working for it.
    EXPECT_GE(SamplesOf(sampled.snapshot, "write_burst") + kernel_samples,
              sampled.snapshot.samples.samples_total * 95 / 100)
        << DescribeSamples(sampled.snapshot);
  }
}

TEST(SamplerTest, UnknownEventPlacementIsReportedAndTheDefaultKept) {
  SampledRun sampled = RunSampledWork({"split", "0.5"}, {"LIMPWATCH_SAMPLE_EVENTS=sideways"});
  SegmentCleanup cleanup(sampled.name);
  EXPECT_EQ(
      sampled.run.err,
      "limpwatch[" + std::to_string(sampled.run.pid) +
          "]: ignoring LIMPWATCH_SAMPLE_EVENTS='sideways' is not auto, cpu or thread; placing them automatically\n");
  EXPECT_EQ(Source(sampled.snapshot), uint32_t(shm::SampleSource::kPerfCpuClock));
  EXPECT_GT(SamplesOf(sampled.snapshot, "burn_two"), 0u) << DescribeSamples(sampled.snapshot);
}

// The leak checker of a sanitizer build, run at the forked child's exit,
// still lists the parent's threads, which the child does not have, and says
// so on stderr; any other line stays.
std::string WithoutForkedLeakCheckNotes(const std::string& err) {
  std::istringstream lines(err);
  std::string kept, line;
  while (std::getline(lines, line)) {
    bool note = line.rfind("==", 0) == 0 && line.find("was not suspended. False leaks are possible.") != std::string::npos;
    if (!note) kept += line + "\n";
  }
  return kept;
}

TEST(SamplerTest, DaemonChildSamplesItselfIntoItsOwnSegment) {
  // fork(), the parent exits at once, the child burns one CPU second.
  SampledRun sampled = RunSampledWork({"daemon", "1"}, {"LIMPWATCH_SAMPLE_HZ=500"});
  SegmentCleanup cleanup(sampled.name);
  int child = 0;
  ASSERT_EQ(std::sscanf(sampled.run.out.c_str(), "child %d", &child), 1) << sampled.run.out;
  shm::Snapshot child_snapshot = ReadSegment(sampled.name, child);
  EXPECT_EQ(child_snapshot.liveness, shm::Liveness::kExited);
  EXPECT_EQ(Source(child_snapshot), uint32_t(shm::SampleSource::kPerfCpuClock));
  EXPECT_GE(SamplesOf(child_snapshot, "child_burn"), 300u) << DescribeSamples(child_snapshot);
  // The parent's events never follow the child: no child_burn there.
  EXPECT_EQ(SamplesOf(sampled.snapshot, "child_burn"), 0u) << DescribeSamples(sampled.snapshot);
  EXPECT_EQ(WithoutForkedLeakCheckNotes(sampled.run.err), "");
}

// What a running process has: perf event descriptors, POSIX timers and
// whether it catches SIGPROF, read from /proc.
struct ProcessResources {
  int perf_fds = 0;
  std::string timers;
  bool catches_sigprof = false;
};

ProcessResources ReadResources(pid_t pid) {
  ProcessResources resources;
  std::string fd_directory = "/proc/" + std::to_string(pid) + "/fd";
  if (DIR* directory = opendir(fd_directory.c_str())) {
    while (dirent* entry = readdir(directory)) {
      char target[256] = {};
      std::string link = fd_directory + "/" + entry->d_name;
      ssize_t length = readlink(link.c_str(), target, sizeof target - 1);
      if (length > 0 && std::string(target, size_t(length)) == "anon_inode:[perf_event]") ++resources.perf_fds;
    }
    closedir(directory);
  }
  std::ifstream timers("/proc/" + std::to_string(pid) + "/timers");
  std::stringstream text;
  text << timers.rdbuf();
  resources.timers = text.str();
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("SigCgt:", 0) == 0) {
      uint64_t mask = std::stoull(line.substr(7), nullptr, 16);
      resources.catches_sigprof = (mask >> kSigprofBit) & 1;
    }
  }
  return resources;
}

// Starts `sampled_work hold` (optionally through the launcher), reads its
// resources once it is ready, stops it, and returns its segment's snapshot.
struct HeldRun {
  ProcessResources resources;
  shm::Snapshot snapshot;
};

HeldRun Hold(const std::string& name, const std::vector<std::string>& environment, bool deny_perf) {
  HeldRun held;
  std::vector<std::string> env = environment;
  env.push_back("LIMPWATCH_NAME=" + name);
  env.push_back("LIMPWATCH_KEEP=1");
  int out = -1;
  pid_t pid = deny_perf ? StartProgram(TestProgram("sandbox_launcher"),
                                       {"--deny-perf", TestProgram("sampled_work"), "hold"}, env, &out)
                        : StartProgram(TestProgram("sampled_work"), {"hold"}, env, &out);
  EXPECT_GT(pid, 0);
  if (pid <= 0) return held;
  std::string line = ReadLine(out);
  EXPECT_EQ(line, "ready " + std::to_string(pid));
  held.resources = ReadResources(pid);
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  close(out);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  held.snapshot = ReadSegment(name, pid);
  return held;
}

TEST(SamplerTest, AStoppedHolderOfTheNodesEventsIsTakenOverAndCarriesOnAsAMember) {
  // The hang fault SIGSTOPs a server: had it held the node's events, every
  // other process of the node would go unsampled for as long. Its lease goes
  // stale instead and the next process takes the events over; once
  // continued, the stopped one runs on as a member and exits cleanly.
  constexpr uint32_t kRate = 2997;
  const std::vector<std::string> sampling = {"LIMPWATCH_SAMPLE_HZ=" + std::to_string(kRate),
                                             "LIMPWATCH_SAMPLE_EVENTS=cpu", "LIMPWATCH_VERBOSE=1"};
  std::string holder_name = UniqueSegmentName("sampler-stopped");
  SegmentCleanup holder_cleanup(holder_name);
  std::vector<std::string> holder_environment = sampling;
  holder_environment.push_back("LIMPWATCH_NAME=" + holder_name);
  holder_environment.push_back("LIMPWATCH_KEEP=1");
  int out = -1;
  pid_t holder = StartProgram(TestProgram("sampled_work"), {"hold"}, holder_environment, &out);
  ASSERT_GT(holder, 0);
  ASSERT_EQ(ReadLine(out), "ready " + std::to_string(holder));
  ASSERT_EQ(kill(holder, SIGSTOP), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1300));  // past the lease's 1 s
  SampledRun member = RunSampledWork({"split", "2"}, sampling);
  SegmentCleanup member_cleanup(member.name);
  kill(holder, SIGCONT);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // it finds its lease taken
  kill(holder, SIGTERM);
  int status = 0;
  waitpid(holder, &status, 0);
  close(out);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << DescribeWaitStatus(status);
  EXPECT_TRUE(SharedEvents(member.snapshot));
  ExpectSampledSplitMatchesMeasured(member);
  double expected = ExpectedSamples(member, kRate);
  EXPECT_NEAR(double(member.snapshot.samples.samples_total), expected, expected * 0.15)
      << member.run.err << DescribeSamples(member.snapshot);
}

TEST(SamplerTest, SamplerOffCostsNothing) {
  std::string name = UniqueSegmentName("sampler-off");
  SegmentCleanup cleanup(name);
  HeldRun off = Hold(name, {"LIMPWATCH_SAMPLE_HZ=0"}, false);
  EXPECT_EQ(off.resources.perf_fds, 0);
  EXPECT_EQ(off.resources.timers, "");
  EXPECT_FALSE(off.resources.catches_sigprof);
  EXPECT_EQ(Source(off.snapshot), uint32_t(shm::SampleSource::kOff));
  EXPECT_EQ(off.snapshot.samples.rate_hz, 0u);
  EXPECT_EQ(off.snapshot.samples.samples_total, 0u);
  EXPECT_TRUE(off.snapshot.samples.functions.empty()) << DescribeSamples(off.snapshot);
  // The segment is the one the traced program wrote.
  EXPECT_GT(CountersByName(off.snapshot)["burn_one"].calls, 0u);

  // The same checks see the sampler when it is on, so their silence above means something.
  std::string on_name = UniqueSegmentName("sampler-on");
  SegmentCleanup on_cleanup(on_name);
  // Events of its own: a member of the node's shared set (another test's
  // program may hold it) opens none.
  HeldRun on = Hold(on_name, {"LIMPWATCH_SAMPLE_SHARE=0"}, false);
  EXPECT_GE(on.resources.perf_fds, 1);
  EXPECT_GT(on.snapshot.samples.samples_total, 0u);
  std::string sigprof_name = UniqueSegmentName("sampler-sigprof");
  SegmentCleanup sigprof_cleanup(sigprof_name);
  HeldRun sigprof = Hold(sigprof_name, {}, true);
  EXPECT_EQ(sigprof.resources.perf_fds, 0);
  EXPECT_NE(sigprof.resources.timers.find("signal: " + std::to_string(SIGPROF) + "/"), std::string::npos)
      << sigprof.resources.timers;
  EXPECT_TRUE(sigprof.resources.catches_sigprof);
}

TEST(SamplerTest, RefusedPerfEventOpenFallsBackToSigprofWithOneLogLine) {
  // A seccomp filter, installed before exec, makes perf_event_open fail with EACCES.
  SampledRun sampled = RunSampledWork({"split", "5"}, {"LIMPWATCH_SAMPLE_HZ=250"}, {"--deny-perf"});
  SegmentCleanup cleanup(sampled.name);
  EXPECT_EQ(Source(sampled.snapshot), uint32_t(shm::SampleSource::kSigprofTimer)) << sampled.run.err;
  EXPECT_EQ(sampled.snapshot.samples.flags & shm::kSamplesIncludeKernel, 0u);
  std::vector<std::string> lines = Lines(sampled.run.err);
  ASSERT_EQ(lines.size(), 1u) << sampled.run.err;
  EXPECT_NE(lines[0].find("perf_event_open refused: Permission denied"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("SIGPROF"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0].rfind("limpwatch[" + std::to_string(sampled.run.pid) + "]: ", 0), 0u) << lines[0];
  // The fallback samples for real.
  ExpectSampledSplitMatchesMeasured(sampled);
}

TEST(SamplerTest, ProgramThatInstallsItsOwnSigprofHandlerKeepsItsProfiler) {
  // SIGPROF fallback; 300 ms in, the program installs a SIGPROF handler and
  // profiles itself with ITIMER_PROF for two CPU seconds.
  SampledRun sampled = RunSampledWork({"own_sigprof", "2"}, {"LIMPWATCH_SAMPLE_HZ=250"}, {"--deny-perf"});
  SegmentCleanup cleanup(sampled.name);
  int own = 0, foreign = 0;
  ASSERT_EQ(std::sscanf(sampled.run.out.c_str(), "own %d foreign %d", &own, &foreign), 2) << sampled.run.out;
  // Its own profiler works: 100 ticks per CPU second.
  EXPECT_GE(own, 120) << sampled.run.out;
  // limpwatch saw the new handler and stopped its timer within a reader
  // period or so, instead of feeding 250 ticks a second into it.
  EXPECT_LE(foreign, 100) << sampled.run.out;
  std::vector<std::string> lines = Lines(sampled.run.err);
  ASSERT_EQ(lines.size(), 2u) << sampled.run.err;
  EXPECT_NE(lines[0].find("falling back to a SIGPROF timer"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("installed its own SIGPROF handler"), std::string::npos) << lines[1];
  EXPECT_EQ(Source(sampled.snapshot), uint32_t(shm::SampleSource::kOff));
  // What was sampled before it stopped is kept.
  EXPECT_GT(SamplesOf(sampled.snapshot, "burn_one"), 0u) << DescribeSamples(sampled.snapshot);
}

TEST(SamplerTest, KernelSamplesAreAttributedToKernelFunctions) {
  // Many 1-byte write()s to /dev/null, issued from write_burst itself.
  SampledRun sampled = RunSampledWork({"syscalls", "1.5"}, {"LIMPWATCH_SAMPLE_HZ=500"});
  SegmentCleanup cleanup(sampled.name);
  const shm::SampleSnapshot& samples = sampled.snapshot.samples;
  if ((samples.flags & shm::kSamplesIncludeKernel) == 0) {
    GTEST_SKIP() << "the kernel refused kernel samples to this process (perf_event_paranoid, no CAP_PERFMON): "
                 << sampled.run.err;
  }
  uint64_t kernel = SamplesOfKind(sampled.snapshot, shm::ImageKind::kKernel);
  EXPECT_GE(kernel, samples.samples_total * 3 / 10) << DescribeSamples(sampled.snapshot);
  bool write_path = false;
  for (const auto& function : samples.functions) {
    if (function.image_kind != shm::ImageKind::kKernel) continue;
    EXPECT_EQ(function.image, "[kernel]") << function.name;
    EXPECT_EQ(function.name_hash, shm::FunctionNameHash(function.name));
    if (function.name.find("write") != std::string::npos && function.samples > 0) write_path = true;
  }
  EXPECT_TRUE(write_path) << DescribeSamples(sampled.snapshot);
  // The callchain names the user function the kernel worked for.
  ASSERT_NE(samples.flags & shm::kSamplesHaveCallchains, 0u);
  const shm::SampledFunctionRecord* burst = Sampled(sampled.snapshot, "write_burst");
  ASSERT_NE(burst, nullptr) << DescribeSamples(sampled.snapshot);
  EXPECT_GE(burst->kernel_samples, kernel * 8 / 10) << DescribeSamples(sampled.snapshot);
}

TEST(SamplerTest, LoadingTheKernelsSymbolsLeavesTheProgramsMallocAlone) {
  // glibc raises its mmap threshold to the size of any large mapped block the
  // process frees. The kernel's symbol table, grown in the heap, did that: a
  // server's own 1 MiB buffers then stopped being mapped, and it ran faster
  // traced than untraced.
  SampledRun sampled = RunSampledWork({"malloc_threshold", "1.0"}, {"LIMPWATCH_SAMPLE_HZ=500"});
  SegmentCleanup cleanup(sampled.name);
  if ((sampled.snapshot.samples.flags & shm::kSamplesIncludeKernel) == 0) {
    GTEST_SKIP() << "the kernel refused kernel samples to this process: " << sampled.run.err;
  }
  // Kernel functions named: the symbols were loaded, before the malloc.
  ASSERT_GT(SamplesOfKind(sampled.snapshot, shm::ImageKind::kKernel), 0u) << DescribeSamples(sampled.snapshot);
  EXPECT_NE(sampled.run.out.find("large malloc mapped: 1"), std::string::npos) << sampled.run.out << sampled.run.err;
}

TEST(SamplerTest, SystemWideOptionAddsTheNodeKernelProfile) {
  if (geteuid() != 0) GTEST_SKIP() << "LIMPWATCH_SAMPLE_SYSTEM needs root";
  SampledRun sampled = RunSampledWork({"syscalls", "1"}, {"LIMPWATCH_SAMPLE_SYSTEM=1"});
  SegmentCleanup cleanup(sampled.name);
  const shm::SampleSnapshot& samples = sampled.snapshot.samples;
  EXPECT_EQ(sampled.run.err, "");
  ASSERT_NE(samples.flags & shm::kSamplesNodeProfile, 0u) << DescribeSamples(sampled.snapshot);
  EXPECT_GT(samples.node_samples_total, 0u);
  uint64_t node = 0;
  for (const auto& function : samples.functions) {
    if (function.image_kind != shm::ImageKind::kNodeKernel) continue;
    node += function.samples;
    EXPECT_EQ(function.name_hash, shm::NodeKernelFunctionHash(function.name)) << function.name;
    EXPECT_NE(function.name_hash, shm::FunctionNameHash(function.name));
  }
  // This program's write()s are kernel work on the node too.
  EXPECT_GT(node, 0u) << DescribeSamples(sampled.snapshot);
  EXPECT_LE(node + samples.node_samples_idle, samples.node_samples_total);
  // ... and its own kernel samples are still counted apart.
  EXPECT_GT(SamplesOfKind(sampled.snapshot, shm::ImageKind::kKernel), 0u);
}

TEST(SamplerTest, SystemWideOptionIsRefusedToNonRootWithOneLine) {
  if (geteuid() != 0) GTEST_SKIP() << "the test drops root to run a server as nobody";
  SampledRun sampled = RunSampledWork({"split", "0.3"}, {"LIMPWATCH_SAMPLE_SYSTEM=1"}, {"--as-nobody"});
  SegmentCleanup cleanup(sampled.name);
  EXPECT_EQ(sampled.snapshot.samples.flags & shm::kSamplesNodeProfile, 0u);
  EXPECT_EQ(SamplesOfKind(sampled.snapshot, shm::ImageKind::kNodeKernel), 0u);
  int refusals = 0;
  for (const auto& line : Lines(sampled.run.err)) {
    if (line.find("LIMPWATCH_SAMPLE_SYSTEM=1 refused") != std::string::npos) {
      ++refusals;
      EXPECT_NE(line.find("needs root"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(refusals, 1) << sampled.run.err;
  // The process itself is still sampled.
  EXPECT_GT(sampled.snapshot.samples.samples_total, 0u) << sampled.run.err;
}

TEST(SamplerTest, BadRateIsReportedAndTheDefaultUsed) {
  SampledRun sampled = RunSampledWork({"split", "0.2"}, {"LIMPWATCH_SAMPLE_HZ=fast"});
  SegmentCleanup cleanup(sampled.name);
  std::vector<std::string> lines = Lines(sampled.run.err);
  ASSERT_EQ(lines.size(), 1u) << sampled.run.err;
  EXPECT_NE(lines[0].find("LIMPWATCH_SAMPLE_HZ='fast'"), std::string::npos) << lines[0];
  EXPECT_GT(sampled.snapshot.samples.rate_hz, 0u);
  EXPECT_GT(sampled.snapshot.samples.samples_total, 0u);
}

}  // namespace
}  // namespace limpwatch::testing
