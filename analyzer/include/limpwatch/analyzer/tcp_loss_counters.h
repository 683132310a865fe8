// Lost packets on this process's TCP connections, from the kernel's own
// per-connection counters (getsockopt TCP_INFO): the segments it
// retransmitted (a packet it sent was lost, or its acknowledgement was) and
// the segments that arrived out of order (a packet sent to it was lost, and
// later ones came first). They are this server's own: host-wide counters
// (/proc/net/snmp) cannot tell which of several servers on one host is
// losing packets.
//
// A retransmission the receiver reported it already had (a D-SACK,
// tcpi_dsack_dups) was not needed: the original was late, not lost. Those
// are not counted. Loopback reorders segments whenever the sender moves
// between CPUs; under a large read, 95-97 % of a healthy test-bed server's
// retransmissions were such duplicates, hundreds a minute, and indicted
// healthy servers on the network.
//
// A retransmission timeout costs its connection the time it stalls, needed
// or not: a lost acknowledgement makes the sender wait out its timer and
// resend data the receiver had (and reports as a duplicate). Since Linux 6.7
// the kernel counts that time per connection (tcpi_total_rto_time); it is
// what a server losing the acknowledgements sent to it shows.
//
// Only the connections the server serves are its own evidence. On a
// connection it opened to another service (a peer server, a metadata
// service), a lost segment is as likely the far end's receive path as this
// server's send path: on OrangeFS, while packets into one server were
// dropped, another server retransmitted its requests to it and was named
// for the loss. A connection is served when its local port is one this
// process listens on; the others are opened. A fault on this server's own
// path shows on the connections it serves, which carry its replies, so
// nothing of its own is lost by leaving the opened ones out; their counts
// are kept apart (opened()) for whoever compares what each server saw of
// the others.
//
// The counters are per socket and vanish with it, so each Update() walks the
// process's descriptors (/proc/self/fd), reads every TCP socket's counters
// through its descriptor and adds what each counted since the previous walk
// (all of it for a socket new since then). A connection opened and closed
// between two walks is missed. The walk runs beside the server's threads,
// which may close a descriptor at any moment and give its number to another
// socket: each socket's inode is taken before and after its counters are
// read, and a socket whose inode changed meanwhile is left for the next
// walk, so that one socket's counts are never filed under another.
//
// (The kernel's socket diagnostics, which answer by inode without touching
// the descriptors, were used before: a dump walks every TCP socket of the
// host's hash table, whose size follows the memory, not the sockets. In a
// process with 34 TCP sockets and 200 files the dump cost 3.3 ms of CPU a
// walk, the walk by descriptor 0.45-0.6 ms: one fstat per descriptor, three
// more system calls per TCP socket; analyzer_benchmark.)
//
// The same walk gives the round trip: the median of the kernel's smoothed
// RTT over the served connections that moved bytes since the previous walk. A slow
// link in front of one server raises it on all of that server's
// connections; a healthy server's idle connections (whose estimate an
// occasional delayed acknowledgement inflates) do not count, and the median
// ignores the few that moved a byte while one was in flight.
#ifndef LIMPWATCH_ANALYZER_TCP_LOSS_COUNTERS_H_
#define LIMPWATCH_ANALYZER_TCP_LOSS_COUNTERS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace limpwatch::analyzer {

struct TcpSocketCounts {
  uint64_t retransmitted = 0;        // tcpi_total_retrans
  uint64_t duplicates_reported = 0;  // tcpi_dsack_dups (0 before Linux 4.19)
  uint64_t out_of_order = 0;         // tcpi_rcv_ooopack (0 before Linux 5.4)
  uint64_t timeout_us = 0;     // tcpi_rto: what a retransmission by timeout waits now
  uint64_t timeout_stall_ms = 0;  // tcpi_total_rto_time: time in timeout recovery (0 before Linux 6.7)
  uint64_t round_trip_us = 0;  // tcpi_rtt: the smoothed round-trip time
  uint64_t bytes_moved = 0;    // tcpi_bytes_acked + tcpi_bytes_received
  bool listening = false;      // tcpi_state is TCP_LISTEN
};

