// `limpwatch serve` as a user runs it: the binary, its options, its output
// (checked by Prometheus's own parser, promtool), and its end on SIGTERM.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "serve/exposition_parser.h"
#include "serve/prometheus_tools.h"
#include "serve/test_segments.h"
#include "support/started_program.h"
#include "support/traced_run.h"
#include "serve/loopback_client.h"

namespace limpwatch::testing {
namespace {

constexpr const char* kCli = LIMPWATCH_CLI_PATH;

std::string HttpGet(uint16_t port, const std::string& path) { return HttpGetReply(port, path, 20); }

std::string BodyOf(const std::string& reply) {
  size_t end = reply.find("\r\n\r\n");
  return end == std::string::npos ? "" : reply.substr(end + 4);
}

std::string ReadWhole(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

void FillSomething(const shm::SegmentView& view) {
  RegisterFunction(view, 0, "main", 1);
  ActivateSlot(view, 0, 1);
  AddCounts(view, 0, 0, 3, 300);
  AddIo(view, 0, shm::FdKind::kFile, shm::IoOperation::kRead, 2, 100, 20, 0);
  view.analyzer_health()->ticks.store(5);
  PublishPeers(view, 4, 3, 1, {{"a", 3}}, UnixNowMs());
  RaiseAlarm(view, analyzer::AlarmKind::kAnomaly, "a", shm::Resource::kDisk, 2, 1, UnixNowMs());
  analyzer::WindowResult window;
  const std::string server = view.header()->name;
  window.servers = {server, "a"};
  analyzer::MetricScore score;
  score.server = server;
  score.metric = analyzer::ComparedMetric::kDread;
  score.score = 1.5;
  score.threshold = 4;
  score.ratio = 1.25;
  window.scores = {score};
  PublishScores(view, server, window, UnixNowMs());
}

TEST(serve_command, ServesTheNodesSegmentsUntilSigterm) {
  TestSegments segments;
  const shm::SegmentView* view = segments.Create("cmd");
  ASSERT_NE(view, nullptr);
  FillSomething(*view);
  int out = -1;
  pid_t pid = StartProgram(kCli, {"serve", "--listen", "127.0.0.1:0", "--top", "5"}, {}, &out);
  ASSERT_GT(pid, 0);
  ChildGuard guard(pid);
  std::string first = ReadLine(out);
  const std::string prefix = "limpwatch serve: http://127.0.0.1:";
  ASSERT_EQ(first.rfind(prefix, 0), 0u) << first;
  uint16_t port = static_cast<uint16_t>(std::stoi(first.substr(prefix.size())));
  EXPECT_EQ(first.substr(first.size() - 8), "/metrics");

  std::string reply = HttpGet(port, "/metrics");
  EXPECT_EQ(reply.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << reply.substr(0, 200);
  EXPECT_NE(reply.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), std::string::npos);
  ParsedExposition page = ParseExposition(BodyOf(reply));
  EXPECT_TRUE(page.problems.empty()) << page.problems.front();
  EXPECT_EQ(page.Value("limpwatch_traced_calls_total", {{"server", TestSegments::Name("cmd")}}), 3);
  EXPECT_EQ(HttpGet(port, "/metricz").rfind("HTTP/1.1 404", 0), 0u);
  std::string index = HttpGet(port, "/");
  EXPECT_NE(BodyOf(index).find("/metrics"), std::string::npos) << index;
  EXPECT_NE(BodyOf(index).find("/dashboard"), std::string::npos) << index;
  // The live pages: the dashboard with this server's row, and its own page.
  const std::string server = TestSegments::Name("cmd");
  std::string dashboard = HttpGet(port, "/dashboard");
  EXPECT_EQ(dashboard.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << dashboard.substr(0, 200);
  EXPECT_NE(dashboard.find("Content-Type: text/html; charset=utf-8\r\n"), std::string::npos);
  EXPECT_NE(BodyOf(dashboard).find("data-server=\"" + server + "\""), std::string::npos) << dashboard;
  std::string own = HttpGet(port, "/server?name=" + server);
  EXPECT_EQ(own.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << own.substr(0, 200);
  EXPECT_NE(BodyOf(own).find("<h1>" + server + "</h1>"), std::string::npos) << own;
  EXPECT_EQ(HttpGet(port, "/server?name=nobody").rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(HttpGet(port, "/server").rfind("HTTP/1.1 400", 0), 0u);

  kill(pid, SIGTERM);
  int status = guard.Wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << DescribeWaitStatus(status);
  close(out);
}

TEST(serve_command, BadOptionsAreUsageErrorsAndABusyPortARuntimeError) {
  for (const std::vector<std::string>& arguments :
       {std::vector<std::string>{"serve", "--listen", "nohost"}, {"serve", "--listen", "127.0.0.1:70000"},
        {"serve", "--top", "many"}, {"serve", "--once"}, {"serve", "--textfile", "/tmp", "--listen", "127.0.0.1:0"},
        {"serve", "--interval", "0", "--textfile", "/tmp"}, {"serve", "extra"}, {"serve", "--open-seconds", "-1"}}) {
    ProgramRun run = RunProgram(kCli, arguments, {});
    EXPECT_EQ(run.exit_status, 2) << arguments[1];
  }
  int busy = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(busy, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(listen(busy, 1), 0);
  socklen_t length = sizeof address;
  getsockname(busy, reinterpret_cast<sockaddr*>(&address), &length);
  ProgramRun run = RunProgram(kCli, {"serve", "--listen", "127.0.0.1:" + std::to_string(ntohs(address.sin_port))}, {});
  EXPECT_EQ(run.exit_status, 1);
  close(busy);
}

// The textfile is what node_exporter would read; promtool, Prometheus's own
// parser and linter, must accept it as it is.
TEST(serve_command, TheTextfilePassesPromtoolCheckMetrics) {
  std::string promtool = FindOnPath("promtool");
  if (promtool.empty()) GTEST_SKIP() << MissingPrometheusTool("promtool");
  TestSegments segments;
  const shm::SegmentView* view = segments.Create("lint");
  ASSERT_NE(view, nullptr);
  FillSomething(*view);
  const shm::SegmentView* other = segments.Create("lint2");
  ASSERT_NE(other, nullptr);
  FillSomething(*other);
  std::string directory = UniqueSegmentName("/tmp/lwserve-lint-");
  ASSERT_TRUE(std::filesystem::create_directory(directory));
  ProgramRun written = RunProgram(kCli, {"serve", "--textfile", directory, "--once"}, {});
  ASSERT_EQ(written.exit_status, 0);
  std::string file = directory + "/limpwatch.prom";
  std::string text = ReadWhole(file);
  EXPECT_NE(text.find("server=\"" + TestSegments::Name("lint2") + "\""), std::string::npos);
  ProgramRun checked = RunProgram("/bin/sh", {"-c", "'" + promtool + "' check metrics < '" + file + "' 2>&1"}, {});
  EXPECT_EQ(checked.exit_status, 0) << checked.output;
  EXPECT_EQ(checked.output, "") << "promtool's lint found problems";
  ParsedExposition page = ParseExposition(text);
  EXPECT_TRUE(page.problems.empty()) << page.problems.front();
  std::filesystem::remove_all(directory);
}

}  // namespace
}  // namespace limpwatch::testing
