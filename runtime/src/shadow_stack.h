// The enter/exit logic on a thread's shadow stack.
//
// Enter pushes a frame and counts the call; exit pops it, adds its total time
// to its parent's child time and its self time (total minus traced children)
// to the function. Frames live in the thread's slot of the segment, so a
// reader sees what every thread is inside right now and for how long.
//
// Anything unusual leaves the inline path for a cold function: a thread with
// no slot yet, a stack deeper than its stored frames, an exit that does not
// match the top frame (longjmp, an exception through C frames).
//
// A function not selected for tracing (LIMPWATCH_SELECT) costs one load
// and one compare: enter and exit both read the function's slot of the
// unselected filter (function_registry.h) and return when it holds the
// function's address, before they touch the thread's state (guard, status,
// top frame). Its time stays in its caller's self time. Anything else goes on
// to the full path, a separate non-inlined function (so that the hook itself
// needs no stack frame and saves no register), which probes the index: an
// unselected function the filter missed (a collision, the filter off)
// returns there, still without touching the thread's state; an unknown one
// is registered.
//
// With LIMPWATCH_PATCH=1 the filter stays off, so that every unselected
// compiler hook reaches the full path, which notes its call site, once, for
// the call to be turned into a NOP (patching/call_site_patcher.h).
//
// Re-selection while a function is on the stack:
// - turned off while it runs: its exit is now a probe that returns, so its
//   frame stays on the stack. The next traced exit below it (its caller's)
//   does not match the top frame and ExitUnusual pops the stale frame as it
//   pops frames abandoned by a longjmp: the call stays counted, its own time
//   goes to the caller's self time (as an unselected call's does), its traced
//   children's time is passed on, and resynced_frames counts it.
// - turned on while it runs: its exit finds no frame; ExitUnusual counts it
//   as unmatched and leaves the stack as it is.
#ifndef LIMPWATCH_RUNTIME_SRC_SHADOW_STACK_H_
#define LIMPWATCH_RUNTIME_SRC_SHADOW_STACK_H_

#include <cstdint>

#include "clock.h"
#include "flow_recorder.h"
#include "function_registry.h"
#include "patching/call_site_table.h"
#include "thread_state.h"

