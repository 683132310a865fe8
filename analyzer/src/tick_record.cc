#include "limpwatch/analyzer/tick_record.h"

#include <algorithm>
#include <unordered_map>

namespace limpwatch::analyzer {
namespace {

uint64_t Delta(uint64_t before, uint64_t after) { return after >= before ? after - before : 0; }

shm::IoValues Delta(const shm::IoValues& before, const shm::IoValues& after) {
  return {Delta(before.calls, after.calls), Delta(before.bytes, after.bytes), Delta(before.ticks, after.ticks),
          Delta(before.errors, after.errors)};
}

shm::IoValues Sum(const shm::IoSnapshot& io, shm::FdKind kind, std::initializer_list<shm::IoOperation> operations) {
  shm::IoValues total;
  for (shm::IoOperation operation : operations) {
    const shm::IoValues& value = io.at(kind, operation);
    total.calls += value.calls;
    total.bytes += value.bytes;
    total.ticks += value.ticks;
    total.errors += value.errors;
  }
  return total;
}

double MeanMs(const shm::IoValues& value, double ns_per_tick) {
  return value.calls == 0 ? 0.0 : double(value.ticks) * ns_per_tick / 1e6 / double(value.calls);
}

IoTick BuildIoTick(const shm::Snapshot& before, const shm::Snapshot& after) {
  using shm::FdKind;
  using shm::IoOperation;
  IoTick tick;
  auto file_reads = Delta(Sum(before.io, FdKind::kFile, {IoOperation::kRead}),
                          Sum(after.io, FdKind::kFile, {IoOperation::kRead}));
  auto file_writes = Delta(Sum(before.io, FdKind::kFile, {IoOperation::kWrite, IoOperation::kSync}),
                           Sum(after.io, FdKind::kFile, {IoOperation::kWrite, IoOperation::kSync}));
  tick.dread_ms = MeanMs(file_reads, after.ns_per_tick);
  tick.dwrite_ms = MeanMs(file_writes, after.ns_per_tick);
  tick.file_reads = file_reads.calls;
  tick.file_writes = file_writes.calls;
  shm::IoValues socket_reads, socket_writes;
  for (FdKind kind : {FdKind::kTcp, FdKind::kUdp, FdKind::kUnix}) {
    auto reads = Delta(Sum(before.io, kind, {IoOperation::kRead}), Sum(after.io, kind, {IoOperation::kRead}));
    auto writes = Delta(Sum(before.io, kind, {IoOperation::kWrite}), Sum(after.io, kind, {IoOperation::kWrite}));
    socket_reads.calls += reads.calls;
    socket_reads.ticks += reads.ticks;
    socket_reads.bytes += reads.bytes;
    socket_writes.bytes += writes.bytes;
  }
  tick.nsread_ms = MeanMs(socket_reads, after.ns_per_tick);
  tick.socket_reads = socket_reads.calls;
  tick.request_bytes = double(socket_reads.bytes + socket_writes.bytes);
  for (uint32_t kind = 0; kind < shm::kFdKindCount; ++kind) {
    for (uint32_t operation = 0; operation < shm::kIoOperationCount; ++operation) {
      tick.errors += Delta(before.io.counters[kind][operation].errors, after.io.counters[kind][operation].errors);
    }
  }
  return tick;
}

NodeTick BuildNodeTick(const shm::NodeMetricsValues& before, const shm::NodeMetricsValues& after) {
  NodeTick tick;
  if (!before.valid || !after.valid || after.timestamp_ns <= before.timestamp_ns) return tick;
  double seconds = double(after.timestamp_ns - before.timestamp_ns) / 1e9;
  tick.valid = true;
  tick.interrupts = double(Delta(before.interrupts, after.interrupts)) / seconds;
  tick.pages_allocated = double(Delta(before.pages_allocated, after.pages_allocated)) / seconds;
  tick.heap_growth_bytes = (double(after.heap_bytes) - double(before.heap_bytes)) / seconds;
  uint64_t requests = Delta(before.disk_reads_completed, after.disk_reads_completed) +
                      Delta(before.disk_writes_completed, after.disk_writes_completed);
  uint64_t sectors = Delta(before.disk_sectors_read, after.disk_sectors_read) +
                     Delta(before.disk_sectors_written, after.disk_sectors_written);
  uint64_t busy_ms = Delta(before.disk_io_ms, after.disk_io_ms);
  uint64_t wait_ms = Delta(before.disk_read_ms, after.disk_read_ms) + Delta(before.disk_write_ms, after.disk_write_ms);
  tick.disk_requests = double(requests) / seconds;
  if (requests > 0) {
    tick.disk_iosize_kb = double(sectors) * 512.0 / 1024.0 / double(requests);
    tick.disk_svctm_ms = double(busy_ms) / double(requests);
    tick.disk_await_ms = double(wait_ms) / double(requests);
  }
  tick.disk_utilisation = std::min(1.0, double(busy_ms) / (seconds * 1000.0));
  tick.cpu_ms = double(Delta(before.process_cpu_ns, after.process_cpu_ns)) / 1e6 / seconds;
  return tick;
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
  record.functions.reserve(by_hash.size());
  for (auto& [hash, tick] : by_hash) record.functions.push_back(tick);
  std::sort(record.functions.begin(), record.functions.end(),
            [](const FunctionTick& a, const FunctionTick& b) { return a.name_hash < b.name_hash; });
  record.io = BuildIoTick(before, after);
  record.node_stats = BuildNodeTick(before.node_metrics, after.node_metrics);
  return record;
}

std::vector<FunctionName> CollectFunctionNames(const shm::Snapshot& snapshot) {
  std::vector<FunctionName> names;
  for (const auto& function : snapshot.functions) {
    if (function.name_hash != 0) names.push_back({function.name_hash, function.name});
  }
  for (const auto& sampled : snapshot.samples.functions) names.push_back({sampled.name_hash, sampled.name});
  return names;
}

}  // namespace limpwatch::analyzer
