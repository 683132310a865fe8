// A test-bed server's port is never free between the launcher's choice and the
// server's start: the launcher hands its listening socket over. Two test-beds
// starting at once (parallel tests, a test beside an evaluation) once picked
// the same free port; the second server could not bind it, and the launcher
// took the first cluster's server's answer to its ping for its own.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "common/socket_util.h"
#include "testbed/testbed_cluster.h"

namespace limpwatch::testing {
namespace {

// A socket listening on 127.0.0.1:port, with an fd number above 3 so that the
// child's fd 3 is always a dup (and inherited).
int ListenOn(uint16_t port) {
  std::string error;
  int fd = testbed::ListenTcp("127.0.0.1", port, &error);
  if (fd < 0) return -1;
  int high = fcntl(fd, F_DUPFD, 10);
  close(fd);
  return high;
}

// limpwatch-testbed-server for `alias`, with `fd_for_3` as its fd 3 when >= 0;
// stdout and stderr go to `output`.
pid_t SpawnServer(const TestbedCluster& cluster, const std::string& alias, int fd_for_3,
                  const std::vector<std::string>& extra, const std::string& output) {
  std::vector<std::string> arguments = {TestbedTool("limpwatch-testbed-server"), "--config", cluster.config(),
                                        "--alias", alias};
  arguments.insert(arguments.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (auto& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  std::vector<std::string> environment = {"LIMPWATCH_DISABLE=1", "PATH=/usr/bin:/bin"};
  std::vector<char*> envp;
  for (auto& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  if (fd_for_3 >= 0) posix_spawn_file_actions_adddup2(&actions, fd_for_3, 3);
  pid_t pid = -1;
  int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  return spawned == 0 ? pid : -1;
}

// Exit status of `pid`, or -1 if it still runs after `timeout_ms` (then it is killed).
int WaitExit(pid_t pid, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 20) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

void StopServer(pid_t pid) {
  kill(pid, SIGTERM);
  EXPECT_EQ(WaitExit(pid, 10000), 0) << "the server did not stop cleanly on SIGTERM";
}

class TestbedPortTest : public ::testing::Test {
 protected:
  // One server, stopped, so that its alias and port in fs.conf are free to
  // be served by a server this test starts by hand.
  void SetUp() override {
    ASSERT_TRUE(cluster_.started()) << cluster_.start_output();
    kill(cluster_.pid(0), SIGTERM);
    for (int waited = 0; waited < 10000 && kill(cluster_.pid(0), 0) == 0; waited += 20) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    port_ = cluster_.port(0);
    held_ = ListenOn(port_);
    ASSERT_GE(held_, 0) << "cannot listen on the stopped server's port " << port_;
  }
  void TearDown() override {
    if (held_ >= 0) close(held_);
  }

  TestbedCluster cluster_{1};
  uint16_t port_ = 0;
  int held_ = -1;
};

TEST_F(TestbedPortTest, AServerServesOnTheListeningSocketItIsHanded) {
  std::string output = cluster_.dir() + "/handed.out";
  pid_t pid = SpawnServer(cluster_, cluster_.alias(0), held_, {"--listen-fd", "3"}, output);
  ASSERT_GT(pid, 0);
  // This test never accepts on its copy: only the server can answer.
  CommandOutput ping;
  for (int attempt = 0; attempt < 50; ++attempt) {
    ping = cluster_.Client({"ping", "--server", "0"});
    if (ping.exit_status == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(ping.exit_status, 0) << ping.output << ReadFile(output);
  EXPECT_NE(ReadFile(output).find("\"event\":\"ready\""), std::string::npos) << ReadFile(output);
  StopServer(pid);
}

TEST_F(TestbedPortTest, WithoutTheSocketAServerCannotTakeAHeldPort) {
  std::string output = cluster_.dir() + "/unhanded.out";
  pid_t pid = SpawnServer(cluster_, cluster_.alias(0), -1, {}, output);
  ASSERT_GT(pid, 0);
  EXPECT_EQ(WaitExit(pid, 10000), 1) << ReadFile(output);
  EXPECT_NE(ReadFile(output).find("Address already in use"), std::string::npos) << ReadFile(output);
}

TEST_F(TestbedPortTest, AHandedDescriptorThatDoesNotListenIsRefused) {
  std::string output = cluster_.dir() + "/not-listening.out";
  int file = open(cluster_.config().c_str(), O_RDONLY);
  ASSERT_GE(file, 0);
  pid_t pid = SpawnServer(cluster_, cluster_.alias(0), file, {"--listen-fd", "3"}, output);
  close(file);
  ASSERT_GT(pid, 0);
  EXPECT_EQ(WaitExit(pid, 10000), 1) << ReadFile(output);
  EXPECT_NE(ReadFile(output).find("--listen-fd 3 is not a listening socket"), std::string::npos)
      << ReadFile(output);
}

}  // namespace
}  // namespace limpwatch::testing
