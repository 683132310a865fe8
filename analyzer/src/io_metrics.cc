#include "limpwatch/analyzer/io_metrics.h"

#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace limpwatch::analyzer {
namespace {

uint64_t Delta(uint64_t before, uint64_t after) { return after >= before ? after - before : 0; }

ServiceTime Interval(const shm::IoValues& before, const shm::IoValues& after, double ns_per_tick) {
  ServiceTime time;
  time.calls = Delta(before.calls, after.calls);
  time.bytes = Delta(before.bytes, after.bytes);
  time.errors = Delta(before.errors, after.errors);
  time.total_ms = double(Delta(before.ticks, after.ticks)) * ns_per_tick / 1e6;
  time.ms_per_call = time.calls == 0 ? 0.0 : time.total_ms / double(time.calls);
  return time;
}

double IntervalSeconds(const shm::Snapshot& before, const shm::Snapshot& after) {
  double seconds = after.TicksToNs(Delta(before.taken_ticks, after.taken_ticks)) / 1e9;
  if (seconds > 0) return seconds;
  return double(Delta(before.taken_realtime_ns, after.taken_realtime_ns)) / 1e9;
}

double PerSecond(double value, double seconds) { return seconds > 0 ? value / seconds : 0.0; }

bool IsSocket(shm::FdKind kind) {
  return kind == shm::FdKind::kTcp || kind == shm::FdKind::kUdp || kind == shm::FdKind::kUnix;
}

std::vector<ErrnoInterval> ErrnoDeltas(const shm::IoSnapshot& before, const shm::IoSnapshot& after) {
  using Key = std::tuple<uint32_t, uint32_t, int>;
  std::map<Key, uint64_t> previous;
  for (const auto& record : before.errnos) {
    previous[{uint32_t(record.kind), uint32_t(record.operation), record.error}] += record.count;
  }
  std::vector<ErrnoInterval> errors;
  for (const auto& record : after.errnos) {
    uint64_t count = Delta(previous[{uint32_t(record.kind), uint32_t(record.operation), record.error}], record.count);
    if (count == 0) continue;
    errors.push_back({record.kind, record.operation, record.error, count});
  }
  std::sort(errors.begin(), errors.end(), [](const ErrnoInterval& a, const ErrnoInterval& b) {
    if (a.count != b.count) return a.count > b.count;
    return std::tie(a.kind, a.operation, a.error) < std::tie(b.kind, b.operation, b.error);
  });
  return errors;
}

}  // namespace

IoMetrics DeriveIoMetrics(const shm::Snapshot& before, const shm::Snapshot& after) {
  using shm::FdKind;
  using shm::IoOperation;
  IoMetrics metrics;
  metrics.seconds = IntervalSeconds(before, after);
  double ns_per_tick = after.ns_per_tick;
  auto interval = [&](FdKind kind, IoOperation operation) {
    return Interval(before.io.at(kind, operation), after.io.at(kind, operation), ns_per_tick);
  };
  metrics.dread = interval(FdKind::kFile, IoOperation::kRead);
  metrics.dwrite = interval(FdKind::kFile, IoOperation::kWrite);
  metrics.dsync = interval(FdKind::kFile, IoOperation::kSync);
  metrics.nsread = Interval(before.io.socket_reads[uint32_t(shm::SocketRole::kAccepted)],
                            after.io.socket_reads[uint32_t(shm::SocketRole::kAccepted)], ns_per_tick);
  metrics.ncread = Interval(before.io.socket_reads[uint32_t(shm::SocketRole::kConnected)],
                            after.io.socket_reads[uint32_t(shm::SocketRole::kConnected)], ns_per_tick);

  for (uint32_t kind = 0; kind < shm::kFdKindCount; ++kind) {
    for (uint32_t operation = 0; operation < shm::kIoOperationCount; ++operation) {
      IoOperationInterval row;
      row.kind = static_cast<FdKind>(kind);
      row.operation = static_cast<IoOperation>(operation);
      row.time = interval(row.kind, row.operation);
      if (row.time.calls == 0 && row.time.bytes == 0 && row.time.total_ms == 0) continue;
      row.calls_per_s = PerSecond(double(row.time.calls), metrics.seconds);
      row.mb_per_s = PerSecond(double(row.time.bytes) / 1e6, metrics.seconds);
      if (IsSocket(row.kind) && row.operation == IoOperation::kRead) metrics.socket_bytes_in += row.time.bytes;
      if (IsSocket(row.kind) && row.operation == IoOperation::kWrite) metrics.socket_bytes_out += row.time.bytes;
      metrics.operations.push_back(row);
    }
  }
  metrics.request_bytes_per_s = PerSecond(double(metrics.socket_bytes_in + metrics.socket_bytes_out), metrics.seconds);
  metrics.errors = ErrnoDeltas(before.io, after.io);
  metrics.errno_overflow = Delta(before.io.errno_overflow, after.io.errno_overflow);
  metrics.untimed_calls = Delta(before.io.untimed_calls, after.io.untimed_calls);
  metrics.node = DeriveNodeRates(before.node_metrics, after.node_metrics);
  return metrics;
}

