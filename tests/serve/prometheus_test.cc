// The operator's view end to end. `limpwatch serve` scraped by a real
// Prometheus: four traced test-bed servers on loopback with their analyzers
// on, a workload, a Prometheus of this test's own (its own port, data
// directory and configuration, with tools/prometheus/limpwatch.rules.yml
// loaded), then a real disk fault on one server; the test asks Prometheus's
// HTTP API until the open alarm's series, and the alert of the rules, name
// the faulty server. Then serve's dashboard in a real browser (headless
// Chromium): its DOM marks the faulty server limping on the disk, and a
// screenshot is kept (dashboard-screenshot.png in the build directory).
//
// Needs the 'prometheus' and 'chromium' packages (skips saying so when one is
// missing), and root with a cgroup v1 blkio hierarchy for the fault (skips
// saying which).
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "serve/prometheus_tools.h"
#include "support/started_program.h"
#include "support/traced_run.h"
#include "testbed/testbed_cluster.h"
#include "serve/loopback_client.h"

extern char** environ;

namespace limpwatch::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kServers = 4;
constexpr int kFaulty = 2;
constexpr int kFaultFreeSeconds = 20;       // the analyzers learn the cluster's noise meanwhile
constexpr int kAlarmDeadlineSeconds = 150;  // from the inject

