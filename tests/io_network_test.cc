// nsread and ncread: a traced server and a traced client over loopback, two
// processes with a segment each.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "limpwatch/analyzer/io_metrics.h"
#include "support/io_run.h"

namespace limpwatch::testing {
namespace {

constexpr int kRounds = 20;
constexpr int kClientPauseMs = 6;  // before each request: the server's reads wait this long
constexpr int kServerPauseMs = 4;  // before each answer: the client's reads wait this long
// Every read timed: a read that finds its data already there (the other side
// ran ahead while this one was descheduled) would otherwise switch its kind
// to sampled timing, and the means below would become estimates.
constexpr const char* kTimeEveryCall = "LIMPWATCH_IO_TIMING=every";

// Kills and reaps a started process unless it was reaped already.
class ChildProcess {
 public:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  ~ChildProcess() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  int Wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_;
};

TEST(IoNetworkTest, ServerReadsAreNsreadAndClientReadsAreNcread) {
  std::string server_name = UniqueSegmentName("io-server");
  std::string client_name = UniqueSegmentName("io-client");
  SegmentCleanup server_cleanup(server_name);
  SegmentCleanup client_cleanup(client_name);

  int server_output = -1;
  pid_t server_pid = StartProgram(TestProgram("io_calls"),
                                  {"server", std::to_string(kRounds), std::to_string(kServerPauseMs)},
                                  {"LIMPWATCH_NAME=" + server_name, "LIMPWATCH_KEEP=1", kTimeEveryCall}, &server_output);
  ASSERT_GT(server_pid, 0);
  ChildProcess server(server_pid);
  std::string port_line = ReadLine(server_output);
  ASSERT_EQ(port_line.rfind("port ", 0), 0u) << port_line;
  std::string port = port_line.substr(5);

  ProgramRun client = RunProgram(TestProgram("io_calls"),
                                 {"client", port, std::to_string(kRounds), std::to_string(kClientPauseMs)},
                                 {"LIMPWATCH_NAME=" + client_name, "LIMPWATCH_KEEP=1", kTimeEveryCall});
  ASSERT_EQ(client.exit_status, 0) << client.output;
  ASSERT_EQ(server.Wait(), 0);
  close(server_output);

  shm::Snapshot start;  // all counters zero
  analyzer::IoMetrics server_io = analyzer::DeriveIoMetrics(start, ReadSegment(server_name, server_pid));
  analyzer::IoMetrics client_io = analyzer::DeriveIoMetrics(start, ReadSegment(client_name, client.pid));

  EXPECT_EQ(server_io.nsread.calls, uint64_t(kRounds));
  EXPECT_EQ(server_io.nsread.bytes, uint64_t(kRounds) * 16);
  EXPECT_GE(server_io.nsread.ms_per_call, kClientPauseMs * 0.8);
  EXPECT_EQ(server_io.ncread.calls, 0u);
  EXPECT_EQ(server_io.socket_bytes_in, uint64_t(kRounds) * 16);
  EXPECT_EQ(server_io.socket_bytes_out, uint64_t(kRounds) * 64);

  EXPECT_EQ(client_io.ncread.calls, uint64_t(kRounds));
  EXPECT_EQ(client_io.ncread.bytes, uint64_t(kRounds) * 64);
  EXPECT_GE(client_io.ncread.ms_per_call, kServerPauseMs * 0.8);
  EXPECT_EQ(client_io.nsread.calls, 0u);
  EXPECT_EQ(client_io.socket_bytes_out, uint64_t(kRounds) * 16);
  // Neither side touched a file: no dread, no dwrite.
  EXPECT_EQ(server_io.dread.calls + server_io.dwrite.calls + client_io.dread.calls + client_io.dwrite.calls, 0u);
}

}  // namespace
}  // namespace limpwatch::testing
