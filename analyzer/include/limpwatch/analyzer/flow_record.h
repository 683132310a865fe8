// Request flows as the analyzer keeps and records them: each call named by
// its function's name hash (the same on every server and in every run) and
// timed in ns, the flow placed in real time. Read from a segment once a tick
// (CollectFlows), recorded beside the tick (TraceRecordType::kFlows), and
// what `limpwatch flows`, `export` and the per-category analyses read.
#ifndef LIMPWATCH_ANALYZER_FLOW_RECORD_H_
#define LIMPWATCH_ANALYZER_FLOW_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "limpwatch/shm/flows.h"
#include "limpwatch/shm/snapshot.h"

namespace limpwatch::analyzer {

struct FlowCallRecord {
  uint64_t name_hash = 0;
  uint32_t depth = 0;        // 0: the root
  uint64_t start_ns = 0;     // after the flow's begin
  uint64_t duration_ns = 0;
  bool exited = true;        // false: cut (or abandoned) before its exit; timed to the flow's end
};

struct FlowSample {
  uint32_t tid = 0;
  bool cut = false;
  uint64_t begin_unix_ns = 0;
  std::vector<FlowCallRecord> calls;  // in entry order; calls[0] is the root
};

// The flows read in one tick.
struct FlowsRecord {
  uint64_t unix_ms = 0;        // when they were read
  uint64_t flows_lost = 0;     // overwritten in the rings, or over the record's bound, since the last record
  uint64_t flows_unnamed = 0;  // left out: a call's function had no name yet
  std::vector<FlowSample> flows;
};

// At most this many flows a record; the others are counted in flows_lost.
inline constexpr size_t kMaxFlowsPerRecord = 4096;

std::vector<uint8_t> EncodeFlowsRecord(const FlowsRecord& record);
// False when the payload is not a well-formed flows record (a flow's depths
// must form one tree under calls[0]).
bool DecodeFlowsRecord(const uint8_t* data, size_t size, FlowsRecord* record);

// The flows a segment published since `reader`'s last call, named with the
// snapshot's functions (a flow with an unnamed call is counted, not kept).
FlowsRecord CollectFlows(const shm::SegmentView& view, const shm::Snapshot& snapshot, shm::FlowReader* reader,
                         uint64_t unix_ms);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_FLOW_RECORD_H_
