#include <cstring>
#include <string>

#include "limpwatch/shm/segment.h"

namespace limpwatch::shm {
namespace {

std::string Mismatch(const char* what, uint64_t found, uint64_t expected) {
  return std::string(what) + " is " + std::to_string(found) + ", expected " + std::to_string(expected);
}

bool SameRegion(const RegionRef& a, const RegionRef& b) { return a.offset == b.offset && a.size == b.size; }

}  // namespace

std::string ValidateSegment(const void* base, uint64_t mapped_size_untrusted) {
  if (mapped_size_untrusted < kHeaderSize) {
    return "truncated: " + std::to_string(mapped_size_untrusted) + " bytes, smaller than the " +
           std::to_string(kHeaderSize) + "-byte header";
  }
  // Copy the scalars out first: the writer may still be running.
  SegmentHeader header_untrusted;
  std::memcpy(static_cast<void*>(&header_untrusted), base, sizeof(SegmentHeader));
  const SegmentHeader& h = header_untrusted;

  if (h.magic != kSegmentMagic) return "bad magic: not a limpwatch segment";
  if (h.endian_mark != kEndianMark) return "written with another byte order";
  if (h.version_major != kVersionMajor) {
    return "version " + std::to_string(h.version_major) + "." + std::to_string(h.version_minor) +
           ", this reader reads " + std::to_string(kVersionMajor) + ".x";
  }
  if (h.header_size != kHeaderSize) return Mismatch("header size", h.header_size, kHeaderSize);
  if (h.sizeof_symbol_entry != sizeof(SymbolEntry) || h.sizeof_function_counters != sizeof(FunctionCounters) ||
      h.sizeof_stack_frame != sizeof(StackFrame) || h.sizeof_thread_slot_header != sizeof(ThreadSlotHeader) ||
      h.sizeof_node_metrics != sizeof(NodeMetricsRecord) || h.sizeof_alarm_record != sizeof(AlarmRecord) ||
      h.sizeof_io_block != sizeof(IoBlock) || h.sizeof_sampled_function != sizeof(SampledFunction)) {
    return "record sizes differ from this reader's layout";
  }
  if (h.owner_state.load(std::memory_order_relaxed) == static_cast<uint32_t>(OwnerState::kCreating)) {
    return "still being created by its owner (or the owner died creating it)";
  }
  if (h.clock_source != static_cast<uint32_t>(ClockSource::kTsc) &&
      h.clock_source != static_cast<uint32_t>(ClockSource::kMonotonicRaw)) {
    return "unknown clock source " + std::to_string(h.clock_source);
  }
  if (!(h.ns_per_tick > 0.0 && h.ns_per_tick < 1e6)) return "clock factor out of range";

  // Before 1.13 the flow field was reserved and zero.
  uint32_t flow_events = h.version_minor >= 13 ? h.flow_events_per_thread : 0;
  Geometry geometry{h.max_functions, h.max_threads, h.stack_depth, h.alarm_capacity, h.sample_capacity, flow_events};
  Layout layout;
  if (!ComputeLayout(geometry, &layout)) return "geometry out of bounds";
  if (h.function_index_capacity != layout.function_index_capacity) {
    return Mismatch("function index capacity", h.function_index_capacity, layout.function_index_capacity);
  }
  if (h.thread_slot_size != layout.thread_slot_size) {
    return Mismatch("thread slot size", h.thread_slot_size, layout.thread_slot_size);
  }
  if (!SameRegion(h.function_index, layout.function_index) || !SameRegion(h.symbols, layout.symbols) ||
      !SameRegion(h.threads, layout.threads) || !SameRegion(h.retired, layout.retired) ||
      !SameRegion(h.node_metrics, layout.node_metrics) || !SameRegion(h.alarms, layout.alarms) ||
      !SameRegion(h.samples, layout.samples) || h.sample_capacity != layout.sample_capacity) {
    return "region table does not match the geometry";
  }
  if (flow_events != layout.flow_events_per_thread) return "flow ring size is not a power of two";
  if (flow_events != 0) {
    FlowRegionDescriptor flows;
    std::memcpy(static_cast<void*>(&flows), static_cast<const uint8_t*>(base) + kFlowRegionOffset, sizeof(flows));
    if (!SameRegion(flows.region, layout.flows) || flows.events_per_thread != layout.flow_events_per_thread ||
        flows.max_flow_events != layout.max_flow_events) {
      return "flow region does not match the geometry";
    }
  }
  if (h.segment_size != layout.segment_size) return Mismatch("segment size field", h.segment_size, layout.segment_size);
  if (mapped_size_untrusted < layout.segment_size) {
    return "truncated: " + std::to_string(mapped_size_untrusted) + " bytes, the header says " +
           std::to_string(layout.segment_size);
  }
  if (h.name[kNameSize - 1] != '\0' || h.program[kNameSize - 1] != '\0') return "unterminated name field";
  return {};
}

}  // namespace limpwatch::shm
