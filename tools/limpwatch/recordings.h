// Loading what `train` and `diagnose` read: limpwatch recordings (trace
// files) and per-peer time series in CSV.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_RECORDINGS_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_RECORDINGS_H_

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "limpwatch/analyzer/name_book.h"
#include "limpwatch/analyzer/tick_record.h"

namespace limpwatch::cli {

struct LoadedRun {
  std::map<std::string, std::vector<analyzer::TickRecord>> ticks;  // server -> ticks in order
  analyzer::NameBook names;
  uint32_t tick_ms = 1000;
  bool from_csv = false;
  std::vector<std::string> problems;  // per-file warnings, one line each
};

// Loads files ending in .csv as CSV (`timestamp,peer,metric...`), any other
// as a recording. Returns false with a one-line *error naming the file when
// one cannot be used at all.
bool LoadRun(const std::vector<std::string>& paths, LoadedRun* run, std::string* error);

// Parses CSV text. Each metric column becomes a feature of the `time`
// vector metric, scaled by the column's median over the whole file so that
// columns of different units weigh alike.
bool ParseCsvRun(const std::string& text, const std::string& path, LoadedRun* run, std::string* error);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_RECORDINGS_H_
