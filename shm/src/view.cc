#include "limpwatch/shm/segment.h"

namespace limpwatch::shm {

SegmentView::SegmentView(void* base) : base_(static_cast<uint8_t*>(base)) {
  const SegmentHeader* h = header();
  function_index_ = reinterpret_cast<FunctionIndexEntry*>(base_ + h->function_index.offset);
  symbols_ = reinterpret_cast<SymbolEntry*>(base_ + h->symbols.offset);
  threads_ = base_ + h->threads.offset;
  slot_size_ = h->thread_slot_size;
  stack_depth_ = h->stack_depth;
  retired_ = reinterpret_cast<RetiredTotalsHeader*>(base_ + h->retired.offset);
  retired_counters_ = reinterpret_cast<FunctionCounters*>(base_ + h->retired.offset + sizeof(RetiredTotalsHeader));
  node_metrics_ = reinterpret_cast<NodeMetricsRecord*>(base_ + h->node_metrics.offset);
  alarm_ring_ = reinterpret_cast<AlarmRingHeader*>(base_ + h->alarms.offset);
  alarms_ = reinterpret_cast<AlarmRecord*>(base_ + h->alarms.offset + sizeof(AlarmRingHeader));
  alarm_capacity_ = h->alarm_capacity;
  sample_table_ = reinterpret_cast<SampleTableHeader*>(base_ + h->samples.offset);
  sampled_functions_ = reinterpret_cast<SampledFunction*>(base_ + h->samples.offset + sizeof(SampleTableHeader));
  sample_capacity_ = h->sample_capacity;
  if (h->version_minor >= 13 && h->flow_events_per_thread != 0) {
    const auto* descriptor = reinterpret_cast<const FlowRegionDescriptor*>(base_ + kFlowRegionOffset);
    flows_ = base_ + descriptor->region.offset;
    flow_events_per_thread_ = h->flow_events_per_thread;
    max_flow_events_ = descriptor->max_flow_events;
    flow_ring_size_ = sizeof(FlowRingHeader) + uint64_t{flow_events_per_thread_} * sizeof(FlowEvent);
  }
}

FlowRingHeader* SegmentView::flow_ring(uint32_t slot_index) const {
  return reinterpret_cast<FlowRingHeader*>(flows_ + uint64_t{slot_index} * flow_ring_size_);
}

FlowEvent* SegmentView::flow_events(uint32_t slot_index) const {
  return reinterpret_cast<FlowEvent*>(flows_ + uint64_t{slot_index} * flow_ring_size_ + sizeof(FlowRingHeader));
}

IoBlock* SegmentView::io(uint32_t slot_index) const {
  return reinterpret_cast<IoBlock*>(threads_ + uint64_t{slot_index} * slot_size_ + SlotIoOffset());
}

ThreadSlotHeader* SegmentView::slot(uint32_t index) const {
  return reinterpret_cast<ThreadSlotHeader*>(threads_ + uint64_t{index} * slot_size_);
}

StackFrame* SegmentView::frames(uint32_t slot_index) const {
  return reinterpret_cast<StackFrame*>(threads_ + uint64_t{slot_index} * slot_size_ + SlotFramesOffset());
}

FunctionCounters* SegmentView::counters(uint32_t slot_index) const {
  return reinterpret_cast<FunctionCounters*>(threads_ + uint64_t{slot_index} * slot_size_ +
                                             SlotCountersOffset(stack_depth_));
}

AlarmRecord* SegmentView::alarm(uint64_t sequence) const {
  return &alarms_[(sequence - 1) % alarm_capacity_];
}

}  // namespace limpwatch::shm
