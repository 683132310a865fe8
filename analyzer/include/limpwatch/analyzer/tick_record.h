// A tick record: everything the analyzer learns about one server in one
// tick (1 s by default), built from two snapshots of its segment.
//
// Tick records are the analyzer's only input: the online analyzer builds
// them from its own segment, `LIMPWATCH_RECORD` appends them to a trace
// file, and `limpwatch diagnose` replays them through the same code, so
// online and offline verdicts agree.
#ifndef LIMPWATCH_ANALYZER_TICK_RECORD_H_
#define LIMPWATCH_ANALYZER_TICK_RECORD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "limpwatch/shm/snapshot.h"

namespace limpwatch::analyzer {

// One function's activity in the tick, keyed by the 64-bit hash of its name.
struct FunctionTick {
  uint64_t name_hash = 0;
  uint64_t calls = 0;
  double self_ms = 0;
  uint64_t samples = 0;  // CPU samples, kernel samples under it included
};

// Seed 001's system-call service times and seed 003's request volume.
struct IoTick {
  double dread_ms = 0;      // mean service time of a read on a storage file (0 when none)
  double dwrite_ms = 0;     // same for writes (syncs are the [file sync] feature)
  double nsread_ms = 0;     // mean time of a socket read by the server (accepted sockets)
  double ncread_ms = 0;     // mean time of a socket read by a client (connected sockets)
  uint64_t file_reads = 0;
  uint64_t file_writes = 0;
  uint64_t socket_reads = 0;
  double request_bytes = 0;  // bytes in + out on sockets: seed 003's req
  uint64_t errors = 0;       // I/O calls that failed
};

// Seed 003's node statistics for the tick (rates over the tick).
struct NodeTick {
  bool valid = false;
  double interrupts = 0;
  double pages_allocated = 0;
  double heap_growth_bytes = 0;
  double disk_requests = 0;
  double disk_iosize_kb = 0;  // average request size
  double disk_svctm_ms = 0;   // average service time (busy time / requests)
  double disk_await_ms = 0;
  double disk_utilisation = 0;  // 0..1
  double cpu_ms = 0;            // the process's CPU time
};

struct TickRecord {
  std::string node;
  uint64_t tick = 0;      // unix_ms / tick_ms: the same number on every server
  uint64_t unix_ms = 0;   // end of the tick
  uint32_t tick_ms = 1000;
  std::vector<FunctionTick> functions;  // sorted by name_hash, active functions only
  IoTick io;
  NodeTick node_stats;
  // Not recorded: set by whoever loads recordings on the first tick of each
  // one, which the replay takes for a start of the server (a new boot).
  bool starts_recording = false;
};

// The name of a feature limpwatch adds to every tick's functions: the time
// the server's threads waited for a CPU while runnable, plus the time a CPU
// quota throttled its cgroup, as self time. It
// travels, is compared and is named in root causes like a function, so a
// server starved of CPU (a CPU quota, a competing process on its cores)
// stands out from its peers with "cpu" as its resource.
inline constexpr const char* kRunqueueWaitName = "[waiting for a CPU]";

// Likewise for the network: the segments the server's TCP connections
// retransmitted or received out of order (analyzer/tcp_loss_counters.h).
// A retransmission counts as its connection's retransmission timeout (200 ms
// or more): the server's own sends stalled, and a timeout is what a lost
// last segment of a reply (or a lost acknowledgement of it) costs. A segment
// received out of order counts kLostPacketMs: the peer's fast retransmit
// usually fills the hole within a round trip, and a lossy link's hundreds
// per second still dominate the server's profile. Either way the feature
// stands for the network.
inline constexpr const char* kLostPacketsName = "[lost packets]";
inline constexpr double kLostPacketMs = 10.0;

// And the network's latency: the round trip of the server's active TCP
// connections (tcp_loss_counters.h), in ms, as the tick's self time. A delay
// on one server's link (a congested switch port, a bad cable renegotiated
// down) slows every peer's clients alike, so the peers' own service times
// barely differ; the kernel's round-trip estimate on the slow server's
// connections is what does.
inline constexpr const char* kRoundTripName = "[network round trip]";

// And the storage's flushes: the server's fsync / fdatasync /
// sync_file_range calls on regular files, with their count as calls and their
// service time as self time. A PVFS server syncs its metadata database on
// every change, and those syncs are where a throttled or busy disk shows:
// writes land in the page cache at the same speed on every server, while a
// blkio-throttled server's syncs took 4-10 ms against its peers' 0.3-0.5 ms
// (measured on OrangeFS 2.10, 4 servers on loopback). The dsync metric is
// this feature's time per call.
inline constexpr const char* kFileSyncName = "[file sync]";

// And memory: the server's major page faults, those that had to read a page
// back from storage (its code or data evicted, or swapped out), with their
// count as calls and kMajorFaultMs each as self time. A healthy server faults
// its pages in once, at start; one whose machine runs short of memory loses
// them to reclaim and faults them in again and again, whatever it serves.
// The feature stands for memory.
inline constexpr const char* kMajorFaultsName = "[major page faults]";
inline constexpr double kMajorFaultMs = 1.0;

// And the CPU the server used: its process's CPU time in the tick (from
// its node statistics), one call a tick. Beside [waiting for a CPU] it says
// how much longer the server's CPU work took than the CPU it got: a busy
// server waits more because it runs more, a starved one because it gets
// less. Added to each window from the ticks' node statistics (window.cc),
// so recordings made before it have it too; the seed rule leaves it out.
inline constexpr const char* kCpuTimeName = "[cpu time]";

// Names of function hashes, so that root causes can be printed.
struct FunctionName {
  uint64_t name_hash = 0;
  std::string name;
};

// The tick between two snapshots of one segment. Functions whose names are
// not resolved yet (hash 0) are left out.
TickRecord BuildTickRecord(const std::string& node, const shm::Snapshot& before, const shm::Snapshot& after,
                           uint32_t tick_ms);

// Every resolved name of a snapshot (traced and sampled functions).
std::vector<FunctionName> CollectFunctionNames(const shm::Snapshot& snapshot);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_TICK_RECORD_H_
