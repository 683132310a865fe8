#include "limpwatch/analyzer/interval.h"

namespace limpwatch::analyzer {
namespace {

uint64_t Delta(uint64_t before, uint64_t after) { return after >= before ? after - before : 0; }

shm::DiagnosticValues Delta(const shm::DiagnosticValues& before, const shm::DiagnosticValues& after) {
  return {Delta(before.overflowed_calls, after.overflowed_calls), Delta(before.unmatched_exits, after.unmatched_exits),
          Delta(before.resynced_frames, after.resynced_frames), Delta(before.untracked_calls, after.untracked_calls)};
}

}  // namespace

IntervalRecord DiffSnapshots(const shm::Snapshot& before, const shm::Snapshot& after) {
  IntervalRecord interval;
  interval.start_realtime_ns = before.taken_realtime_ns;
  interval.end_realtime_ns = after.taken_realtime_ns;
  interval.seconds = after.TicksToNs(Delta(before.taken_ticks, after.taken_ticks)) / 1e9;
  for (const auto& function : after.functions) {
    shm::CounterValues previous;
    if (function.id < before.functions.size()) previous = before.functions[function.id].counters;
    uint64_t calls = Delta(previous.calls, function.counters.calls);
    uint64_t self_ticks = Delta(previous.self_ticks, function.counters.self_ticks);
    uint64_t total_ticks = Delta(previous.total_ticks, function.counters.total_ticks);
    if (calls == 0 && self_ticks == 0 && total_ticks == 0) continue;
    FunctionInterval record;
    record.id = function.id;
    record.name_hash = function.name_hash;
    record.name = function.name;
    record.calls = calls;
    record.self_ns = after.TicksToNs(self_ticks);
    record.total_ns = after.TicksToNs(total_ticks);
    interval.calls += calls;
    interval.functions.push_back(std::move(record));
  }
  interval.diagnostics = Delta(before.diagnostics, after.diagnostics);
  interval.threads_started = Delta(before.threads_started, after.threads_started);
  interval.threads_retired = Delta(before.threads_retired, after.threads_retired);
  // Overflowed calls are still counted (only not timed), so they are not lost.
  interval.lost_calls =
      interval.diagnostics.untracked_calls + Delta(before.calls_without_slot, after.calls_without_slot);
  return interval;
}

}  // namespace limpwatch::analyzer
