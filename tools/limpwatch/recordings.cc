#include "recordings.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "limpwatch/analyzer/series_table.h"
#include "limpwatch/analyzer/statistics.h"
#include "limpwatch/analyzer/trace_file.h"
#include "limpwatch/shm/name_hash.h"

namespace limpwatch::cli {
namespace {

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

bool ParseCsvRun(const std::string& text, const std::string& path, LoadedRun* run, std::string* error) {
  analyzer::SeriesTable table;
  analyzer::SeriesReadOptions options;
  if (!analyzer::ReadSeriesCsv(text, path, options, &table, error)) return false;
  if (!analyzer::FinishSeriesTable(options, &table, error)) {
    *error = path + ": " + *error;
    return false;
  }
  for (const std::string& problem : table.problems) run->problems.push_back(problem);
  for (auto& [peer, ticks] : analyzer::SeedRuleTicks(table, &run->names)) {
    auto& series = run->ticks[peer];
    for (auto& tick : ticks) series.push_back(std::move(tick));
  }
  run->from_csv = true;
  return true;
}

bool LoadRun(const std::vector<std::string>& paths, LoadedRun* run, std::string* error) {
  for (const std::string& path : paths) {
    if (EndsWith(path, ".csv")) {
      std::ifstream file(path);
      if (!file) {
        *error = path + ": cannot open";
        return false;
      }
      std::stringstream text;
      text << file.rdbuf();
      if (!ParseCsvRun(text.str(), path, run, error)) return false;
      continue;
    }
    analyzer::Trace trace;
    if (!analyzer::ReadTrace(path, &trace, error)) return false;
    for (auto& problem : trace.problems) run->problems.push_back(problem);
    if (trace.ticks.empty()) {
      run->problems.push_back(path + ": no tick records");
      continue;
    }
    run->tick_ms = trace.tick_ms;
    run->names.Add(trace.names);
    auto& series = run->ticks[trace.node];
    trace.ticks.front().starts_recording = true;
    for (auto& tick : trace.ticks) series.push_back(std::move(tick));
  }
  // Files of one server may come in any order (runs named alphabetically);
  // where two of them overlap, the first file's tick is kept.
  for (auto& [node, series] : run->ticks) {
    std::stable_sort(series.begin(), series.end(),
                     [](const analyzer::TickRecord& a, const analyzer::TickRecord& b) { return a.tick < b.tick; });
    series.erase(std::unique(series.begin(), series.end(),
                             [](const analyzer::TickRecord& a, const analyzer::TickRecord& b) { return a.tick == b.tick; }),
                 series.end());
  }
  if (run->ticks.empty()) {
    *error = "no ticks in the given files";
    return false;
  }
  return true;
}

}  // namespace limpwatch::cli
