// What `list` and `clean` say about one listed segment object.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_SEGMENT_STATE_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_SEGMENT_STATE_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "limpwatch/shm/segment.h"

namespace limpwatch::cli {

// The validation error of a listing without its "segment '<object>': "
// prefix, which would only repeat the OBJECT column.
std::string ListingReason(const shm::SegmentListing& listing);

// What the raw object looks like, for objects SegmentReader refused: their
// size is not in the listing, and "being created" must be told from "broken".
struct ObjectPeek {
  bool opened = false;
  uint64_t size = 0;
  bool still_creating = false;  // a current-version header whose owner has not published it yet
};
ObjectPeek PeekObject(const std::string& object_name);

// The STATE column: "live", "exited", "stale", "creating" or "invalid: <reason>".
std::string StateText(const shm::SegmentListing& listing, const ObjectPeek& peek);

// True while some process has this pid (EPERM counts: it exists, owned by another user).
bool PidExists(pid_t pid);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_SEGMENT_STATE_H_
