// Interval records: what happened between two snapshots of a segment.
//
// Segments hold cumulative counters; everything the analyzer and `limpwatch
// top` reason about is the difference of two snapshots taken a tick apart.
#ifndef LIMPWATCH_ANALYZER_INTERVAL_H_
#define LIMPWATCH_ANALYZER_INTERVAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "limpwatch/shm/snapshot.h"

namespace limpwatch::analyzer {

struct FunctionInterval {
  uint32_t id = 0;
  uint64_t name_hash = 0;
  std::string name;
  uint64_t calls = 0;
  double self_ns = 0;
  double total_ns = 0;
};

struct IntervalRecord {
  uint64_t start_realtime_ns = 0;
  uint64_t end_realtime_ns = 0;
  double seconds = 0;
  std::vector<FunctionInterval> functions;  // only functions with activity in the interval
  shm::DiagnosticValues diagnostics;        // anomalies counted during the interval
  uint64_t calls = 0;                       // all functions
  uint64_t threads_started = 0;
  uint64_t threads_retired = 0;
  uint64_t lost_calls = 0;                  // calls of untracked functions and of threads without a slot
};

// The interval between two snapshots of the same segment (`after` taken
// later). Counters are cumulative, so a decrease means the segment is not the
// same one; such a function is reported with zero activity.
IntervalRecord DiffSnapshots(const shm::Snapshot& before, const shm::Snapshot& after);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_INTERVAL_H_
