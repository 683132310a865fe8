// `limpwatch export`: recordings of a synthetic cluster written with the
// recording writer, exported by the real binary, and its output read back.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
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

// The synthetic functions the recordings name; the others stay unnamed, as
// functions whose names a server never resolved.
const std::vector<std::string> kNamedFunctions = {
    "storage_pread_block", "storage_pwrite_block", "storage_fsync_object", "net_recv_message", "net_send_message",
    "net_poll_loop",       "flow_copy_buffer",     "job_wait_for_work",    analyzer::kRunqueueWaitName};

// One recording per server, its names recorded after its first ticks (as a
// server resolves them while it runs).
std::vector<std::string> WriteRecordings(const Cluster& cluster, const TempDir& directory, const std::string& prefix) {
  std::vector<analyzer::FunctionName> names;
  for (const std::string& name : kNamedFunctions) names.push_back({shm::FunctionNameHash(name), name});
  std::vector<std::string> paths;
  for (const auto& [server, ticks] : cluster) {
    std::string path = directory.File(prefix + server + ".lwtrace");
    std::string error;
    auto writer = analyzer::TraceWriter::Open(path, server, 1000, &error);
    EXPECT_TRUE(writer) << error;
    if (!writer) continue;
    for (size_t index = 0; index < ticks.size(); ++index) {
      if (index == 3) writer->Append(analyzer::TraceRecordType::kNames, analyzer::EncodeNamesRecord(names));
      EXPECT_TRUE(writer->Append(analyzer::TraceRecordType::kTick, analyzer::EncodeTickRecord(ticks[index])));
    }
    EXPECT_TRUE(writer->Flush());
    paths.push_back(path);
  }
  return paths;
}

CliRun RunCli(const std::string& arguments, const TempDir& directory) {
  return testing::RunCaptured(std::string(LIMPWATCH_CLI_PATH) + " " + arguments, directory.File("stdout"),
                              directory.File("stderr"));
}

Cluster FourServers(uint32_t seed) {
  testing::SyntheticCluster cluster;
  cluster.servers = 4;
  cluster.ticks = 60;
  cluster.seed = seed;
  return testing::GenerateCluster(cluster);
}

const Json* FindArg(const Json& event, const std::string& key) {
  if (!event.Has("args")) return nullptr;
  for (const auto& [name, value] : event["args"].members) {
    if (name == key) return &value;
  }
  return nullptr;
}

// Every event of the document with the given phase.
std::vector<const Json*> EventsOfPhase(const Json& trace, const std::string& phase) {
  std::vector<const Json*> events;
  for (const Json& event : trace["traceEvents"].items) {
    if (event["ph"].AsString() == phase) events.push_back(&event);
  }
  return events;
}

// server name -> its pid, from the process_name events.
std::map<std::string, uint64_t> ProcessNames(const Json& trace) {
  std::map<std::string, uint64_t> pids;
  for (const Json* event : EventsOfPhase(trace, "M")) {
    if ((*event)["name"].AsString() != "process_name") continue;
    EXPECT_TRUE(pids.emplace((*event)["args"]["name"].AsString(), (*event)["pid"].AsUint()).second)
        << "a server named twice";
  }
  return pids;
}

// (pid, ts) -> the counter event `name` there.
std::map<std::pair<uint64_t, uint64_t>, const Json*> Counters(const Json& trace, const std::string& name) {
  std::map<std::pair<uint64_t, uint64_t>, const Json*> counters;
  for (const Json* event : EventsOfPhase(trace, "C")) {
    if ((*event)["name"].AsString() != name) continue;
    EXPECT_TRUE(counters.emplace(std::make_pair((*event)["pid"].AsUint(), (*event)["ts"].AsUint()), event).second)
        << name << " twice at one time";
  }
  return counters;
}

double SelfMs(const TickRecord& tick, const std::string& name) {
  for (const auto& function : tick.functions) {
    if (function.name_hash == shm::FunctionNameHash(name)) return function.self_ms;
  }
  return 0;
}

