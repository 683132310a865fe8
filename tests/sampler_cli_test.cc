// `limpwatch top --samples` and the sample profile of `limpwatch dump`, on
// segments written by real sampled programs.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <regex>

#include "support/sampled_run.h"

namespace limpwatch::testing {
namespace {

constexpr const char* kCli = LIMPWATCH_CLI_PATH;

CapturedRun Cli(const std::vector<std::string>& args) { return RunCapturing(kCli, args, {}); }

// The row of `function` in a sample table printed by the CLI: its samples and %.
struct PrintedRow {
  bool found = false;
  uint64_t samples = 0;
  double percent = 0;
};

PrintedRow FindRow(const std::string& output, const std::string& application, const std::string& image,
                   const std::string& function) {
  PrintedRow row;
  std::regex pattern("^" + application + " +" + image + " +" + function + " +([0-9]+) +([0-9]+\\.[0-9])( |$)");
  for (const auto& line : Lines(output)) {
    std::smatch match;
    if (std::regex_search(line, match, pattern)) {
      row.found = true;
      row.samples = std::stoull(match[1]);
      row.percent = std::stod(match[2]);
      return row;
    }
  }
  return row;
}

double Percent(uint64_t part, uint64_t whole) { return whole == 0 ? 0 : 100.0 * double(part) / double(whole); }

TEST(SamplerCliTest, DumpPrintsTheProfileAsApplicationImageFunctionSamples) {
  SampledRun sampled = RunSampledWork({"split", "1"}, {});
  SegmentCleanup cleanup(sampled.name);
  CapturedRun dump = Cli({"dump", sampled.name});
  ASSERT_EQ(dump.exit_status, 0) << dump.err;
  const shm::SampleSnapshot& samples = sampled.snapshot.samples;
  EXPECT_NE(dump.out.find("SAMPLES (CPU time per function, since the start)\n"
                          "sampler perf cpu-clock, " +
                          std::to_string(samples.rate_hz) +
                          " Hz per thread of CPU time, kernel samples included, callchains" +
                          ((samples.flags & shm::kSamplesPerCpuEvents) ? ", per-CPU events" : ", per-thread events") +
                          ((samples.flags & shm::kSamplesSharedEvents) ? " shared by the node's traced processes" : "") +
                          "\n"
                          "samples " +
                          std::to_string(samples.samples_total) + "  lost " + std::to_string(samples.samples_lost) +
                          "  unknown " + std::to_string(samples.samples_unknown) + "\n"),
            std::string::npos)
      << dump.out;
  EXPECT_NE(dump.out.find("APPLICATION   IMAGE"), std::string::npos) << dump.out;
  for (const char* function : {"burn_two", "burn_one"}) {
    PrintedRow row = FindRow(dump.out, "sampled_work", "sampled_work", function);
    ASSERT_TRUE(row.found) << function << "\n" << dump.out;
    EXPECT_EQ(row.samples, SamplesOf(sampled.snapshot, function));
    EXPECT_NEAR(row.percent, Percent(row.samples, samples.samples_total), 0.051);
  }
  // The caveat about softirq work is said where the numbers are read.
  EXPECT_NE(dump.out.find("note: kernel work done for this server in softirq context"), std::string::npos);
}

TEST(SamplerCliTest, DumpJsonCarriesSourceRateLossesAndRows) {
  SampledRun sampled = RunSampledWork({"split", "1"}, {"LIMPWATCH_SAMPLE_HZ=300"});
  SegmentCleanup cleanup(sampled.name);
  CapturedRun dump = Cli({"dump", sampled.name, "--json"});
  ASSERT_EQ(dump.exit_status, 0) << dump.err;
  const shm::SampleSnapshot& samples = sampled.snapshot.samples;
  std::smatch match;
  std::regex header(
      "\"samples\": \\{\\s*\"source\": \"perf cpu-clock\",\\s*\"rate_hz\": 300,\\s*\"kernel_included\": true,\\s*"
      "\"callchains\": true,\\s*\"node_profile\": false,\\s*\"events\": \"(per-cpu|per-thread)\",\\s*"
      "\"shared_events\": (true|false),\\s*\"samples\": ([0-9]+),\\s*\"lost\": ([0-9]+),\\s*"
      "\"unknown\": ([0-9]+),");
  ASSERT_TRUE(std::regex_search(dump.out, match, header)) << dump.out;
  EXPECT_EQ(match[1], (samples.flags & shm::kSamplesPerCpuEvents) ? "per-cpu" : "per-thread");
  EXPECT_EQ(match[2], (samples.flags & shm::kSamplesSharedEvents) ? "true" : "false");
  EXPECT_EQ(std::stoull(match[3]), samples.samples_total);
  EXPECT_EQ(std::stoull(match[4]), samples.samples_lost);
  EXPECT_EQ(std::stoull(match[5]), samples.samples_unknown);
  std::regex row(
      "\\{\\s*\"application\": \"sampled_work\",\\s*\"image\": \"sampled_work\",\\s*\"image_kind\": "
      "\"executable\",\\s*\"function\": \"burn_two\",\\s*\"name_hash\": \"[0-9a-f]{16}\",\\s*\"samples\": "
      "([0-9]+),\\s*\"kernel_samples\": ([0-9]+),\\s*\"percent\": ([0-9.]+)\\s*\\}");
  ASSERT_TRUE(std::regex_search(dump.out, match, row)) << dump.out;
  const shm::SampledFunctionRecord* two = Sampled(sampled.snapshot, "burn_two");
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(std::stoull(match[1]), two->samples);
  EXPECT_EQ(std::stoull(match[2]), two->kernel_samples);
  EXPECT_NEAR(std::stod(match[3]), Percent(two->samples, samples.samples_total), 1e-6);
}

TEST(SamplerCliTest, TopSamplesShowsTheIntervalProfile) {
  std::string name = UniqueSegmentName("sampler-top");
  SegmentCleanup cleanup(name);
  int out = -1;
  // 1000 Hz: enough samples in one interval for its shares to be stable.
  pid_t pid = StartProgram(TestProgram("sampled_work"), {"spin"},
                           {"LIMPWATCH_NAME=" + name, "LIMPWATCH_SAMPLE_HZ=1000"}, &out);
  ASSERT_GT(pid, 0);
  EXPECT_EQ(ReadLine(out), "ready " + std::to_string(pid));
  CapturedRun top = Cli({"top", name, "--samples", "-n", "1", "-d", "1.5"});
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  close(out);
  ASSERT_EQ(top.exit_status, 0) << top.err;
  EXPECT_NE(top.out.find("sampler perf cpu-clock, 1000 Hz per thread of CPU time"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("note: kernel work done for this server in softirq context"), std::string::npos);
  PrintedRow two = FindRow(top.out, "sampled_work", "sampled_work", "burn_two");
  PrintedRow one = FindRow(top.out, "sampled_work", "sampled_work", "burn_one");
  ASSERT_TRUE(two.found && one.found) << top.out;
  // One interval of a 2:1 loop: burn_two takes near 67 % of the loop's samples. The share of all samples
  // is lower by whatever else of the program's the interval holds (its kernel time, its start-up).
  EXPECT_NEAR(Percent(two.samples, two.samples + one.samples), 66.7, 10) << top.out;
  std::smatch match;
  ASSERT_TRUE(std::regex_search(top.out, match, std::regex("\nsamples ([0-9]+)  lost ([0-9]+)"))) << top.out;
  uint64_t total = std::stoull(match[1]);
  EXPECT_GE(total, two.samples + one.samples);
  EXPECT_GE(two.samples + one.samples, total / 2) << top.out;
  EXPECT_NEAR(two.percent, Percent(two.samples, total), 0.051);
  EXPECT_NEAR(one.percent, Percent(one.samples, total), 0.051);
}

TEST(SamplerCliTest, SamplerOffIsSaidSo) {
  SampledRun sampled = RunSampledWork({"split", "0.2"}, {"LIMPWATCH_SAMPLE_HZ=0"});
  SegmentCleanup cleanup(sampled.name);
  CapturedRun dump = Cli({"dump", sampled.name});
  ASSERT_EQ(dump.exit_status, 0) << dump.err;
  EXPECT_NE(dump.out.find("sampler off (LIMPWATCH_SAMPLE_HZ=0, or refused: see the program's log)\nsamples 0"),
            std::string::npos)
      << dump.out;
  EXPECT_NE(dump.out.find("(no samples)"), std::string::npos);
}

TEST(SamplerCliTest, NodeKernelProfileIsPrintedApart) {
  if (geteuid() != 0) GTEST_SKIP() << "LIMPWATCH_SAMPLE_SYSTEM needs root";
  SampledRun sampled = RunSampledWork({"syscalls", "1"}, {"LIMPWATCH_SAMPLE_SYSTEM=1"});
  SegmentCleanup cleanup(sampled.name);
  CapturedRun dump = Cli({"dump", sampled.name});
  ASSERT_EQ(dump.exit_status, 0) << dump.err;
  EXPECT_NE(dump.out.find(", node kernel profile, per-"), std::string::npos) << dump.out;
  EXPECT_EQ(dump.out.find("note: kernel work done for this server in softirq context"), std::string::npos);
  size_t node = dump.out.find("NODE KERNEL PROFILE (all CPUs, any task)  samples " +
                              std::to_string(sampled.snapshot.samples.node_samples_total) + "  idle " +
                              std::to_string(sampled.snapshot.samples.node_samples_idle));
  ASSERT_NE(node, std::string::npos) << dump.out;
  EXPECT_TRUE(std::regex_search(dump.out.substr(node), std::regex("\n\\(node\\) +\\[kernel\\] +[a-z_]")))
      << dump.out.substr(node);
}

}  // namespace
}  // namespace limpwatch::testing
