#include "limpwatch/shm/layout.h"

namespace limpwatch::shm {
namespace {

constexpr uint64_t kRegionAlignment = 4096;

constexpr uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

constexpr uint32_t NextPowerOfTwo(uint32_t value) {
  uint32_t power = 1;
  while (power < value) power <<= 1;
  return power;
}

}  // namespace

bool ComputeLayout(const Geometry& geometry, Layout* out) {
  if (geometry.max_functions == 0 || geometry.max_functions > kMaxFunctionsLimit) return false;
  if (geometry.max_threads == 0 || geometry.max_threads > kMaxThreadsLimit) return false;
  if (geometry.stack_depth == 0 || geometry.stack_depth > kMaxStackDepthLimit) return false;
  if (geometry.alarm_capacity == 0 || geometry.alarm_capacity > kMaxAlarmCapacity) return false;
  if (geometry.sample_capacity == 0 || geometry.sample_capacity > kMaxSampleCapacity) return false;
  if (geometry.flow_events != 0 &&
      (geometry.flow_events < kMinFlowEventsPerThread || geometry.flow_events > kMaxFlowEventsPerThread)) {
    return false;
  }

  Layout layout{};
  layout.function_index_capacity = NextPowerOfTwo(2 * geometry.max_functions);
  layout.thread_slot_size =
      AlignUp(SlotCountersOffset(geometry.stack_depth) +
                  uint64_t{geometry.max_functions} * sizeof(FunctionCounters),
              64);

  uint64_t cursor = kHeaderSize;
  auto place = [&cursor](uint64_t size) {
    RegionRef region{cursor, size};
    cursor = AlignUp(cursor + size, kRegionAlignment);
    return region;
  };
  layout.function_index = place(uint64_t{layout.function_index_capacity} * sizeof(FunctionIndexEntry));
  layout.symbols = place(uint64_t{geometry.max_functions} * sizeof(SymbolEntry));
  layout.threads = place(uint64_t{geometry.max_threads} * layout.thread_slot_size);
  layout.retired = place(sizeof(RetiredTotalsHeader) +
                         uint64_t{geometry.max_functions} * sizeof(FunctionCounters));
  layout.node_metrics = place(sizeof(NodeMetricsRecord));
  layout.alarms = place(sizeof(AlarmRingHeader) + uint64_t{geometry.alarm_capacity} * sizeof(AlarmRecord));
  layout.sample_capacity = NextPowerOfTwo(geometry.sample_capacity);
  layout.samples = place(sizeof(SampleTableHeader) + uint64_t{layout.sample_capacity} * sizeof(SampledFunction));
  if (geometry.flow_events != 0) {
    layout.flow_events_per_thread = NextPowerOfTwo(geometry.flow_events);
    layout.max_flow_events = MaxFlowEvents(layout.flow_events_per_thread);
    layout.flow_ring_size = sizeof(FlowRingHeader) + uint64_t{layout.flow_events_per_thread} * sizeof(FlowEvent);
    layout.flows = place(uint64_t{geometry.max_threads} * layout.flow_ring_size);
  }
  layout.segment_size = cursor;
  *out = layout;
  return true;
}

}  // namespace limpwatch::shm
