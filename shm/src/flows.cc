#include "limpwatch/shm/flows.h"

#include <algorithm>

namespace limpwatch::shm {
namespace {

// The 64-bit sequence whose low 32 bits are `low`, at or below `newest`.
uint64_t WidenSequence(uint32_t low, uint64_t newest) {
  uint64_t candidate = (newest & ~uint64_t{0xffffffff}) | low;
  if (candidate > newest && candidate >= (uint64_t{1} << 32)) candidate -= uint64_t{1} << 32;
  return candidate;
}

}  // namespace

bool ParseFlow(const FlowEventValue* events, uint64_t count, RecordedFlow* out) {
  if (count < 2) return false;
  const FlowEventValue& begin = events[0];
  const FlowEventValue& end = events[count - 1];
  if (FlowInfoKind(begin.info) != FlowEventKind::kBegin || FlowInfoKind(end.info) != FlowEventKind::kEnd) {
    return false;
  }
  RecordedFlow flow;
  flow.tid = FlowInfoValue(begin.info);
  flow.begin_ticks = begin.ticks;
  flow.end_ticks = end.ticks;
  flow.cut = (FlowInfoFlags(end.info) & kFlowCut) != 0;
  if (flow.end_ticks < flow.begin_ticks) return false;
  std::vector<size_t> open;  // indexes into flow.calls of the calls not exited yet
  for (uint64_t index = 1; index + 1 < count; ++index) {
    const FlowEventValue& event = events[index];
    uint32_t info = event.info;
    uint32_t function = event.function;
    uint64_t ticks = event.ticks;
    if (ticks < flow.begin_ticks || ticks > flow.end_ticks) return false;
    switch (FlowInfoKind(info)) {
      case FlowEventKind::kEnter:
        if (FlowInfoValue(info) != open.size()) return false;
        if (open.empty() && !flow.calls.empty()) return false;  // a second root
        open.push_back(flow.calls.size());
        flow.calls.push_back(FlowCall{function, FlowInfoValue(info), ticks, 0, false});
        break;
      case FlowEventKind::kExit: {
        // Frames abandoned below it (a longjmp) are closed here with it.
        uint32_t depth = FlowInfoValue(info);
        if (depth + 1 > open.size() || flow.calls[open[depth]].function != function) return false;
        while (open.size() > depth) {
          FlowCall& call = flow.calls[open.back()];
          call.exit_ticks = ticks;
          call.exited = open.size() == depth + 1;
          open.pop_back();
        }
        break;
      }
      default:
        return false;
    }
  }
  if (flow.calls.empty()) return false;
  for (size_t index : open) flow.calls[index].exit_ticks = flow.end_ticks;
  *out = std::move(flow);
  return true;
}

std::vector<RecordedFlow> FlowReader::ReadNew(const SegmentView& view) {
  std::vector<RecordedFlow> flows;
  if (!view.has_flows()) return flows;
  uint32_t slots = view.header()->max_threads;
  if (last_sequence_.size() != slots) {
    last_sequence_.assign(slots, 0);
    last_head_.assign(slots, 0);
  }
  for (uint32_t slot = 0; slot < slots; ++slot) ReadRing(view, slot, &flows);
  return flows;
}

void FlowReader::ReadRing(const SegmentView& view, uint32_t slot, std::vector<RecordedFlow>* out) {
  FlowRingHeader* ring = view.flow_ring(slot);
  uint64_t head = ring->head.load(std::memory_order_acquire);
  uint64_t published = ring->flows_published.load(std::memory_order_acquire);
  uint64_t& last = last_sequence_[slot];
  if (head == 0 || published <= last || head <= last_head_[slot]) return;
  const uint64_t capacity = view.flow_events_per_thread();
  const uint64_t mask = capacity - 1;
  const FlowEvent* events = view.flow_events(slot);
  // Only what was written since the last read: the flows before it were read.
  uint64_t oldest = std::max(head > capacity ? head - capacity : 0, last_head_[slot]);
  last_head_[slot] = head;
  copy_.resize(capacity);
  for (uint64_t position = oldest; position < head; ++position) {
    const FlowEvent& from = events[position & mask];
    FlowEventValue& to = copy_[position - oldest];
    to.ticks = from.ticks.load(std::memory_order_relaxed);
    to.function = from.function.load(std::memory_order_relaxed);
    to.info = from.info.load(std::memory_order_relaxed);
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  // What the writer may have overwritten while the copy was taken: up to the
  // new head, and one whole flow past it.
  uint64_t head_after = ring->head.load(std::memory_order_acquire);
  uint64_t trusted_from = head_after + view.max_flow_events();
  trusted_from = trusted_from > capacity ? std::max(oldest, trusted_from - capacity) : oldest;

  std::vector<RecordedFlow> newest_first;
  uint64_t end = head;  // one past the end record of the flow parsed next
  uint64_t head_sequence = 0;  // of the flow that ends at `head`
  uint64_t oldest_sequence = 0;
  while (end > trusted_from) {
    const FlowEventValue& end_record = copy_[end - 1 - oldest];
    uint32_t info = end_record.info;
    uint64_t count = uint64_t{FlowInfoValue(info)} + 1;
    if (FlowInfoKind(info) != FlowEventKind::kEnd) {
      ++totals_.flows_malformed;
      break;
    }
    uint64_t sequence = WidenSequence(end_record.function, published);
    if (end == head) head_sequence = sequence;
    if (sequence <= last) break;
    if (count > view.max_flow_events() || count > end - trusted_from) break;  // its start was overwritten
    RecordedFlow flow;
    if (ParseFlow(&copy_[end - count - oldest], count, &flow)) {
      flow.slot = slot;
      flow.sequence = sequence;
      newest_first.push_back(std::move(flow));
    } else {
      ++totals_.flows_malformed;
    }
    oldest_sequence = sequence;
    end -= count;
  }
  if (newest_first.empty()) {
    // Everything published since the last read was overwritten (or is
    // unreadable): count it lost up to the flow at the head.
    if (head_sequence > last) {
      totals_.flows_lost += head_sequence - last;
      last = head_sequence;
    }
    return;
  }
  if (oldest_sequence > last + 1) totals_.flows_lost += oldest_sequence - last - 1;
  last = std::max(head_sequence, newest_first.front().sequence);
  totals_.flows_read += newest_first.size();
  std::move(newest_first.rbegin(), newest_first.rend(), std::back_inserter(*out));
}

}  // namespace limpwatch::shm
