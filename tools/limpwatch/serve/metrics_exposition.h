// What `limpwatch serve` exposes: the collected segments as Prometheus
// metrics (docs/prometheus.md lists every family and its labels).
//
// Per traced server (label `server`): its identity and start time, traced
// calls and the calls it could not trace, the top functions' calls and self
// time, I/O calls, bytes, service time and errors by fd kind, operation and
// errno, seed 001's service times, CPU samples, the analyzer's health, what
// its peer exchange received, and the alarms its analyzer raised (label
// `reporter`; `server` there is the server indicted). Counters are the
// segment's own cumulative counters: they only grow while the server runs,
// however often the reader restarts, and start again with the server, whose
// start time `limpwatch_server_start_time_seconds` gives.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_SERVE_METRICS_EXPOSITION_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_SERVE_METRICS_EXPOSITION_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "serve/segment_collector.h"

namespace limpwatch::cli::serve {

struct ExpositionSettings {
  // Functions per server, the most self time first; the rest are left out,
  // so a server with 10,000 traced functions still makes at most this many
  // function series.
  size_t top_functions = 20;
  // An alarm is open this long after the end of the window that raised it.
  // The analyzer raises a limp that lasts again every 30 s
  // (LIMPWATCH_ANALYZE_SUPPRESS_S), so twice that keeps it open throughout.
  double open_alarm_seconds = 60;
};

std::string RenderMetrics(const Collection& collection, const ExpositionSettings& settings);

}  // namespace limpwatch::cli::serve

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_SERVE_METRICS_EXPOSITION_H_
