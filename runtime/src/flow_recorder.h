// Recording request flows into the thread's ring (shm/layout.h, "Request
// flows").
//
// The shadow stack calls in here. Outside a flow, a push costs one load and a
// branch more (flow_countdown), plus, while sampling is on, the root test: a
// bit of the marked functions or depth 0. Inside a flow every push and pop
// appends one event through a cold call; one in flow_sample_every root calls
// pays that, the others nothing.
//
// The ring has one writer, the thread in the slot, and never blocks it: a
// flow that reaches its bound stops appending and is published cut; a flow
// overwrites the oldest ones, which a slow reader counts as lost.
#ifndef LIMPWATCH_RUNTIME_SRC_FLOW_RECORDER_H_
#define LIMPWATCH_RUNTIME_SRC_FLOW_RECORDER_H_

#include <cstdint>

#include "thread_state.h"

namespace limpwatch::runtime {

LW_COLD void StartFlow(ThreadState& thread, uint32_t function, uint32_t depth, uint64_t ticks);
LW_COLD void AppendFlowEnter(ThreadState& thread, uint32_t function, uint32_t depth, uint64_t ticks);
// `top`: the popped frame's depth; `traced`: the frame had an enter event.
LW_COLD void AppendFlowExit(ThreadState& thread, uint32_t function, uint32_t top, bool traced, uint64_t ticks);

// Points the thread at its slot's ring (none when the segment has no flows).
void AttachFlowRing(ThreadState& thread);
// A thread leaving its slot in the middle of a flow: the flow is counted
// abandoned, never published.
void DetachFlowRing(ThreadState& thread);

// The marked roots, a bit per function id, process-private. Prepared with the
// segment (cleared in a forked child); used (g_process.flow_roots) while the
// active selection has `request` rules.
void PrepareFlowRoots(uint32_t max_functions);
void MarkFlowRoot(uint32_t function, bool root);
void UseMarkedFlowRoots(bool marked);

LW_HOT bool IsFlowRoot(uint32_t function, uint32_t depth) {
  const std::atomic<uint64_t>* marked = g_process.flow_roots.load(std::memory_order_relaxed);
  if (marked == nullptr) return depth == 0;
  return (marked[function >> 6].load(std::memory_order_relaxed) >> (function & 63)) & 1;
}

// After `function` was pushed at `depth`, entered at `ticks`.
LW_HOT void NoteFlowEnter(ThreadState& thread, uint32_t function, uint32_t depth, uint64_t ticks) {
  if (__builtin_expect(thread.flow_root_depth != 0, 0)) {
    AppendFlowEnter(thread, function, depth, ticks);
  } else if (thread.flow_countdown != 0 && IsFlowRoot(function, depth) &&
             --thread.flow_countdown == 0) {
    StartFlow(thread, function, depth, ticks);
  }
}

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_FLOW_RECORDER_H_
