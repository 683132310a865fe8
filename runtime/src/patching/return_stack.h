// The per-thread stack of the return addresses that traced patched functions
// gave up.
//
// A traced patched function f gets its exit recorded by returning into the
// trampoline: at f's entry the return address in f's slot (the word at rsp
// on f's first byte) is saved here, and the trampoline's call into f's body
// replaces it by limpwatch_patched_return_point (trampolines.h). When f
// returns, the trampoline finds the entry for that slot, records the exit
// and returns to the saved address.
//
//   depth-1  { original, slot, function }   the innermost live patched frame
//   ...
//   0        { original, slot, function }   the outermost
//
// The stack is ordered by time, not by address, so frames run on a signal
// alternate stack fit in like any others. Entries can go stale:
// - longjmp (or siglongjmp) abandons frames without returning through them.
//   A return searches down for its own slot and drops the entries above it;
//   an enter into a slot that a stale entry names drops that entry; and when
//   the stack is full, every entry whose slot no longer holds the return
//   point's address is collected. Their shadow-stack frames are closed
//   by the hot path's mismatch handling (ExitUnusual) at the next traced
//   exit below them.
// - tail calls: f may jump to a patched g, whose entry then finds the
//   return point's address already in the slot. f's frame is gone, so f's
//   exit is recorded there and the entry passes to g, which runs untraced by
//   the trampoline and returns to the return point in f's stead.
// - C++ exceptions, forced unwinding and backtraces: the unwinder cannot walk
//   through the return point, so the interposed unwinder entry points
//   (unwind_interposers.cc) put every original address back first, and the
//   catch (or the end of the backtrace) takes back the frames that survived
//   and records the exits of the unwound ones. Frames ended by forced
//   unwinding (pthread_exit, cancellation) end with their thread.
//
// A full stack (kReturnStackCapacity live patched frames) leaves further
// calls untraced: neither wrapped nor recorded, counted as overflowed calls.
// Switching stacks within a thread (swapcontext, coroutines) while patched frames are live is not
// supported: a return would not find its entry, and the process is stopped
// with a message rather than jump to an unknown address.
#ifndef LIMPWATCH_RUNTIME_SRC_PATCHING_RETURN_STACK_H_
#define LIMPWATCH_RUNTIME_SRC_PATCHING_RETURN_STACK_H_

#include <cstdint>

#include "thread_state.h"

namespace limpwatch::runtime::patching {

inline constexpr uint32_t kReturnStackCapacity = 512;

struct HijackedReturn {
  uint64_t original;  // where the patched function returns to
  uint64_t* slot;     // its return-address slot
  uint64_t function;  // its entry address (= its symbol's address)
  uint64_t restored;  // 1 once an unwinder was given the original address back
};

struct ReturnStack {
  uint32_t depth;
  // Set while a handler changes the stack: a signal handler that calls a
  // patched function meanwhile runs it untraced.
  uint32_t busy;
  HijackedReturn entries[kReturnStackCapacity];
};

extern thread_local ReturnStack t_return_stack [[gnu::tls_model("initial-exec")]];

// Before an unwinder walks this thread's stack: writes the original address
// back into every slot that still holds the return trampoline's, and forgets
// the stale entries. The live ones are kept for RehijackSurvivors.
void RestoreHijackedReturns();

// After a catch or a backtrace, with `stack_position` the lowest address of
// the frame that regained control: takes back the restored frames at or
// above it (they survived), and records the exits of the others (they were
// unwound just now) before forgetting them.
void RehijackSurvivors(uint64_t stack_position);

}  // namespace limpwatch::runtime::patching

// Called by the trampolines only.
extern "C" {
// Nonzero when the call is traced: the trampoline then calls the function,
// which puts the return point in its slot.
int limpwatch_patched_enter(uint64_t function, uint64_t* slot);
uint64_t limpwatch_patched_return(uint64_t* slot);
}

#endif  // LIMPWATCH_RUNTIME_SRC_PATCHING_RETURN_STACK_H_
