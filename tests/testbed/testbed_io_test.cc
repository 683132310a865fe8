// The test-bed file service end to end: real servers on loopback started by
// the launcher, the real client, real files; data round-trips byte for byte,
// files land where the layout says, the five workloads run and report, and
// each server's limpwatch segment shows its layers at work.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <thread>

#include "testbed/testbed_cluster.h"

namespace limpwatch::testing {
namespace {

std::string WriteRandomFile(const std::string& path, size_t size, uint32_t seed) {
  std::mt19937 random(seed);
  std::string bytes(size, '\0');
  for (auto& byte : bytes) byte = static_cast<char>(random());
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return bytes;
}

// Bstream files under a server's storage, name -> size.
std::map<std::string, uintmax_t> BstreamsOf(const std::string& storage) {
  std::map<std::string, uintmax_t> bstreams;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(storage + "/bstreams", error)) {
    if (entry.path().extension() == ".bstream") bstreams[entry.path().filename()] = entry.file_size();
  }
  return bstreams;
}

// "0x0001000000000002" -> "0001000000000002.bstream"
std::string BstreamName(const std::string& handle_text) { return handle_text.substr(2) + ".bstream"; }

struct StatResult {
  uint64_t size = 0;
  int metadata_server = -1;
  std::vector<std::pair<std::string, int>> datafiles;  // handle text, server
};

StatResult ParseStat(const std::string& line) {
  StatResult stat;
  std::smatch match;
  if (std::regex_search(line, match, std::regex("\"size\":([0-9]+)"))) stat.size = std::stoull(match[1]);
  if (std::regex_search(line, match, std::regex("\"metadata_server\":([0-9]+)"))) {
    stat.metadata_server = std::stoi(match[1]);
  }
  std::regex datafile("\"handle\":\"(0x[0-9a-f]+)\",\"server\":([0-9]+)");
  for (auto found = std::sregex_iterator(line.begin(), line.end(), datafile); found != std::sregex_iterator();
       ++found) {
    stat.datafiles.emplace_back((*found)[1], std::stoi((*found)[2]));
  }
  return stat;
}

TEST(TestbedIoTest, StripedFileRoundTripsByteForByte) {
  TestbedCluster cluster(4, {"--stripe-kib", "64", "--flow-buffer-kib", "256"});
  ASSERT_TRUE(cluster.started()) << cluster.start_output();
  std::string local_in = cluster.dir() + "/in.bin";
  std::string local_out = cluster.dir() + "/out.bin";
  // Not a multiple of the stripe, nor of 4 KiB: the tail takes the buffered path.
  std::string data = WriteRandomFile(local_in, 5 * 1024 * 1024 + 12345, 7);

  CommandOutput put = cluster.Client({"put", local_in, "striped"});
  ASSERT_EQ(put.exit_status, 0) << put.output;
  CommandOutput get = cluster.Client({"get", "striped", local_out});
  ASSERT_EQ(get.exit_status, 0) << get.output;
  std::string back = ReadFile(local_out);
  ASSERT_EQ(back.size(), data.size());
  EXPECT_TRUE(back == data) << "the bytes read back differ from the bytes written";

  // Striped over all four servers, one datafile each, holding the file between them.
  CommandOutput stat = cluster.Client({"stat", "striped"});
  ASSERT_EQ(stat.exit_status, 0) << stat.output;
  StatResult layout = ParseStat(stat.EventLine("stat"));
  EXPECT_EQ(layout.size, data.size());
  ASSERT_EQ(layout.datafiles.size(), 4u) << stat.output;
  std::set<int> servers;
  uintmax_t stored = 0;
  for (const auto& [handle, server] : layout.datafiles) {
    servers.insert(server);
    auto bstreams = BstreamsOf(cluster.storage(server));
    ASSERT_TRUE(bstreams.count(BstreamName(handle))) << handle << " is not on server " << server;
    stored += bstreams[BstreamName(handle)];
  }
  EXPECT_EQ(servers.size(), 4u);
  EXPECT_EQ(stored, data.size());

  CommandOutput removed = cluster.Client({"rm", "striped"});
  EXPECT_EQ(removed.exit_status, 0) << removed.output;
  for (int server = 0; server < 4; ++server) EXPECT_TRUE(BstreamsOf(cluster.storage(server)).empty());
}

TEST(TestbedIoTest, SmallFilesLandOnSingleServers) {
  TestbedCluster cluster(3, {"--stripe-kib", "64"});
  ASSERT_TRUE(cluster.started()) << cluster.start_output();
  std::set<int> servers_used;
  for (int i = 0; i < 9; ++i) {
    std::string name = "small" + std::to_string(i);
    std::string local = cluster.dir() + "/" + name;
    std::string data = WriteRandomFile(local, 100 + 2500 * static_cast<size_t>(i), static_cast<uint32_t>(i));
    CommandOutput put = cluster.Client({"put", local, name, "--one-server"});
    ASSERT_EQ(put.exit_status, 0) << put.output;
    StatResult layout = ParseStat(cluster.Client({"stat", name}).EventLine("stat"));
    ASSERT_EQ(layout.datafiles.size(), 1u) << name;
    int server = layout.datafiles[0].second;
    EXPECT_EQ(server, layout.metadata_server) << name << ": data and metadata on one server";
    servers_used.insert(server);
    // The bytes are on that server's disk, and on no other.
    for (int other = 0; other < 3; ++other) {
      auto bstreams = BstreamsOf(cluster.storage(other));
      std::string bstream = BstreamName(layout.datafiles[0].first);
      if (other == server) {
        ASSERT_TRUE(bstreams.count(bstream)) << name;
        EXPECT_EQ(bstreams[bstream], data.size()) << name;
      } else {
        EXPECT_FALSE(bstreams.count(bstream)) << name << " also on server " << other;
      }
    }
    CommandOutput get = cluster.Client({"get", name, local + ".back"});
    ASSERT_EQ(get.exit_status, 0) << get.output;
    EXPECT_TRUE(ReadFile(local + ".back") == data) << name;
    EXPECT_EQ(cluster.Client({"rm", name}).exit_status, 0);
  }
  EXPECT_GE(servers_used.size(), 2u) << "names should spread over the servers";

  // The postmark workload: every file it makes lives on one server, and it removes them all.
  CommandOutput postmark =
      cluster.Client({"postmark", "--files", "60", "--transactions", "120", "--max-size", "16384"});
  ASSERT_EQ(postmark.exit_status, 0) << postmark.output;
  std::string done = postmark.EventLine("done");
  EXPECT_NE(done.find("\"status\":\"ok\""), std::string::npos) << done;
  EXPECT_NE(done.find("\"errors\":0"), std::string::npos) << done;
  std::smatch per_server;
  ASSERT_TRUE(std::regex_search(done, per_server, std::regex("\"files_per_server\":\\[([0-9]+),([0-9]+),([0-9]+)\\]")));
  uint64_t created = 0;
  for (int i = 1; i <= 3; ++i) {
    EXPECT_GT(std::stoull(per_server[i]), 0u) << "server " << i - 1 << " got no postmark file";
    created += std::stoull(per_server[i]);
  }
  EXPECT_GE(created, 60u);
  for (int server = 0; server < 3; ++server) EXPECT_TRUE(BstreamsOf(cluster.storage(server)).empty());
}

// `run` exits with its client's status, whenever the client exits: a script
// running a workload and then the next step stops on a failed run only.
TEST(TestbedIoTest, RunExitsWithItsClientsStatus) {
  TestbedCluster cluster(2);
  ASSERT_TRUE(cluster.started()) << cluster.start_output();
  for (int repetition = 0; repetition < 6; ++repetition) {
    CommandOutput run = cluster.Launcher({"run", "ddr", "--", "--size-mib", "4", "--seconds", "0.3"});
    EXPECT_EQ(run.exit_status, 0) << "run " << repetition << ": " << run.output;
  }
  CommandOutput misused = cluster.Launcher({"run", "ddr", "--", "--size-mib", "4", "--no-such-flag", "1"});
  EXPECT_EQ(misused.exit_status, 2) << misused.output;  // the client's usage error
}

TEST(TestbedIoTest, FiveWorkloadsRunAndEveryLayerIsTraced) {
  TestbedCluster cluster(3, {"--stripe-kib", "256", "--flow-buffer-kib", "256"});
  ASSERT_TRUE(cluster.started()) << cluster.start_output();
  struct Workload {
    std::vector<std::string> arguments;
    std::vector<std::string> phases;
  };
  const Workload workloads[] = {
      {{"ddw", "--size-mib", "24", "--seconds", "1.5"}, {"write"}},
      {{"ddr", "--size-mib", "24", "--seconds", "1.5"}, {"prepare", "read"}},
      {{"iozonew", "--size-mib", "12"}, {"write", "rewrite"}},
      {{"iozoner", "--size-mib", "12"}, {"prepare", "read", "reread"}},
      {{"postmark", "--files", "30", "--transactions", "40"}, {"create", "transactions", "delete"}},
  };
  for (const Workload& workload : workloads) {
    CommandOutput run = cluster.Client(workload.arguments);
    const std::string& name = workload.arguments[0];
    ASSERT_EQ(run.exit_status, 0) << name << ": " << run.output;
    std::string done = run.EventLine("done");
    EXPECT_NE(done.find("\"status\":\"ok\""), std::string::npos) << name << ": " << done;
    for (const std::string& phase : workload.phases) {
      EXPECT_NE(done.find("{\"phase\":\"" + phase + "\""), std::string::npos) << name << " lacks phase " << phase;
    }
    if (name == "ddw" || name == "ddr") {
      // --seconds 1.5: at least one full-second progress line that moved bytes.
      bool moved = false;
      for (const std::string& line : run.EventLines("progress")) {
        moved =
            moved || (line.find("\"bytes\":0,") == std::string::npos && line.find("mib_per_s") != std::string::npos);
      }
      EXPECT_TRUE(moved) << name << " printed no per-second throughput: " << run.output;
    }
  }

  // Every server ran every layer: network poll loop, job queue and state
  // machines, flows, the storage threads' bstream I/O and the keyval store.
  const char* layers[] = {
      "limpwatch::testbed::bmi::PollLoop::Run",
      "limpwatch::testbed::bmi::Connection::ReadBulkPayload",
      "limpwatch::testbed::bmi::Connection::OnWritable",
      "limpwatch::testbed::job::JobQueue::Post",
      "limpwatch::testbed::request::RequestStateMachine::Advance",
      "limpwatch::testbed::flow::WriteFlow::Received",
      "limpwatch::testbed::flow::ReadFlow::OnStorageDone",
      "limpwatch::testbed::trove::StoragePool::ExecuteOperation",
      "limpwatch::testbed::trove::BstreamStore::WriteDirect",
      "limpwatch::testbed::trove::BstreamStore::ReadDirect",
      "limpwatch::testbed::trove::KeyvalStore::Commit",
      "limpwatch::testbed::trove::KeyvalStore::SyncLog",
  };
  for (int server = 0; server < 3; ++server) {
    // Names are published by the runtime's service thread; give it a few passes.
    std::vector<std::string> missing;
    for (int attempt = 0; attempt < 30; ++attempt) {
      shm::Snapshot snapshot = cluster.Snapshot(server);
      missing.clear();
      for (const char* layer : layers) {
        uint64_t calls = 0;
        for (const auto& [name, counters] : FunctionsStartingWith(snapshot, layer)) calls += counters.calls;
        if (calls == 0) missing.push_back(layer);
      }
      if (missing.empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(missing.empty()) << cluster.alias(server) << " has no calls of " << missing.front();
  }
}

}  // namespace
}  // namespace limpwatch::testing