TEST(ExportTest, ChromeTraceHasAProcessPerServerAndEachTicksCountersAtItsEnd) {
  TempDir directory;
  Cluster cluster = FourServers(7);
  CliRun run = RunCli("export --no-alarms" + Join(WriteRecordings(cluster, directory, "a-")), directory);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  Json trace;
  ASSERT_TRUE(ParseJson(run.out, &trace));
  EXPECT_EQ(trace["displayTimeUnit"].AsString(), "ms");
  std::map<std::string, uint64_t> pids = ProcessNames(trace);
  ASSERT_EQ(pids.size(), 4u);
  std::set<uint64_t> distinct;
  for (const auto& [server, pid] : pids) distinct.insert(pid);
  EXPECT_EQ(distinct.size(), 4u) << "one process per server";

  auto io = Counters(trace, "io service ms");
  auto calls = Counters(trace, "io calls");
  auto cpu = Counters(trace, "cpu ms");
  auto features = Counters(trace, "resource features ms");
  auto functions = Counters(trace, "function self ms");
  EXPECT_EQ(io.size(), 4u * 60u);
  for (const auto& [server, ticks] : cluster) {
    ASSERT_TRUE(pids.count(server)) << server;
    uint64_t pid = pids[server];
    for (const TickRecord& tick : ticks) {
      SCOPED_TRACE(server + " tick " + std::to_string(tick.tick));
      auto at = std::make_pair(pid, tick.unix_ms * 1000);  // microseconds
      ASSERT_TRUE(io.count(at));
      EXPECT_EQ(FindArg(*io[at], "dread")->AsDouble(), tick.io.dread_ms);
      EXPECT_EQ(FindArg(*io[at], "nsread")->AsDouble(), tick.io.nsread_ms);
      ASSERT_TRUE(calls.count(at));
      EXPECT_EQ(FindArg(*calls[at], "file reads")->AsUint(), tick.io.file_reads);
      ASSERT_TRUE(cpu.count(at));
      EXPECT_EQ(FindArg(*cpu[at], "cpu")->AsDouble(), tick.node_stats.cpu_ms);
      ASSERT_TRUE(features.count(at));
      EXPECT_EQ(FindArg(*features[at], analyzer::kRunqueueWaitName)->AsDouble(),
                SelfMs(tick, analyzer::kRunqueueWaitName));
      // The busiest functions have a track of their own, named though the names came after the first ticks.
      ASSERT_TRUE(functions.count(at));
      const Json* polling = FindArg(*functions[at], "net_poll_loop");
      ASSERT_NE(polling, nullptr);
      EXPECT_EQ(polling->AsDouble(), SelfMs(tick, "net_poll_loop"));
      // The resource features are not functions: they have their counter.
      EXPECT_EQ(FindArg(*functions[at], analyzer::kRunqueueWaitName), nullptr);
      EXPECT_LE((*functions[at])["args"].members.size(), 16u);
    }
  }
}

TEST(ExportTest, AlarmsAreTheOnesDiagnoseRaisesAndAFaultFreeClusterHasNone) {
  TempDir directory;
  CliRun quiet = RunCli("export" + Join(WriteRecordings(FourServers(42), directory, "quiet-")), directory);
  ASSERT_EQ(quiet.status, 0) << quiet.err;
  Json quiet_trace;
  ASSERT_TRUE(ParseJson(quiet.out, &quiet_trace));
  EXPECT_TRUE(EventsOfPhase(quiet_trace, "i").empty()) << quiet.out.substr(0, 2000);

  testing::SyntheticCluster slow;
  slow.servers = 4;
  slow.ticks = 60;
  slow.seed = 42;
  slow.fault = testing::SyntheticFault::kDiskTime;
  slow.faulty_server = 2;
  slow.fault_start = 20;
  std::string files = Join(WriteRecordings(testing::GenerateCluster(slow), directory, "slow-"));
  CliRun diagnosed = RunCli("diagnose --json" + files, directory);
  ASSERT_EQ(diagnosed.status, 0) << diagnosed.err;
  std::vector<uint64_t> diagnosed_times;
  std::istringstream lines(diagnosed.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("{\"kind\":", 0) != 0) continue;
    Json alarm;
    ASSERT_TRUE(ParseJson(line, &alarm));
    diagnosed_times.push_back(alarm["time_unix_ms"].AsUint());
  }
  ASSERT_FALSE(diagnosed_times.empty()) << "the slow disk raises no alarm: " << diagnosed.out;

  CliRun exported = RunCli("export" + files, directory);
  ASSERT_EQ(exported.status, 0) << exported.err;
  Json trace;
  ASSERT_TRUE(ParseJson(exported.out, &trace));
  std::map<std::string, uint64_t> pids = ProcessNames(trace);
  std::vector<uint64_t> exported_times;
  for (const Json* event : EventsOfPhase(trace, "i")) {
    exported_times.push_back((*event)["ts"].AsUint() / 1000);
    EXPECT_EQ((*event)["s"].AsString(), "p");
    EXPECT_EQ((*event)["pid"].AsUint(), pids["server2"]);
    EXPECT_EQ(FindArg(*event, "server")->AsString(), "server2");
    EXPECT_EQ(FindArg(*event, "resource")->AsString(), "disk");
    EXPECT_FALSE(FindArg(*event, "metrics")->AsString().empty());
    EXPECT_FALSE((*event)["args"]["functions"].items.empty());
  }
  EXPECT_EQ(exported_times, diagnosed_times);

  CliRun without = RunCli("export --no-alarms" + files, directory);
  ASSERT_EQ(without.status, 0) << without.err;
  Json bare;
  ASSERT_TRUE(ParseJson(without.out, &bare));
  EXPECT_TRUE(EventsOfPhase(bare, "i").empty());
}

