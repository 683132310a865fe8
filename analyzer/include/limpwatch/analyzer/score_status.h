// Publishes the analyzer's scores of its own server into its segment
// (shm::ScoreStatusBlock), after each window it compares: per metric the
// score, the threshold it is held to, the ratio to the peers and the noise.
// `limpwatch dump` shows them and `limpwatch serve` exports them, so an
// operator sees a server drift towards an alarm before it is raised, and
// sees the margin after it clears.
#ifndef LIMPWATCH_ANALYZER_SCORE_STATUS_H_
#define LIMPWATCH_ANALYZER_SCORE_STATUS_H_

#include <cstdint>
#include <string>

#include "limpwatch/analyzer/cluster_diagnoser.h"
#include "limpwatch/shm/segment.h"

namespace limpwatch::analyzer {

// Writes the scores `result` gave `server`; leaves the block as it was when
// the window has none for it (its own summary missed the window).
void PublishScoreStatus(const shm::SegmentView& segment, const WindowResult& result, const std::string& server,
                        uint64_t now_unix_ms);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_SCORE_STATUS_H_
