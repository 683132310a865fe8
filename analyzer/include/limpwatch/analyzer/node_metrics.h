// Node metrics (seed 003): what the machine around a server is doing, read
// from /proc once per tick, off the hot path.
//
//   interrupts         /proc/stat "intr" (the total, first number)
//   context switches   /proc/stat "ctxt"
//   pages allocated    /proc/vmstat, the sum of every pgalloc_* zone counter
//   heap bytes         this process: what malloc holds from the system
//                      (mallinfo2 arena + hblkhd; /proc/self/statm data
//                      when another allocator leaves mallinfo2 at zero)
//   process CPU        this process: CLOCK_PROCESS_CPUTIME_ID
//   disk               /proc/diskstats, the line of the block device that
//                      holds the storage directory (LIMPWATCH_STORAGE_DIR)
//
// The storage directory's device: stat() gives st_dev; /sys/dev/block/MAJ:MIN
// exists only for block devices and names it ("vda", "sda1", "dm-0"). A
// partition stands for itself: its own diskstats line is sampled, not its
// disk's. tmpfs, overlay, NFS and btrfs subvolumes have anonymous devices
// (major 0) and no such entry: the record then says kNoBlockDevice and holds
// no disk counters.
//
// Everything is cumulative, as the kernel keeps it; readers derive rates
// from two samples (io_metrics.h). The sampler has no state beyond the
// device it resolved, so it may run in any process; liblimpwatch.so runs it
// on the runtime's service thread and publishes into its segment.
#ifndef LIMPWATCH_ANALYZER_NODE_METRICS_H_
#define LIMPWATCH_ANALYZER_NODE_METRICS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "limpwatch/analyzer/tcp_loss_counters.h"
#include "limpwatch/shm/layout.h"

namespace limpwatch::analyzer {

struct StorageDevice {
  shm::DiskState state = shm::DiskState::kUnknown;
  std::string directory;  // as given
  uint32_t major = 0;     // st_dev of the directory (kDevice, kNoBlockDevice)
  uint32_t minor = 0;
  std::string name;       // kDevice: the kernel's name for it
  std::string problem;    // not kDevice: one line saying why
};

// Finds the block device holding `directory`. `sys_root` is normally "/sys".
StorageDevice ResolveStorageDevice(const std::string& directory, const std::string& sys_root = "/sys");

struct DiskCounters {
  uint64_t reads_completed = 0;
  uint64_t sectors_read = 0;
  uint64_t read_ms = 0;
  uint64_t writes_completed = 0;
  uint64_t sectors_written = 0;
  uint64_t write_ms = 0;
  uint64_t io_ms = 0;           // time the device had requests in flight
  uint64_t weighted_io_ms = 0;
};

struct NodeSample {
  uint64_t timestamp_ns = 0;  // CLOCK_REALTIME
  uint64_t interrupts = 0;
  uint64_t context_switches = 0;
  uint64_t pages_allocated = 0;
  uint64_t heap_bytes = 0;
  uint64_t process_cpu_ns = 0;
  uint64_t run_delay_ns = 0;      // summed over the process's threads
  uint64_t cpu_throttled_ns = 0;  // by a CPU quota, counted by the sampler since its first read
  // By the TCP connections the process serves, since the sampler's first read.
  uint64_t tcp_retransmitted = 0;
  uint64_t tcp_out_of_order = 0;
  uint64_t tcp_retransmit_timeout_us = 0;  // each retransmission weighted by its connection's timeout
  uint64_t tcp_round_trip_us = 0;  // median smoothed RTT of the served connections active since the last read
  TcpLossTotals tcp_opened;  // by the connections it opened to other services
  uint64_t major_faults = 0;               // page faults that read from storage, since the process started
  bool disk_found = false;  // the device's diskstats line was read
  DiskCounters disk;
};

// Parsers of the /proc texts; each returns false when its field is missing.
bool ParseProcStat(std::string_view text, uint64_t* interrupts, uint64_t* context_switches);
bool ParseVmstatPagesAllocated(std::string_view text, uint64_t* pages);
bool ParseDiskstats(std::string_view text, uint32_t major, uint32_t minor, DiskCounters* out);
// The second field of a /proc/<pid>/task/<tid>/schedstat line: ns runnable
// but waiting for a CPU.
bool ParseSchedstatRunDelay(std::string_view text, uint64_t* run_delay_ns);
// /proc/<pid>/stat: majflt, the 12th field (the command, field 2, may hold spaces and parentheses).
bool ParseProcessStatMajorFaults(std::string_view text, uint64_t* major_faults);
// A cgroup cpu.stat: throttled_time (v1, ns) or throttled_usec (v2).
bool ParseCpuStatThrottledNs(std::string_view text, uint64_t* throttled_ns);
// The cpu.stat of the cgroup a /proc/<pid>/cgroup text puts the process in
// (v1 "cpu" controller, else the v2 group), under `cgroup_root`
// (/sys/fs/cgroup); empty when there is none.
std::string CpuStatPath(std::string_view proc_cgroup, const std::string& cgroup_root);

// Writes `sample` into `record` under its sequence lock: sequence to odd,
// the fields, sequence to even with release. One writer per record.
void PublishNodeSample(const NodeSample& sample, const StorageDevice& device, shm::NodeMetricsRecord* record);

class NodeMetricsSampler {
 public:
  // Resolves the device once, now. `proc_root` and `sys_root` are "/proc"
  // and "/sys" except in tests of other layouts.
  explicit NodeMetricsSampler(const std::string& storage_directory, std::string proc_root = "/proc",
                              std::string sys_root = "/sys");

  const StorageDevice& device() const { return device_; }

  // Reads every source now. A source that cannot be read leaves its fields
  // at 0 and adds one line to *problems.
  NodeSample Read(std::vector<std::string>* problems) const;

  // Read() and PublishNodeSample().
  void SampleInto(shm::NodeMetricsRecord* record, std::vector<std::string>* problems);

 private:
  // A process moved to another cgroup (a fault injector, a container
  // manager) starts from that cgroup's count: only changes within one
  // cgroup are added up.
  struct ThrottleTracker {
    std::string cpu_stat_path;
    uint64_t last_ns = 0;
    uint64_t total_ns = 0;
  };
  uint64_t CpuThrottledNs() const;

  std::string proc_root_;
  std::string sys_root_;
  StorageDevice device_;
  mutable ThrottleTracker throttle_;
  mutable TcpLossCounters tcp_loss_;
};

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_NODE_METRICS_H_