namespace limpwatch::runtime {

// Cold paths. Each returns with the thread's state consistent.
LW_COLD bool AttachThread(ThreadState& thread);  // true when the thread now records
LW_COLD void EnterUnusual(ThreadState& thread, uint64_t address, uint32_t id);
LW_COLD void ExitUnusual(ThreadState& thread, uint64_t address, uint64_t now);
LW_COLD void CountCallWithoutSlot();
// A call of the program's made while limpwatch was at work on its thread (a
// signal handler that interrupted a hook, a thread past its exit handler):
// counted in the retired totals, without a frame or a time.
LW_COLD void CountCallDuringHook(uint64_t id_field);
LW_COLD void NoteTouchedFunction(ThreadState& thread, uint32_t id);

LW_HOT void Bump(std::atomic<uint64_t>& counter, uint64_t amount) {
  // Single writer: a plain load and store, no locked instruction.
  counter.store(counter.load(std::memory_order_relaxed) + amount, std::memory_order_relaxed);
}

// Counts a call of `id` in the thread's slot; the first one is noted, so
// that retiring folds only the functions the thread called.
LW_HOT void CountCall(ThreadState& thread, uint32_t id) {
  std::atomic<uint64_t>& calls = thread.counters[id].calls;
  uint64_t before = calls.load(std::memory_order_relaxed);
  calls.store(before + 1, std::memory_order_relaxed);
  if (__builtin_expect(before == 0, 0)) NoteTouchedFunction(thread, id);
}

// `id_field` is what the hot path's probe found (kIdFieldAbsent: not
// registered yet, looked up again here, which registers it).
LW_HOT void PushFrame(ThreadState& thread, uint64_t address, uint64_t id_field) {
  uint32_t id = id_field == kIdFieldAbsent ? LookupFunction(address) : DecodeIdField(id_field);
  if (id == kUnselectedFunction) return;
  uint32_t depth = thread.depth;
  if (__builtin_expect(depth >= thread.stack_depth || id == shm::kNoFunction, 0)) {
    EnterUnusual(thread, address, id);
    return;
  }
  shm::StackFrame& frame = thread.frames[depth];
  frame.address.store(address, std::memory_order_relaxed);
  frame.function.store(id, std::memory_order_relaxed);
  frame.flags.store(0, std::memory_order_relaxed);
  frame.child_ticks.store(0, std::memory_order_relaxed);
  uint64_t entry = ReadTicks();
  frame.entry_ticks.store(entry, std::memory_order_relaxed);
  thread.depth = depth + 1;
  thread.slot->depth.store(depth + 1, std::memory_order_release);
  CountCall(thread, id);
  NoteFlowEnter(thread, id, depth, entry);
}

// Pops the top frame (the caller checked it is `address`'s) at time `now`.
LW_HOT void PopFrame(ThreadState& thread, uint32_t top, uint64_t now) {
  shm::StackFrame& frame = thread.frames[top];
  uint64_t total = now - frame.entry_ticks.load(std::memory_order_relaxed);
  uint64_t children = frame.child_ticks.load(std::memory_order_relaxed);
  uint32_t flags = frame.flags.load(std::memory_order_relaxed);
  if (__builtin_expect(thread.flow_root_depth != 0, 0)) {
    AppendFlowExit(thread, frame.function.load(std::memory_order_relaxed), top, flags == 0, now);
  }
  if (__builtin_expect(flags == 0, 1)) {
    shm::FunctionCounters& counters = thread.counters[frame.function.load(std::memory_order_relaxed)];
    Bump(counters.self_ticks, total > children ? total - children : 0);
    Bump(counters.total_ticks, total);
    if (top > 0) Bump(thread.frames[top - 1].child_ticks, total);
  } else if ((flags & shm::kFrameUntracked) && top > 0) {
    // An untracked function's own time stays in its caller's self time; only
    // the traced descendants it called are passed up.
    Bump(thread.frames[top - 1].child_ticks, children);
  }
  thread.depth = top;
  thread.slot->depth.store(top, std::memory_order_release);
}

// An unselected function's compiler hook returning to `return_address`
// (0: not a compiler hook) may have its call rewritten into a NOP.
LW_HOT void NoteUnselectedHook(uint64_t return_address, uint64_t address, patching::HookKind kind) {
  if (__builtin_expect(patching::g_learning_call_sites.load(std::memory_order_relaxed), 0) && return_address != 0) {
    patching::LearnCallSite(return_address, address, kind);
  }
}

// The full paths, taken when the filter did not answer "unselected". `home`
// is the function's home entry in the index, read by the caller.
[[gnu::no_instrument_function, gnu::noinline]] inline void RecordTracedEnter(uint64_t address, uint64_t home,
                                                                             uint64_t return_address = 0) {
  uint64_t id_field = IdFieldGivenHome(address, home);
  if (id_field == kUnselectedIdField) {
    NoteUnselectedHook(return_address, address, patching::HookKind::kEnter);
    return;
  }
  ThreadState& thread = t_thread;
  if (thread.in_hook) {
    // limpwatch's own code is never instrumented: this is the program's.
    if (thread.status != ThreadStatus::kIgnored) CountCallDuringHook(id_field);
    return;
  }
  thread.in_hook = kGuardCounting;
  if (__builtin_expect(thread.status == ThreadStatus::kRecording, 1) || AttachThread(thread)) {
    PushFrame(thread, address, id_field);
  } else if (thread.status == ThreadStatus::kNoSlot) {
    CountCallWithoutSlot();
  }
  thread.in_hook = 0;
}

[[gnu::no_instrument_function, gnu::noinline]] inline void RecordTracedExit(uint64_t address, uint64_t home,
                                                                            uint64_t return_address = 0) {
  if (IdFieldGivenHome(address, home) == kUnselectedIdField) {
    NoteUnselectedHook(return_address, address, patching::HookKind::kExit);
    return;
  }
  ThreadState& thread = t_thread;
  if (thread.in_hook) return;
  thread.in_hook = kGuardCounting;
  if (__builtin_expect(thread.status == ThreadStatus::kRecording, 1)) {
    uint32_t depth = thread.depth;
    if (__builtin_expect(depth - 1 < thread.stack_depth, 1) &&
        thread.frames[depth - 1].address.load(std::memory_order_relaxed) == address) {
      PopFrame(thread, depth - 1, ReadTicks());
    } else {
      ExitUnusual(thread, address, ReadTicks());
    }
  }
  thread.in_hook = 0;
}

// `return_address`: where a compiler hook returns to, or 0 for every other
// caller (scopes, patched entries).
LW_HOT void RecordEnter(uint64_t address, uint64_t return_address = 0) {
  if (FilteredAsUnselected(address)) return;
  RecordTracedEnter(address, HomeEntry(address), return_address);
}

LW_HOT void RecordExit(uint64_t address, uint64_t return_address = 0) {
  if (FilteredAsUnselected(address)) return;
  RecordTracedExit(address, HomeEntry(address), return_address);
}

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_SHADOW_STACK_H_
