#include "limpwatch/analyzer/tcp_loss_counters.h"

#include <dirent.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "limpwatch/analyzer/peer_address.h"

namespace limpwatch::analyzer {
namespace {

// The socket's inode, which names it from one walk to the next, or 0.
uint64_t SocketInode(int fd) {
  struct stat status {};
  if (fstat(fd, &status) != 0 || !S_ISSOCK(status.st_mode)) return 0;
  return status.st_ino;
}

uint64_t Added(uint64_t before, uint64_t now) { return now >= before ? now - before : now; }

// Linux 6.7 appended, after tcpi_snd_wnd (the last field these headers
// know): u32 tcpi_rcv_wnd, u32 tcpi_rehash, u16 tcpi_total_rto,
// u16 tcpi_total_rto_recoveries, u32 tcpi_total_rto_time.
constexpr size_t kTotalRtoTimeOffset = offsetof(tcp_info, tcpi_snd_wnd) + 16;

// TCP_LISTEN of the kernel's tcp_states.h, which linux/tcp.h does not export.
constexpr uint8_t kListenState = 10;

// The local port of a socket, 0 when it has none or is not IPv4 / IPv6.
uint16_t LocalPort(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  std::optional<PeerAddress> local = PeerAddress::FromSockaddr(reinterpret_cast<const sockaddr*>(&address), length);
  return local ? local->port() : 0;
}

struct NewerTcpInfo {
  tcp_info known;
  uint8_t newer[128];
};

}  // namespace

bool ReadTcpSocketCounts(int fd, TcpSocketCounts* counts) {
  NewerTcpInfo buffer{};
  socklen_t length = sizeof buffer;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &buffer, &length) != 0) return false;
  const tcp_info& info = buffer.known;
  if (length < offsetof(tcp_info, tcpi_total_retrans) + sizeof info.tcpi_total_retrans) return false;
  counts->retransmitted = info.tcpi_total_retrans;
  counts->duplicates_reported = 0;
  if (length >= offsetof(tcp_info, tcpi_dsack_dups) + sizeof info.tcpi_dsack_dups) {
    counts->duplicates_reported = info.tcpi_dsack_dups;
  }
  counts->timeout_us = info.tcpi_rto;
  counts->out_of_order = 0;
  if (length >= offsetof(tcp_info, tcpi_rcv_ooopack) + sizeof info.tcpi_rcv_ooopack) {
    counts->out_of_order = info.tcpi_rcv_ooopack;
  }
  counts->timeout_stall_ms = 0;
  if (length >= kTotalRtoTimeOffset + sizeof(uint32_t)) {
    uint32_t stalled = 0;
    std::memcpy(&stalled, reinterpret_cast<const uint8_t*>(&buffer) + kTotalRtoTimeOffset, sizeof stalled);
    counts->timeout_stall_ms = stalled;
  }
  counts->round_trip_us = info.tcpi_rtt;
  counts->listening = info.tcpi_state == kListenState;
  counts->bytes_moved = 0;
  if (length >= offsetof(tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received) {
    counts->bytes_moved = info.tcpi_bytes_acked + info.tcpi_bytes_received;
  }
  return true;
}

uint64_t NewlyLostRetransmissions(const TcpSocketCounts& counts, uint64_t already_counted) {
  uint64_t unduplicated =
      counts.retransmitted > counts.duplicates_reported ? counts.retransmitted - counts.duplicates_reported : 0;
  return unduplicated > already_counted ? unduplicated - already_counted : 0;
}

uint64_t RetransmissionCostUs(uint64_t lost, uint64_t timeout_us, uint64_t timeout_stall_ms_added) {
  return std::max(lost * timeout_us, timeout_stall_ms_added * 1000);
}

bool TcpLossCounters::Update() {
  std::string directory = proc_root_ + "/self/fd";
  DIR* descriptors = opendir(directory.c_str());
  if (descriptors == nullptr) return false;
  int own = dirfd(descriptors);
  struct Seen {
    int fd;
    uint64_t inode;
    TcpSocketCounts counts;
  };
  std::vector<Seen> connections;
  std::vector<uint16_t> listening_ports;
  size_t sockets = 0;
  while (dirent* entry = readdir(descriptors)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    int fd = std::atoi(entry->d_name);
    if (fd == own) continue;
    // TCP_INFO first: on anything but a TCP socket it fails at once, where
    // reading the descriptor's link walks a path. A server holding 250 files
    // open spent 1.4 ms of every second in those readlinks, here.
    TcpSocketCounts counts;
    if (!ReadTcpSocketCounts(fd, &counts)) continue;
    // If the program closed and reused the number between the two calls, the
    // counts are the old socket's, filed under the new one's inode: one
    // walk's error at most.
    uint64_t inode = SocketInode(fd);
    if (inode == 0) continue;
    ++sockets;
    if (counts.listening) {
      if (uint16_t port = LocalPort(fd); port != 0) listening_ports.push_back(port);
      continue;
    }
    connections.push_back({fd, inode, counts});
  }
  // Connections are classified only after every listener was seen: the
  // directory lists descriptors in no useful order.
  std::unordered_map<uint64_t, Connection> now;
  std::vector<uint64_t> active_round_trips;
  served_connections_ = 0;
  for (const Seen& seen : connections) {
    auto previous = last_.find(seen.inode);
    Connection connection;
    if (previous != last_.end()) {
      connection = previous->second;
    } else {
      uint16_t port = LocalPort(seen.fd);
      connection.served = port != 0 && std::find(listening_ports.begin(), listening_ports.end(), port) !=
                                            listening_ports.end();
    }
    const TcpSocketCounts& counts = seen.counts;
    const TcpSocketCounts before = connection.counts;
    TcpLossTotals& totals = connection.served ? served_ : opened_;
    uint64_t lost = NewlyLostRetransmissions(counts, connection.lost_counted);
    connection.lost_counted += lost;
    totals.retransmitted += lost;
    totals.retransmit_timeout_us +=
        RetransmissionCostUs(lost, counts.timeout_us, Added(before.timeout_stall_ms, counts.timeout_stall_ms));
    totals.out_of_order += Added(before.out_of_order, counts.out_of_order);
    if (connection.served) {
      ++served_connections_;
      if (counts.bytes_moved != before.bytes_moved) active_round_trips.push_back(counts.round_trip_us);
    }
    connection.counts = counts;
    now[seen.inode] = connection;
  }
  closedir(descriptors);
  last_ = std::move(now);
  sockets_ = sockets;
  round_trip_us_ = 0;
  if (!active_round_trips.empty()) {
    auto middle = active_round_trips.begin() + static_cast<std::ptrdiff_t>(active_round_trips.size() / 2);
    std::nth_element(active_round_trips.begin(), middle, active_round_trips.end());
    round_trip_us_ = *middle;
  }
  return true;
}

}  // namespace limpwatch::analyzer
