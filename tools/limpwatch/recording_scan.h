// A first pass over recordings for `limpwatch export`: their servers, the
// names of their functions, and per function its self time and CPU samples
// over the whole recording, read record by record. It holds one entry per
// distinct function, however long the recordings are.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_RECORDING_SCAN_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_RECORDING_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "limpwatch/analyzer/flow_record.h"
#include "limpwatch/analyzer/tick_record.h"

namespace limpwatch::cli {

struct FunctionTotals {
  double self_ms = 0;
  uint64_t samples = 0;
  bool in_a_tick_top = false;  // among the most self time of at least one tick
};

struct ServerScan {
  uint64_t ticks = 0;
  uint64_t samples = 0;  // every function's, summed
  uint64_t flows = 0;    // request flows recorded
  // The flows' self time per call stack (root first, by name hash), in ns:
  // one entry per distinct stack, however many flows.
  std::map<std::vector<uint64_t>, double> flow_stack_self_ns;
  std::unordered_map<uint64_t, FunctionTotals> functions;  // by name hash
};

struct RecordingScan {
  std::map<std::string, ServerScan> servers;       // by name, from the recordings' headers
  std::unordered_map<uint64_t, std::string> names;  // the first name a recording gave each hash
  std::vector<std::string> problems;                // damaged records, files without ticks: one line each
  uint64_t ticks = 0;
};

// Reads every tick of one recording in order, calling on_tick(server, tick);
// names records go to *names when given (the first name of a hash is kept).
// False with a one-line *error when the file cannot be read or is no
// recording; damaged records are added to *problems and skipped, as
// ReadTrace skips them.
bool ForEachTick(const std::string& path, const std::function<void(const std::string&, const analyzer::TickRecord&)>& on_tick,
                 std::unordered_map<uint64_t, std::string>* names, std::vector<std::string>* problems,
                 std::string* error);

// The same, with the flows records too (on_flows(server, record)).
using FlowsVisitor = std::function<void(const std::string&, const analyzer::FlowsRecord&)>;
bool ForEachRecord(const std::string& path,
                   const std::function<void(const std::string&, const analyzer::TickRecord&)>& on_tick,
                   const FlowsVisitor& on_flows, std::unordered_map<uint64_t, std::string>* names,
                   std::vector<std::string>* problems, std::string* error);

// Scans every recording; `top_per_tick` says how many of a tick's functions,
// by self time, count as its top. False with a one-line *error as ForEachTick.
bool ScanRecordings(const std::vector<std::string>& paths, size_t top_per_tick, RecordingScan* scan,
                    std::string* error);

// A function's name, or its hash in hex when no recording named it.
std::string FunctionLabel(const std::unordered_map<uint64_t, std::string>& names, uint64_t name_hash);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_RECORDING_SCAN_H_