NodeRates DeriveNodeRates(const shm::NodeMetricsValues& earlier, const shm::NodeMetricsValues& later) {
  NodeRates rates;
  rates.disk_state = later.disk_state;
  rates.disk_name = later.disk_name;
  rates.disk_major = later.disk_major;
  rates.disk_minor = later.disk_minor;
  if (!earlier.valid || !later.valid || later.timestamp_ns <= earlier.timestamp_ns) return rates;
  double seconds = double(later.timestamp_ns - earlier.timestamp_ns) / 1e9;
  rates.valid = true;
  rates.seconds = seconds;
  rates.interrupts_per_s = double(Delta(earlier.interrupts, later.interrupts)) / seconds;
  rates.context_switches_per_s = double(Delta(earlier.context_switches, later.context_switches)) / seconds;
  rates.pages_allocated_per_s = double(Delta(earlier.pages_allocated, later.pages_allocated)) / seconds;
  rates.allocated_mb_per_s = rates.pages_allocated_per_s * double(sysconf(_SC_PAGESIZE)) / 1e6;
  rates.heap_growth_mb_per_s = (double(later.heap_bytes) - double(earlier.heap_bytes)) / 1e6 / seconds;
  rates.process_cpu_percent = double(Delta(earlier.process_cpu_ns, later.process_cpu_ns)) / 1e9 / seconds * 100.0;
  // Disk counters are comparable only when both samples are of the same device.
  if (later.disk_state != shm::DiskState::kDevice || earlier.disk_state != shm::DiskState::kDevice ||
      earlier.disk_major != later.disk_major || earlier.disk_minor != later.disk_minor) {
    return rates;
  }
  uint64_t reads = Delta(earlier.disk_reads_completed, later.disk_reads_completed);
  uint64_t writes = Delta(earlier.disk_writes_completed, later.disk_writes_completed);
  uint64_t sectors_read = Delta(earlier.disk_sectors_read, later.disk_sectors_read);
  uint64_t sectors_written = Delta(earlier.disk_sectors_written, later.disk_sectors_written);
  uint64_t busy_ms = Delta(earlier.disk_io_ms, later.disk_io_ms);
  uint64_t wait_ms = Delta(earlier.disk_read_ms, later.disk_read_ms) + Delta(earlier.disk_write_ms, later.disk_write_ms);
  uint64_t requests = reads + writes;
  rates.disk_requests_per_s = double(requests) / seconds;
  rates.disk_read_mb_per_s = double(sectors_read) * 512.0 / 1e6 / seconds;
  rates.disk_write_mb_per_s = double(sectors_written) * 512.0 / 1e6 / seconds;
  if (requests > 0) {
    rates.disk_iosize_kb = double(sectors_read + sectors_written) * 512.0 / 1024.0 / double(requests);
    rates.disk_svctm_ms = double(busy_ms) / double(requests);
    rates.disk_await_ms = double(wait_ms) / double(requests);
  }
  rates.disk_utilization = std::min(1.0, double(busy_ms) / (seconds * 1000.0));
  return rates;
}

const NodeRates& NodeRateTracker::Update(const shm::NodeMetricsValues& latest) {
  if (latest.valid && (!current_.valid || latest.timestamp_ns > current_.timestamp_ns)) {
    previous_ = current_;
    current_ = latest;
    rates_ = DeriveNodeRates(previous_, current_);
  }
  return rates_;
}

const char* FdKindName(shm::FdKind kind) {
  switch (kind) {
    case shm::FdKind::kFile: return "file";
    case shm::FdKind::kTcp: return "tcp";
    case shm::FdKind::kUdp: return "udp";
    case shm::FdKind::kUnix: return "unix";
    case shm::FdKind::kPipe: return "pipe";
    case shm::FdKind::kOther: return "other";
  }
  return "other";
}

const char* IoOperationName(shm::IoOperation operation) {
  switch (operation) {
    case shm::IoOperation::kRead: return "read";
    case shm::IoOperation::kWrite: return "write";
    case shm::IoOperation::kSync: return "sync";
    case shm::IoOperation::kOpen: return "open";
    case shm::IoOperation::kClose: return "close";
    case shm::IoOperation::kAccept: return "accept";
    case shm::IoOperation::kConnect: return "connect";
    case shm::IoOperation::kOther: return "other";
  }
  return "other";
}

std::string ErrnoName(int error) {
  const char* name = strerrorname_np(error);
  return name != nullptr ? std::string(name) : "errno " + std::to_string(error);
}

std::string DiskStateText(shm::DiskState state, const std::string& name, uint32_t major, uint32_t minor) {
  std::string numbers = std::to_string(major) + ":" + std::to_string(minor);
  switch (state) {
    case shm::DiskState::kUnknown: return "not sampled yet";
    case shm::DiskState::kDevice: return "device " + name + " (" + numbers + ")";
    case shm::DiskState::kNoBlockDevice:
      return "none: the storage directory is on " + numbers + ", no block device (tmpfs, overlay, NFS, ...)";
    case shm::DiskState::kBadDirectory: return "none: the storage directory cannot be examined";
    case shm::DiskState::kNotInDiskstats: return "device " + name + " (" + numbers + ") is missing from /proc/diskstats";
  }
  return "unknown state " + std::to_string(static_cast<uint32_t>(state));
}

}  // namespace limpwatch::analyzer
