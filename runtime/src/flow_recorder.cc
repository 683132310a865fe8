#include "flow_recorder.h"

#include <sys/mman.h>

#include <algorithm>

#include "process.h"

namespace limpwatch::runtime {
namespace {

LW_NO_INSTRUMENT void WriteEvent(ThreadState& thread, uint64_t position, uint64_t ticks, uint32_t function,
                                 uint32_t info) {
  shm::FlowEvent& event = thread.flow_events[position & thread.flow_mask];
  event.ticks.store(ticks, std::memory_order_relaxed);
  event.function.store(function, std::memory_order_relaxed);
  event.info.store(info, std::memory_order_relaxed);
}

LW_NO_INSTRUMENT void PublishFlow(ThreadState& thread, uint64_t ticks) {
  shm::FlowRingHeader& ring = *thread.flow_ring;
  uint64_t sequence = ring.flows_published.load(std::memory_order_relaxed) + 1;
  uint64_t events = thread.flow_cursor - thread.flow_begin;
  uint32_t flags = thread.flow_cut ? static_cast<uint32_t>(shm::kFlowCut) : 0u;
  WriteEvent(thread, thread.flow_cursor, ticks, static_cast<uint32_t>(sequence),
             shm::PackFlowInfo(shm::FlowEventKind::kEnd, flags, static_cast<uint32_t>(events)));
  if (thread.flow_cut) ring.flows_cut.fetch_add(1, std::memory_order_relaxed);
  ring.flows_published.store(sequence, std::memory_order_release);
  ring.head.store(thread.flow_cursor + 1, std::memory_order_release);
  thread.flow_root_depth = 0;
}

// A random phase per thread, so that threads started together do not all
// sample their first root call and then every N-th in step.
LW_NO_INSTRUMENT uint32_t FirstCountdown(uint32_t every, uint32_t tid) {
  if (every <= 1) return every;
  uint64_t mixed = uint64_t{tid} * 0x9E3779B97F4A7C15ull;
  return 1 + static_cast<uint32_t>((mixed >> 32) % every);
}

std::atomic<uint64_t>* g_root_bits = nullptr;
uint32_t g_root_words = 0;

}  // namespace

void PrepareFlowRoots(uint32_t max_functions) {
  g_process.flow_roots.store(nullptr, std::memory_order_relaxed);
  uint32_t words = max_functions / 64 + 1;
  size_t bytes = size_t{words} * sizeof(std::atomic<uint64_t>);
  if (g_root_bits != nullptr && g_root_words == words) {
    madvise(g_root_bits, bytes, MADV_DONTNEED);  // a forked child: its ids start again
    return;
  }
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return;
  g_root_bits = static_cast<std::atomic<uint64_t>*>(memory);
  g_root_words = words;
}

void MarkFlowRoot(uint32_t function, bool root) {
  if (g_root_bits == nullptr || function / 64 >= g_root_words) return;
  uint64_t bit = uint64_t{1} << (function & 63);
  if (root) {
    g_root_bits[function / 64].fetch_or(bit, std::memory_order_relaxed);
  } else {
    g_root_bits[function / 64].fetch_and(~bit, std::memory_order_relaxed);
  }
}

void UseMarkedFlowRoots(bool marked) {
  g_process.flow_roots.store(marked ? g_root_bits : nullptr, std::memory_order_relaxed);
}

LW_COLD void StartFlow(ThreadState& thread, uint32_t function, uint32_t depth, uint64_t ticks) {
  thread.flow_countdown = g_process.flow_sample_every;
  if (thread.flow_events == nullptr) return;
  uint64_t cursor = thread.flow_ring->head.load(std::memory_order_relaxed);  // this thread is its only writer
  // Orders the events below after the previous flow's publication, for a
  // reader that checks `head` again after copying (shm/flows.cc).
  std::atomic_thread_fence(std::memory_order_release);
  thread.flow_begin = cursor;
  thread.flow_limit = cursor + CurrentSegmentView().max_flow_events() - 1;
  uint32_t tid = std::min(thread.slot->tid.load(std::memory_order_relaxed), shm::kFlowValueLimit);
  WriteEvent(thread, cursor++, ticks, 0, shm::PackFlowInfo(shm::FlowEventKind::kBegin, 0, tid));
  WriteEvent(thread, cursor++, ticks, function, shm::PackFlowInfo(shm::FlowEventKind::kEnter, 0, 0));
  thread.flow_cursor = cursor;
  thread.flow_cut = 0;
  thread.flow_root_depth = depth + 1;
}

LW_COLD void AppendFlowEnter(ThreadState& thread, uint32_t function, uint32_t depth, uint64_t ticks) {
  if (thread.flow_cursor >= thread.flow_limit) {
    thread.flow_cut = 1;
    return;
  }
  uint32_t below_root = depth - (thread.flow_root_depth - 1);
  WriteEvent(thread, thread.flow_cursor++, ticks, function,
             shm::PackFlowInfo(shm::FlowEventKind::kEnter, 0, std::min(below_root, shm::kFlowValueLimit)));
}

LW_COLD void AppendFlowExit(ThreadState& thread, uint32_t function, uint32_t top, bool traced, uint64_t ticks) {
  uint32_t root = thread.flow_root_depth - 1;
  if (traced && top >= root) {
    if (thread.flow_cursor >= thread.flow_limit) {
      thread.flow_cut = 1;
    } else {
      WriteEvent(thread, thread.flow_cursor++, ticks, function,
                 shm::PackFlowInfo(shm::FlowEventKind::kExit, 0, std::min(top - root, shm::kFlowValueLimit)));
    }
  }
  // The root's exit, or a pop below it (a longjmp out of the root): the
  // flow ends here.
  if (top <= root) PublishFlow(thread, ticks);
}

void AttachFlowRing(ThreadState& thread) {
  const shm::SegmentView& view = CurrentSegmentView();
  thread.flow_root_depth = 0;
  thread.flow_cut = 0;
  if (!view.has_flows() || g_process.flow_sample_every == 0) {
    thread.flow_events = nullptr;
    thread.flow_ring = nullptr;
    thread.flow_countdown = 0;
    return;
  }
  thread.flow_events = view.flow_events(thread.slot_index);
  thread.flow_ring = view.flow_ring(thread.slot_index);
  thread.flow_mask = view.flow_events_per_thread() - 1;
  thread.flow_countdown = FirstCountdown(g_process.flow_sample_every, thread.slot->tid.load(std::memory_order_relaxed));
}

void DetachFlowRing(ThreadState& thread) {
  if (thread.flow_root_depth != 0 && thread.flow_ring != nullptr) {
    thread.flow_ring->flows_abandoned.fetch_add(1, std::memory_order_relaxed);
  }
  thread.flow_root_depth = 0;
  thread.flow_countdown = 0;
  thread.flow_events = nullptr;
  thread.flow_ring = nullptr;
}

}  // namespace limpwatch::runtime