// A program started with its output in a file, stopped by its pid (SIGINT
// or SIGTERM, SIGKILL after a grace) when the test ends, however it ends.
class Background {
 public:
  Background(const std::string& program, const std::vector<std::string>& arguments,
             const std::vector<std::string>& environment, const std::string& log, int stop_signal)
      : stop_signal_(stop_signal) {
    std::vector<std::string> words{program};
    words.insert(words.end(), arguments.begin(), arguments.end());
    std::vector<char*> argv;
    for (auto& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    std::vector<std::string> variables;
    for (char** entry = environ; *entry != nullptr; ++entry) {
      if (std::strncmp(*entry, "LIMPWATCH_", 10) != 0) variables.emplace_back(*entry);
    }
    variables.insert(variables.end(), environment.begin(), environment.end());
    std::vector<char*> envp;
    for (auto& variable : variables) envp.push_back(variable.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    if (posix_spawn(&pid_, program.c_str(), &actions, nullptr, argv.data(), envp.data()) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Background() {
    if (pid_ <= 0) return;
    kill(pid_, stop_signal_);
    for (int tenth = 0; tenth < 150; ++tenth) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;
  pid_t pid() const { return pid_; }
  bool Running() const { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }

 private:
  pid_t pid_ = -1;
  int stop_signal_;
};

uint16_t FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

// GET on loopback; the status and the body ("" and 0 when unreachable).
std::pair<int, std::string> HttpGet(uint16_t port, const std::string& target) {
  std::string reply = HttpGetReply(port, target, 10);
  size_t end = reply.find("\r\n\r\n");
  if (reply.size() < 12 || end == std::string::npos) return {0, ""};
  return {std::atoi(reply.c_str() + 9), reply.substr(end + 4)};
}

std::string UrlEncode(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '_' || c == '-' || c == '.') {
      out += static_cast<char>(c);
    } else {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", c);
      out += escaped;
    }
  }
  return out;
}

// An instant query through Prometheus's HTTP API: the JSON answer.
std::string Query(uint16_t port, const std::string& promql) {
  return HttpGet(port, "/api/v1/query?query=" + UrlEncode(promql)).second;
}

// How many series an instant query's answer holds.
size_t SeriesCount(const std::string& answer) {
  size_t count = 0;
  const std::string key = "\"metric\":";
  for (size_t at = answer.find(key); at != std::string::npos; at = answer.find(key, at + 1)) ++count;
  return count;
}

bool IsDirectory(const std::string& path) {
  struct stat status {};
  return stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode);
}

TEST(prometheus, AnInjectedDiskFaultReachesARealPrometheusAndTheDashboardInABrowser) {
  std::string prometheus = FindOnPath("prometheus");
  if (prometheus.empty()) GTEST_SKIP() << MissingPrometheusTool("prometheus");
  std::string chromium = FindOnPath("chromium");
  if (chromium.empty()) {
    GTEST_SKIP() << "chromium is not installed (Debian's 'chromium' package; tools/setup.sh installs it): the "
                    "dashboard cannot be checked in a browser";
  }
  if (geteuid() != 0) GTEST_SKIP() << "the disk fault (a blkio throttle) needs root";
  if (!IsDirectory("/sys/fs/cgroup/blkio")) GTEST_SKIP() << "no cgroup v1 blkio hierarchy at /sys/fs/cgroup/blkio";
  struct stat tmp {};
  if (stat("/tmp", &tmp) != 0 || major(tmp.st_dev) == 0) GTEST_SKIP() << "/tmp is not on a block device";

  TestbedCluster cluster(kServers, {}, {"LIMPWATCH_ANALYZE=1", "LIMPWATCH_QUIET=1",
                                        "LIMPWATCH_MANIFEST=" + std::string(LIMPWATCH_TESTBED_MANIFEST)});
  ASSERT_TRUE(cluster.started()) << cluster.start_output();
  const std::string faulty = cluster.alias(kFaulty);
  auto started = Clock::now();

  Background workload(TestbedTool("limpwatch-testbed"),
                      {"run", "ddr", "--dir", cluster.dir(), "--", "--size-mib", "64", "--seconds", "600"},
                      {"LIMPWATCH_ANALYZE=0"}, cluster.dir() + "/workload.log", SIGINT);
  ASSERT_GT(workload.pid(), 0);

  int serve_out = -1;
  pid_t serve_pid = StartProgram(LIMPWATCH_CLI_PATH, {"serve", "--listen", "127.0.0.1:0"}, {}, &serve_out);
  ASSERT_GT(serve_pid, 0);
  ChildGuard serve_guard(serve_pid);
  std::string url = ReadLine(serve_out);
  ASSERT_EQ(url.rfind("limpwatch serve: http://", 0), 0u) << url;
  std::string target = url.substr(std::strlen("limpwatch serve: http://"));
  target = target.substr(0, target.find('/'));

  uint16_t web_port = FreeLoopbackPort();
  std::string config = cluster.dir() + "/prometheus.yml";
  std::ofstream(config) << "global:\n"
                           "  scrape_interval: 1s\n"
                           "  evaluation_interval: 1s\n"
                           "rule_files:\n"
                           "  - " LIMPWATCH_SOURCE_DIR "/tools/prometheus/limpwatch.rules.yml\n"
                           "scrape_configs:\n"
                           "  - job_name: limpwatch\n"
                           "    static_configs:\n"
                           "      - targets: ['"
                        << target << "']\n";
  Background server(prometheus,
                    {"--config.file=" + config, "--storage.tsdb.path=" + cluster.dir() + "/prometheus-data",
                     "--web.listen-address=127.0.0.1:" + std::to_string(web_port)},
                    {}, cluster.dir() + "/prometheus.log", SIGTERM);
  ASSERT_GT(server.pid(), 0);
  auto ready_deadline = Clock::now() + std::chrono::seconds(60);
  while (HttpGet(web_port, "/-/ready").first != 200) {
    ASSERT_TRUE(server.Running()) << "prometheus exited: " << ReadFile(cluster.dir() + "/prometheus.log");
    ASSERT_LT(Clock::now(), ready_deadline)
        << "prometheus not ready in 60 s: " << ReadFile(cluster.dir() + "/prometheus.log");
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }

  // Prometheus sees every server's analyzer ticking through `serve`.
  const std::string ours = "server=~\"" + cluster.alias(0).substr(0, cluster.alias(0).size() - 1) + "[0-9]+\"";
  auto scrape_deadline = Clock::now() + std::chrono::seconds(60);
  for (;;) {
    std::string answer = Query(web_port, "rate(limpwatch_analyzer_ticks_total{" + ours + "}[10s]) > 0");
    if (SeriesCount(answer) == kServers) break;
    ASSERT_LT(Clock::now(), scrape_deadline) << "not every server's analyzer seen ticking: " << answer;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  std::this_thread::sleep_for(std::chrono::seconds(kFaultFreeSeconds));
  ASSERT_TRUE(workload.Running()) << ReadFile(cluster.dir() + "/workload.log");

  CommandOutput injected = cluster.Launcher({"inject", "disk-busy", "--server", std::to_string(kFaulty)});
  ASSERT_EQ(injected.exit_status, 0) << injected.output;
  auto fault_start = Clock::now();
  const std::string open_query = "limpwatch_alarm_open{server=\"" + faulty + "\"} == 1";
  const std::string alert_query = "ALERTS{alertname=\"LimpwatchServerLimping\",alertstate=\"firing\",server=\"" +
                                  faulty + "\"}";
  std::string open_answer;
  double alarm_seconds = -1;
  double alert_seconds = -1;
  while (Clock::now() - fault_start < std::chrono::seconds(kAlarmDeadlineSeconds)) {
    double elapsed = std::chrono::duration<double>(Clock::now() - fault_start).count();
    if (alarm_seconds < 0) {
      open_answer = Query(web_port, open_query);
      if (SeriesCount(open_answer) > 0) alarm_seconds = elapsed;
    }
    if (alert_seconds < 0 && SeriesCount(Query(web_port, alert_query)) > 0) alert_seconds = elapsed;
    if (alarm_seconds >= 0 && alert_seconds >= 0) break;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  std::string every_open = Query(web_port, "limpwatch_alarm_open{" + ours + "} == 1");
  // Behind the alarm, the faulty server's own scores: some metric over its
  // threshold during the fault; and every server's scores are there.
  std::string over = Query(web_port, "max_over_time(limpwatch_score_over_threshold{server=\"" + faulty +
                                         "\"}[5m]) == 1");
  std::string scored = Query(web_port, "count by (server) (limpwatch_score_threshold{" + ours + "})");
  std::printf("[   INFO   ] metrics of %s over their threshold: %s\n", faulty.c_str(), over.c_str());
  EXPECT_GT(SeriesCount(over), 0u) << "no score of " << faulty << " over its threshold: " << over;
  EXPECT_EQ(SeriesCount(scored), size_t(kServers)) << scored;
  // Every reporter hears every other analyzer's open verdicts: its alarm on
  // the faulty server counts all of them (how many agree is printed).
  std::string heard = Query(web_port, "max_over_time(limpwatch_alarm_analyzers{server=\"" + faulty + "\"}[5m]) == " +
                                          std::to_string(kServers));
  std::string agreeing =
      Query(web_port, "max(max_over_time(limpwatch_alarm_agreeing{server=\"" + faulty + "\"}[5m]))");
  std::printf("[   INFO   ] analyzers holding the alarm on %s open, at most: %s\n", faulty.c_str(), agreeing.c_str());
  EXPECT_GT(SeriesCount(heard), 0u) << "no reporter counted " << kServers << " analyzers: " << heard;
  std::printf("[   INFO   ] fault-free %d s; alarm series of %s in Prometheus %.0f s after the inject, firing "
              "alert %.0f s after; whole run %.0f s\n[   INFO   ] open alarms: %s\n",
              kFaultFreeSeconds, faulty.c_str(), alarm_seconds, alert_seconds,
              std::chrono::duration<double>(Clock::now() - started).count(), every_open.c_str());
  EXPECT_GE(alarm_seconds, 0) << "no open alarm against " << faulty << " in " << kAlarmDeadlineSeconds
                              << " s; every open alarm: " << every_open;
  EXPECT_NE(open_answer.find("\"resource\":\"disk\""), std::string::npos) << open_answer;
  EXPECT_GE(alert_seconds, 0) << "the LimpwatchServerLimping alert did not fire for " << faulty;

  // The dashboard as a browser renders it, during the fault.
  const std::string dashboard = "http://" + target + "/dashboard";
  // Its complaints about the missing desktop bus go to a log, not the test's output.
  const std::string browser = "'" + chromium + "' --headless --no-sandbox --disable-gpu --hide-scrollbars "
                              "--user-data-dir='" + cluster.dir() + "/chromium' ";
  const std::string browser_log = " 2>>'" + cluster.dir() + "/chromium.log'";
  ProgramRun dom = RunProgram("/bin/sh", {"-c", browser + "--dump-dom '" + dashboard + "'" + browser_log}, {});
  EXPECT_EQ(dom.exit_status, 0) << ReadFile(cluster.dir() + "/chromium.log");
  // Plain searches: std::regex recurses per character and a row of charts
  // overflows the stack (it did under ASan).
  const std::string marked = "<tr class=\"server limping\" data-server=\"" + faulty +
                             "\" data-state=\"limping\" data-resource=\"";
  size_t row_start = dom.output.find(marked);
  ASSERT_NE(row_start, std::string::npos) << "the faulty server is not marked limping in the browser's DOM:\n"
                                          << dom.output;
  size_t resources_start = row_start + marked.size();
  std::string resources = dom.output.substr(resources_start, dom.output.find('"', resources_start) - resources_start);
  std::string row = dom.output.substr(row_start, dom.output.find("</tr>", row_start) - row_start);
  EXPECT_NE(resources.find("disk"), std::string::npos) << row;
  EXPECT_NE(row.find("<polyline"), std::string::npos) << "no score chart in its row: " << row;
  EXPECT_NE(dom.output.find(" of " + std::to_string(kServers) + " analyzers</td>"), std::string::npos)
      << "the alarm's row does not count the cluster's analyzers";
  std::string screenshot = cluster.dir() + "/dashboard.png";
  ProgramRun shot = RunProgram(
      "/bin/sh",
      {"-c", browser + "--window-size=1280,720 --screenshot='" + screenshot + "' '" + dashboard + "'" + browser_log}, {});
  EXPECT_EQ(shot.exit_status, 0) << ReadFile(cluster.dir() + "/chromium.log");
  std::string png = ReadFile(screenshot);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << "not a PNG";
  EXPECT_GT(png.size(), 10000u) << "an empty page";
  std::ofstream(LIMPWATCH_BINARY_DIR "/dashboard-screenshot.png", std::ios::binary) << png;
  std::printf("[   INFO   ] dashboard: %s marked limping on %s; screenshot %zu bytes\n", faulty.c_str(),
              resources.c_str(), png.size());

  CommandOutput cleared = cluster.Launcher({"clear", "disk-busy"});
  EXPECT_EQ(cleared.exit_status, 0) << cleared.output;
  close(serve_out);
}

}  // namespace
}  // namespace limpwatch::testing
