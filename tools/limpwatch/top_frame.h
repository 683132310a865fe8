// One refresh of `limpwatch top`: header and function table for an interval.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_TOP_FRAME_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_TOP_FRAME_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "limpwatch/analyzer/interval.h"
#include "limpwatch/analyzer/io_metrics.h"
#include "limpwatch/shm/snapshot.h"

namespace limpwatch::cli {

enum class SortKey { kSelf, kTotal, kCalls };

// "self", "total" or "calls".
bool ParseSortKey(std::string_view text, SortKey* out);

struct TopFrameOptions {
  SortKey sort = SortKey::kSelf;
  size_t limit = 25;      // functions shown at most; 0 for all
  size_t max_lines = 0;   // screen height to fit the whole frame into; 0: no limit
  size_t max_width = 0;   // screen width to fit the rows into; 0: no limit
  // Node metrics to show, from the caller's NodeRateTracker; null: derived
  // from `before` and `after` alone (invalid when both hold the same sample).
  const analyzer::NodeRates* node_rates = nullptr;
};

// `before` and `after` are consecutive snapshots of one segment and
// `interval` is DiffSnapshots(before, after). Ends with '\n'.
std::string RenderTopFrame(const shm::Snapshot& before, const shm::Snapshot& after,
                           const analyzer::IntervalRecord& interval, const TopFrameOptions& options);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_TOP_FRAME_H_
