#include "limpwatch/analyzer/tcp_loss_counters.h"

#include <dirent.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

#include "limpwatch/analyzer/peer_address.h"

namespace limpwatch::analyzer {
namespace {

// The walk touches descriptors that the program's threads may close at any
// moment, by design: the inode taken before and after the reads
// (ReadTcpDescriptor) keeps one socket's counts from being filed under
// another. In a program built with ThreadSanitizer, whose interceptors take
// every descriptor call as an access to the descriptor, the program's
// close() beside the walk's fstat() would be reported as a race in the
// program. So the walk asks the kernel directly (x86-64's system calls).
long RawFstat(int fd, struct stat* status) { return syscall(SYS_fstat, fd, status); }
long RawGetsockopt(int fd, int level, int name, void* value, socklen_t* length) {
  return syscall(SYS_getsockopt, fd, level, name, value, length);
}
long RawGetsockname(int fd, sockaddr* address, socklen_t* length) {
  return syscall(SYS_getsockname, fd, address, length);
}

// The socket's inode, which names it from one walk to the next, or 0.
uint64_t SocketInode(int fd) {
  struct stat status {};
  if (RawFstat(fd, &status) != 0 || !S_ISSOCK(status.st_mode)) return 0;
  return status.st_ino;
}

uint64_t Added(uint64_t before, uint64_t now) { return now >= before ? now - before : now; }

// The local port of a socket, 0 when it has none or is not IPv4 / IPv6.
uint16_t LocalPort(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (RawGetsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  std::optional<PeerAddress> local = PeerAddress::FromSockaddr(reinterpret_cast<const sockaddr*>(&address), length);
  return local ? local->port() : 0;
}

}  // namespace

bool ReadTcpSocketCounts(int fd, TcpSocketCounts* counts) {
  uint8_t buffer[sizeof(tcp_info) + 128] = {};
  socklen_t length = sizeof buffer;
  if (RawGetsockopt(fd, IPPROTO_TCP, TCP_INFO, buffer, &length) != 0) return false;
  return ParseTcpInfo(buffer, length, counts);
}

uint64_t NewlyLostRetransmissions(const TcpSocketCounts& counts, uint64_t already_counted) {
  uint64_t unduplicated =
      counts.retransmitted > counts.duplicates_reported ? counts.retransmitted - counts.duplicates_reported : 0;
  return unduplicated > already_counted ? unduplicated - already_counted : 0;
}

uint64_t RetransmissionCostUs(uint64_t lost, uint64_t timeout_us, uint64_t timeout_stall_ms_added) {
  return std::max(lost * timeout_us, timeout_stall_ms_added * 1000);
}

bool ReadTcpDescriptor(int fd, const std::unordered_map<uint64_t, uint16_t>& known_ports,
                       DescriptorTcpSocket* socket, void (*between_reads)(int fd)) {
  uint64_t inode = SocketInode(fd);
  if (inode == 0) return false;
  if (between_reads != nullptr) between_reads(fd);
  TcpSocketCounts counts;
  if (!ReadTcpSocketCounts(fd, &counts)) return false;
  auto known = known_ports.find(inode);
  uint16_t port = known != known_ports.end() ? known->second : LocalPort(fd);
  // The kernel hands a socket inode number out again only after billions of
  // others: the same inode after the reads means they were all of one socket.
  if (SocketInode(fd) != inode) return false;
  socket->inode = inode;
  socket->counts = counts;
  socket->local_port = port;
  return true;
}

bool TcpLossCounters::WalkDescriptors(std::vector<DescriptorTcpSocket>* seen) {
  std::string directory = proc_root_ + "/self/fd";
  DIR* descriptors = opendir(directory.c_str());
  if (descriptors == nullptr) return false;
  int own = dirfd(descriptors);
  std::unordered_map<uint64_t, uint16_t> ports;
  while (dirent* entry = readdir(descriptors)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    int fd = std::atoi(entry->d_name);
    if (fd == own) continue;
    DescriptorTcpSocket socket;
    if (!ReadTcpDescriptor(fd, local_ports_, &socket)) continue;
    // A socket behind two descriptors (dup) is one connection, counted once.
    if (ports.emplace(socket.inode, socket.local_port).second) seen->push_back(socket);
  }
  closedir(descriptors);
  local_ports_ = std::move(ports);
  return true;
}

bool TcpLossCounters::Update() {
  std::vector<DescriptorTcpSocket> seen;
  if (!WalkDescriptors(&seen)) return false;

  std::vector<DescriptorTcpSocket> connections;
  std::vector<uint16_t> listening_ports;
  size_t sockets = seen.size();
  for (const DescriptorTcpSocket& socket : seen) {
    if (socket.counts.listening) {
      if (socket.local_port != 0) listening_ports.push_back(socket.local_port);
      continue;
    }
    connections.push_back(socket);
  }
  // Connections are classified only after every listener was seen: the
  // directory lists descriptors in no useful order.
  std::unordered_map<uint64_t, Connection> now;
  std::vector<uint64_t> active_round_trips;
  served_connections_ = 0;
  for (const DescriptorTcpSocket& seen : connections) {
    auto previous = last_.find(seen.inode);
    Connection connection;
    if (previous != last_.end()) {
      connection = previous->second;
    } else {
      uint16_t port = seen.local_port;
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