TEST(ExportTest, FoldedStacksAddUpToTheRecordedSamples) {
  TempDir directory;
  Cluster cluster = FourServers(9);
  std::string output = directory.File("stacks.folded");
  CliRun run = RunCli("export --format folded -o " + output + Join(WriteRecordings(cluster, directory, "f-")), directory);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "") << "the stacks go to the file";
  EXPECT_FALSE(std::ifstream(output + ".partial").good());
  std::map<std::string, uint64_t> by_server;
  std::map<std::string, uint64_t> by_stack;
  std::istringstream lines(ReadFile(output));
  for (std::string line; std::getline(lines, line);) {
    size_t space = line.rfind(' ');
    ASSERT_NE(space, std::string::npos) << line;
    std::string stack = line.substr(0, space);
    ASSERT_EQ(std::count(stack.begin(), stack.end(), ';'), 1) << line;
    uint64_t count = std::stoull(line.substr(space + 1));
    EXPECT_GT(count, 0u) << line;
    EXPECT_TRUE(by_stack.emplace(stack, count).second) << "a stack twice: " << line;
    by_server[stack.substr(0, stack.find(';'))] += count;
  }
  ASSERT_EQ(by_server.size(), 4u);
  for (const auto& [server, ticks] : cluster) {
    uint64_t samples = 0, flow = 0;
    for (const TickRecord& tick : ticks) {
      for (const auto& function : tick.functions) {
        samples += function.samples;
        if (function.name_hash == shm::FunctionNameHash("flow_copy_buffer")) flow += function.samples;
      }
    }
    EXPECT_EQ(by_server[server], samples) << server;
    EXPECT_EQ(by_stack[server + ";flow_copy_buffer"], flow) << server;
  }
  // An unnamed function is its hash.
  char unnamed[40];
  std::snprintf(unnamed, sizeof unnamed, ";0x%016llx",
                static_cast<unsigned long long>(shm::FunctionNameHash("tcp_recvmsg")));
  EXPECT_TRUE(by_stack.count("server0" + std::string(unnamed)));
}

