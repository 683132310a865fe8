#include "patching/return_stack.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "patching/trampolines.h"
#include "shadow_stack.h"

namespace limpwatch::runtime::patching {

thread_local ReturnStack t_return_stack [[gnu::tls_model("initial-exec")]];

namespace {

LW_HOT uint64_t ReturnPoint() { return reinterpret_cast<uint64_t>(limpwatch_patched_return_point); }

// Keeps, in order, the entries for which `keep(entry)` is true.
template <typename Keep>
LW_NO_INSTRUMENT uint32_t Compact(ReturnStack& stack, Keep keep) {  // keep(HijackedReturn&) may change the entry
  uint32_t kept = 0;
  for (uint32_t index = 0; index < stack.depth; ++index) {
    if (keep(stack.entries[index])) stack.entries[kept++] = stack.entries[index];
  }
  stack.depth = kept;
  return kept;
}

// Marks the entries whose frame is still live: its slot holds the
// trampoline's address (or, while an exception unwinds, the original one put
// back) and no later entry names the same slot. A stale entry whose slot a
// later call from the same call site happens to fill with the same original
// address passes too, harmlessly: it returns where that call returns.
LW_NO_INSTRUMENT void MarkLive(const ReturnStack& stack, bool* live) {
  for (uint32_t index = stack.depth; index-- > 0;) {
    const HijackedReturn& entry = stack.entries[index];
    live[index] = *entry.slot == ReturnPoint() || *entry.slot == entry.original;
    for (uint32_t later = index + 1; live[index] && later < stack.depth; ++later) {
      if (stack.entries[later].slot == entry.slot) live[index] = false;
    }
  }
}

LW_COLD uint32_t CollectStaleReturns(ReturnStack& stack) {
  bool live[kReturnStackCapacity];
  MarkLive(stack, live);
  const HijackedReturn* first = stack.entries;
  return Compact(stack, [&](const HijackedReturn& entry) { return live[&entry - first]; });
}

LW_COLD void CountUntracedCall() {
  ThreadState& thread = t_thread;
  if (thread.status == ThreadStatus::kRecording) Bump(thread.slot->diagnostics.overflowed_calls, 1);
}

[[noreturn]] LW_COLD void LostReturn(uint64_t* slot) {
  static constexpr char kMessage[] =
      "limpwatch: a patched function returned through a slot with no saved return address "
      "(stack switched while patched frames were live?); stopping\n";
  ssize_t ignored = write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  (void)ignored;
  (void)slot;
  std::abort();
}

// f tail-called the function now entering: f's frame is gone and the
// entry passes to the new function, which returns where f would have.
LW_COLD void TakeOverTailCall(ReturnStack& stack, uint64_t function, uint64_t* slot) {
  for (uint32_t index = stack.depth; index-- > 0;) {
    HijackedReturn& entry = stack.entries[index];
    if (entry.slot != slot) continue;
    uint64_t finished = entry.function;
    entry.function = function;
    stack.busy = 0;
    RecordExit(finished);
    RecordEnter(function);
    return;
  }
  stack.busy = 0;  // no entry (cannot happen): leave the call untraced
}

}  // namespace

void RestoreHijackedReturns() {
  ReturnStack& stack = t_return_stack;
  if (stack.depth == 0) return;
  stack.busy = 1;
  bool live[kReturnStackCapacity];
  MarkLive(stack, live);
  for (uint32_t index = 0; index < stack.depth; ++index) {
    if (!live[index]) continue;
    *stack.entries[index].slot = stack.entries[index].original;
    stack.entries[index].restored = 1;
  }
  const HijackedReturn* first = stack.entries;
  Compact(stack, [&](const HijackedReturn& entry) { return live[&entry - first]; });
  stack.busy = 0;
}

void RehijackSurvivors(uint64_t stack_position) {
  ReturnStack& stack = t_return_stack;
  if (stack.depth == 0) return;
  stack.busy = 1;
  uint64_t unwound[kReturnStackCapacity];
  uint32_t unwound_count = 0;
  Compact(stack, [&](HijackedReturn& entry) {
    if (reinterpret_cast<uint64_t>(entry.slot) < stack_position) {
      unwound[unwound_count++] = entry.function;
      return false;
    }
    if (*entry.slot == ReturnPoint()) return true;
    if (*entry.slot != entry.original) return false;
    *entry.slot = ReturnPoint();
    entry.restored = 0;
    return true;
  });
  stack.busy = 0;
  // The unwinder left these frames just now: their exits are recorded here,
  // innermost first, as the compiler's exit hooks would have in cleanups.
  for (uint32_t index = unwound_count; index-- > 0;) RecordExit(unwound[index]);
}

}  // namespace limpwatch::runtime::patching

