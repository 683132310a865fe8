#include "recordings.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "limpwatch/analyzer/statistics.h"
#include "limpwatch/analyzer/trace_file.h"
#include "limpwatch/shm/name_hash.h"

namespace limpwatch::cli {
namespace {

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::stringstream stream(line);
  while (std::getline(stream, field, ',')) {
    size_t first = field.find_first_not_of(" \t\r");
    size_t last = field.find_last_not_of(" \t\r");
    fields.push_back(first == std::string::npos ? "" : field.substr(first, last - first + 1));
  }
  if (!line.empty() && line.back() == ',') fields.push_back("");
  return fields;
}

bool ParseDouble(const std::string& text, double* out) {
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return end != text.c_str() && *end == '\0' && std::isfinite(*out);
}

}  // namespace

bool ParseCsvRun(const std::string& text, const std::string& path, LoadedRun* run, std::string* error) {
  std::istringstream lines(text);
  std::string line;
  if (!std::getline(lines, line)) {
    *error = path + ": empty CSV file";
    return false;
  }
  std::vector<std::string> header = SplitCsvLine(line);
  if (header.size() < 3 || header[0] != "timestamp" || header[1] != "peer") {
    *error = path + ":1: the header must be 'timestamp,peer,<metric>,...'";
    return false;
  }
  std::vector<std::string> metrics(header.begin() + 2, header.end());
  struct Row {
    uint64_t tick;
    std::string peer;
    std::vector<double> values;
  };
  std::vector<Row> rows;
  std::vector<std::vector<double>> columns(metrics.size());
  for (int number = 2; std::getline(lines, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::vector<std::string> fields = SplitCsvLine(line);
    std::string where = path + ":" + std::to_string(number) + ": ";
    double timestamp = 0;
    if (fields.size() != header.size()) {
      run->problems.push_back(where + "expected " + std::to_string(header.size()) + " fields, got " +
                              std::to_string(fields.size()) + "; row skipped");
      continue;
    }
    if (!ParseDouble(fields[0], &timestamp) || timestamp < 0 || fields[1].empty()) {
      run->problems.push_back(where + "bad timestamp or empty peer; row skipped");
      continue;
    }
    Row row;
    // Unix seconds, or milliseconds when the number is too large for seconds.
    row.tick = uint64_t(timestamp > 1e11 ? timestamp / 1000.0 : timestamp);
    row.peer = fields[1];
    bool good = true;
    for (size_t column = 0; column < metrics.size(); ++column) {
      double value = 0;
      if (!ParseDouble(fields[column + 2], &value)) {
        run->problems.push_back(where + "'" + fields[column + 2] + "' in column " + metrics[column] +
                                " is not a number; row skipped");
        good = false;
        break;
      }
      row.values.push_back(value);
    }
    if (!good) continue;
    for (size_t column = 0; column < metrics.size(); ++column) columns[column].push_back(std::fabs(row.values[column]));
    rows.push_back(std::move(row));
  }
  if (rows.empty()) {
    *error = path + ": no usable rows";
    return false;
  }
  std::vector<double> scale(metrics.size());
  for (size_t column = 0; column < metrics.size(); ++column) {
    double median = analyzer::Median(columns[column]);
    scale[column] = median > 0 ? 1000.0 / median : 1.0;  // a typical value becomes 1000
    run->names.Add(shm::FunctionNameHash(metrics[column]), metrics[column]);
  }
  for (const Row& row : rows) {
    analyzer::TickRecord tick;
    tick.node = row.peer;
    tick.tick = row.tick;
    tick.unix_ms = (row.tick + 1) * 1000;
    tick.tick_ms = 1000;
    for (size_t column = 0; column < metrics.size(); ++column) {
      analyzer::FunctionTick feature;
      feature.name_hash = shm::FunctionNameHash(metrics[column]);
      feature.self_ms = row.values[column] * scale[column];
      feature.calls = 1;
      tick.functions.push_back(feature);
    }
    std::sort(tick.functions.begin(), tick.functions.end(),
              [](const auto& a, const auto& b) { return a.name_hash < b.name_hash; });
    auto& series = run->ticks[row.peer];
    if (!series.empty() && series.back().tick >= tick.tick) {
      run->problems.push_back(path + ": peer " + row.peer + " has rows out of time order; later duplicates skipped");
      continue;
    }
    series.push_back(std::move(tick));
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
