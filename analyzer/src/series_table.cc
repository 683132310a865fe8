#include "limpwatch/analyzer/series_table.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <set>
#include <unordered_map>

#include "limpwatch/analyzer/statistics.h"
#include "limpwatch/shm/name_hash.h"

namespace limpwatch::analyzer {
namespace {

constexpr size_t kProblemsNamed = 5;  // rows named before the rest are only counted

std::string Trim(const std::string& text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  size_t last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::string Lower(std::string text) {
  for (char& c : text) c = char(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// Splits one CSV record into fields: quotes group commas and line breaks, a
// doubled quote inside quotes is a quote. Unquoted fields are trimmed.
std::vector<std::string> SplitRecord(const std::string& record) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false, was_quoted = false;
  for (size_t at = 0; at < record.size(); ++at) {
    char c = record[at];
    if (quoted) {
      if (c == '"' && at + 1 < record.size() && record[at + 1] == '"') {
        field += '"';
        ++at;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = was_quoted = true;
    } else if (c == ',') {
      fields.push_back(was_quoted ? field : Trim(field));
      field.clear();
      was_quoted = false;
    } else {
      field += c;
    }
  }
  fields.push_back(was_quoted ? field : Trim(field));
  return fields;
}

// The next record of `text` from *at: a line, or several while a quote is open.
bool NextRecord(const std::string& text, size_t* at, std::string* record, int* lines) {
  if (*at >= text.size()) return false;
  record->clear();
  bool quoted = false;
  while (*at < text.size()) {
    char c = text[(*at)++];
    if (c == '"') quoted = !quoted;
    if (c == '\n') {
      ++*lines;
      if (!quoted) break;
    }
    *record += c;
  }
  if (!record->empty() && record->back() == '\r') record->pop_back();
  return true;
}

bool IsMissing(const std::string& cell) {
  if (cell.empty()) return true;
  std::string lower = Lower(Trim(cell));
  return lower.empty() || lower == "na" || lower == "n/a" || lower == "nan" || lower == "null" || lower == "none" ||
         lower == "-" || lower == "#n/a";
}

bool ParseNumber(const std::string& text, double* value) {
  std::string trimmed = Trim(text);
  if (trimmed.empty()) return false;
  char* end = nullptr;
  *value = std::strtod(trimmed.c_str(), &end);
  return end != trimmed.c_str() && *end == '\0' && std::isfinite(*value);
}

// From 1970 to the end of year 9999 (what four digits of ISO 8601 year
// reach): time before the epoch has no tick number, and the seed rule's
// ticks are whole seconds in 64 bits.
bool InTimestampRange(double unix_seconds) { return unix_seconds >= 0 && unix_seconds < 253402300800.0; }

int FindColumn(const std::vector<std::string>& header, const std::vector<const char*>& names) {
  for (const char* name : names) {
    for (size_t index = 0; index < header.size(); ++index) {
      if (Lower(Trim(header[index])) == name) return int(index);
    }
  }
  return -1;
}

}  // namespace

bool ParseTimestamp(const std::string& raw, double* unix_seconds) {
  std::string text = Trim(raw);
  double number = 0;
  if (ParseNumber(text, &number)) {
    double seconds = number > 1e11 ? number / 1000.0 : number;  // milliseconds when too large for seconds
    if (!InTimestampRange(seconds)) return false;
    *unix_seconds = seconds;
    return true;
  }
  // YYYY-MM-DD[T ]hh:mm[:ss[.fff]][Z|+hh:mm|-hh:mm]
  int year = 0, month = 0, day = 0, hour = 0, minute = 0;
  double second = 0;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d%n", &year, &month, &day, &consumed) != 3) return false;
  size_t at = size_t(consumed);
  if (at < text.size() && (text[at] == 'T' || text[at] == ' ')) {
    int used = 0;
    if (std::sscanf(text.c_str() + at + 1, "%2d:%2d%n", &hour, &minute, &used) != 2) return false;
    at += 1 + size_t(used);
    if (at < text.size() && text[at] == ':') {
      char* end = nullptr;
      second = std::strtod(text.c_str() + at + 1, &end);
      at = size_t(end - text.c_str());
    }
  }
  double offset_s = 0;
  if (at < text.size()) {
    if (text[at] == 'Z' && at + 1 == text.size()) {
      at = text.size();
    } else if (text[at] == '+' || text[at] == '-') {
      int offset_hours = 0, offset_minutes = 0;
      if (std::sscanf(text.c_str() + at + 1, "%2d:%2d", &offset_hours, &offset_minutes) < 1) return false;
      offset_s = (text[at] == '+' ? 1 : -1) * (offset_hours * 3600.0 + offset_minutes * 60.0);
      at = text.size();
    }
  }
  if (at != text.size() || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 ||
      second < 0 || second >= 61) {
    return false;
  }
  std::tm date{};
  date.tm_year = year - 1900;
  date.tm_mon = month - 1;
  date.tm_mday = day;
  date.tm_hour = hour;
  date.tm_min = minute;
  time_t seconds = timegm(&date);
  if (seconds == time_t(-1)) return false;
  double result = double(seconds) + second - offset_s;
  if (!InTimestampRange(result)) return false;
  *unix_seconds = result;
  return true;
}

bool ReadSeriesCsv(const std::string& text, const std::string& path, const SeriesReadOptions& /*options*/,
                   SeriesTable* table, std::string* error) {
  size_t at = 0;
  int line = 1;
  std::string record;
  // Skip leading blank lines; the first record is the header.
  do {
    if (!NextRecord(text, &at, &record, &line)) {
      *error = path + ": empty CSV file";
      return false;
    }
  } while (Trim(record).empty());
  if (record.size() >= 3 && static_cast<unsigned char>(record[0]) == 0xEF) record.erase(0, 3);  // a UTF-8 mark
  std::vector<std::string> header = SplitRecord(record);
  int time_column = FindColumn(header, {"timestamp", "time", "ts", "date", "datetime", "epoch"});
  int peer_column = FindColumn(header, {"peer", "server", "drive", "disk", "device", "osd", "target", "instance",
                                        "node", "host", "hostname", "id"});
  if (header.size() < 3) {
    *error = path + ":1: the header needs a timestamp, a peer and at least one metric column";
    return false;
  }
  if (time_column < 0 || peer_column < 0 || time_column == peer_column) {
    time_column = 0;
    peer_column = 1;
    table->problems.push_back(path + ":1: no column named timestamp / peer: '" + header[0] +
                              "' taken for the timestamps and '" + header[1] + "' for the peers");
  }
  std::vector<size_t> metric_columns;
  std::vector<std::string> names;
  std::set<std::string> taken;
  for (size_t index = 0; index < header.size(); ++index) {
    if (int(index) == time_column || int(index) == peer_column) continue;
    metric_columns.push_back(index);
    std::string name = Trim(header[index]);
    if (name.empty()) name = "column" + std::to_string(index + 1);
    // A column becomes a feature keyed by the hash of its name: two columns
    // of one name would be summed into one feature. The later is renamed.
    std::string unique = name;
    for (int repeat = 1; !taken.insert(unique).second; ++repeat) {
      std::string again = repeat > 1 ? ", " + std::to_string(repeat) : "";
      unique = name + " (column " + std::to_string(index + 1) + again + ")";
    }
    if (unique != name) {
      table->problems.push_back(path + ":1: column " + std::to_string(index + 1) + " repeats the name '" + name +
                                "': read as '" + unique + "'");
    }
    names.push_back(unique);
  }
  if (table->columns.empty() && table->pending.empty()) {
    table->columns = names;
    table->missing.assign(names.size(), 0);
  } else if (table->columns != names) {
    *error = path + ":1: its metric columns differ from the first file's";
    return false;
  }
  std::unordered_map<std::string, uint32_t> peer_index;
  for (uint32_t index = 0; index < table->peers.size(); ++index) peer_index[table->peers[index]] = index;
  size_t named = 0;
  auto skip = [&](int number, const std::string& why) {
    ++table->skipped_rows;
    if (named++ < kProblemsNamed) table->problems.push_back(path + ":" + std::to_string(number) + ": " + why + "; row skipped");
  };
  while (true) {
    int number = line;
    if (!NextRecord(text, &at, &record, &line)) break;
    if (Trim(record).empty()) continue;
    std::vector<std::string> fields = SplitRecord(record);
    if (fields.size() != header.size()) {
      skip(number, "expected " + std::to_string(header.size()) + " fields, got " + std::to_string(fields.size()));
      continue;
    }
    SeriesTable::PendingRow row;
    std::string peer = Trim(fields[size_t(peer_column)]);
    if (!ParseTimestamp(fields[size_t(time_column)], &row.time_s) || peer.empty()) {
      skip(number, "bad timestamp '" + fields[size_t(time_column)] + "' or empty peer");
      continue;
    }
    auto [entry, inserted] = peer_index.try_emplace(peer, uint32_t(table->peers.size()));
    if (inserted) table->peers.push_back(peer);
    row.peer = entry->second;
    row.values.assign(metric_columns.size(), std::numeric_limits<double>::quiet_NaN());
    // A cell that is no number counts as missing, like an empty one.
    for (size_t column = 0; column < metric_columns.size(); ++column) {
      const std::string& cell = fields[metric_columns[column]];
      if (!IsMissing(cell) && !ParseNumber(cell, &row.values[column])) {
        row.values[column] = std::numeric_limits<double>::quiet_NaN();
      }
    }
    table->pending.push_back(std::move(row));
  }
  if (named > kProblemsNamed) {
    table->problems.push_back(path + ": " + std::to_string(named - kProblemsNamed) + " more rows skipped");
  }
  return true;
}

bool FinishSeriesTable(const SeriesReadOptions& options, SeriesTable* table, std::string* error) {
  if (table->pending.empty()) {
    *error = "no usable rows";
    return false;
  }
  // Columns without a single number (a second name column, a comment) are
  // no metric: left out, said once.
  std::vector<size_t> kept;
  for (size_t column = 0; column < table->columns.size(); ++column) {
    bool any = std::any_of(table->pending.begin(), table->pending.end(),
                           [column](const auto& row) { return std::isfinite(row.values[column]); });
    if (any) {
      kept.push_back(column);
    } else {
      table->problems.push_back("column '" + table->columns[column] + "' holds no number: left out");
    }
  }
  if (kept.empty()) {
    *error = "no column holds numbers";
    return false;
  }
  // The sample interval: the median step between a peer's consecutive
  // samples (gaps and jitter move a median little), or the one given.
  double tick_s = options.tick_s;
  table->tick_detected = tick_s <= 0;
  double first = std::numeric_limits<double>::infinity();
  for (const auto& row : table->pending) first = std::min(first, row.time_s);
  if (tick_s <= 0) {
    std::vector<std::vector<double>> times(table->peers.size());
    for (const auto& row : table->pending) times[row.peer].push_back(row.time_s);
    std::vector<double> steps;
    for (auto& series : times) {
      std::sort(series.begin(), series.end());
      for (size_t index = 1; index < series.size(); ++index) {
        if (series[index] > series[index - 1]) steps.push_back(series[index] - series[index - 1]);
      }
    }
    // The median step, then the mean of the steps near it: a gap is no step,
    // and timestamps that jitter around the grid cancel out in a mean over a
    // run of consecutive samples, where a median keeps their bias and the
    // grid drifts over a long export.
    double median = steps.empty() ? 1.0 : Median(steps);
    double sum = 0;
    size_t near = 0;
    for (double step : steps) {
      if (step > 0.5 * median && step < 1.5 * median) {
        sum += step;
        ++near;
      }
    }
    tick_s = near > 0 ? sum / double(near) : median;
    if (tick_s <= 0) tick_s = 1.0;
  }
  table->tick_s = tick_s;
  table->first_time_s = first;
  std::vector<std::vector<double>> kept_values;
  std::set<std::pair<uint64_t, uint32_t>> seen;
  uint64_t duplicates = 0;
  std::vector<uint64_t> missing(kept.size(), 0);
  table->rows.clear();
  std::stable_sort(table->pending.begin(), table->pending.end(),
                   [](const auto& a, const auto& b) { return a.time_s < b.time_s; });
  for (auto& pending : table->pending) {
    SeriesRow row;
    row.tick = uint64_t(std::llround((pending.time_s - first) / tick_s));
    row.peer = pending.peer;
    if (!seen.insert({row.tick, row.peer}).second) {
      ++duplicates;
      continue;
    }
    for (size_t index = 0; index < kept.size(); ++index) {
      double value = pending.values[kept[index]];
      if (!std::isfinite(value)) ++missing[index];
      row.values.push_back(value);
    }
    table->rows.push_back(std::move(row));
  }
  std::vector<std::string> columns;
  for (size_t index : kept) columns.push_back(table->columns[index]);
  table->columns = columns;
  table->missing = missing;
  table->pending.clear();
  table->pending.shrink_to_fit();
  std::stable_sort(table->rows.begin(), table->rows.end(), [](const SeriesRow& a, const SeriesRow& b) {
    return a.tick != b.tick ? a.tick < b.tick : a.peer < b.peer;
  });
  if (duplicates > 0) {
    table->problems.push_back(std::to_string(duplicates) + " rows repeat a peer's sample of the same " +
                              std::to_string(tick_s) + " s tick: the first of each kept");
  }
  for (size_t index = 0; index < columns.size(); ++index) {
    if (missing[index] > 0) {
      table->problems.push_back("column '" + columns[index] + "': " + std::to_string(missing[index]) + " of " +
                                std::to_string(table->rows.size()) + " cells have no value (empty, NA or not a number)");
    }
  }
  return true;
}

std::map<std::string, std::vector<TickRecord>> SeedRuleTicks(const SeriesTable& table, NameBook* names) {
  std::vector<double> scale(table.columns.size(), 1.0);
  std::vector<uint64_t> hashes(table.columns.size());
  for (size_t column = 0; column < table.columns.size(); ++column) {
    std::vector<double> magnitudes;
    for (const SeriesRow& row : table.rows) {
      if (std::isfinite(row.values[column])) magnitudes.push_back(std::fabs(row.values[column]));
    }
    double median = Median(magnitudes);
    scale[column] = median > 0 ? 1000.0 / median : 1.0;  // a typical value becomes 1000
    hashes[column] = shm::FunctionNameHash(table.columns[column]);
    names->Add(hashes[column], table.columns[column]);
  }
  std::map<std::string, std::vector<TickRecord>> ticks;
  for (const SeriesRow& row : table.rows) {
    TickRecord tick;
    tick.node = table.peers[row.peer];
    // As the seed rule always read a CSV: one tick a second of its timestamp.
    tick.tick = uint64_t(table.first_time_s + double(row.tick) * table.tick_s);
    tick.unix_ms = (tick.tick + 1) * 1000;
    tick.tick_ms = 1000;
    for (size_t column = 0; column < table.columns.size(); ++column) {
      if (!std::isfinite(row.values[column])) continue;
      FunctionTick feature;
      feature.name_hash = hashes[column];
      feature.self_ms = row.values[column] * scale[column];
      feature.calls = 1;
      tick.functions.push_back(feature);
    }
    std::sort(tick.functions.begin(), tick.functions.end(),
              [](const auto& a, const auto& b) { return a.name_hash < b.name_hash; });
    auto& series = ticks[tick.node];
    if (!series.empty() && series.back().tick >= tick.tick) continue;
    series.push_back(std::move(tick));
  }
  return ticks;
}

}  // namespace limpwatch::analyzer
