// `limpwatch compare`: recordings of a synthetic cluster written with the
// recording writer, compared by the real binary.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/synthetic_cluster.h"
#include "limpwatch/analyzer/trace_file.h"
#include "limpwatch/shm/name_hash.h"
#include "peer/temp_dir.h"
#include "support/cli_capture.h"
#include "support/strict_json.h"

namespace limpwatch {
namespace {

using analyzer::TickRecord;
using analyzer::testing::TempDir;
using testing::CliRun;
using testing::Join;
using testing::ReadFile;
using testing::Json;
using testing::ParseJson;
using Cluster = std::map<std::string, std::vector<TickRecord>>;

constexpr char kSlowed[] = "storage_pread_block";
constexpr char kAdded[] = "meta_rebuild_index";

// One recording per server, named as a server names what it resolves.
std::vector<std::string> WriteRecordings(const Cluster& cluster, const TempDir& directory, const std::string& prefix) {
  std::vector<analyzer::FunctionName> names;
  for (const std::string& name : {std::string(kSlowed), std::string(kAdded), std::string("net_poll_loop")}) {
    names.push_back({shm::FunctionNameHash(name), name});
  }
  std::vector<std::string> paths;
  for (const auto& [server, ticks] : cluster) {
    std::string path = directory.File(prefix + server + ".lwtrace");
    std::string error;
    auto writer = analyzer::TraceWriter::Open(path, server, 1000, &error);
    EXPECT_TRUE(writer) << error;
    if (!writer) continue;
    writer->Append(analyzer::TraceRecordType::kNames, analyzer::EncodeNamesRecord(names));
    for (const TickRecord& tick : ticks) {
      EXPECT_TRUE(writer->Append(analyzer::TraceRecordType::kTick, analyzer::EncodeTickRecord(tick)));
    }
    EXPECT_TRUE(writer->Flush());
    paths.push_back(path);
  }
  return paths;
}

CliRun RunCli(const std::string& arguments, const TempDir& directory) {
  return testing::RunCaptured(std::string(LIMPWATCH_CLI_PATH) + " compare " + arguments, directory.File("stdout"),
                              directory.File("stderr"));
}

// A failure is one line on stderr, "limpwatch: ...", and nothing on stdout.
void ExpectOneLineFailure(const CliRun& run, int status, const std::string& words) {
  EXPECT_EQ(run.status, status) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_EQ(run.err.rfind("limpwatch: ", 0), 0u) << run.err;
  EXPECT_NE(run.err.find(words), std::string::npos) << run.err;
}

// Four healthy servers for a minute; `offset` moves the run later in time.
Cluster FourServers(uint32_t seed, int ticks = 60, uint64_t offset = 0) {
  testing::SyntheticCluster cluster;
  cluster.servers = 4;
  cluster.ticks = ticks;
  cluster.seed = seed;
  cluster.first_tick += offset;
  return testing::GenerateCluster(cluster);
}

// The function's calls take `factor` times longer on every server from tick
// offset `from`: a regression of the code, not a fault of one server.
void SlowDown(Cluster* cluster, const std::string& name, double factor, size_t from = 0) {
  for (auto& [server, ticks] : *cluster) {
    for (size_t t = from; t < ticks.size(); ++t) {
      for (auto& function : ticks[t].functions) {
        if (function.name_hash == shm::FunctionNameHash(name)) function.self_ms *= factor;
      }
    }
  }
}

void AddFunction(Cluster* cluster, const std::string& name) {
  for (auto& [server, ticks] : *cluster) {
    for (TickRecord& tick : ticks) {
      tick.functions.push_back({shm::FunctionNameHash(name), 50, 20.0, 0});
      std::sort(tick.functions.begin(), tick.functions.end(),
                [](const auto& a, const auto& b) { return a.name_hash < b.name_hash; });
    }
  }
}

Json CompareJson(const std::string& arguments, const TempDir& directory) {
  CliRun run = RunCli(arguments + " --json", directory);
  EXPECT_EQ(run.status, 0) << run.err;
  Json json;
  EXPECT_TRUE(ParseJson(run.out, &json)) << run.out;
  return json;
}

TEST(CompareTest, PlantedSlowdownOfOneFunctionRanksFirst) {
  TempDir directory;
  Cluster after = FourServers(2, 60, 3600);
  SlowDown(&after, kSlowed, 3.0);
  std::string before_files = Join(WriteRecordings(FourServers(1), directory, "before-"));
  std::string after_files = Join(WriteRecordings(after, directory, "after-"));

  Json json = CompareJson(before_files + " --" + after_files, directory);
  ASSERT_GE(json["mutations"].items.size(), 1u) << "no mutation found";
  const Json& first = json["mutations"][0];
  EXPECT_EQ(first["function"].AsString(), kSlowed);
  EXPECT_EQ(first["kind"].AsString(), "response_time");
  EXPECT_NEAR(first["ratio"].AsDouble(), 3.0, 0.15);
  EXPECT_EQ(first["ticks_before"].AsUint(), 240u);
  EXPECT_EQ(first["ticks_after"].AsUint(), 240u);
  EXPECT_LT(first["p_value"].AsDouble(), 1e-10);
  // 4 servers x 200 calls a second x 0.75 ms, three times as long: about
  // +1,200 ms a second (the load's swing moves the calls by a few percent).
  EXPECT_NEAR(first["contribution_ms_per_s"].AsDouble(), 1200, 150);
  EXPECT_EQ(json["before"]["ticks"].AsUint(), 240u);
  EXPECT_EQ(json["after"]["servers"].items.size(), 4u);

  // The table says the same in its first row.
  CliRun text = RunCli(before_files + " --" + after_files, directory);
  ASSERT_EQ(text.status, 0) << text.err;
  std::istringstream lines(text.out);
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  EXPECT_NE(header.find("MEDIAN BEFORE -> AFTER"), std::string::npos) << text.out;
  EXPECT_EQ(row.find("1  " + std::string(kSlowed)), row.find_first_not_of(' ')) << row;
  EXPECT_NE(row.find("response time"), std::string::npos) << row;
  size_t ratio = row.find(" x");
  ASSERT_NE(ratio, std::string::npos) << row;
  EXPECT_NEAR(std::stod(row.substr(ratio + 2)), 3.0, 0.15) << row;
}

TEST(CompareTest, TwoHealthyRunsOfTheSameWorkloadShowNoMutation) {
  TempDir directory;
  std::string before_files = Join(WriteRecordings(FourServers(11), directory, "before-"));
  std::string after_files = Join(WriteRecordings(FourServers(12, 60, 86400), directory, "after-"));
  Json json = CompareJson(before_files + " --" + after_files, directory);
  EXPECT_EQ(json["mutation_count"].AsUint(), 0u) << json["mutations"].items.size();
  // Not for want of testing: the busy functions were all tested.
  EXPECT_GE(json["functions_tested"].AsUint(), 12u);

  CliRun text = RunCli(before_files + " --" + after_files, directory);
  EXPECT_EQ(text.status, 0);
  EXPECT_EQ(text.out.rfind("compare: no mutation", 0), 0u) << text.out;
}

TEST(CompareTest, FunctionCalledOnlyAfterIsStructural) {
  TempDir directory;
  Cluster after = FourServers(4, 60, 3600);
  AddFunction(&after, kAdded);
  std::string before_files = Join(WriteRecordings(FourServers(3), directory, "before-"));
  std::string after_files = Join(WriteRecordings(after, directory, "after-"));

  Json json = CompareJson(before_files + " --" + after_files, directory);
  ASSERT_EQ(json["mutation_count"].AsUint(), 1u) << json["mutations"].items.size();
  const Json& added = json["mutations"][0];
  EXPECT_EQ(added["function"].AsString(), kAdded);
  EXPECT_EQ(added["kind"].AsString(), "new");
  EXPECT_EQ(added["calls_before"].AsUint(), 0u);
  // 50 calls a tick on each of 4 servers.
  EXPECT_NEAR(added["calls_per_s_after"].AsDouble(), 200.0, 1e-9);
  // Timed in all 240 ticks after and none of the 240 before: by chance
  // about 2^-240 (the presence test's p-value; no KS statistic).
  EXPECT_LT(added["p_value"].AsDouble(), 1e-60);
  EXPECT_EQ(added["ks_statistic"].kind, Json::Kind::kNull);

  // Swapped, the same function vanished.
  Json swapped = CompareJson(after_files + " --" + before_files, directory);
  ASSERT_EQ(swapped["mutation_count"].AsUint(), 1u);
  EXPECT_EQ(swapped["mutations"][0]["kind"].AsString(), "vanished");
  EXPECT_LT(swapped["mutations"][0]["contribution_ms_per_s"].AsDouble(), 0);
}

TEST(CompareTest, AFunctionTimedInAFewTicksOnlyIsChanceNotANewFunction) {
  TempDir directory;
  Cluster after = FourServers(14, 60, 3600);
  // Timed in 2 of the 240 ticks after (a connection set up twice), never before.
  std::vector<TickRecord>& ticks = after.begin()->second;
  for (size_t index : {10u, 40u}) {
    ticks[index].functions.push_back({shm::FunctionNameHash(kAdded), 1, 0.05, 0});
    std::sort(ticks[index].functions.begin(), ticks[index].functions.end(),
              [](const auto& a, const auto& b) { return a.name_hash < b.name_hash; });
  }
  std::string before_files = Join(WriteRecordings(FourServers(13), directory, "before-"));
  std::string after_files = Join(WriteRecordings(after, directory, "after-"));
  Json json = CompareJson(before_files + " --" + after_files, directory);
  EXPECT_EQ(json["mutation_count"].AsUint(), 0u) << json["mutations"][0]["function"].AsString();
}

// Healthy runs on different days, each with its own disk speed: the storage
// read takes 0.8, 1 and 1.25 times as long in the three baseline runs, 1.1
// times in the healthy run compared with them, and 3 times in a regression.
class BaselineRunsTest : public ::testing::Test {
 protected:
  std::string Baseline(const std::vector<double>& factors) {
    std::string files;
    for (size_t run = 0; run < factors.size(); ++run) {
      Cluster cluster = FourServers(20 + uint32_t(run), 60, 3600 * run);
      SlowDown(&cluster, kSlowed, factors[run]);
      files += Join(WriteRecordings(cluster, directory_, "baseline" + std::to_string(run) + "-"));
    }
    return files;
  }
  std::string After(double factor) {
    Cluster cluster = FourServers(30, 60, 86400);
    SlowDown(&cluster, kSlowed, factor);
    return Join(WriteRecordings(cluster, directory_, "after-"));
  }
  TempDir directory_;
};

TEST_F(BaselineRunsTest, OneBaselineRunTakesADifferentDayForAMutation) {
  Json json = CompareJson(Baseline({1.0}) + " --" + After(1.1), directory_);
  EXPECT_EQ(json["baseline_runs"].AsUint(), 1u);
  ASSERT_GE(json["mutation_count"].AsUint(), 1u);
  EXPECT_EQ(json["mutations"][0]["function"].AsString(), kSlowed);
  EXPECT_EQ(json["mutations"][0]["ks_between_baseline_runs"].kind, Json::Kind::kNull);
}

TEST_F(BaselineRunsTest, ADayWithinTheBaselineRunsDifferencesIsNoMutation) {
  Json json = CompareJson(Baseline({0.8, 1.0, 1.25}) + " --" + After(1.1), directory_);
  EXPECT_EQ(json["before"]["runs"].AsUint(), 3u);
  EXPECT_EQ(json["before"]["servers"].items.size(), 4u);
  EXPECT_EQ(json["before"]["ticks"].AsUint(), 3u * 240);
  EXPECT_EQ(json["baseline_runs"].AsUint(), 3u);
  EXPECT_EQ(json["mutation_count"].AsUint(), 0u) << json["mutations"][0]["function"].AsString();
  // Found by the KS test on the pooled runs, and left out as their noise.
  EXPECT_GE(json["within_baseline_noise"].AsUint(), 1u);

  CliRun text = RunCli(Baseline({0.8, 1.0, 1.25}) + " --" + After(1.1), directory_);
  EXPECT_EQ(text.out.rfind("compare: no mutation", 0), 0u) << text.out;
  EXPECT_NE(text.out.find("within the differences between the 3 baseline runs"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("in 3 runs"), std::string::npos) << text.out;
}

TEST_F(BaselineRunsTest, ARegressionBeyondTheBaselineRunsDifferencesRanksFirst) {
  Json json = CompareJson(Baseline({0.8, 1.0, 1.25}) + " --" + After(3.0), directory_);
  ASSERT_GE(json["mutation_count"].AsUint(), 1u);
  const Json& first = json["mutations"][0];
  EXPECT_EQ(first["function"].AsString(), kSlowed);
  EXPECT_GT(first["ks_to_nearest_baseline_run"].AsDouble(), first["ks_between_baseline_runs"].AsDouble());
  EXPECT_GT(first["contribution_ms_per_s"].AsDouble(), first["contribution_between_baseline_runs_ms_per_s"].AsDouble());
}

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

TEST_F(BaselineRunsTest, HtmlPageDrawsEachMutationsDistributionPerBaselineRun) {
  Cluster after = FourServers(31, 60, 86400);
  SlowDown(&after, kSlowed, 3.0);
  AddFunction(&after, kAdded);
  std::string files = Baseline({0.8, 1.0, 1.25}) + " --" + Join(WriteRecordings(after, directory_, "after-"));
  std::string page = directory_.File("compare.html");
  Json json = CompareJson(files + " --html " + page, directory_);  // stdout stays one JSON object
  ASSERT_EQ(json["mutation_count"].AsUint(), 2u);
  std::string html = ReadFile(page);
  ASSERT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u) << html.substr(0, 200);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  EXPECT_EQ(Occurrences(html, "<figure>"), 2u);
  EXPECT_NE(html.find("#1 " + std::string(kSlowed)), std::string::npos);
  // The slowed read: a staircase per baseline run and one for after; the
  // new function: only after.
  EXPECT_EQ(Occurrences(html, "class=\"line before\""), 3u);
  EXPECT_EQ(Occurrences(html, "class=\"line after\""), 2u);
  EXPECT_NE(html.find("in 3 runs"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);

  // A page that cannot be written fails before anything is read, in one line.
  ExpectOneLineFailure(RunCli(files + " --html " + directory_.File("missing/compare.html"), directory_), 1,
                       "missing");
}

TEST(CompareTest, SplitComparesTwoRangesOfTheSameRecordings) {
  TempDir directory;
  Cluster cluster = FourServers(5, 120);
  SlowDown(&cluster, kSlowed, 4.0, 70);
  std::vector<std::string> paths = WriteRecordings(cluster, directory, "run-");
  // The 70th tick's end: ticks 0..69 before, 70..119 after.
  uint64_t split = cluster.begin()->second[69].unix_ms;

  Json json = CompareJson("--split " + std::to_string(split) + Join(paths), directory);
  EXPECT_EQ(json["before"]["ticks"].AsUint(), 4u * 70);
  EXPECT_EQ(json["after"]["ticks"].AsUint(), 4u * 50);
  EXPECT_EQ(json["split_unix_ms"].AsUint(), split);
  ASSERT_GE(json["mutations"].items.size(), 1u);
  EXPECT_EQ(json["mutations"][0]["function"].AsString(), kSlowed);
  EXPECT_NEAR(json["mutations"][0]["ratio"].AsDouble(), 4.0, 0.2);
}

TEST(CompareTest, LimitShortensTheListNotTheCount) {
  TempDir directory;
  Cluster after = FourServers(7, 60, 3600);
  SlowDown(&after, kSlowed, 3.0);
  SlowDown(&after, "net_poll_loop", 1.5);
  AddFunction(&after, kAdded);
  std::string files = Join(WriteRecordings(FourServers(6), directory, "before-")) + " --" +
                      Join(WriteRecordings(after, directory, "after-"));
  Json json = CompareJson(files + " --limit 1", directory);
  EXPECT_EQ(json["mutation_count"].AsUint(), 3u);
  ASSERT_EQ(json["mutations"].items.size(), 1u);
  // The read's +1,200 ms/s before net_poll_loop's 4 x 1000 calls a second,
  // 0.15 ms longer each (+600), and the new function's 4 x 20 ms (+80).
  EXPECT_EQ(json["mutations"][0]["function"].AsString(), kSlowed);
}

TEST(CompareTest, BadInputIsOneLine) {
  TempDir directory;
  std::vector<std::string> paths = WriteRecordings(FourServers(8), directory, "run-");
  std::string missing = directory.File("missing.lwtrace");

  ExpectOneLineFailure(RunCli(paths[0] + " -- " + missing, directory), 1, "missing.lwtrace");
  ExpectOneLineFailure(RunCli(Join(paths), directory), 2, "'--'");
  ExpectOneLineFailure(RunCli(Join(paths) + " --", directory), 2, "no AFTER recordings");
  ExpectOneLineFailure(RunCli("-- " + paths[0], directory), 2, "no BEFORE recordings");
  ExpectOneLineFailure(RunCli(paths[0] + " -- " + paths[1] + " --alpha 2", directory), 2, "--alpha");
  ExpectOneLineFailure(RunCli("--split 1000 " + paths[0] + " -- " + paths[1], directory), 2, "--split");

  // A split before every tick leaves the BEFORE period empty, one after every tick the AFTER.
  ExpectOneLineFailure(RunCli("--split 1000" + Join(paths), directory), 1, "no tick ends at or before");
  ExpectOneLineFailure(RunCli("--split 9999999999999" + Join(paths), directory), 1, "no tick ends after");

  // A recording with a header and no ticks.
  std::string empty = directory.File("empty.lwtrace");
  {
    std::string error;
    auto writer = analyzer::TraceWriter::Open(empty, "server9", 1000, &error);
    ASSERT_TRUE(writer) << error;
    ASSERT_TRUE(writer->Flush());
  }
  ExpectOneLineFailure(RunCli(paths[0] + " -- " + empty, directory), 1, "AFTER recordings hold no tick records");
}

// Not a check: writes the recordings whose comparison the documentation
// measures, when LIMPWATCH_COMPARE_LARGE names a directory: two 10-minute
// runs of 4 servers with 200 functions each, before-*.lwtrace and
// after-*.lwtrace, the second with one function (the eighth by hash) taking
// twice as long.
TEST(CompareTest, LargeRecordingsForMeasurement) {
  const char* where = std::getenv("LIMPWATCH_COMPARE_LARGE");
  if (where == nullptr) {
    GTEST_SKIP() << "LIMPWATCH_COMPARE_LARGE names no directory";
  }
  std::vector<analyzer::FunctionName> names;
  for (int function = 0; function < 200; ++function) {
    std::string name = "pvfs_function_" + std::to_string(function);
    names.push_back({shm::FunctionNameHash(name), name});
  }
  std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.name_hash < b.name_hash; });
  for (const std::string period : {"before", "after"}) {
    for (int server = 0; server < 4; ++server) {
      std::string node = "server" + std::to_string(server);
      std::string error;
      auto writer = analyzer::TraceWriter::Open(std::string(where) + "/" + period + "-" + node + ".lwtrace", node,
                                                1000, &error);
      ASSERT_TRUE(writer) << error;
      writer->Append(analyzer::TraceRecordType::kNames, analyzer::EncodeNamesRecord(names));
      uint64_t first = period == "before" ? 1'700'000'000 : 1'700'086'400;
      for (uint64_t second = 0; second < 600; ++second) {
        TickRecord tick;
        tick.node = node;
        tick.tick = first + second;
        tick.unix_ms = (tick.tick + 1) * 1000;
        for (size_t function = 0; function < names.size(); ++function) {
          bool slowed = period == "after" && function == 7;
          double self_ms = (1 + double((second * 13 + function * 31 + uint64_t(server)) % 97) / 10) * (slowed ? 2 : 1);
          tick.functions.push_back({names[function].name_hash, 10 + function, self_ms, 0});
        }
        ASSERT_TRUE(writer->Append(analyzer::TraceRecordType::kTick, analyzer::EncodeTickRecord(tick)));
        if (second % 256 == 0) {
          ASSERT_TRUE(writer->Flush());
        }
      }
      ASSERT_TRUE(writer->Flush());
    }
  }
}

}  // namespace
}  // namespace limpwatch
