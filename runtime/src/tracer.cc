// The hot path's cold half and the compiler's hook entry points.
#include <pthread.h>
#include <unistd.h>

#include <cerrno>

#include "flow_recorder.h"
#include "process.h"
#include "shadow_stack.h"

namespace limpwatch::runtime {

thread_local ThreadState t_thread [[gnu::tls_model("initial-exec")]];

namespace {

LW_NO_INSTRUMENT bool TryAcquireSlot(ThreadState& thread) {
  const shm::SegmentView& view = CurrentSegmentView();
  shm::SegmentHeader* header = view.header();
  uint32_t max_threads = header->max_threads;
  uint32_t tid = static_cast<uint32_t>(gettid());
  for (uint32_t probe = 0; probe < max_threads; ++probe) {
    uint32_t index = (tid + probe) % max_threads;
    shm::ThreadSlotHeader* slot = view.slot(index);
    uint32_t expected = static_cast<uint32_t>(shm::SlotState::kFree);
    if (!slot->state.compare_exchange_strong(expected, static_cast<uint32_t>(shm::SlotState::kActive),
                                             std::memory_order_acq_rel)) {
      continue;
    }
    slot->tid.store(tid, std::memory_order_relaxed);
    slot->generation.fetch_add(1, std::memory_order_release);
    slot->acquired_ticks.store(ReadTicks(), std::memory_order_relaxed);
    slot->depth.store(0, std::memory_order_relaxed);
    thread.slot = slot;
    thread.slot_index = index;
    thread.frames = view.frames(index);
    thread.counters = view.counters(index);
    thread.io = view.io(index);
    thread.stack_depth = header->stack_depth;
    thread.depth = 0;
    thread.touched_count = 0;
    AttachFlowRing(thread);
    header->counters.threads_started.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  header->counters.threads_without_slot.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void FoldInto(std::atomic<uint64_t>& total, std::atomic<uint64_t>& own) {
  uint64_t value = own.load(std::memory_order_relaxed);
  if (value != 0) total.fetch_add(value, std::memory_order_relaxed);
  own.store(0, std::memory_order_relaxed);
}

void FoldDiagnostics(shm::StackDiagnostics& total, shm::StackDiagnostics& own) {
  FoldInto(total.overflowed_calls, own.overflowed_calls);
  FoldInto(total.unmatched_exits, own.unmatched_exits);
  FoldInto(total.resynced_frames, own.resynced_frames);
  FoldInto(total.untracked_calls, own.untracked_calls);
}

// Adds one thread's errno counts to the retired totals, where several
// retiring threads may insert the same key at once.
void FoldErrnos(shm::IoBlock& total, shm::IoBlock& own) {
  for (shm::ErrnoCount& slot : own.errnos) {
    uint32_t key = slot.key.load(std::memory_order_relaxed);
    if (key == 0) continue;
    uint64_t count = slot.count.load(std::memory_order_relaxed);
    bool placed = false;
    for (shm::ErrnoCount& target : total.errnos) {
      uint32_t existing = target.key.load(std::memory_order_acquire);
      if (existing == 0 && target.key.compare_exchange_strong(existing, key, std::memory_order_acq_rel)) {
        existing = key;
      }
      if (existing == key) {
        target.count.fetch_add(count, std::memory_order_relaxed);
        placed = true;
        break;
      }
    }
    if (!placed) total.errno_overflow.fetch_add(count, std::memory_order_relaxed);
    slot.count.store(0, std::memory_order_relaxed);
    slot.key.store(0, std::memory_order_relaxed);
  }
  FoldInto(total.errno_overflow, own.errno_overflow);
}

void FoldIo(shm::IoBlock& total, shm::IoBlock& own) {
  for (uint32_t kind = 0; kind < shm::kFdKindCount; ++kind) {
    for (uint32_t operation = 0; operation < shm::kIoOperationCount; ++operation) {
      shm::IoCounters& to = total.counters[kind][operation];
      shm::IoCounters& from = own.counters[kind][operation];
      FoldInto(to.calls, from.calls);
      FoldInto(to.bytes, from.bytes);
      FoldInto(to.ticks, from.ticks);
      FoldInto(to.errors, from.errors);
    }
  }
  for (uint32_t role = 0; role < shm::kSocketRoleCount; ++role) {
    FoldInto(total.socket_reads[role].calls, own.socket_reads[role].calls);
    FoldInto(total.socket_reads[role].bytes, own.socket_reads[role].bytes);
    FoldInto(total.socket_reads[role].ticks, own.socket_reads[role].ticks);
    FoldInto(total.socket_reads[role].errors, own.socket_reads[role].errors);
  }
  FoldInto(total.untimed_calls, own.untimed_calls);
  FoldErrnos(total, own);
}

}  // namespace

LW_COLD bool AttachThread(ThreadState& thread) {
  if (thread.status != ThreadStatus::kUnattached) return false;
  int saved_errno = errno;
  bool recording = false;
  if (!EnsureProcessInitialized()) {
    thread.status = ThreadStatus::kIgnored;
  } else if (TryAcquireSlot(thread)) {
    RegisterThreadExit();
    thread.status = ThreadStatus::kRecording;
    recording = true;
  } else {
    thread.status = ThreadStatus::kNoSlot;
  }
  errno = saved_errno;
  return recording;
}

LW_NO_INSTRUMENT void ReleaseThreadSlot(ThreadState& thread) {
  if (thread.status != ThreadStatus::kRecording) return;
  const shm::SegmentView& view = CurrentSegmentView();
  shm::SegmentHeader* header = view.header();
  header->retiring_now.fetch_add(1, std::memory_order_acq_rel);
  thread.slot->state.store(static_cast<uint32_t>(shm::SlotState::kRetiring), std::memory_order_release);
  DetachFlowRing(thread);
  uint32_t functions = std::min(header->next_function_id.load(std::memory_order_acquire), header->max_functions);
  shm::FunctionCounters* retired = view.retired_counters();
  auto fold = [&](uint32_t id) {
    FoldInto(retired[id].calls, thread.counters[id].calls);
    FoldInto(retired[id].self_ticks, thread.counters[id].self_ticks);
    FoldInto(retired[id].total_ticks, thread.counters[id].total_ticks);
  };
  // Ticks only ever go to a function whose call this thread counted in
  // this slot (inherited frames add none), so the listed ids hold every
  // non-zero counter.
  if (thread.touched_count <= kTouchedFunctionCapacity) {
    for (uint32_t index = 0; index < thread.touched_count; ++index) {
      if (thread.touched[index] < functions) fold(thread.touched[index]);
    }
  } else {
    for (uint32_t id = 0; id < functions; ++id) fold(id);
  }
  FoldDiagnostics(view.retired()->diagnostics, thread.slot->diagnostics);
  FoldIo(view.retired()->io, *thread.io);
  view.retired()->threads.fetch_add(1, std::memory_order_relaxed);
  thread.slot->depth.store(0, std::memory_order_relaxed);
  thread.slot->tid.store(0, std::memory_order_relaxed);
  thread.slot->state.store(static_cast<uint32_t>(shm::SlotState::kFree), std::memory_order_release);
  header->retire_generation.fetch_add(1, std::memory_order_acq_rel);
  header->retiring_now.fetch_sub(1, std::memory_order_acq_rel);
  header->counters.threads_retired.fetch_add(1, std::memory_order_relaxed);
  thread.status = ThreadStatus::kUnattached;
  thread.slot = nullptr;
  thread.frames = nullptr;
  thread.counters = nullptr;
  thread.io = nullptr;
  thread.depth = 0;
}

LW_COLD void EnterUnusual(ThreadState& thread, uint64_t address, uint32_t id) {
  uint32_t depth = thread.depth;
  shm::StackDiagnostics& diagnostics = thread.slot->diagnostics;
  if (depth >= thread.stack_depth) {
    // Too deep to store: the call still counts, its time goes to the deepest stored frame.
    Bump(diagnostics.overflowed_calls, 1);
    if (id != shm::kNoFunction) {
      CountCall(thread, id);
    } else {
      Bump(diagnostics.untracked_calls, 1);
    }
  } else {
    Bump(diagnostics.untracked_calls, 1);
    shm::StackFrame& frame = thread.frames[depth];
    frame.address.store(address, std::memory_order_relaxed);
    frame.function.store(shm::kNoFunction, std::memory_order_relaxed);
    frame.flags.store(shm::kFrameUntracked, std::memory_order_relaxed);
    frame.child_ticks.store(0, std::memory_order_relaxed);
    frame.entry_ticks.store(ReadTicks(), std::memory_order_relaxed);
  }
  thread.depth = depth + 1;
  thread.slot->depth.store(depth + 1, std::memory_order_release);
}

LW_COLD void ExitUnusual(ThreadState& thread, uint64_t address, uint64_t now) {
  uint32_t depth = thread.depth;
  shm::StackDiagnostics& diagnostics = thread.slot->diagnostics;
  if (depth == 0) {
    Bump(diagnostics.unmatched_exits, 1);
    return;
  }
  if (depth > thread.stack_depth) {
    // Inside the unstored part of the stack the pairing cannot be checked.
    thread.depth = depth - 1;
    thread.slot->depth.store(depth - 1, std::memory_order_release);
    return;
  }
  // The top frame is not this function: frames above it were left without
  // their exit (longjmp, or unwinding through code without exit hooks).
  uint32_t match = depth - 1;
  while (match > 0 && thread.frames[match - 1].address.load(std::memory_order_relaxed) != address) --match;
  if (match == 0) {
    // Not on the stack at all (entered before recording began, or while
    // the guard was set): ignore it and keep the stack as it is.
    Bump(diagnostics.unmatched_exits, 1);
    return;
  }
  uint32_t target = match - 1;
  for (uint32_t level = depth - 1; level > target; --level) {
    // The abandoned frame's own time is unknown; it stays in the self time
    // of the frame that regained control. Its finished children are passed on.
    uint64_t children = thread.frames[level].child_ticks.load(std::memory_order_relaxed);
    Bump(thread.frames[level - 1].child_ticks, children);
    Bump(diagnostics.resynced_frames, 1);
  }
  PopFrame(thread, target, now);
}

LW_COLD void NoteTouchedFunction(ThreadState& thread, uint32_t id) {
  if (thread.touched_count < kTouchedFunctionCapacity) {
    thread.touched[thread.touched_count++] = id;
  } else {
    thread.touched_count = kTouchedFunctionCapacity + 1;
  }
}

LW_COLD void CountCallWithoutSlot() {
  if (g_process.phase.load(std::memory_order_acquire) != static_cast<uint32_t>(ProcessPhase::kReady)) return;
  g_process.header->counters.calls_without_slot.fetch_add(1, std::memory_order_relaxed);
}

// The thread's own counters and stack may be halfway through an update that
// this call interrupted: the retired totals, written with atomic adds, take
// it. A function not registered yet is not registered here (the registry's
// insertion may be what was interrupted): the call is counted as lost.
LW_COLD void CountCallDuringHook(uint64_t id_field) {
  if (g_process.phase.load(std::memory_order_acquire) != static_cast<uint32_t>(ProcessPhase::kReady)) return;
  uint32_t id = id_field == kIdFieldAbsent ? shm::kNoFunction : DecodeIdField(id_field);
  if (id == kUnselectedFunction) return;  // not traced: none of its calls is counted
  shm::ProcessCounters& counters = g_process.header->counters;
  counters.calls_during_hooks.fetch_add(1, std::memory_order_relaxed);
  if (id >= g_process.max_functions) {
    counters.calls_during_hooks_lost.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  CurrentSegmentView().retired_counters()[id].calls.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace limpwatch::runtime

extern "C" {

[[gnu::visibility("default"), gnu::no_instrument_function]] void __cyg_profile_func_enter(void* function,
                                                                                          void* call_site) {
  limpwatch::runtime::RecordEnter(reinterpret_cast<uint64_t>(function),
                                  reinterpret_cast<uint64_t>(__builtin_return_address(0)));
}

[[gnu::visibility("default"), gnu::no_instrument_function]] void __cyg_profile_func_exit(void* function,
                                                                                         void* call_site) {
  limpwatch::runtime::RecordExit(reinterpret_cast<uint64_t>(function),
                                 reinterpret_cast<uint64_t>(__builtin_return_address(0)));
}

}  // extern "C"
