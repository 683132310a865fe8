// The two renderings of `limpwatch dump`.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_DUMP_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_DUMP_H_

#include <cstdint>
#include <string>

#include "limpwatch/shm/snapshot.h"

namespace limpwatch::cli {

// A snapshot plus the header fields Snapshot does not carry.
struct DumpData {
  shm::Snapshot snapshot;
  uint64_t created_realtime_ns = 0;
  uint64_t object_size = 0;  // bytes of the object as mapped
};

// How long an open frame has been running when the snapshot was taken, in
// ms; 0 when its entry looks later than the snapshot (a torn or foreign frame).
double OpenFrameElapsedMs(const shm::Snapshot& snapshot, const shm::OpenFrame& frame);

// The name of the function a frame refers to, or a placeholder for frames
// whose function was not recorded or is not in the snapshot.
std::string OpenFrameFunctionName(const shm::Snapshot& snapshot, const shm::OpenFrame& frame);

// Seconds from the segment's creation to the snapshot while its owner runs
// (what `dump` divides I/O totals by); 0 once it exited or went stale.
double SegmentLifetimeSeconds(const DumpData& dump);

// Average self time per call in ns; 0 without calls.
double AverageSelfNs(const shm::Snapshot& snapshot, const shm::FunctionRecord& function);

std::string RenderDumpText(const DumpData& dump);
std::string RenderDumpJson(const DumpData& dump);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_DUMP_H_
