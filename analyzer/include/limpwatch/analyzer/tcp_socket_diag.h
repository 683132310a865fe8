// The kernel's TCP counters of a process's sockets, read by socket inode
// through its socket diagnostics (NETLINK_SOCK_DIAG, what `ss -ti` uses),
// never through the process's descriptors: the analyzer runs beside the
// server's threads, which may close a descriptor at any moment and reuse
// its number for another socket. By inode, a socket closed meanwhile is
// simply absent, and one socket's counts are never filed under another.
#ifndef LIMPWATCH_ANALYZER_TCP_SOCKET_DIAG_H_
#define LIMPWATCH_ANALYZER_TCP_SOCKET_DIAG_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "limpwatch/analyzer/tcp_loss_counters.h"

namespace limpwatch::analyzer {

struct DiagnosedTcpSocket {
  TcpSocketCounts counts;
  uint16_t local_port = 0;
};

// The socket inodes of the process's descriptors, from the links in
// `fd_directory` ("/proc/self/fd"), without touching the descriptors.
// False when the directory cannot be read.
bool SocketInodesOf(const std::string& fd_directory, std::unordered_set<uint64_t>* inodes);

// Every TCP socket (IPv4 and IPv6) of this network namespace whose inode is
// in `wanted`, with its counters and local port. False when the kernel
// refuses the request (no NETLINK_SOCK_DIAG: a kernel without inet_diag,
// or a seccomp filter), with the reason in *error.
bool DiagnoseTcpSockets(const std::unordered_set<uint64_t>& wanted,
                        std::unordered_map<uint64_t, DiagnosedTcpSocket>* sockets, std::string* error);

// The counters in a struct tcp_info of `length` bytes (as long as the kernel
// that wrote it knows it): false when too short to hold the retransmissions.
bool ParseTcpInfo(const void* info, size_t length, TcpSocketCounts* counts);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_TCP_SOCKET_DIAG_H_
