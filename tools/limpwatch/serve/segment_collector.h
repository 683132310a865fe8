// The segments `limpwatch serve` reports: every live segment on this node
// that the serving user owns (or, when asked, every one it can open), each
// read into a snapshot with the same readers `dump` and `alarms` use:
// read-only mappings and sequence-locked copies, so that reading never
// blocks or slows the traced process.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_SERVE_SEGMENT_COLLECTOR_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_SERVE_SEGMENT_COLLECTOR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "limpwatch/shm/segment.h"
#include "limpwatch/shm/snapshot.h"
#include "serve/alarm_tally.h"

namespace limpwatch::cli::serve {

struct ServedSegment {
  std::string server;  // the `server` label: unique among the served segments
  std::string object_name;
  uint64_t created_realtime_ns = 0;
  std::shared_ptr<const shm::Snapshot> snapshot;
  // False when this collection's copy was not consistent and `snapshot` is
  // an earlier one (or, before any, this inconsistent one).
  bool snapshot_consistent = true;
  AlarmTally alarms;
};

// Why the segments that were listed were or were not served.
struct SegmentCensus {
  uint64_t served = 0;
  uint64_t not_live = 0;    // exited, stale, being created, or invalid
  uint64_t other_user = 0;  // owned by another user, and not asked for
  uint64_t unreadable = 0;  // live, but it could not be opened now (permissions, a race with its exit)
};

struct Collection {
  std::vector<ServedSegment> segments;  // by server label
  SegmentCensus census;
  uint64_t taken_realtime_ns = 0;
};

class SegmentCollector {
 public:
  // `all_users`: serve every segment this process can open, not only its
  // own user's (root reads everyone's: whoever reaches the endpoint would).
  explicit SegmentCollector(bool all_users) : all_users_(all_users) {}

  // Lists the node's segments now and snapshots each one to serve. Readers
  // and alarm tallies are kept for the segments still there.
  Collection Collect();

 private:
  struct Tracked {
    std::unique_ptr<shm::SegmentReader> reader;
    AlarmTally alarms;
    // Shown instead of a snapshot that could not be had consistent (threads
    // retiring throughout), whose counts could be a thread short or twice
    // over: a counter must never seem to go back.
    std::shared_ptr<const shm::Snapshot> last_consistent;
  };

  bool all_users_;
  std::map<std::string, Tracked> tracked_;  // by object name
};

// The `server` label of a segment named `name` (empty when it has none) of
// process `pid`: its name, or "<program>.<pid>" without one.
std::string ServerLabel(const std::string& name, const std::string& program, uint32_t pid);

}  // namespace limpwatch::cli::serve

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_SERVE_SEGMENT_COLLECTOR_H_
