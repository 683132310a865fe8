// Reading the request flows a segment's threads published (layout.h, "Request
// flows"): whole flows only, each parsed into its calls, and a count of the
// flows that were overwritten before the reader came back for them.
#ifndef LIMPWATCH_SHM_FLOWS_H_
#define LIMPWATCH_SHM_FLOWS_H_

#include <cstdint>
#include <vector>

#include "limpwatch/shm/segment.h"

namespace limpwatch::shm {

// One traced call of a flow, in the order the calls were entered.
struct FlowCall {
  uint32_t function = kNoFunction;
  uint32_t depth = 0;  // 0 for the flow's root
  uint64_t enter_ticks = 0;
  uint64_t exit_ticks = 0;  // the flow's end when the call's exit was not recorded
  bool exited = true;       // false: the flow was cut (or the frame abandoned) before its exit
};

struct RecordedFlow {
  uint32_t slot = 0;
  uint32_t tid = 0;
  uint64_t sequence = 0;  // 1-based, per thread slot
  bool cut = false;       // reached the ring's bound: later calls are missing
  uint64_t begin_ticks = 0;
  uint64_t end_ticks = 0;
  std::vector<FlowCall> calls;  // calls[0] is the root
};

// A FlowEvent as copied out of the ring.
struct FlowEventValue {
  uint64_t ticks = 0;
  uint32_t function = 0;
  uint32_t info = 0;
};

struct FlowReadTotals {
  uint64_t flows_read = 0;
  uint64_t flows_lost = 0;       // published, then overwritten before this reader read them
  uint64_t flows_malformed = 0;  // events that do not parse as a flow (a corrupt copy): skipped
};

// Parses the events of one flow, [begin record .. end record]. False when
// they are not a well-formed flow.
bool ParseFlow(const FlowEventValue* events, uint64_t count, RecordedFlow* out);

// Reads each thread slot's ring and returns the flows published since the
// previous call (all of them the first time), oldest first per slot.
class FlowReader {
 public:
  std::vector<RecordedFlow> ReadNew(const SegmentView& view);
  const FlowReadTotals& totals() const { return totals_; }

 private:
  void ReadRing(const SegmentView& view, uint32_t slot, std::vector<RecordedFlow>* out);

  std::vector<uint64_t> last_sequence_;  // per slot: the newest flow read
  std::vector<uint64_t> last_head_;      // per slot: the ring's head when it was read
  std::vector<FlowEventValue> copy_;
  FlowReadTotals totals_;
};

}  // namespace limpwatch::shm

#endif  // LIMPWATCH_SHM_FLOWS_H_