// What the connections of one kind lost, since the first Update().
struct TcpLossTotals {
  uint64_t retransmitted = 0;  // less the retransmissions reported as duplicates
  uint64_t out_of_order = 0;
  // Each retransmission weighted by its connection's retransmission timeout
  // when it was counted (how long the connection would have stalled had
  // every one waited for its timer; fast retransmits wait less), or the time
  // its connections measurably stalled in timeout recovery, when longer.
  uint64_t retransmit_timeout_us = 0;
};

// One TCP socket of the process, read through a descriptor.
struct DescriptorTcpSocket {
  uint64_t inode = 0;
  TcpSocketCounts counts;
  uint16_t local_port = 0;  // 0 when it has none, or is not IPv4 / IPv6
};

// Reads the TCP socket at `fd` as one socket: false when `fd` is not a TCP
// socket, or when its inode changed while it was read (the program closed
// the number and gave it to another socket). The local port is taken from
// `known_ports` for an inode seen before, else asked. `between_reads`, when
// given, runs after the first look at the inode (tests close `fd` there).
bool ReadTcpDescriptor(int fd, const std::unordered_map<uint64_t, uint16_t>& known_ports,
                       DescriptorTcpSocket* socket, void (*between_reads)(int fd) = nullptr);

class TcpLossCounters {
 public:
  // `proc_root`: "/proc" except in tests.
  explicit TcpLossCounters(std::string proc_root = "/proc") : proc_root_(std::move(proc_root)) {}

  // Walks the process's descriptors now. Returns false when the descriptor
  // directory cannot be read (the totals stay as they were).
  bool Update();

  // Totals since the first Update(), never decreasing: the served
  // connections' (this server's own evidence) and the opened ones'.
  const TcpLossTotals& served() const { return served_; }
  const TcpLossTotals& opened() const { return opened_; }
  uint64_t retransmitted() const { return served_.retransmitted; }
  uint64_t out_of_order() const { return served_.out_of_order; }
  uint64_t retransmit_timeout_us() const { return served_.retransmit_timeout_us; }
  // The median smoothed RTT of the served connections that moved bytes
  // between the last two Update()s (a new one: since it opened); 0 when
  // none did.
  uint64_t round_trip_us() const { return round_trip_us_; }
  // TCP sockets seen by the last Update(), listening ones included, and of
  // them the served and the opened connections.
  size_t sockets() const { return sockets_; }
  size_t served_connections() const { return served_connections_; }
  size_t opened_connections() const { return last_.size() - served_connections_; }

 private:
  bool WalkDescriptors(std::vector<DescriptorTcpSocket>* seen);

  struct Connection {
    TcpSocketCounts counts;
    uint64_t lost_counted = 0;  // retransmissions counted as lost so far
    bool served = false;        // decided when first seen: a local port never changes
  };
  std::string proc_root_;
  std::unordered_map<uint64_t, Connection> last_;  // connections (not listeners), by socket inode
  TcpLossTotals served_;
  TcpLossTotals opened_;
  uint64_t round_trip_us_ = 0;
  size_t sockets_ = 0;
  size_t served_connections_ = 0;
  // The local port of every TCP socket of the last walk, by inode: a
  // socket's port never changes, so it is asked once.
  std::unordered_map<uint64_t, uint16_t> local_ports_;
};

// The counts of one descriptor, when it is a TCP socket (getsockopt TCP_INFO).
bool ReadTcpSocketCounts(int fd, TcpSocketCounts* counts);

// The counters in a struct tcp_info of `length` bytes (as long as the kernel
// that wrote it knows it): false when too short to hold the retransmissions.
bool ParseTcpInfo(const void* info, size_t length, TcpSocketCounts* counts);

// A connection's retransmissions not (yet) reported as duplicates, beyond
// the `already_counted` ones. A D-SACK may arrive a walk after its
// retransmission was counted: the count never goes back, so a walk that
// falls between the two counts that one retransmission, and no more.
uint64_t NewlyLostRetransmissions(const TcpSocketCounts& counts, uint64_t already_counted);

// What `lost` retransmissions of one connection cost, in us: each its
// timeout, or the time the connection stalled in timeout recovery meanwhile
// (duplicates included), whichever is longer.
uint64_t RetransmissionCostUs(uint64_t lost, uint64_t timeout_us, uint64_t timeout_stall_ms_added);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_TCP_LOSS_COUNTERS_H_