using limpwatch::runtime::patching::HijackedReturn;
using limpwatch::runtime::patching::kReturnStackCapacity;
using limpwatch::runtime::patching::ReturnStack;

namespace limpwatch::runtime::patching {
namespace {

// Keeps the call's return in entry `depth` and records its entry; the
// caller set stack.busy. The trampoline's call into the function then writes
// the return point into the slot; until then the slot holds the original,
// which counts as live. Returns 1: the call is traced.
LW_HOT int PushReturn(ReturnStack& stack, uint32_t depth, uint64_t original, uint64_t* slot, uint64_t function,
                      uint64_t home) {
  stack.entries[depth] = HijackedReturn{original, slot, function, 0};
  stack.depth = depth + 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  stack.busy = 0;
  RecordTracedEnter(function, home);
  return 1;
}

// The entry of a call limpwatch_patched_enter's common case does not cover:
// a function away from its home position in the index, a deselected one, a
// busy stack, a tail call, a stale entry for this slot or a full stack.
// Out of line, so that the common case keeps no register across its call.
LW_COLD int EnterUnusual(uint64_t function, uint64_t* slot, uint64_t home) {
  if (IdFieldGivenHome(function, home) == kUnselectedIdField) return 0;  // deselected, not unpatched yet
  ReturnStack& stack = t_return_stack;
  if (stack.busy) return 0;
  stack.busy = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  uint32_t depth = stack.depth;
  if (__builtin_expect(*slot == ReturnPoint(), 0)) {
    TakeOverTailCall(stack, function, slot);
    return 0;
  }
  // An entry for this very slot belongs to a frame that is gone. If an
  // exception unwound it (a cleanup is calling us from the frame above),
  // its exit is now, as the compiler's exit hook in that cleanup would say.
  if (depth > 0 && stack.entries[depth - 1].slot == slot) {
    --depth;
    if (stack.entries[depth].restored) RecordExit(stack.entries[depth].function);
  }
  if (__builtin_expect(depth == kReturnStackCapacity, 0)) {
    stack.depth = depth;
    depth = CollectStaleReturns(stack);
    if (depth == kReturnStackCapacity) {
      stack.busy = 0;
      CountUntracedCall();
      return 0;
    }
  }
  return PushReturn(stack, depth, *slot, slot, function, home);
}

}  // namespace
}  // namespace limpwatch::runtime::patching

extern "C" LW_NO_INSTRUMENT int limpwatch_patched_enter(uint64_t function, uint64_t* slot) {
  using namespace limpwatch::runtime;
  uint64_t home = HomeEntry(function);
  ReturnStack& stack = patching::t_return_stack;
  uint32_t depth = stack.depth;
  uint64_t original = *slot;
  bool usual = (home >> limpwatch::shm::kFunctionIdBits) == function && (home & kIdFieldMask) != kUnselectedIdField &&
               stack.busy == 0 && original != patching::ReturnPoint() && depth < kReturnStackCapacity &&
               (depth == 0 || stack.entries[depth - 1].slot != slot);
  if (__builtin_expect(!usual, 0)) return patching::EnterUnusual(function, slot, home);
  stack.busy = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  return patching::PushReturn(stack, depth, original, slot, function, home);
}

extern "C" LW_NO_INSTRUMENT uint64_t limpwatch_patched_return(uint64_t* slot) {
  using namespace limpwatch::runtime;
  ReturnStack& stack = patching::t_return_stack;
  stack.busy = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  uint32_t depth = stack.depth;
  // Entries above this slot's were abandoned by a longjmp.
  while (depth > 0 && stack.entries[depth - 1].slot != slot) --depth;
  if (__builtin_expect(depth == 0, 0)) patching::LostReturn(slot);
  HijackedReturn entry = stack.entries[depth - 1];
  stack.depth = depth - 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  stack.busy = 0;
  RecordExit(entry.function);
  return entry.original;
}
