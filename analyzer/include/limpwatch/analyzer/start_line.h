// The analyzer's start line: one log line that says what this server
// compares, against whom and how, so that an operator reading the log of a
// server that raised nothing can tell "nothing wrong" from "not looking".
#ifndef LIMPWATCH_ANALYZER_START_LINE_H_
#define LIMPWATCH_ANALYZER_START_LINE_H_

#include <string>

#include "limpwatch/analyzer/analyzer_loop.h"
#include "limpwatch/shm/segment.h"
#include "limpwatch/shm/snapshot.h"

namespace limpwatch::analyzer {

// "analyzer: 'server1' started: rule calibrated (...), tick 1000 ms, ...;
// thresholds: ...; selection: ...; CPU sampling: ...; peers: ...;
// recording: ...; alarms: ...". `first` is the server's first snapshot,
// `segment` its segment (for the selection counters).
std::string AnalyzerStartLine(const AnalyzerSetup& setup, const shm::SegmentView& segment,
                              const shm::Snapshot& first);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_START_LINE_H_
