// The analyzer's scores of this server in the newest window it compared
// (shm::ScoreStatusValues), for `dump`.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_SCORE_VIEW_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_SCORE_VIEW_H_

#include <string>

#include "json_writer.h"
#include "limpwatch/shm/snapshot.h"

namespace limpwatch::cli {

// "SCORES ..." section: the window, then per metric its score against its
// threshold, the margin left, the ratio to the peers and the state.
std::string RenderScoreStatusText(const shm::ScoreStatusValues& scores);

// "scores": {...} or null before the analyzer compared a window.
void WriteScoreStatusJson(JsonWriter* json, const shm::ScoreStatusValues& scores);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_SCORE_VIEW_H_
