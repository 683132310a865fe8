// Recordings (trace files), CSV time series, and the offline commands that
// read them: train, diagnose, alarms.
#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <unistd.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "analyzer/synthetic_cluster.h"
#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/analyzer/trace_file.h"
#include "limpwatch/shm/name_hash.h"
#include "limpwatch/shm/segment.h"
#include "peer/temp_dir.h"

namespace limpwatch::analyzer {
namespace {

struct CommandResult {
  int status = -1;
  std::string output;
};

CommandResult RunCli(const std::string& arguments) {
  CommandResult result;
  std::string command = std::string(LIMPWATCH_CLI_PATH) + " " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  char buffer[4096];
  size_t count;
  while ((count = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, count);
  int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// Writes every server's synthetic ticks as one recording per server.
std::vector<std::string> WriteRecordings(const limpwatch::testing::SyntheticCluster& cluster, const testing::TempDir& directory,
                                         const std::string& prefix) {
  std::vector<std::string> paths;
  NameBook names = limpwatch::testing::SyntheticNames();
  std::vector<FunctionName> name_list;
  for (const char* name : {"storage_pread_block", "storage_pwrite_block", "storage_fsync_object", "net_recv_message",
                           "net_send_message", "net_poll_loop", "flow_copy_buffer"}) {
    name_list.push_back({shm::FunctionNameHash(name), name});
  }
  for (const auto& [server, ticks] : limpwatch::testing::GenerateCluster(cluster)) {
    std::string path = directory.File(prefix + server + ".lwtrace");
    std::string error;
    auto writer = TraceWriter::Open(path, server, 1000, &error);
    EXPECT_TRUE(writer) << error;
    if (!writer) continue;
    writer->Append(TraceRecordType::kNames, EncodeNamesRecord(name_list));
    for (const TickRecord& tick : ticks) EXPECT_TRUE(writer->Append(TraceRecordType::kTick, EncodeTickRecord(tick)));
    EXPECT_TRUE(writer->Flush());
    paths.push_back(path);
  }
  return paths;
}

TEST(TraceFileTest, TicksRoundTripThroughTheFile) {
  testing::TempDir directory;
  limpwatch::testing::SyntheticCluster cluster;
  cluster.servers = 2;
  cluster.ticks = 50;
  auto paths = WriteRecordings(cluster, directory, "rt-");
  ASSERT_EQ(paths.size(), 2u);
  Trace trace;
  std::string error;
  ASSERT_TRUE(ReadTrace(paths[0], &trace, &error)) << error;
  EXPECT_TRUE(trace.problems.empty());
  EXPECT_EQ(trace.node, "server0");
  EXPECT_EQ(trace.tick_ms, 1000u);
  auto expected = limpwatch::testing::GenerateCluster(cluster).at("server0");
  ASSERT_EQ(trace.ticks.size(), expected.size());
  for (size_t index = 0; index < expected.size(); ++index) {
    EXPECT_EQ(trace.ticks[index].tick, expected[index].tick);
    ASSERT_EQ(trace.ticks[index].functions.size(), expected[index].functions.size());
    EXPECT_EQ(trace.ticks[index].functions[0].self_ms, expected[index].functions[0].self_ms);
    EXPECT_EQ(trace.ticks[index].io.dread_ms, expected[index].io.dread_ms);
  }
  EXPECT_EQ(trace.names.size(), 7u);
}

TEST(TraceFileTest, CorruptRecordIsSkippedAndATruncatedTailEndsTheRead) {
  testing::TempDir directory;
  limpwatch::testing::SyntheticCluster cluster;
  cluster.servers = 1;
  cluster.ticks = 20;
  std::string path = WriteRecordings(cluster, directory, "bad-").front();
  {
    // Flip a byte inside the first tick record's payload (the names record comes first).
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    std::streamoff names_record = 0;
    {
      std::ifstream reader(path, std::ios::binary);
      reader.seekg(kTraceHeaderSize + 4);
      uint32_t length = 0;
      reader.read(reinterpret_cast<char*>(&length), 4);
      names_record = kTraceRecordHeaderSize + length;
    }
    std::streamoff target = kTraceHeaderSize + names_record + kTraceRecordHeaderSize + 20;
    file.seekg(target);
    char byte = 0;
    file.read(&byte, 1);
    byte ^= 0x5a;
    file.seekp(target);
    file.write(&byte, 1);
  }
  // And cut the last record short.
  std::ifstream whole(path, std::ios::binary | std::ios::ate);
  auto size = whole.tellg();
  whole.close();
  ASSERT_EQ(truncate(path.c_str(), size - std::streamoff(7)), 0);

  Trace trace;
  std::string error;
  ASSERT_TRUE(ReadTrace(path, &trace, &error)) << error;
  EXPECT_EQ(trace.ticks.size(), 20u - 2u);  // the corrupted one and the cut one
  ASSERT_EQ(trace.problems.size(), 2u);
  EXPECT_NE(trace.problems[0].find("CRC mismatch"), std::string::npos) << trace.problems[0];
  EXPECT_NE(trace.problems[1].find("truncated"), std::string::npos) << trace.problems[1];
}

TEST(TraceFileTest, TheRecordReaderYieldsWhatTheWholeFileReadGives) {
  testing::TempDir directory;
  limpwatch::testing::SyntheticCluster cluster;
  cluster.servers = 1;
  cluster.ticks = 30;
  std::string path = WriteRecordings(cluster, directory, "reader-").front();
  {
    // Damage the middle: a names record of an unknown type, then a CRC mismatch.
    std::string error;
    auto writer = TraceWriter::Open(path, "server0", 1000, &error);
    ASSERT_TRUE(writer) << error;
    writer->Append(static_cast<TraceRecordType>(77), {1, 2, 3});
    writer->Append(TraceRecordType::kNames, EncodeNamesRecord({{0x1234, "late_name"}}));
    TickRecord late;
    late.node = "server0";
    late.tick = 99;
    late.functions = {{0x1234, 5, 2.5, 3}};
    writer->Append(TraceRecordType::kTick, EncodeTickRecord(late));
    ASSERT_TRUE(writer->Flush());
  }
  std::ifstream whole(path, std::ios::binary | std::ios::ate);
  auto size = whole.tellg();
  whole.close();
  ASSERT_EQ(truncate(path.c_str(), size - std::streamoff(3)), 0);  // the late tick cut short

  Trace trace;
  std::string error;
  ASSERT_TRUE(ReadTrace(path, &trace, &error)) << error;
  auto reader = TraceReader::Open(path, &error);
  ASSERT_TRUE(reader) << error;
  EXPECT_EQ(reader->node(), "server0");
  EXPECT_EQ(reader->tick_ms(), 1000u);
  std::vector<TickRecord> ticks;
  std::vector<FunctionName> names;
  TickRecord tick;
  std::vector<FunctionName> record_names;
  for (TraceReader::Item item; (item = reader->Next(&tick, &record_names)) != TraceReader::Item::kEnd;) {
    if (item == TraceReader::Item::kTick) ticks.push_back(tick);
    if (item == TraceReader::Item::kNames) names.insert(names.end(), record_names.begin(), record_names.end());
  }
  EXPECT_EQ(reader->Next(&tick, &record_names), TraceReader::Item::kEnd) << "the end stays the end";
  ASSERT_EQ(ticks.size(), 30u);
  ASSERT_EQ(ticks.size(), trace.ticks.size());
  for (size_t index = 0; index < ticks.size(); ++index) {
    EXPECT_EQ(ticks[index].tick, trace.ticks[index].tick);
    EXPECT_EQ(ticks[index].unix_ms, trace.ticks[index].unix_ms);
    ASSERT_EQ(ticks[index].functions.size(), trace.ticks[index].functions.size());
    for (size_t function = 0; function < ticks[index].functions.size(); ++function) {
      EXPECT_EQ(ticks[index].functions[function].name_hash, trace.ticks[index].functions[function].name_hash);
      EXPECT_EQ(ticks[index].functions[function].self_ms, trace.ticks[index].functions[function].self_ms);
      EXPECT_EQ(ticks[index].functions[function].samples, trace.ticks[index].functions[function].samples);
    }
    EXPECT_EQ(ticks[index].io.dread_ms, trace.ticks[index].io.dread_ms);
    EXPECT_EQ(ticks[index].node_stats.cpu_ms, trace.ticks[index].node_stats.cpu_ms);
  }
  ASSERT_EQ(names.size(), 8u);  // the 7 first, then the late one
  EXPECT_EQ(names.back().name, "late_name");
  ASSERT_EQ(trace.names.size(), names.size());
  EXPECT_EQ(trace.names.back().name, "late_name");
  EXPECT_EQ(reader->problems(), trace.problems);
  ASSERT_EQ(trace.problems.size(), 2u);
  EXPECT_NE(trace.problems[0].find("unknown record type 77, skipped"), std::string::npos) << trace.problems[0];
  EXPECT_NE(trace.problems[1].find("truncated payload"), std::string::npos) << trace.problems[1];
  // The problem names the record and where it starts.
  EXPECT_EQ(trace.problems[1].rfind(path + ": record 34 at offset ", 0), 0u) << trace.problems[1];
}

TEST(TraceFileTest, NotARecordingOrAnotherVersionIsRefusedInOneLine) {
  testing::TempDir directory;
  std::string path = directory.File("junk.lwtrace");
  std::ofstream(path) << "this is not a recording at all, not even close";
  Trace trace;
  std::string error;
  EXPECT_FALSE(ReadTrace(path, &trace, &error));
  EXPECT_NE(error.find("bad magic"), std::string::npos);
  std::vector<uint8_t> header = EncodeTraceHeader("x", 1000);
  header[8] = 9;  // major version 9
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(header.data()), header.size());
  EXPECT_FALSE(ReadTrace(path, &trace, &error));
  EXPECT_NE(error.find("version 9." + std::to_string(analyzer::kTraceVersionMinor)), std::string::npos) << error;
  EXPECT_FALSE(ReadTrace(directory.File("missing"), &trace, &error));
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

TEST(TraceFileTest, WriterWorksWithAndWithoutIoUring) {
  testing::TempDir directory;
  for (const char* setting : {"1", "0"}) {
    setenv("LIMPWATCH_IO_URING", setting, 1);
    std::string path = directory.File(std::string("w") + setting);
    std::string error;
    auto writer = TraceWriter::Open(path, "node", 500, &error);
    ASSERT_TRUE(writer) << error;
    EXPECT_EQ(writer->uses_io_uring(), std::string(setting) == "1");
    TickRecord tick;
    tick.node = "node";
    for (uint64_t t = 1; t <= 200; ++t) {
      tick.tick = t;
      ASSERT_TRUE(writer->Append(TraceRecordType::kTick, EncodeTickRecord(tick)));
    }
    EXPECT_TRUE(writer->Flush());
    writer.reset();
    Trace trace;
    ASSERT_TRUE(ReadTrace(path, &trace, &error)) << error;
    EXPECT_EQ(trace.ticks.size(), 200u);
    EXPECT_EQ(trace.ticks.back().tick, 200u);
    EXPECT_EQ(trace.tick_ms, 500u);
  }
  unsetenv("LIMPWATCH_IO_URING");
}

// A run of four synthetic servers, 60 s long.
limpwatch::testing::SyntheticCluster FourServerRun(uint32_t seed) {
  limpwatch::testing::SyntheticCluster run;
  run.servers = 4;
  run.ticks = 60;
  run.seed = seed;
  return run;
}

// Five servers, 120 s, server1's disk slow from the 60th second.
limpwatch::testing::SyntheticCluster SlowDiskRun(uint32_t seed) {
  limpwatch::testing::SyntheticCluster run;
  run.servers = 5;
  run.ticks = 120;
  run.seed = seed;
  run.fault = limpwatch::testing::SyntheticFault::kDiskTime;
  run.faulty_server = 1;
  run.fault_start = 60;
  return run;
}

std::string WriteTestManifest(const testing::TempDir& directory) {
  std::string manifest = directory.File("manifest");
  std::ofstream(manifest) << "# test manifest\nstorage_* disk\nnet_* network\n";
  return manifest;
}

TEST(OfflineCommandsTest, TrainThenDiagnoseRecordings) {
  testing::TempDir directory;
  limpwatch::testing::SyntheticCluster training;
  training.servers = 5;
  training.ticks = 120;
  training.seed = 21;
  std::string files;
  for (const auto& path : WriteRecordings(training, directory, "train-")) files += " " + path;
  std::string thresholds = directory.File("thresholds");
  CommandResult trained = RunCli("train" + files + " -o " + thresholds);
  ASSERT_EQ(trained.status, 0) << trained.output;
  EXPECT_NE(trained.output.find("server3 time "), std::string::npos) << trained.output;
  // The synthetic servers lose packets now and then; the seed rule leaves
  // losses to its default rule (no threshold line), the calibrated rule
  // learns their noise like any other metric's.
  EXPECT_FALSE(std::regex_search(trained.output, std::regex(" loss [0-9]"))) << trained.output;
  EXPECT_NE(trained.output.find("* loss spread "), std::string::npos) << trained.output;

  std::string faulty_files;
  for (const auto& path : WriteRecordings(SlowDiskRun(22), directory, "faulty-")) faulty_files += " " + path;
  std::string manifest = WriteTestManifest(directory);
  CommandResult diagnosed = RunCli("diagnose --json -t " + thresholds + " -m " + manifest + faulty_files);
  ASSERT_EQ(diagnosed.status, 0) << diagnosed.output;
  EXPECT_NE(diagnosed.output.find("\"server\":\"server1\""), std::string::npos) << diagnosed.output;
  EXPECT_NE(diagnosed.output.find("\"resource\":\"disk\""), std::string::npos) << diagnosed.output;
  EXPECT_EQ(diagnosed.output.find("\"server\":\"server0\""), std::string::npos) << diagnosed.output;
}

// The rpca detector needs no thresholds: the same faulty run, untrained.
TEST(OfflineCommandsTest, DiagnoseRpcaIndictsTheSlowDiskUntrained) {
  testing::TempDir directory;
  std::string files;
  for (const auto& path : WriteRecordings(SlowDiskRun(22), directory, "faulty-")) files += " " + path;
  std::string manifest = WriteTestManifest(directory);
  CommandResult diagnosed = RunCli("diagnose --rpca --json -m " + manifest + files);
  ASSERT_EQ(diagnosed.status, 0) << diagnosed.output;
  EXPECT_NE(diagnosed.output.find("\"server\":\"server1\""), std::string::npos) << diagnosed.output;
  EXPECT_NE(diagnosed.output.find("\"resource\":\"disk\""), std::string::npos) << diagnosed.output;
  EXPECT_NE(diagnosed.output.find("\"metrics\":[\"rpca\"]"), std::string::npos) << diagnosed.output;
  for (const char* other : {"server0", "server2", "server3", "server4"}) {
    EXPECT_EQ(diagnosed.output.find(std::string("\"server\":\"") + other + "\""), std::string::npos)
        << diagnosed.output;
  }
  // Options of peer comparison are refused, in one line.
  CommandResult refused = RunCli("diagnose --rpca --rule seed" + files);
  EXPECT_EQ(refused.status, 2);
  EXPECT_EQ(std::count(refused.output.begin(), refused.output.end(), '\n'), 1) << refused.output;
}

// Each recording of a server starts it again: its first windows are its
// start-up, which never alarms, so neither trains. Two runs back to back, the
// second with a disk slow for its first seconds on one server: the trained
// thresholds are those of two quiet runs, and the diagnosis stays silent.
TEST(OfflineCommandsTest, EachRunsStartUpIsLeftOutOfTrainingAndDiagnosis) {
  testing::TempDir directory;
  limpwatch::testing::SyntheticCluster first = FourServerRun(41);
  limpwatch::testing::SyntheticCluster quiet = FourServerRun(42);
  quiet.first_tick = first.first_tick + first.ticks;  // started right after the first
  limpwatch::testing::SyntheticCluster starting_slowly = quiet;
  starting_slowly.fault = limpwatch::testing::SyntheticFault::kDiskTime;
  starting_slowly.faulty_server = 2;
  starting_slowly.fault_start = 0;
  starting_slowly.fault_end = 5;
  std::string quiet_runs, slow_start_runs;
  for (const auto& path : WriteRecordings(first, directory, "a-")) {
    quiet_runs += " " + path;
    slow_start_runs += " " + path;
  }
  for (const auto& path : WriteRecordings(quiet, directory, "b-")) quiet_runs += " " + path;
  for (const auto& path : WriteRecordings(starting_slowly, directory, "c-")) slow_start_runs += " " + path;
  auto dread_threshold = [&](const std::string& runs, const std::string& name) {
    CommandResult trained = RunCli("train --pooled" + runs + " -o " + directory.File(name));
    EXPECT_EQ(trained.status, 0) << trained.output;
    size_t at = trained.output.find("* dread ");
    return at == std::string::npos ? -1.0 : std::stod(trained.output.substr(at + 8));
  };
  double quiet_threshold = dread_threshold(quiet_runs, "quiet");
  double slow_start_threshold = dread_threshold(slow_start_runs, "slow-start");
  EXPECT_GT(quiet_threshold, 0);
  EXPECT_LT(quiet_threshold, 1.0);  // the slow start scores 2.5 ms a read over its peers
  EXPECT_EQ(slow_start_threshold, quiet_threshold);

  CommandResult diagnosed = RunCli("diagnose --json" + slow_start_runs);
  ASSERT_EQ(diagnosed.status, 0) << diagnosed.output;
  EXPECT_EQ(diagnosed.output.find("\"kind\":\"anomaly\""), std::string::npos) << diagnosed.output;
  // The same slow disk later in the run, and lasting, is no start-up.
  limpwatch::testing::SyntheticCluster slow_later = starting_slowly;
  slow_later.fault_start = 20;
  slow_later.fault_end = 60;
  std::string slow_later_runs;
  for (const auto& path : WriteRecordings(first, directory, "a-")) slow_later_runs += " " + path;
  for (const auto& path : WriteRecordings(slow_later, directory, "d-")) slow_later_runs += " " + path;
  CommandResult found = RunCli("diagnose --json" + slow_later_runs);
  ASSERT_EQ(found.status, 0) << found.output;
  EXPECT_NE(found.output.find("\"server\":\"server2\""), std::string::npos) << found.output;
}

TEST(OfflineCommandsTest, TrainingReadsRunsInAnyOrderAndCanPool) {
  testing::TempDir directory;
  limpwatch::testing::SyntheticCluster first = FourServerRun(31);
  limpwatch::testing::SyntheticCluster second = FourServerRun(32);
  second.first_tick = first.first_tick + 1000;  // a later run of the same servers
  std::string in_order, reversed;
  for (const auto& path : WriteRecordings(first, directory, "a-")) in_order += " " + path;
  for (const auto& path : WriteRecordings(second, directory, "b-")) {
    in_order += " " + path;
    reversed = " " + path + reversed;
  }
  for (const auto& path : WriteRecordings(first, directory, "a-")) reversed += " " + path;
  CommandResult forward = RunCli("train" + in_order + " -o " + directory.File("forward"));
  CommandResult backward = RunCli("train" + reversed + " -o " + directory.File("backward"));
  ASSERT_EQ(forward.status, 0) << forward.output;
  ASSERT_EQ(backward.status, 0) << backward.output;
  // Both runs were read whatever the order of the files: the same windows, the same thresholds.
  auto windows_of = [](const std::string& output) { return std::stoi(output.substr(output.find(" over ") + 6)); };
  EXPECT_EQ(windows_of(forward.output), windows_of(backward.output)) << forward.output << backward.output;
  auto thresholds_of = [](const std::string& path) {
    std::ifstream file(path);
    std::string line, kept;
    while (std::getline(file, line)) {
      if (!line.empty() && line[0] != '#') kept += line + "\n";
    }
    return kept;
  };
  EXPECT_FALSE(thresholds_of(directory.File("forward")).empty());
  EXPECT_EQ(thresholds_of(directory.File("forward")), thresholds_of(directory.File("backward")));
  std::string first_only;
  for (const auto& path : WriteRecordings(first, directory, "a-")) first_only += " " + path;
  CommandResult alone = RunCli("train" + first_only + " -o " + directory.File("alone"));
  ASSERT_EQ(alone.status, 0) << alone.output;
  EXPECT_GT(windows_of(forward.output), windows_of(alone.output)) << forward.output;

  CommandResult pooled = RunCli("train --pooled" + in_order + " -o " + directory.File("pooled"));
  ASSERT_EQ(pooled.status, 0) << pooled.output;
  std::ifstream file(directory.File("pooled"));
  std::string line;
  int lines = 0;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    // One threshold per metric, for every server; a usual profile ratio is a
    // server's own.
    if (line.find(" usual ") == std::string::npos) {
      EXPECT_EQ(line.rfind("* ", 0), 0u) << line;
    }
    ++lines;
  }
  EXPECT_GT(lines, 0);
}

TEST(OfflineCommandsTest, DiagnoseReadsPeerTimeSeriesFromCsv) {
  testing::TempDir directory;
  std::string path = directory.File("peers.csv");
  {
    std::ofstream csv(path);
    csv << "timestamp,peer,read_latency_ms,write_latency_ms,queue_depth\n";
    for (int second = 0; second < 60; ++second) {
      for (int peer = 0; peer < 5; ++peer) {
        double wobble = 1.0 + 0.05 * ((second * 7 + peer * 3) % 5 - 2);
        double read = 2.0 * wobble, write = 3.0 * wobble, queue = 4.0 * wobble;
        if (peer == 4 && second >= 30) read *= 8;  // one peer's reads slow down
        csv << 1700000000 + second << ",peer" << peer << "," << read << "," << write << "," << queue << "\n";
      }
    }
    csv << "1700000099,peer0,not-a-number,1,1\n";
  }
  CommandResult result = RunCli("diagnose " + path);
  ASSERT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("server peer4"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("read_latency_ms"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("server peer0 "), std::string::npos) << result.output;
  // A cell that is no number is a missing value, said once for its column.
  EXPECT_NE(result.output.find("column 'read_latency_ms': 1 of 301 cells have no value"), std::string::npos)
      << result.output;
  // The seed rule reads the same file as distances.
  CommandResult seed = RunCli("diagnose --rule seed " + path);
  ASSERT_EQ(seed.status, 0) << seed.output;
  EXPECT_NE(seed.output.find("server peer4"), std::string::npos) << seed.output;
}

TEST(OfflineCommandsTest, BadInputGivesOneLineAndAFailureStatus) {
  testing::TempDir directory;
  std::string junk = directory.File("junk.lwtrace");
  std::ofstream(junk) << "garbage";
  CommandResult result = RunCli("diagnose " + junk);
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << result.output;
  EXPECT_NE(result.output.find("bad magic"), std::string::npos);
  result = RunCli("train " + junk);
  EXPECT_EQ(result.status, 2);  // no -o
  result = RunCli("diagnose " + directory.File("missing.csv"));
  EXPECT_EQ(result.status, 1);
  std::string bad_csv = directory.File("bad.csv");
  std::ofstream(bad_csv) << "time,host\n1,a\n";
  result = RunCli("diagnose " + bad_csv);
  EXPECT_EQ(result.status, 1);
  EXPECT_NE(result.output.find("the header needs a timestamp, a peer and at least one metric"), std::string::npos)
      << result.output;
  std::ofstream(bad_csv) << "time,host,latency\nyesterday,a,2\n";
  result = RunCli("diagnose " + bad_csv);
  EXPECT_EQ(result.status, 1);
  EXPECT_NE(result.output.find("no usable rows"), std::string::npos) << result.output;
}

TEST(AlarmRingTest, PublishedAlarmsAreReadBackInOrderAndOldOnesRollOff) {
  shm::OwnerInfo owner;
  owner.name = "alarmtest";
  owner.pid = getpid();
  shm::Geometry geometry;
  geometry.alarm_capacity = 4;
  std::string object = shm::SegmentObjectName("alarmtest" + std::to_string(getpid()), getpid());
  std::string error;
  auto writer = shm::SegmentWriter::Create(object, geometry, owner, &error);
  ASSERT_TRUE(writer) << error;
  for (int index = 1; index <= 6; ++index) {
    Alarm alarm;
    alarm.server = "server" + std::to_string(index);
    alarm.metrics = {"time", "dread"};
    alarm.resource = shm::Resource::kDisk;
    alarm.score = index * 10;
    alarm.threshold = 5;
    alarm.time_unix_ms = 1000 * index;
    alarm.top_functions = {{1, 0xabc, "f", 1.0, shm::Resource::kDisk}};
    PublishAlarm(writer->view(), alarm);
  }
  uint64_t last = 0;
  auto alarms = ReadAlarmRing(writer->view(), 0, &last);
  ASSERT_EQ(alarms.size(), 4u);  // the ring holds 4: alarms 3..6
  EXPECT_EQ(alarms.front().server, "server3");
  EXPECT_EQ(alarms.back().server, "server6");
  EXPECT_EQ(alarms.back().metrics, "time,dread");
  EXPECT_EQ(alarms.back().top_function_hashes, std::vector<uint64_t>{0xabc});
  EXPECT_EQ(last, 6u);
  EXPECT_TRUE(ReadAlarmRing(writer->view(), last, &last).empty());
  CommandResult listed = RunCli("alarms " + object + " --json");
  EXPECT_EQ(listed.status, 0) << listed.output;
  EXPECT_NE(listed.output.find("\"server\":\"server6\""), std::string::npos) << listed.output;
  EXPECT_EQ(listed.output.find("agreeing"), std::string::npos) << "no agreement recorded, none printed";

  // An alarm with its agreement, brought up to date in the ring: both views print the newest.
  Alarm held;
  held.server = "server7";
  held.resource = shm::Resource::kDisk;
  held.agreeing = {"server1"};
  held.analyzers = 4;
  uint64_t sequence = PublishAlarm(writer->view(), held);
  ASSERT_TRUE(UpdateAlarmAgreement(writer->view(), sequence, 3, 4));
  CommandResult text = RunCli("alarms " + object);
  EXPECT_NE(text.output.find("server server7  resource disk"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("held by 3 of 4 analyzers\n"), std::string::npos) << text.output;
  CommandResult json = RunCli("alarms " + object + " --json");
  EXPECT_NE(json.output.find("\"agreeing\":3,\"analyzers\":4"), std::string::npos) << json.output;
  writer->Remove();
}


// A CSV as exports write it: quoted header, 15 s samples, NA cells, a
// throughput column; one peer 2x slower from its second hour.
std::string WriteExport(testing::TempDir& directory) {
  std::string path = directory.File("export.csv");
  std::ofstream csv(path);
  csv << "\"timestamp\",\"drive\",\"latency_ms\",\"iops\"\n";
  std::mt19937 random(17);
  std::lognormal_distribution<double> noise(0.0, 0.2);
  for (int sample = 0; sample < 4 * 60 * 6; ++sample) {
    for (int drive = 0; drive < 8; ++drive) {
      double latency = 8.0 * noise(random) * (drive == 5 && sample >= 4 * 60 * 2 ? 2.0 : 1.0);
      csv << 1700000000 + sample * 15 << ",\"sd" << char('a' + drive) << "\",";
      if (sample % 97 == drive) {
        csv << "NA";
      } else {
        csv << latency;
      }
      csv << "," << 200.0 * noise(random) << "\n";
    }
  }
  return path;
}

TEST(OfflineCommandsTest, DiagnoseEndsWithAVerdictPerPeer) {
  testing::TempDir directory;
  std::string path = WriteExport(directory);
  CommandResult result = RunCli("diagnose " + path);
  ASSERT_EQ(result.status, 0) << result.output;
  // The throughput column explains; it is never a symptom.
  EXPECT_NE(result.output.find("column 'iops' is taken as a load"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("ALARM anomaly: server sdf limps"), std::string::npos) << result.output;
  // One alarm for its one episode, not one every window of it.
  size_t alarms = 0;
  for (size_t at = result.output.find("ALARM "); at != std::string::npos; at = result.output.find("ALARM ", at + 1)) {
    ++alarms;
  }
  EXPECT_EQ(alarms, 1u) << result.output;
  std::istringstream lines(result.output);
  std::string line;
  int rows = 0;
  bool header = false;
  while (std::getline(lines, line)) {
    if (line.rfind("PEER ", 0) == 0) {
      header = true;
      EXPECT_NE(line.find("VERDICT"), std::string::npos);
      EXPECT_NE(line.find("FIRST INDICTED"), std::string::npos);
      continue;
    }
    if (!header || line.rfind("sd", 0) != 0) continue;
    ++rows;
    bool limping = line.find(" limping ") != std::string::npos;
    EXPECT_EQ(limping, line.rfind("sdf ", 0) == 0) << line;
    if (limping) {
      // Its median ratio to its peers over the whole export (2x for two thirds of it).
      size_t at = line.find("latency_ms ");
      ASSERT_NE(at, std::string::npos) << line;
      EXPECT_GT(std::stod(line.substr(at + 11)), 1.5) << line;
      // First indicted minutes after it slowed (1700007200: 2023-11-15T00:13:20Z).
      EXPECT_NE(line.find("2023-11-15T00:1"), std::string::npos) << line;
    }
    EXPECT_NE(line.find(" (load)"), std::string::npos) << line;  // iops, shown as the load it is
  }
  EXPECT_EQ(rows, 8);
  EXPECT_NE(result.output.find("8 peers, a sample every 15 s (from the timestamps)"), std::string::npos) << result.output;

  CommandResult json = RunCli("diagnose --json " + path);
  ASSERT_EQ(json.status, 0) << json.output;
  EXPECT_NE(json.output.find("{\"peer\":\"sdf\",\"verdict\":\"limping\""), std::string::npos) << json.output;
  EXPECT_NE(json.output.find("{\"peer\":\"sda\",\"verdict\":\"healthy\""), std::string::npos) << json.output;
  EXPECT_NE(json.output.find("\"iops\":{\"median_ratio\":"), std::string::npos) << json.output;
}

TEST(OfflineCommandsTest, SettingsOutOfRangeAreUsageErrors) {
  testing::TempDir directory;
  std::string path = WriteExport(directory);
  for (const char* bad : {"--budget 0", "--budget x", "--tick 0", "--tick -15", "--rule none", "--load nosuch",
                          "--symptom nosuch", "--thresholds " LIMPWATCH_CLI_PATH}) {
    CommandResult result = RunCli(std::string("diagnose ") + bad + " " + path);
    EXPECT_EQ(result.status, 2) << bad << ": " << result.output;
    // One line for the problem (after the file's own warnings, when the
    // columns had to be read to tell).
    size_t usage = result.output.find("(usage: ");
    ASSERT_NE(usage, std::string::npos) << result.output;
    EXPECT_EQ(result.output.find('\n', usage), result.output.size() - 1) << result.output;
  }
  setenv("LIMPWATCH_ANALYZE_K", "0", 1);
  CommandResult result = RunCli("diagnose " + path);
  unsetenv("LIMPWATCH_ANALYZE_K");
  EXPECT_EQ(result.status, 2) << result.output;
  EXPECT_NE(result.output.find("LIMPWATCH_ANALYZE_K"), std::string::npos) << result.output;
  CommandResult loads = RunCli("diagnose --load iops,latency_ms " + path);
  EXPECT_EQ(loads.status, 2) << loads.output;  // nothing left to judge
  EXPECT_NE(loads.output.find("every column is a load"), std::string::npos) << loads.output;
  // Named a symptom, the throughput column is compared, not guessed a load.
  CommandResult symptom = RunCli("diagnose --symptom iops " + path);
  EXPECT_EQ(symptom.status, 0) << symptom.output;
  EXPECT_EQ(symptom.output.find("taken as a load"), std::string::npos) << symptom.output;
}

}  // namespace
}  // namespace limpwatch::analyzer
