// The per-connection TCP loss counters of analyzer/tcp_loss_counters.h, on
// real loopback sockets of this process. (That a lossy link's server counts
// lost packets, and a healthy one next to none, is checked on the test-bed
// with nftables dropping packets: testbed_fault_test.)
#include "limpwatch/analyzer/tcp_loss_counters.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace limpwatch::analyzer {
namespace {

// A listening socket and a connected pair on 127.0.0.1.
struct LoopbackConnection {
  int listener = -1;
  int client = -1;
  int server = -1;
  LoopbackConnection() {
    listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || listen(listener, 1) != 0 ||
        getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      return;
    }
    client = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(client, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return;
    server = accept(listener, nullptr, nullptr);
  }
  ~LoopbackConnection() {
    for (int fd : {listener, client, server}) {
      if (fd >= 0) close(fd);
    }
  }
};

TEST(TcpLossCountersTest, OnlyTcpSocketsHaveCounts) {
  LoopbackConnection connection;
  ASSERT_GE(connection.server, 0);
  TcpSocketCounts counts;
  EXPECT_TRUE(ReadTcpSocketCounts(connection.client, &counts));
  EXPECT_GT(counts.timeout_us, 0u);  // a connection always has a retransmission timer
  EXPECT_TRUE(ReadTcpSocketCounts(connection.listener, &counts));
  int udp = socket(AF_INET, SOCK_DGRAM, 0);
  int pipe_ends[2];
  ASSERT_EQ(pipe(pipe_ends), 0);
  EXPECT_FALSE(ReadTcpSocketCounts(udp, &counts));
  EXPECT_FALSE(ReadTcpSocketCounts(pipe_ends[0], &counts));
  EXPECT_FALSE(ReadTcpSocketCounts(-1, &counts));
  close(udp);
  close(pipe_ends[0]);
  close(pipe_ends[1]);
}

TEST(TcpLossCountersTest, EveryTcpSocketOfTheProcessIsWalkedAndTotalsNeverFall) {
  TcpLossCounters counters;
  ASSERT_TRUE(counters.Update());
  size_t before = counters.sockets();
  uint64_t retransmitted = 0;
  uint64_t out_of_order = 0;
  {
    LoopbackConnection connection;
    ASSERT_GE(connection.server, 0);
    int udp = socket(AF_INET, SOCK_DGRAM, 0);
    int pipe_ends[2];
    ASSERT_EQ(pipe(pipe_ends), 0);
    char block[65536] = {};
    ASSERT_EQ(write(connection.client, block, sizeof block), ssize_t(sizeof block));
    ASSERT_TRUE(counters.Update());
    EXPECT_EQ(counters.sockets(), before + 3);  // the listener and both ends; not the UDP socket, not the pipe
    for (int fd : {udp, pipe_ends[0], pipe_ends[1]}) close(fd);
    retransmitted = counters.retransmitted();
    out_of_order = counters.out_of_order();
  }
  ASSERT_TRUE(counters.Update());
  EXPECT_EQ(counters.sockets(), before);
  EXPECT_GE(counters.retransmitted(), retransmitted);  // closed sockets keep what they counted
  EXPECT_GE(counters.out_of_order(), out_of_order);
}

// The round trip counts the connections that moved bytes since the last
// walk, and only those: an idle connection's old estimate does not.
TEST(TcpLossCountersTest, RoundTripIsTheMedianOfTheConnectionsThatMovedBytes) {
  LoopbackConnection connection;
  ASSERT_GE(connection.server, 0);
  TcpLossCounters counters;
  ASSERT_TRUE(counters.Update());
  ASSERT_TRUE(counters.Update());
  EXPECT_EQ(counters.round_trip_us(), 0u) << "nothing moved between the two walks";
  char block[4096] = {};
  for (int exchange = 0; exchange < 20; ++exchange) {
    ASSERT_EQ(write(connection.client, block, sizeof block), ssize_t(sizeof block));
    size_t got = 0;
    while (got < sizeof block) {
      ssize_t now = read(connection.server, block, sizeof block - got);
      ASSERT_GT(now, 0);
      got += size_t(now);
    }
    ASSERT_EQ(write(connection.server, block, 16), 16);
    ASSERT_EQ(read(connection.client, block, 16), 16);
  }
  ASSERT_TRUE(counters.Update());
  TcpSocketCounts client_counts;
  ASSERT_TRUE(ReadTcpSocketCounts(connection.client, &client_counts));
  EXPECT_GT(client_counts.bytes_moved, 20u * sizeof block);
  EXPECT_GT(counters.round_trip_us(), 0u);
  EXPECT_LT(counters.round_trip_us(), 200'000u) << "a loopback round trip";
  ASSERT_TRUE(counters.Update());
  EXPECT_EQ(counters.round_trip_us(), 0u) << "idle again";
}

// Retransmissions the receiver reported as duplicates were not losses; one
// counted before its D-SACK arrived stays counted, once.
TEST(TcpLossCountersTest, RetransmissionsReportedAsDuplicatesAreNotLosses) {
  TcpSocketCounts counts;
  counts.retransmitted = 10;
  counts.duplicates_reported = 10;
  EXPECT_EQ(NewlyLostRetransmissions(counts, 0), 0u) << "every one was spurious";
  counts.duplicates_reported = 7;
  EXPECT_EQ(NewlyLostRetransmissions(counts, 0), 3u);
  EXPECT_EQ(NewlyLostRetransmissions(counts, 3), 0u) << "already counted";
  counts.duplicates_reported = 9;  // a late D-SACK for one of the three
  EXPECT_EQ(NewlyLostRetransmissions(counts, 3), 0u);
  counts.retransmitted = 15;  // five more, none reported yet
  EXPECT_EQ(NewlyLostRetransmissions(counts, 3), 3u);
  counts.duplicates_reported = 20;  // more duplicates than retransmissions (a duplicated original)
  EXPECT_EQ(NewlyLostRetransmissions(counts, 0), 0u);
}

// A timeout stalls its connection whether the data was lost or only its
// acknowledgement: the longer of the two costs counts.
TEST(TcpLossCountersTest, ATimeoutCostsTheTimeTheConnectionStalled) {
  EXPECT_EQ(RetransmissionCostUs(0, 200'000, 0), 0u);
  EXPECT_EQ(RetransmissionCostUs(2, 200'000, 0), 400'000u);
  EXPECT_EQ(RetransmissionCostUs(0, 200'000, 230), 230'000u) << "an acknowledgement lost: the resent data was a duplicate";
  EXPECT_EQ(RetransmissionCostUs(3, 200'000, 210), 600'000u);
}

// The time in timeout recovery, read from where Linux 6.7 put it: a
// connection whose SYN a full accept queue dropped waits out its 1 s timer
// and is still recovering; one accepted at once never stalled.
TEST(TcpLossCountersTest, AConnectionWaitingOutItsTimerHasStalled) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(listen(listener, 0), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  std::vector<int> clients;
  for (int index = 0; index < 3; ++index) {
    int client = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    connect(client, reinterpret_cast<sockaddr*>(&address), sizeof address);
    clients.push_back(client);
  }
  usleep(1400 * 1000);
  TcpSocketCounts first, stalled_most;
  ASSERT_TRUE(ReadTcpSocketCounts(clients.front(), &first));
  for (int client : clients) {
    TcpSocketCounts counts;
    ASSERT_TRUE(ReadTcpSocketCounts(client, &counts));
    if (counts.timeout_stall_ms > stalled_most.timeout_stall_ms) stalled_most = counts;
  }
  for (int fd : clients) close(fd);
  close(listener);
  EXPECT_EQ(first.timeout_stall_ms, 0u) << "the accepted connection never waited for its timer";
  struct utsname system {};
  uname(&system);
  int major = 0, minor = 0;
  std::sscanf(system.release, "%d.%d", &major, &minor);
  if (major < 6 || (major == 6 && minor < 7)) GTEST_SKIP() << "Linux " << system.release << " does not count it";
  EXPECT_GT(stalled_most.timeout_stall_ms, 100u) << "no connection counted the time its dropped SYN waited";
  EXPECT_LT(stalled_most.timeout_stall_ms, 1400u);
}

// A connection is served when its local port is one the process listens
// on: the accepted end; the end that connected is opened.
TEST(TcpLossCountersTest, TheAcceptedEndIsServedAndTheConnectingEndOpened) {
  TcpLossCounters counters;
  ASSERT_TRUE(counters.Update());
  size_t served = counters.served_connections();
  size_t opened = counters.opened_connections();
  LoopbackConnection connection;
  ASSERT_GE(connection.server, 0);
  ASSERT_TRUE(counters.Update());
  EXPECT_EQ(counters.served_connections(), served + 1);
  EXPECT_EQ(counters.opened_connections(), opened + 1);
  // A connection keeps its kind after the listener closes.
  close(connection.listener);
  connection.listener = -1;
  ASSERT_TRUE(counters.Update());
  EXPECT_EQ(counters.served_connections(), served + 1);
}

bool HaveNft() { return geteuid() == 0 && (access("/usr/sbin/nft", X_OK) == 0 || access("/sbin/nft", X_OK) == 0); }

// An nftables table dropping every packet that matches `match` until it is
// destroyed. On the input hook: a packet dropped on output fails its send
// at once and is not a loss the sender's TCP would count.
class DropRule {
 public:
  DropRule(const std::string& table, const std::string& match) : table_(table) {
    std::string script = "nft -f - <<'END'\ntable inet " + table + " {\n  chain input {\n"
                         "    type filter hook input priority 0; policy accept;\n    " +
                         match + " drop\n  }\n}\nEND";
    installed_ = std::system(script.c_str()) == 0;
  }
  ~DropRule() { Remove(); }
  void Remove() {
    if (installed_) std::system(("nft delete table inet " + table_).c_str());
    installed_ = false;
  }
  bool installed() const { return installed_; }

 private:
  std::string table_;
  bool installed_ = false;
};

// Writes `bytes` on `from` while `rule` drops its segments for `stall_ms`,
// then lets them through and reads them all on `to`.
void SendThroughALoss(int from, int to, DropRule* rule, int stall_ms) {
  std::vector<char> block(16384, 'x');
  ASSERT_EQ(write(from, block.data(), block.size()), ssize_t(block.size()));
  usleep(stall_ms * 1000);
  rule->Remove();
  size_t got = 0;
  while (got < block.size()) {
    ssize_t now = read(to, block.data(), block.size() - got);
    ASSERT_GT(now, 0);
    got += size_t(now);
  }
}

// Real loss: what the accepted end resends is the server's own loss; what
// the connecting end resends (its segments toward another service dropped)
// is counted apart and is not.
TEST(TcpLossCountersTest, LossOnAnOpenedConnectionIsKeptApartFromTheServersOwn) {
  if (!HaveNft()) GTEST_SKIP() << "dropping packets needs root and nft (Debian package nftables)";
  LoopbackConnection connection;
  ASSERT_GE(connection.server, 0);
  sockaddr_in address{};
  socklen_t length = sizeof address;
  ASSERT_EQ(getsockname(connection.listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string port = std::to_string(ntohs(address.sin_port));
  const std::string table = "limpwatch_test_loss_" + std::to_string(getpid());
  TcpLossCounters counters;
  ASSERT_TRUE(counters.Update());
  const TcpLossTotals served_before = counters.served();
  const TcpLossTotals opened_before = counters.opened();

  {
    DropRule replies_lost(table, "tcp sport " + port);
    ASSERT_TRUE(replies_lost.installed());
    SendThroughALoss(connection.server, connection.client, &replies_lost, 700);
  }
  ASSERT_TRUE(counters.Update());
  EXPECT_GT(counters.served().retransmitted, served_before.retransmitted);
  EXPECT_GT(counters.served().retransmit_timeout_us, served_before.retransmit_timeout_us);
  EXPECT_EQ(counters.opened().retransmitted, opened_before.retransmitted);
  const TcpLossTotals served_after_replies = counters.served();

  {
    DropRule requests_lost(table, "tcp dport " + port);
    ASSERT_TRUE(requests_lost.installed());
    SendThroughALoss(connection.client, connection.server, &requests_lost, 700);
  }
  ASSERT_TRUE(counters.Update());
  EXPECT_GT(counters.opened().retransmitted, opened_before.retransmitted);
  EXPECT_GT(counters.opened().retransmit_timeout_us, opened_before.retransmit_timeout_us);
  EXPECT_EQ(counters.served().retransmitted, served_after_replies.retransmitted)
      << "the server's own count took the opened connection's loss";
  EXPECT_EQ(counters.retransmitted(), counters.served().retransmitted);
}

uint64_t InodeOf(int fd) {
  struct stat status {};
  return fstat(fd, &status) == 0 ? status.st_ino : 0;
}

uint16_t PortOf(int fd) {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  return getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0 ? ntohs(address.sin_port) : 0;
}

// A descriptor is read as one socket: its inode, its local port and the
// counters the socket itself reports; a port already known is not asked.
TEST(TcpLossCountersTest, ADescriptorIsReadAsOneSocketWithItsInodeAndPort) {
  LoopbackConnection connection;
  ASSERT_GE(connection.server, 0);
  for (int fd : {connection.listener, connection.client, connection.server}) {
    DescriptorTcpSocket socket;
    ASSERT_TRUE(ReadTcpDescriptor(fd, {}, &socket)) << "fd " << fd;
    EXPECT_EQ(socket.inode, InodeOf(fd));
    EXPECT_EQ(socket.local_port, PortOf(fd));
    EXPECT_EQ(socket.counts.listening, fd == connection.listener);
    DescriptorTcpSocket known;
    ASSERT_TRUE(ReadTcpDescriptor(fd, {{InodeOf(fd), 1}}, &known));
    EXPECT_EQ(known.local_port, 1) << "the port of an inode seen before is not asked again";
  }
  int pipe_ends[2];
  ASSERT_EQ(pipe(pipe_ends), 0);
  int udp = socket(AF_INET, SOCK_DGRAM, 0);
  DescriptorTcpSocket socket;
  EXPECT_FALSE(ReadTcpDescriptor(pipe_ends[0], {}, &socket)) << "a pipe is no socket";
  EXPECT_FALSE(ReadTcpDescriptor(udp, {}, &socket));
  for (int fd : {udp, pipe_ends[0], pipe_ends[1]}) close(fd);
}

// The descriptor the walk reads may be closed by the program meanwhile and
// its number given to another socket: what was read then is of two
// sockets, and none of it is kept.
int g_replacement_peer = -1;
void ReplaceWithAnotherSocket(int fd) {
  int other = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  socklen_t length = sizeof address;
  getsockname(g_replacement_peer, reinterpret_cast<sockaddr*>(&address), &length);
  connect(other, reinterpret_cast<sockaddr*>(&address), length);
  dup2(other, fd);  // closes the socket at fd, as the program's close() and a new accept() would
  close(other);
}

TEST(TcpLossCountersTest, ADescriptorGivenToAnotherSocketWhileReadIsLeftOut) {
  LoopbackConnection connection;
  ASSERT_GE(connection.server, 0);
  g_replacement_peer = connection.listener;
  uint64_t before = InodeOf(connection.client);
  DescriptorTcpSocket socket;
  EXPECT_FALSE(ReadTcpDescriptor(connection.client, {}, &socket, ReplaceWithAnotherSocket));
  uint64_t after = InodeOf(connection.client);
  EXPECT_NE(after, before) << "the number holds another socket now";
  EXPECT_TRUE(ReadTcpDescriptor(connection.client, {}, &socket)) << "the next walk reads the new one";
  EXPECT_EQ(socket.inode, after);
}

// Its losses would be counted twice were a socket behind two descriptors
// taken for two connections.
TEST(TcpLossCountersTest, ASocketBehindTwoDescriptorsIsOneConnection) {
  LoopbackConnection connection;
  ASSERT_GE(connection.server, 0);
  TcpLossCounters counters;
  ASSERT_TRUE(counters.Update());
  size_t sockets = counters.sockets();
  size_t opened = counters.opened_connections();
  size_t served = counters.served_connections();
  int second = dup(connection.client);
  int third = dup(connection.server);
  ASSERT_GE(second, 0);
  ASSERT_GE(third, 0);
  ASSERT_TRUE(counters.Update());
  EXPECT_EQ(counters.sockets(), sockets);
  EXPECT_EQ(counters.opened_connections(), opened);
  EXPECT_EQ(counters.served_connections(), served);
  close(second);
  close(third);
}

TEST(TcpLossCountersTest, AnUnreadableDescriptorDirectoryIsReported) {
  TcpLossCounters counters("/nonexistent-proc");
  EXPECT_FALSE(counters.Update());
  EXPECT_EQ(counters.sockets(), 0u);
  EXPECT_EQ(counters.retransmitted(), 0u);
}

}  // namespace
}  // namespace limpwatch::analyzer
