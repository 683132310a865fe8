#include "limpwatch/analyzer/tick_record.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "limpwatch/analyzer/error_features.h"
#include "limpwatch/analyzer/io_metrics.h"
#include "limpwatch/shm/name_hash.h"

namespace limpwatch::analyzer {
namespace {

uint64_t Delta(uint64_t before, uint64_t after) { return after >= before ? after - before : 0; }

// A tick counts as late when its interval is this many ticks or more.
constexpr double kLateTickFactor = 1.5;

// Seed 001's and seed 003's per-tick values, from the I/O metrics of the interval.
IoTick BuildIoTick(const IoMetrics& metrics) {
  IoTick tick;
  tick.dread_ms = metrics.dread.ms_per_call;
  tick.dwrite_ms = metrics.dwrite.ms_per_call;
  tick.nsread_ms = metrics.nsread.ms_per_call;
  tick.ncread_ms = metrics.ncread.ms_per_call;
  tick.file_reads = metrics.dread.calls;
  tick.file_writes = metrics.dwrite.calls;
  tick.socket_reads = metrics.nsread.calls;
  tick.request_bytes = double(metrics.socket_bytes_in + metrics.socket_bytes_out);
  for (const ErrnoInterval& error : metrics.errors) tick.errors += error.count;
  tick.errors += metrics.errno_overflow;
  return tick;
}

NodeTick BuildNodeTick(const NodeRates& rates) {
  NodeTick tick;
  if (!rates.valid) return tick;
  tick.valid = true;
  tick.interrupts = rates.interrupts_per_s;
  tick.pages_allocated = rates.pages_allocated_per_s;
  tick.heap_growth_bytes = rates.heap_growth_mb_per_s * 1e6;
  tick.disk_requests = rates.disk_requests_per_s;
  tick.disk_iosize_kb = rates.disk_iosize_kb;
  tick.disk_svctm_ms = rates.disk_svctm_ms;
  tick.disk_await_ms = rates.disk_await_ms;
  tick.disk_utilisation = rates.disk_utilization;
  tick.cpu_ms = rates.process_cpu_percent * 10.0;  // % of a CPU -> ms per second
  return tick;
}

// A tick taken late (the analyzer thread stalled: starved of CPU, or blocked
// writing to a slow disk) spans several ticks' worth of counts. They are
// scaled to one tick, or the seconds the thread missed would look like one
// second of several times the work or the waiting: a CPU shortage, say,
// where the disk was slow. The round trip is a level, not a count: kept.
void ScaleToOneTick(const shm::Snapshot& before, const shm::Snapshot& after, uint32_t tick_ms,
                    std::unordered_map<uint64_t, FunctionTick>* by_hash) {
  if (before.taken_realtime_ns == 0 || after.taken_realtime_ns <= before.taken_realtime_ns) return;
  double elapsed_ms = double(after.taken_realtime_ns - before.taken_realtime_ns) / 1e6;
  if (elapsed_ms <= kLateTickFactor * tick_ms) return;
  double factor = double(tick_ms) / elapsed_ms;
  const uint64_t round_trip = shm::FunctionNameHash(kRoundTripName);
  for (auto& [hash, tick] : *by_hash) {
    if (hash == round_trip) continue;
    tick.calls = uint64_t(std::llround(double(tick.calls) * factor));
    tick.self_ms *= factor;
    tick.samples = uint64_t(std::llround(double(tick.samples) * factor));
  }
}

}  // namespace

TickRecord BuildTickRecord(const std::string& node, const shm::Snapshot& before, const shm::Snapshot& after,
                           uint32_t tick_ms) {
  TickRecord record;
  record.node = node;
  record.tick_ms = tick_ms;
  record.unix_ms = after.taken_realtime_ns / 1000000;
  record.tick = record.unix_ms / tick_ms;

  std::unordered_map<uint64_t, FunctionTick> by_hash;
  for (const auto& function : after.functions) {
    if (function.name_hash == 0) continue;
    shm::CounterValues previous;
    if (function.id < before.functions.size()) previous = before.functions[function.id].counters;
    uint64_t calls = Delta(previous.calls, function.counters.calls);
    uint64_t self_ticks = Delta(previous.self_ticks, function.counters.self_ticks);
    if (calls == 0 && self_ticks == 0) continue;
    FunctionTick& tick = by_hash[function.name_hash];
    tick.name_hash = function.name_hash;
    tick.calls += calls;
    tick.self_ms += after.TicksToNs(self_ticks) / 1e6;
  }
  std::unordered_map<uint64_t, uint64_t> previous_samples;
  for (const auto& sampled : before.samples.functions) previous_samples[sampled.name_hash] = sampled.samples;
  for (const auto& sampled : after.samples.functions) {
    uint64_t samples = Delta(previous_samples[sampled.name_hash], sampled.samples);
    if (samples == 0) continue;
    FunctionTick& tick = by_hash[sampled.name_hash];
    tick.name_hash = sampled.name_hash;
    tick.samples += samples;
  }
  if (before.node_metrics.valid && after.node_metrics.valid) {
    uint64_t waited_ns = Delta(before.node_metrics.run_delay_ns, after.node_metrics.run_delay_ns) +
                         Delta(before.node_metrics.cpu_throttled_ns, after.node_metrics.cpu_throttled_ns);
    if (waited_ns > 0) {
      uint64_t name_hash = shm::FunctionNameHash(kRunqueueWaitName);
      FunctionTick& waiting = by_hash[name_hash];
      waiting.name_hash = name_hash;
      waiting.self_ms = double(waited_ns) / 1e6;
    }
    uint64_t out_of_order = Delta(before.node_metrics.tcp_out_of_order, after.node_metrics.tcp_out_of_order);
    uint64_t retransmitted = Delta(before.node_metrics.tcp_retransmitted, after.node_metrics.tcp_retransmitted);
    uint64_t timeout_us =
        Delta(before.node_metrics.tcp_retransmit_timeout_us, after.node_metrics.tcp_retransmit_timeout_us);
    if (out_of_order + retransmitted > 0) {
      uint64_t name_hash = shm::FunctionNameHash(kLostPacketsName);
      FunctionTick& losing = by_hash[name_hash];
      losing.name_hash = name_hash;
      losing.calls = out_of_order + retransmitted;
      losing.self_ms = double(out_of_order) * kLostPacketMs + double(timeout_us) / 1e3;
    }
    if (uint64_t faults = Delta(before.node_metrics.major_faults, after.node_metrics.major_faults); faults > 0) {
      uint64_t name_hash = shm::FunctionNameHash(kMajorFaultsName);
      FunctionTick& faulting = by_hash[name_hash];
      faulting.name_hash = name_hash;
      faulting.calls = faults;
      faulting.self_ms = double(faults) * kMajorFaultMs;
    }
    if (after.node_metrics.tcp_round_trip_us > 0) {
      uint64_t name_hash = shm::FunctionNameHash(kRoundTripName);
      FunctionTick& round_trip = by_hash[name_hash];
      round_trip.name_hash = name_hash;
      round_trip.calls = 1;
      round_trip.self_ms = double(after.node_metrics.tcp_round_trip_us) / 1e3;
    }
  }
  IoMetrics io = DeriveIoMetrics(before, after);
  if (io.dsync.calls > 0) {
    uint64_t name_hash = shm::FunctionNameHash(kFileSyncName);
    FunctionTick& syncing = by_hash[name_hash];
    syncing.name_hash = name_hash;
    syncing.calls = io.dsync.calls;
    syncing.self_ms = io.dsync.total_ms;
  }
  for (const ErrnoInterval& error : io.errors) {
    if (IsFlowControlErrno(error.error)) continue;
    uint64_t name_hash = shm::FunctionNameHash(ErrorFeatureName({error.kind, error.operation, error.error}));
    FunctionTick& failing = by_hash[name_hash];
    failing.name_hash = name_hash;
    failing.calls += error.count;
  }
  ScaleToOneTick(before, after, tick_ms, &by_hash);
  record.functions.reserve(by_hash.size());
  for (auto& [hash, tick] : by_hash) record.functions.push_back(tick);
  std::sort(record.functions.begin(), record.functions.end(),
            [](const FunctionTick& a, const FunctionTick& b) { return a.name_hash < b.name_hash; });
  record.io = BuildIoTick(io);
  record.node_stats = BuildNodeTick(io.node);
  return record;
}

std::vector<FunctionName> CollectFunctionNames(const shm::Snapshot& snapshot) {
  std::vector<FunctionName> names;
  for (const auto& function : snapshot.functions) {
    if (function.name_hash != 0) names.push_back({function.name_hash, function.name});
  }
  for (const auto& sampled : snapshot.samples.functions) names.push_back({sampled.name_hash, sampled.name});
  names.push_back({shm::FunctionNameHash(kRunqueueWaitName), kRunqueueWaitName});
  names.push_back({shm::FunctionNameHash(kLostPacketsName), kLostPacketsName});
  names.push_back({shm::FunctionNameHash(kRoundTripName), kRoundTripName});
  names.push_back({shm::FunctionNameHash(kFileSyncName), kFileSyncName});
  names.push_back({shm::FunctionNameHash(kMajorFaultsName), kMajorFaultsName});
  names.push_back({shm::FunctionNameHash(kCpuTimeName), kCpuTimeName});
  for (const auto& error : snapshot.io.errnos) {
    if (IsFlowControlErrno(error.error)) continue;
    std::string name = ErrorFeatureName({error.kind, error.operation, error.error});
    names.push_back({shm::FunctionNameHash(name), name});
  }
  return names;
}

}  // namespace limpwatch::analyzer
