// The I/O metrics and node metrics sections of `limpwatch top` and
// `limpwatch dump` (text and JSON).
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_IO_VIEW_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_IO_VIEW_H_

#include <string>

#include "json_writer.h"
#include "limpwatch/analyzer/io_metrics.h"
#include "limpwatch/shm/snapshot.h"

namespace limpwatch::cli {

// For `top`: the interval's I/O per fd kind and operation (calls/s, MB/s,
// ms per call, errors), seed 001's dread / dwrite / nsread / ncread and req,
// the errnos returned, and the node metrics `node` (from a NodeRateTracker,
// so a refresh that falls between two node samples still shows the last
// rates). Ends with '\n'.
std::string RenderIoInterval(const analyzer::IoMetrics& io, const analyzer::NodeRates& node);

// For `dump`: the cumulative I/O counters of a snapshot, with rates over
// `lifetime_seconds` (the segment's age; 0 to leave rates out).
std::string RenderIoTotalsText(const shm::Snapshot& snapshot, double lifetime_seconds);

// For `dump`: the last node sample as the segment holds it (cumulative).
std::string RenderNodeMetricsText(const shm::NodeMetricsValues& node);

// The same two for `dump --json`: adds the "io" and "node_metrics" members
// to the object being written.
void WriteIoJson(JsonWriter* json, const shm::Snapshot& snapshot, double lifetime_seconds);
void WriteNodeMetricsJson(JsonWriter* json, const shm::NodeMetricsValues& node);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_IO_VIEW_H_
