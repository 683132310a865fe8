#include "limpwatch/analyzer/flow_record.h"

#include <unordered_map>

#include "byte_io.h"

namespace limpwatch::analyzer {
namespace {

constexpr size_t kEncodedCallBytes = 8 + 4 + 8 + 8 + 1;
constexpr size_t kEncodedFlowBytes = 4 + 1 + 8 + 4;

// Depths that form one tree under calls[0], as the runtime writes them.
bool WellFormed(const FlowSample& flow) {
  if (flow.calls.empty() || flow.calls[0].depth != 0) return false;
  for (size_t index = 1; index < flow.calls.size(); ++index) {
    uint32_t depth = flow.calls[index].depth;
    if (depth == 0 || depth > flow.calls[index - 1].depth + 1) return false;
  }
  return true;
}

}  // namespace

std::vector<uint8_t> EncodeFlowsRecord(const FlowsRecord& record) {
  ByteWriter out;
  out.U64(record.unix_ms);
  out.U64(record.flows_lost);
  out.U64(record.flows_unnamed);
  out.U32(static_cast<uint32_t>(record.flows.size()));
  for (const FlowSample& flow : record.flows) {
    out.U32(flow.tid);
    out.U8(flow.cut ? 1 : 0);
    out.U64(flow.begin_unix_ns);
    out.U32(static_cast<uint32_t>(flow.calls.size()));
    for (const FlowCallRecord& call : flow.calls) {
      out.U64(call.name_hash);
      out.U32(call.depth);
      out.U64(call.start_ns);
      out.U64(call.duration_ns);
      out.U8(call.exited ? 1 : 0);
    }
  }
  return out.Take();
}

bool DecodeFlowsRecord(const uint8_t* data, size_t size, FlowsRecord* record) {
  ByteReader in(data, size);
  FlowsRecord decoded;
  uint32_t count = 0;
  if (!in.U64(&decoded.unix_ms) || !in.U64(&decoded.flows_lost) || !in.U64(&decoded.flows_unnamed) ||
      !in.U32(&count) || count > in.remaining() / kEncodedFlowBytes) {
    return false;
  }
  decoded.flows.resize(count);
  for (FlowSample& flow : decoded.flows) {
    uint8_t cut = 0;
    uint32_t calls = 0;
    if (!in.U32(&flow.tid) || !in.U8(&cut) || cut > 1 || !in.U64(&flow.begin_unix_ns) || !in.U32(&calls) ||
        calls > in.remaining() / kEncodedCallBytes) {
      return false;
    }
    flow.cut = cut == 1;
    flow.calls.resize(calls);
    for (FlowCallRecord& call : flow.calls) {
      uint8_t exited = 0;
      if (!in.U64(&call.name_hash) || !in.U32(&call.depth) || !in.U64(&call.start_ns) ||
          !in.U64(&call.duration_ns) || !in.U8(&exited) || exited > 1) {
        return false;
      }
      call.exited = exited == 1;
    }
    if (!WellFormed(flow)) return false;
  }
  if (in.remaining() != 0) return false;
  *record = std::move(decoded);
  return true;
}

FlowsRecord CollectFlows(const shm::SegmentView& view, const shm::Snapshot& snapshot, shm::FlowReader* reader,
                         uint64_t unix_ms) {
  FlowsRecord record;
  record.unix_ms = unix_ms;
  uint64_t lost_before = reader->totals().flows_lost;
  std::vector<shm::RecordedFlow> flows = reader->ReadNew(view);
  record.flows_lost = reader->totals().flows_lost - lost_before;
  std::unordered_map<uint32_t, uint64_t> hash_of;
  for (const shm::FunctionRecord& function : snapshot.functions) hash_of[function.id] = function.name_hash;
  const shm::SegmentHeader& header = *view.header();
  auto unix_ns = [&](uint64_t ticks) {
    double since_reference = (double(ticks) - double(header.clock_ref_ticks)) * header.ns_per_tick;
    return uint64_t(double(header.clock_ref_realtime_ns) + since_reference);
  };
  for (const shm::RecordedFlow& flow : flows) {
    if (record.flows.size() == kMaxFlowsPerRecord) {
      ++record.flows_lost;
      continue;
    }
    FlowSample sample;
    sample.tid = flow.tid;
    sample.cut = flow.cut;
    sample.begin_unix_ns = unix_ns(flow.begin_ticks);
    bool named = true;
    for (const shm::FlowCall& call : flow.calls) {
      auto found = hash_of.find(call.function);
      if (found == hash_of.end() || found->second == 0) {
        named = false;
        break;
      }
      sample.calls.push_back(FlowCallRecord{found->second, call.depth,
                                            uint64_t(double(call.enter_ticks - flow.begin_ticks) * header.ns_per_tick),
                                            uint64_t(double(call.exit_ticks - call.enter_ticks) * header.ns_per_tick),
                                            call.exited});
    }
    if (!named) {
      ++record.flows_unnamed;
      continue;
    }
    record.flows.push_back(std::move(sample));
  }
  return record;
}

}  // namespace limpwatch::analyzer
