// I/O and node metrics of an interval, derived from two snapshots of one
// segment (counters are cumulative; every metric here is a difference).
//
// Seed 001's service-time metrics, per call and in total:
//
//   dread    reads (read, pread, readv, preadv, their 64/v2/_chk forms and
//            completed POSIX AIO reads) on regular files: the server's
//            storage. The seed measured the reads of "I/O server
//            file-objects"; a PVFS server's regular files are its bstreams
//            and metadata databases.
//   dwrite   the same for writes (write, pwrite, writev, pwritev, AIO writes).
//            Syncs (fsync, fdatasync, sync_file_range) are kept apart: dsync.
//   nsread   the server's network read: reads (read, readv, recv, recvfrom,
//            recvmsg, ...) on sockets this process obtained from accept()
//            (SocketRole::kAccepted), i.e. the server side of a connection.
//   ncread   the client's network read: reads on sockets this process called
//            connect() on (SocketRole::kConnected), i.e. the client side;
//            non-zero only where the library is linked into a client.
//
// So nsread and ncread are told apart by who opened the connection, which
// the interposed accept() and connect() record in the fd table. A socket of
// neither origin (socketpair, an unconnected UDP socket) counts in neither.
// For both, the would-block returns (EAGAIN) of non-blocking sockets and
// MSG_PEEK receives are left out: they read no request, and BMI makes many
// of them (it peeks at every message header before reading it). The per-kind
// table (`operations`) still has every call (a peek with no bytes).
//
// Seed 003's req: bytes read plus bytes written on sockets (TCP, UDP, Unix),
// per second; bytes in and out are also given apart.
//
// Service time is the wall-clock time of the real call (ReadTicks around
// it); for POSIX AIO, submission to observed completion. Calls, bytes and
// errors are always exact. Times are exact for every kind of call that took
// 10 us or more; faster transfers are timed one in 32 and weighted 32 (an
// unbiased estimate), unless LIMPWATCH_IO_TIMING=every (hooks/io_accounting.h).
#ifndef LIMPWATCH_ANALYZER_IO_METRICS_H_
#define LIMPWATCH_ANALYZER_IO_METRICS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "limpwatch/shm/snapshot.h"

namespace limpwatch::analyzer {

struct ServiceTime {
  uint64_t calls = 0;
  uint64_t bytes = 0;
  uint64_t errors = 0;
  double total_ms = 0;     // summed service time of the calls
  double ms_per_call = 0;  // total_ms / calls; 0 without calls
};

// One (fd kind, operation) with activity in the interval.
struct IoOperationInterval {
  shm::FdKind kind = shm::FdKind::kOther;
  shm::IoOperation operation = shm::IoOperation::kOther;
  ServiceTime time;
  double calls_per_s = 0;
  double mb_per_s = 0;  // 10^6 bytes per second
};

struct ErrnoInterval {
  shm::FdKind kind = shm::FdKind::kOther;
  shm::IoOperation operation = shm::IoOperation::kOther;
  int error = 0;
  uint64_t count = 0;
};

// Seed 003's node statistics, as rates between two node samples.
struct NodeRates {
  bool valid = false;     // two distinct samples were available
  double seconds = 0;     // between them
  double interrupts_per_s = 0;
  double context_switches_per_s = 0;
  double pages_allocated_per_s = 0;
  double allocated_mb_per_s = 0;       // pages_allocated_per_s in 10^6 bytes
  double heap_growth_mb_per_s = 0;     // this process; negative when it shrank
  double process_cpu_percent = 0;      // this process, of one CPU
  shm::DiskState disk_state = shm::DiskState::kUnknown;
  std::string disk_name;
  uint32_t disk_major = 0;
  uint32_t disk_minor = 0;
  double disk_requests_per_s = 0;      // reads + writes completed
  double disk_read_mb_per_s = 0;
  double disk_write_mb_per_s = 0;
  double disk_iosize_kb = 0;           // iosize: average request size, KiB (0 without requests)
  double disk_svctm_ms = 0;            // svctm: busy time per request
  double disk_await_ms = 0;            // await: time per request, queueing included
  double disk_utilization = 0;         // busy time / elapsed time, 0..1
};

struct IoMetrics {
  double seconds = 0;  // length of the interval
  ServiceTime dread;
  ServiceTime dwrite;
  ServiceTime dsync;
  ServiceTime nsread;
  ServiceTime ncread;
  uint64_t socket_bytes_in = 0;
  uint64_t socket_bytes_out = 0;
  double request_bytes_per_s = 0;  // req: socket bytes in + out per second
  std::vector<IoOperationInterval> operations;  // active ones, by kind then operation
  std::vector<ErrnoInterval> errors;            // errnos returned in the interval, most frequent first
  uint64_t errno_overflow = 0;                  // errors whose errno had no slot
  uint64_t untimed_calls = 0;
  NodeRates node;  // between the node samples of the two snapshots
};

// The interval from `before` to `after` (taken later, same segment).
IoMetrics DeriveIoMetrics(const shm::Snapshot& before, const shm::Snapshot& after);

// Rates between two node samples; invalid unless `later` is a newer sample.
NodeRates DeriveNodeRates(const shm::NodeMetricsValues& earlier, const shm::NodeMetricsValues& later);

// For a reader that polls at about the sampler's own period, where two polls
// can fall between the same two samples: remembers the last two distinct
// samples, so the latest complete sample interval is always at hand.
class NodeRateTracker {
 public:
  // Feeds the node sample of the newest snapshot; returns the rates between
  // the last two distinct samples seen so far.
  const NodeRates& Update(const shm::NodeMetricsValues& latest);

 private:
  shm::NodeMetricsValues previous_;
  shm::NodeMetricsValues current_;
  NodeRates rates_;
};

// "file", "tcp", "udp", "unix", "pipe", "other".
const char* FdKindName(shm::FdKind kind);
// "read", "write", "sync", "open", "close", "accept", "connect", "other".
const char* IoOperationName(shm::IoOperation operation);
// "ENOSPC"; "errno 4242" for numbers the C library has no name for.
std::string ErrnoName(int error);
// "device vda (254:0)", "no block device (0:45)", "bad storage directory", ...
std::string DiskStateText(shm::DiskState state, const std::string& name, uint32_t major, uint32_t minor);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_IO_METRICS_H_
