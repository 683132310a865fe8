// `limpwatch diagnose`'s closing table: one row per peer, what the
// calibrated decision concluded about it over the whole replay.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_VERDICT_TABLE_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_VERDICT_TABLE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/analyzer/calibrated_decision.h"

namespace limpwatch::cli {

struct PeerVerdictInput {
  std::vector<analyzer::ServerVerdict> verdicts;
  std::vector<std::string> metric_names;  // per ServerVerdict::metrics entry
  std::vector<bool> symptoms;             // false for load metrics, never shown as symptoms
  std::vector<analyzer::Alarm> alarms;    // every alarm of the replay
  // The unix time (ms) a window ends at.
  std::function<uint64_t(uint64_t)> window_end_ms;
};

// The table as text ("PEER VERDICT ANOMALOUS INDICTED RESOURCE ...").
std::string RenderVerdictTable(const PeerVerdictInput& input);
// The same as one JSON object per line, {"peer": ...}.
std::string RenderVerdictJson(const PeerVerdictInput& input);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_VERDICT_TABLE_H_
