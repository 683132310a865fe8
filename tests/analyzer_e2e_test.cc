// The analyzer end to end: real traced servers on loopback, each with its
// analyzer thread, exchanging summaries over UDP; one limps. Its peers
// indict it online, and `diagnose`'s replay of their recordings gives the
// same verdicts.
#include <gtest/gtest.h>
#include <signal.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/analyzer/cluster_replay.h"
#include "limpwatch/analyzer/trace_file.h"
#include "limpwatch/shm/segment.h"
#include "limpwatch/analyzer/transport_exchange.h"
#include "support/traced_run.h"

namespace limpwatch::testing {
namespace {

constexpr int kServers = 4;
constexpr int kSlowServer = 2;
constexpr int kDaemonServer = 1;  // daemonizes like pvfs2-server: its analyzer must run in the child

struct Cluster {
  // Servers named e2e<pid><tag><index>, their files in a new directory
  // (empty if it could not be made).
  explicit Cluster(char tag) : prefix("e2e" + std::to_string(getpid()) + tag) {
    char pattern[] = "/tmp/limpwatch-e2e-XXXXXX";
    if (mkdtemp(pattern) != nullptr) directory = pattern;
  }
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;
  std::string prefix;
  std::string directory;
  std::vector<pid_t> pids;
  ~Cluster() {
    for (pid_t pid : pids) {
      if (pid > 0 && kill(pid, 0) == 0) kill(pid, SIGKILL);
      if (pid > 0) waitpid(pid, nullptr, WNOHANG);
    }
    for (int index = 0; index < kServers; ++index) RemoveSegmentsNamed(Name(index));
    if (!directory.empty()) std::system(("rm -rf '" + directory + "'").c_str());
  }
  std::string Name(int index) const { return prefix + std::to_string(index); }
  // LIMPWATCH_PEERS for servers on UDP ports base_port, base_port + 1, ...
  std::string Peers(int base_port) const {
    std::string peers;
    for (int index = 0; index < kServers; ++index) {
      peers += (index ? "," : "") + Name(index) + "=127.0.0.1:" + std::to_string(base_port + index);
    }
    return peers;
  }
};

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream file(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(file, line)) lines.push_back(line);
  return lines;
}

// "server window metrics resource" of an alarm, online (JSON line) or offline.
std::string VerdictOf(const analyzer::Alarm& alarm) {
  std::string metrics;
  for (const auto& metric : alarm.metrics) metrics += metric + ",";
  return alarm.server + " " + std::to_string(alarm.window) + " " + metrics + " " +
         analyzer::ResourceName(alarm.resource);
}

std::string JsonField(const std::string& json, const std::string& key) {
  size_t at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return "";
  at += key.size() + 3;
  size_t end = json.find_first_of(",}", at);
  if (json[at] == '[') end = json.find(']', at) + 1;
  return json.substr(at, end - at);
}

TEST(AnalyzerEndToEndTest, PeersIndictTheLimpingServerOnlineAndOfflineAlike) {
  Cluster cluster('s');
  ASSERT_FALSE(cluster.directory.empty());
  int base_port = 20000 + (getpid() % 20000);
  pid_t daemon_pid = -1;
  std::string peers = cluster.Peers(base_port);
  for (int index = 0; index < kServers; ++index) {
    std::vector<std::string> environment{
        "LIMPWATCH_NAME=" + cluster.Name(index),
        "LIMPWATCH_KEEP=1",
        "LIMPWATCH_ANALYZE=1",
        "LIMPWATCH_PEERS=" + peers,
        "LIMPWATCH_RECORD=" + cluster.directory + "/%n.lwtrace",
        "LIMPWATCH_ALARMS=" + cluster.directory + "/%n.alarms",
    };
    // The slow server limps from 45 s on: by then every server's usual
    // profile is learnt (its start-up, then 32 windows), against which the
    // calibrated rule judges profiles.
    std::string factor = index == kSlowServer ? "4" : "1";
    std::vector<std::string> arguments{"75", factor, "45"};
    if (index == kDaemonServer) arguments.push_back("daemon");
    int out = -1;
    pid_t pid = StartProgram(TestProgram("peer_server"), arguments, environment, &out);
    ASSERT_GT(pid, 0);
    if (index == kDaemonServer) {
      int status = 0;
      waitpid(pid, &status, 0);  // the parent exits at once
      std::string line = ReadLine(out);
      ASSERT_EQ(line.rfind("daemon ", 0), 0u) << line;
      pid = std::stoi(line.substr(7));
      daemon_pid = pid;
    }
    close(out);
    cluster.pids.push_back(pid);
  }
  for (pid_t& pid : cluster.pids) {
    if (pid == daemon_pid) {
      // Not our child: wait for it to finish.
      for (int wait = 0; wait < 3000 && kill(pid, 0) == 0; ++wait) usleep(10000);
      EXPECT_NE(kill(pid, 0), 0);
    } else {
      int status = 0;
      waitpid(pid, &status, 0);
      EXPECT_EQ(DescribeWaitStatus(status), "exit 0");
    }
    pid = -1;
  }
  // The daemon's analyzer ran in the daemon, not in the parent that exited.
  bool daemon_reported = false;
  for (const std::string& line : ReadLines(cluster.directory + "/" + cluster.Name(kDaemonServer) + ".alarms")) {
    daemon_reported |= JsonField(line, "reporter") == "\"" + cluster.Name(kDaemonServer) + "\"";
  }
  EXPECT_TRUE(daemon_reported);

  // Online: every healthy peer indicts the slow server, nobody else.
  std::vector<std::string> online;
  for (int index = 0; index < kServers; ++index) {
    for (const std::string& line : ReadLines(cluster.directory + "/" + cluster.Name(index) + ".alarms")) {
      if (JsonField(line, "kind") != "\"anomaly\"") continue;
      EXPECT_EQ(JsonField(line, "server"), "\"" + cluster.Name(kSlowServer) + "\"") << line;
      if (index == 0) {
        std::string metrics = JsonField(line, "metrics");
        std::string verdict = cluster.Name(kSlowServer) + " " + JsonField(line, "window") + " ";
        for (char& c : metrics) c = (c == '"' || c == '[' || c == ']') ? ' ' : c;
        std::istringstream parts(metrics);
        std::string metric, joined;
        while (std::getline(parts, metric, ',')) {
          metric.erase(0, metric.find_first_not_of(' '));
          metric.erase(metric.find_last_not_of(' ') + 1);
          joined += metric + ",";
        }
        std::string resource = JsonField(line, "resource");
        online.push_back(verdict + joined + " " + resource.substr(1, resource.size() - 2));
      }
    }
  }
  ASSERT_FALSE(online.empty()) << "server 0 raised no anomaly alarm";

  // Each analyzer tells its peers the verdicts it holds open: server 0's
  // alarm on the slow server ends held by the healthy analyzers at least, of
  // the four that speak, in its ring and in its alarms file.
  std::string error;
  std::optional<std::string> object = shm::ResolveSegment(cluster.Name(0), &error);
  ASSERT_TRUE(object) << error;
  std::unique_ptr<shm::SegmentReader> reader = shm::SegmentReader::Open(*object, &error);
  ASSERT_TRUE(reader) << error;
  uint64_t last = 0;
  uint32_t most_agreeing = 0;
  for (const analyzer::RingAlarm& alarm : analyzer::ReadAlarmRing(reader->view(), 0, &last)) {
    if (alarm.kind != analyzer::AlarmKind::kAnomaly) continue;
    EXPECT_EQ(alarm.analyzers, uint32_t{kServers}) << alarm.sequence;
    most_agreeing = std::max(most_agreeing, alarm.reporters);
  }
  std::printf("server 0's alarm on the slow server: held by %u of %d analyzers\n", most_agreeing, kServers);
  EXPECT_GE(most_agreeing, uint32_t{kServers - 1});
  bool file_says_who = false;
  for (const std::string& line : ReadLines(cluster.directory + "/" + cluster.Name(0) + ".alarms")) {
    file_says_who |= JsonField(line, "analyzers") == std::to_string(kServers) &&
                     line.find("\"agreeing\":[") != std::string::npos;
  }
  EXPECT_TRUE(file_says_who);

  // Offline: the same analysis over the recordings.
  std::map<std::string, std::vector<analyzer::TickRecord>> ticks;
  analyzer::NameBook names;
  for (int index = 0; index < kServers; ++index) {
    analyzer::Trace trace;
    std::string error;
    ASSERT_TRUE(analyzer::ReadTrace(cluster.directory + "/" + cluster.Name(index) + ".lwtrace", &trace, &error))
        << error;
    EXPECT_TRUE(trace.problems.empty()) << trace.problems.front();
    ticks[trace.node] = trace.ticks;
    names.Add(trace.names);
  }
  analyzer::AnalyzerConfig config;  // the defaults, as online
  analyzer::ReplayResult replay =
      analyzer::ReplayCluster(config, ticks, {}, {}, names, analyzer::WireRoundTrip);
  std::vector<std::string> offline;
  for (const analyzer::Alarm& alarm : replay.alarms) {
    if (alarm.kind == analyzer::AlarmKind::kAnomaly) offline.push_back(VerdictOf(alarm));
  }
  // The online run may stop a window earlier or later than the recordings.
  ASSERT_FALSE(offline.empty());
  EXPECT_EQ(online.front(), offline.front());
  size_t common = std::min(online.size(), offline.size());
  for (size_t index = 0; index < common; ++index) EXPECT_EQ(online[index], offline[index]) << index;
}

// Four identical servers, nothing wrong: nobody is indicted. The servers
// wake every 500 us for a short burst of work, a rhythm per-CPU sampling
// events at a fixed period locked onto, drawing one server several times
// its share of samples for seconds (false "samples" alarms in 3 runs of 5
// before the periods were varied: sampler/period_jitter.h).
TEST(AnalyzerEndToEndTest, IdenticalPeersWithPerCpuSamplingIndictNobody) {
  Cluster cluster('q');
  ASSERT_FALSE(cluster.directory.empty());
  int base_port = 20000 + ((getpid() + kServers) % 20000);
  std::string peers = cluster.Peers(base_port);
  for (int index = 0; index < kServers; ++index) {
    int out = -1;
    cluster.pids.push_back(
        StartProgram(TestProgram("peer_server"), {"16"},
                     {"LIMPWATCH_NAME=" + cluster.Name(index), "LIMPWATCH_ANALYZE=1", "LIMPWATCH_SAMPLE_EVENTS=cpu",
                      "LIMPWATCH_PEERS=" + peers, "LIMPWATCH_ALARMS=" + cluster.directory + "/%n.alarms"},
                     &out));
    ASSERT_GT(cluster.pids.back(), 0);
    close(out);
  }
  for (pid_t& pid : cluster.pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_EQ(DescribeWaitStatus(status), "exit 0");
    pid = -1;
  }
  for (int index = 0; index < kServers; ++index) {
    for (const std::string& line : ReadLines(cluster.directory + "/" + cluster.Name(index) + ".alarms")) {
      ADD_FAILURE() << line;
    }
  }
}

// Another process holds this server's peer port (a predecessor still
// shutting down): the analyzer says so in one line, says it checks the
// server alone, not that no peers were configured, and the server runs on.
TEST(AnalyzerEndToEndTest, APeerPortHeldByAnotherProcessIsReportedAndTheServerRunsOn) {
  int holder = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(holder, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(holder, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  socklen_t length = sizeof address;
  ASSERT_EQ(getsockname(holder, reinterpret_cast<sockaddr*>(&address), &length), 0);
  int port = ntohs(address.sin_port);
  std::string name = UniqueSegmentName("e2e-busy");
  SegmentCleanup cleanup(name);
  std::string log = "/tmp/" + name + ".log";
  std::string peers = name + "=127.0.0.1:" + std::to_string(port) + ",other=127.0.0.1:" + std::to_string(port + 1);
  // Longer than the 5 s the analyzer waits for the port.
  ProgramRun run = RunProgram(TestProgram("peer_server"), {"7"},
                              {"LIMPWATCH_NAME=" + name, "LIMPWATCH_ANALYZE=1", "LIMPWATCH_PEERS=" + peers,
                               "LIMPWATCH_LOG=" + log});
  close(holder);
  std::vector<std::string> lines = ReadLines(log);
  std::remove(log.c_str());
  EXPECT_EQ(run.exit_status, 0);
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  EXPECT_NE(text.find("cannot bind UDP 127.0.0.1:" + std::to_string(port) + ": Address already in use"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("analyzer: no exchange with the peers (the line above says why); checking this server alone"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("no peers configured"), std::string::npos) << text;
}

// The log says, once the analyzer runs, what it compares and with whom; a
// quiet server does not.
TEST(AnalyzerEndToEndTest, TheAnalyzersStartLineSaysWhatItComparesAndWithWhom) {
  for (bool quiet : {false, true}) {
    std::string name = UniqueSegmentName(quiet ? "e2e-quiet" : "e2e-start");
    SegmentCleanup cleanup(name);
    std::string log = "/tmp/" + name + ".log";
    int port = 20000 + ((getpid() + 2 * kServers + (quiet ? 2 : 0)) % 20000);
    std::string peers =
        name + "=127.0.0.1:" + std::to_string(port) + ",quiet-peer=127.0.0.1:" + std::to_string(port + 1);
    std::vector<std::string> environment = {"LIMPWATCH_NAME=" + name, "LIMPWATCH_ANALYZE=1",
                                            "LIMPWATCH_PEERS=" + peers, "LIMPWATCH_LOG=" + log};
    if (quiet) environment.push_back("LIMPWATCH_QUIET=1");
    ProgramRun run = RunProgram(TestProgram("peer_server"), {"3"}, environment);
    std::vector<std::string> lines = ReadLines(log);
    std::remove(log.c_str());
    EXPECT_EQ(run.exit_status, 0);
    std::string start;
    for (const std::string& line : lines) {
      if (line.find("analyzer: '" + name + "' started: ") != std::string::npos) start = line;
    }
    if (quiet) {
      EXPECT_EQ(start, "");
      continue;
    }
    EXPECT_NE(start.find("rule calibrated (at most 1 false alarm per 100 server-days), tick 1000 ms, windows of 4 "
                         "ticks; thresholds: none, untrained defaults; manifest: none; selection: every "
                         "instrumented function; CPU sampling: "),
              std::string::npos)
        << start;
    EXPECT_NE(start.find("; peers: 1 (quiet-peer) over "), std::string::npos) << start;
    EXPECT_NE(start.find("; recording: off; alarms file: none"), std::string::npos) << start;
  }
}

std::string CliOutput(const std::string& arguments) {
  std::string output;
  FILE* pipe = popen((std::string(LIMPWATCH_CLI_PATH) + " " + arguments + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return output;
  char buffer[4096];
  size_t got = 0;
  while ((got = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, got);
  pclose(pipe);
  return output;
}

// Membership that changes: four servers read their peers from a file; one
// is taken out of the file and stopped, a fifth is put in and started. The
// three that stay follow the file: they forget the one that left (no silent
// alarm), hear the one that joined, and nobody raises any alarm.
TEST(AnalyzerEndToEndTest, ServersTakenOutOfAndPutIntoThePeerFileAreFollowedWithoutAnAlarm) {
  Cluster cluster('m');
  ASSERT_FALSE(cluster.directory.empty());
  SegmentCleanup joined_cleanup(cluster.Name(kServers));
  int base_port = 20000 + ((getpid() + 4 * kServers) % 20000);
  std::string file = cluster.directory + "/peers";
  auto write_peers = [&](const std::vector<int>& indexes) {
    std::string staged = file + ".new";
    std::ofstream out(staged);
    for (int index : indexes) out << cluster.Name(index) << "=127.0.0.1:" << base_port + index << "\n";
    out.close();
    ASSERT_EQ(std::rename(staged.c_str(), file.c_str()), 0);
  };
  auto start = [&](int index, const std::string& seconds) {
    int out = -1;
    pid_t pid = StartProgram(TestProgram("peer_server"), {seconds},
                             {"LIMPWATCH_NAME=" + cluster.Name(index), "LIMPWATCH_ANALYZE=1",
                              "LIMPWATCH_PEERS_FILE=" + file, "LIMPWATCH_QUIET=1",
                              "LIMPWATCH_LOG=" + cluster.directory + "/" + cluster.Name(index) + ".log",
                              "LIMPWATCH_ALARMS=" + cluster.directory + "/%n.alarms"},
                             &out);
    close(out);
    return pid;
  };
  write_peers({0, 1, 2, 3});
  for (int index = 0; index < kServers; ++index) {
    cluster.pids.push_back(start(index, "22"));
    ASSERT_GT(cluster.pids.back(), 0);
  }
  usleep(8'000'000);  // past the warm-up: every server has heard the others
  write_peers({0, 1, 2, kServers});
  kill(cluster.pids[3], SIGKILL);
  waitpid(cluster.pids[3], nullptr, 0);
  cluster.pids[3] = -1;
  cluster.pids.push_back(start(kServers, "12"));
  ASSERT_GT(cluster.pids.back(), 0);
  usleep(8'000'000);
  std::string dump = CliOutput("dump " + cluster.Name(0));
  for (pid_t& pid : cluster.pids) {
    if (pid <= 0) continue;
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_EQ(DescribeWaitStatus(status), "exit 0");
    pid = -1;
  }
  for (int index : {0, 1, 2, kServers}) {
    for (const std::string& line : ReadLines(cluster.directory + "/" + cluster.Name(index) + ".alarms")) {
      ADD_FAILURE() << cluster.Name(index) << ": " << line;
    }
  }
  for (int index : {0, 1, 2}) {
    bool followed = false;
    for (const std::string& line : ReadLines(cluster.directory + "/" + cluster.Name(index) + ".log")) {
      followed |= line.find("peers joined: " + cluster.Name(kServers) + "; peers left: " + cluster.Name(3)) !=
                  std::string::npos;
    }
    EXPECT_TRUE(followed) << cluster.Name(index);
  }
  size_t section = dump.find("PEERS (what this server's analyzer hears from them)\n");
  ASSERT_NE(section, std::string::npos) << dump;
  std::string peer_section = dump.substr(section);
  EXPECT_NE(peer_section.find("3 configured;"), std::string::npos) << peer_section;
  std::string joined_row;
  std::istringstream rows(peer_section);
  for (std::string row; std::getline(rows, row);) {
    EXPECT_NE(row.rfind(cluster.Name(3) + " ", 0), 0u) << peer_section;
    if (row.rfind(cluster.Name(kServers) + " ", 0) == 0) joined_row = row;
  }
  EXPECT_FALSE(joined_row.empty()) << peer_section;
  EXPECT_EQ(joined_row.find("never"), std::string::npos) << peer_section;
}

// `dump` and `list` show whether a server's analyzer hears its peers: one
// that runs and one that never started.
TEST(AnalyzerEndToEndTest, DumpAndListShowWhatEachServerHearsFromItsPeers) {
  std::string heard = UniqueSegmentName("e2e-hears"), speaker = UniqueSegmentName("e2e-speaks");
  SegmentCleanup heard_cleanup(heard), speaker_cleanup(speaker);
  int port = 20000 + ((getpid() + 3 * kServers) % 20000);
  std::string peers = heard + "=127.0.0.1:" + std::to_string(port) + "," + speaker + "=127.0.0.1:" +
                      std::to_string(port + 1) + ",absent=127.0.0.1:" + std::to_string(port + 2);
  std::vector<pid_t> pids;
  for (const std::string& name : {heard, speaker}) {
    int out = -1;
    pids.push_back(StartProgram(TestProgram("peer_server"), {"8"},
                                {"LIMPWATCH_NAME=" + name, "LIMPWATCH_ANALYZE=1", "LIMPWATCH_PEERS=" + peers,
                                 "LIMPWATCH_QUIET=1"},
                                &out));
    close(out);
  }
  usleep(4'500'000);
  std::string dump = CliOutput("dump " + heard);
  std::string list = CliOutput("list");
  for (pid_t pid : pids) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  size_t health = dump.find("ANALYZER (in this process)\n");
  ASSERT_NE(health, std::string::npos) << dump;
  std::string health_section = dump.substr(health, dump.find("PEERS", health) - health);
  EXPECT_TRUE(std::regex_search(health_section, std::regex("\nticks +[1-9][0-9]*\n"))) << health_section;
  EXPECT_TRUE(std::regex_search(health_section, std::regex("\nticks failed \\(skipped\\) +0\n"))) << health_section;
  EXPECT_TRUE(std::regex_search(health_section, std::regex("\npeer exchange +(io_uring|plain system calls)\n")))
      << health_section;
  EXPECT_TRUE(std::regex_search(health_section, std::regex("\nrecording +off\n"))) << health_section;
  size_t section = dump.find("PEERS (what this server's analyzer hears from them)\n");
  ASSERT_NE(section, std::string::npos) << dump;
  std::string peer_section = dump.substr(section);
  EXPECT_NE(peer_section.find("2 configured; datagrams received "), std::string::npos) << peer_section;
  EXPECT_EQ(peer_section.find("datagrams received 0,"), std::string::npos) << peer_section;
  std::string speaker_row, absent_row;
  std::istringstream rows(peer_section);
  for (std::string row; std::getline(rows, row);) {
    if (row.rfind(speaker + " ", 0) == 0) speaker_row = row;
    if (row.rfind("absent ", 0) == 0) absent_row = row;
  }
  EXPECT_EQ(speaker_row.find("never"), std::string::npos) << peer_section;
  EXPECT_FALSE(speaker_row.empty()) << peer_section;
  EXPECT_NE(absent_row.find("never"), std::string::npos) << peer_section;
  std::string listed;
  std::istringstream lines(list);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(shm::SegmentObjectName(heard, pids[0])) != std::string::npos) listed = line;
  }
  EXPECT_NE(listed.find(" 1/2 "), std::string::npos) << list;
}

// Three servers: each one's dump shows the scores its analyzer gave it in
// the newest window, per metric against the threshold, among all three.
TEST(AnalyzerEndToEndTest, DumpShowsTheServersOwnScoresAgainstTheirThreshold) {
  std::vector<std::string> names;
  int port = 20000 + ((getpid() + 5 * kServers) % 20000);
  std::string peers;
  for (int index = 0; index < 3; ++index) {
    names.push_back(UniqueSegmentName("e2e-scores" + std::to_string(index)));
    peers += (index ? "," : "") + names.back() + "=127.0.0.1:" + std::to_string(port + index);
  }
  SegmentCleanup first(names[0]), second(names[1]), third(names[2]);
  std::vector<pid_t> pids;
  for (const std::string& name : names) {
    int out = -1;
    pids.push_back(StartProgram(TestProgram("peer_server"), {"30"},
                                {"LIMPWATCH_NAME=" + name, "LIMPWATCH_ANALYZE=1", "LIMPWATCH_PEERS=" + peers,
                                 "LIMPWATCH_QUIET=1"},
                                &out));
    close(out);
  }
  std::string dump;
  for (int second = 0; second < 25; ++second) {
    usleep(1'000'000);
    dump = CliOutput("dump " + names[1]);
    if (dump.find("\nSCORES (") != std::string::npos && dump.find(" among 3 servers\n") != std::string::npos) break;
  }
  std::string json = CliOutput("dump " + names[1] + " --json");
  for (pid_t pid : pids) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  size_t section = dump.find("SCORES (this server against its peers, newest window compared)\n");
  ASSERT_NE(section, std::string::npos) << dump;
  std::string scores = dump.substr(section, dump.find("\nPEERS", section) - section);
  EXPECT_NE(scores.find(" among 3 servers\n"), std::string::npos) << scores;
  // The profile metrics are compared whenever the servers run traced code.
  EXPECT_TRUE(std::regex_search(scores, std::regex("\ntime +[0-9.]+ +[0-9.]+ +[0-9]+ % +[0-9.]+x +[0-9.]+ +"
                                                   "(ok|OVER|warming up) +default rule\n")))
      << scores;
  EXPECT_TRUE(std::regex_search(json, std::regex("\"scores\": \\{\\s*\"window\": [0-9]+,"))) << json;
}

// A server whose shutdown lingers in its own destructors: the analyzer
// stops ticking when exit() starts, not when the runtime's destructors run
// after the program's, and its recording is whole. Before, it ticked on
// through the shutdown, into static objects exit() had destroyed.
TEST(AnalyzerEndToEndTest, TheAnalyzerStopsWhenTheServerStartsToExit) {
  Cluster cluster('x');
  ASSERT_FALSE(cluster.directory.empty());
  std::string name = cluster.Name(0);
  std::string record = cluster.directory + "/" + name + ".lwtrace";
  ProgramRun run = RunProgram(TestProgram("slow_exit"), {"1.5", "1.5"},
                              {"LIMPWATCH_NAME=" + name, "LIMPWATCH_ANALYZE=1", "LIMPWATCH_ANALYZE_TICK_MS=100",
                               "LIMPWATCH_RECORD=" + record});
  ASSERT_EQ(run.exit_status, 0) << run.output;
  ASSERT_EQ(run.output.rfind("exiting ", 0), 0u) << run.output;
  uint64_t exit_started_ms = std::stoull(run.output.substr(8));
  analyzer::Trace trace;
  std::string error;
  ASSERT_TRUE(analyzer::ReadTrace(record, &trace, &error)) << error;
  EXPECT_TRUE(trace.problems.empty()) << trace.problems.front();
  ASSERT_GE(trace.ticks.size(), 5u);
  // A tick already under way when exit() started may end; none may start.
  uint64_t last_tick_ms = trace.ticks.back().unix_ms;
  EXPECT_LE(last_tick_ms, exit_started_ms + 100) << "ticked " << last_tick_ms - exit_started_ms
                                                 << " ms into a 1500 ms shutdown";
  EXPECT_EQ(RemoveSegmentsNamed(name), 0) << "the segment outlived its server";
}

}  // namespace
}  // namespace limpwatch::testing
