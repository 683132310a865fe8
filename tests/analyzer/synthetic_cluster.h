// Synthetic tick streams of a cluster of servers with known behaviour, for
// testing the analyzer: every server sees the same fluctuating load with its
// own noise, and one server can be given a fault from a chosen tick.
#ifndef LIMPWATCH_TESTS_ANALYZER_SYNTHETIC_CLUSTER_H_
#define LIMPWATCH_TESTS_ANALYZER_SYNTHETIC_CLUSTER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "limpwatch/analyzer/cluster_replay.h"
#include "limpwatch/analyzer/name_book.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "limpwatch/analyzer/tick_record.h"

namespace limpwatch::testing {

enum class SyntheticFault {
  kNone,
  kDiskTime,      // storage calls take 6x longer, fewer complete
  kNetworkCount,  // receive calls return less data: many more of them, more kernel samples
  kIdleSplit,     // the waiting threads' time moves from one idle function to another
  kCpuStarved,    // the server's threads wait for a CPU 8x longer (a quota, a competing process)
  kPacketLoss,    // the server's TCP connections lose 100x more packets, 600x the time (a bad link, a
                  // dropping switch port: mostly retransmission timeouts)
  kCpuShared,     // spinners share the server's CPU: its threads wait 8x longer for it, its
                  // receive calls return less data each, so there are many more of them, and
                  // its late-drained sockets drop packets (100x more lost)
  kNetworkDelay,  // the server's link is slow: its connections' round trip is 80x longer
  kBusyLinks,     // healthy, but its connections carry a bulk copy: their round trip is 30x longer
                  // (15 ms; healthy OrangeFS servers on loopback showed up to 15.5 ms over their peers)
  kStorageFull,   // the server's storage is full: 20 of its file writes a second fail with ENOSPC
  kDiskThrottled,  // kDiskTime, and the server, draining its sockets late, loses 100x the time in
                   // packets (200 ms a second: a blkio-throttled test-bed server under ddw)
  kBusyOnOverloadedCpu,  // every server waits for a CPU 8x longer than usual (an overloaded machine),
                         // the "faulty" one 20x: a busy healthy server, 2.5x its peers' wait
  kSlowSyncs,     // the server's file syncs take 15x longer, its reads and writes do not (a PVFS
                  // server syncing its metadata on a blkio-throttled disk, writes in the page cache)
  kSlowSyncsOnBusyCpu,  // kSlowSyncs on the busiest server of an overloaded machine: it also
                        // waits for a CPU 3.5x longer than its peers (below the cpuwait metric's 4x)
  kLossBurst,     // in each faulty tick the server's connections retransmit 20 segments after
                  // 200 ms timeouts: 4 s of [lost packets] (a loopback briefly overrun by a loaded
                  // machine, when the fault lasts one tick)
  kMemoryThrashing,  // the server's machine is short of memory: its pages are reclaimed and
                     // faulted in again, 300 major faults a second (its peers: none), and its
                     // storage calls take 3x longer
  kCpuQuota,      // a CPU quota: its file writes take 20x longer at once (test-bed: 10-80 ms a write
                  // over its peers; its writing threads are
                  // throttled mid-call), while its wait for a CPU, 20x longer (test-bed: 1.6-2.2 s a
                  // tick against 0.08-0.1), shows only from the fault's third tick (test-bed,
                  // iozonew: dwrite fired two windows before cpuwait)
  kDiskHogOnSharedCores,  // a competing reader on its disk: its file writes take 20x longer at once,
                          // and, sharing the host's cores with the reader, it waits for a CPU 8x
                          // longer, just past the cpuwait metric's threshold
                          // (test-bed, iozonew: 300 ms a tick over its peers against a threshold of 275)
  kPagesSwappedOut,  // its memory group is at its limit beside a growing process: 30 major faults a
                     // second (its peers: none) and nothing else measurably different
};

struct SyntheticCluster {
  int servers = 10;
  uint64_t first_tick = 1'700'000'000;  // a unix second
  int ticks = 200;
  uint32_t seed = 1;
  double noise = 0.10;  // relative, per server, function and tick
  SyntheticFault fault = SyntheticFault::kNone;
  int faulty_server = 3;
  int fault_start = 100;  // tick offset
  int fault_end = 1 << 30;
  double syncs_per_second = 5;  // the storage's file syncs, on every server
};

std::string ServerName(int index);

// server name -> its ticks, in order.
std::map<std::string, std::vector<analyzer::TickRecord>> GenerateCluster(const SyntheticCluster& cluster);

// The names of the synthetic functions, and a manifest naming their resources
// (with `idle_marked` false, the waiting functions count as CPU work; the
// functions in `uncounted` are marked so).
analyzer::NameBook SyntheticNames();
analyzer::ResourceManifest SyntheticManifest(bool idle_marked = true, const std::vector<std::string>& uncounted = {});

// The cluster replayed through the analysis with the synthetic manifest.
analyzer::ReplayResult ReplaySynthetic(const SyntheticCluster& cluster, const analyzer::AnalyzerConfig& config,
                                       const analyzer::Thresholds& thresholds = {});

// Names of the storage functions (the root cause of kDiskTime).
std::vector<std::string> StorageFunctionNames();

}  // namespace limpwatch::testing

#endif  // LIMPWATCH_TESTS_ANALYZER_SYNTHETIC_CLUSTER_H_