TEST(ExportTest, ADamagedRecordingSaysSoAndWhatCameBeforeIsExported) {
  TempDir directory;
  Cluster cluster = FourServers(11);
  std::vector<std::string> paths = WriteRecordings(cluster, directory, "d-");
  std::string cut = paths[1];  // server1's
  std::ifstream whole(cut, std::ios::binary | std::ios::ate);
  auto size = whole.tellg();
  whole.close();
  ASSERT_EQ(truncate(cut.c_str(), size - std::streamoff(9)), 0);  // its last tick cut short
  CliRun run = RunCli("export" + Join(paths), directory);
  ASSERT_EQ(run.status, 0) << run.err;
  // One line for the problem (the replay's progress says what it did besides).
  size_t problem_lines = 0;
  std::istringstream err_lines(run.err);
  for (std::string line; std::getline(err_lines, line);) problem_lines += line.rfind("limpwatch: ", 0) == 0;
  EXPECT_EQ(problem_lines, 1u) << run.err;
  EXPECT_NE(run.err.find(cut + ": record "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("truncated payload"), std::string::npos) << run.err;
  Json trace;
  ASSERT_TRUE(ParseJson(run.out, &trace));
  std::map<std::string, uint64_t> pids = ProcessNames(trace);
  std::map<uint64_t, size_t> ticks_of;
  for (const auto& [at, event] : Counters(trace, "io service ms")) ++ticks_of[at.first];
  EXPECT_EQ(ticks_of[pids["server1"]], 59u);
  EXPECT_EQ(ticks_of[pids["server0"]], 60u);
}

TEST(ExportTest, BadInputGivesOneLineAndNoOutputFile) {
  TempDir directory;
  std::vector<std::string> paths = WriteRecordings(FourServers(3), directory, "b-");
  std::string output = directory.File("out.json");
  std::string junk = directory.File("junk.lwtrace");
  std::ofstream(junk) << "this is no recording";
  struct Case {
    std::string arguments;
    int status;
    std::string says;
  };
  for (const Case& bad : std::vector<Case>{
           {Join(paths) + " " + directory.File("missing.lwtrace"), 1, "missing.lwtrace': cannot open"},
           {Join(paths) + " " + junk, 1, "not a limpwatch recording"},
           {"--format svg" + Join(paths), 2, "--format is chrome, folded or folded-flows, not 'svg'"},
           {"--format folded -m " + junk + Join(paths), 2, "--manifest applies to the chrome format"},
           {"", 2, "missing recordings"},
       }) {
    CliRun run = RunCli("export -o " + output + " " + bad.arguments, directory);
    EXPECT_EQ(run.status, bad.status) << bad.arguments << ": " << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_NE(run.err.find(bad.says), std::string::npos) << run.err;
    EXPECT_FALSE(std::ifstream(output).good()) << bad.arguments;
    EXPECT_FALSE(std::ifstream(output + ".partial").good()) << bad.arguments;
  }
  CliRun written = RunCli("export --no-alarms -o " + output + Join(paths), directory);
  ASSERT_EQ(written.status, 0) << written.err;
  Json trace;
  EXPECT_TRUE(ParseJson(ReadFile(output), &trace));
}

// Not a check: writes the large recordings whose export the documentation
// measures, when LIMPWATCH_EXPORT_LARGE names a directory (4 servers, an
// hour of 1 s ticks, 200 functions each).
TEST(ExportTest, LargeRecordingsForMeasurement) {
  const char* where = std::getenv("LIMPWATCH_EXPORT_LARGE");
  if (where == nullptr) {
    GTEST_SKIP() << "LIMPWATCH_EXPORT_LARGE names no directory";
  }
  std::vector<analyzer::FunctionName> names;
  for (int function = 0; function < 200; ++function) {
    std::string name = "pvfs_function_" + std::to_string(function);
    names.push_back({shm::FunctionNameHash(name), name});
  }
  std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.name_hash < b.name_hash; });
  for (int server = 0; server < 4; ++server) {
    std::string node = "server" + std::to_string(server);
    std::string error;
    auto writer = analyzer::TraceWriter::Open(std::string(where) + "/" + node + ".lwtrace", node, 1000, &error);
    ASSERT_TRUE(writer) << error;
    writer->Append(analyzer::TraceRecordType::kNames, analyzer::EncodeNamesRecord(names));
    for (uint64_t second = 0; second < 3600; ++second) {
      TickRecord tick;
      tick.node = node;
      tick.tick = 1'700'000'000 + second;
      tick.unix_ms = (tick.tick + 1) * 1000;
      tick.io.dread_ms = 1 + double((second * 7 + uint64_t(server)) % 13) / 10;
      tick.node_stats.valid = true;
      tick.node_stats.cpu_ms = 100;
      for (size_t function = 0; function < names.size(); ++function) {
        double self_ms = double((second + function * 31) % 97) / 10 * (server == 2 && second >= 1800 ? 5 : 1);
        tick.functions.push_back({names[function].name_hash, 10 + function, self_ms, (second + function) % 5});
      }
      // The writer queues at most 8 MiB: wait for the disk now and then.
      ASSERT_TRUE(writer->Append(analyzer::TraceRecordType::kTick, analyzer::EncodeTickRecord(tick)));
      if (second % 256 == 0) {
        ASSERT_TRUE(writer->Flush());
      }
    }
    ASSERT_TRUE(writer->Flush());
  }
}

}  // namespace
}  // namespace limpwatch
