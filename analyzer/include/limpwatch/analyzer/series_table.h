// Per-peer time series as exports give them: a CSV of one row per peer and
// sample, a timestamp, a peer and metric columns.
//
// The reader takes what real exports look like:
//   - a header naming the columns, quoted or not ("a ""quoted"" name", commas
//     inside quotes); the timestamp column may be called timestamp, time, ts,
//     date or datetime, the peer column peer, server, node, host, drive, disk,
//     device, osd or id, in any position (else the first two columns);
//   - timestamps in unix seconds or milliseconds (with decimals), or ISO 8601
//     dates ("2024-05-01 12:00:15", "2024-05-01T12:00:15Z", a +hh:mm offset),
//     from 1970 to the end of 9999;
//   - empty cells, NA, N/A, NaN, null, none, "-": missing values, counted per
//     column and warned about once per column, never per row;
//   - any regular sample interval, found from the timestamps (the most common
//     step between a peer's consecutive samples) unless `tick_s` is given;
//     samples are put on that grid, and a missing stretch is missing data;
//   - a row of the wrong width, a bad timestamp, or a peer sampled twice in
//     one tick: skipped and counted, with the first few named.
#ifndef LIMPWATCH_ANALYZER_SERIES_TABLE_H_
#define LIMPWATCH_ANALYZER_SERIES_TABLE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "limpwatch/analyzer/name_book.h"
#include "limpwatch/analyzer/tick_record.h"

namespace limpwatch::analyzer {

struct SeriesRow {
  uint64_t tick = 0;
  uint32_t peer = 0;           // index into SeriesTable::peers
  std::vector<double> values;  // per column, NaN when missing
};

struct SeriesTable {
  std::vector<std::string> columns;  // the metric columns, in file order
  std::vector<std::string> peers;
  double tick_s = 1;                 // the sample interval
  bool tick_detected = false;        // found from the timestamps (else given)
  double first_time_s = 0;           // unix seconds of tick 0
  std::vector<SeriesRow> rows;       // by tick, then peer
  std::vector<uint64_t> missing;     // per column: cells without a value
  std::vector<std::string> problems; // one line each

  // The reader's rows before FinishSeriesTable puts them on the grid.
  struct PendingRow {
    double time_s = 0;
    uint32_t peer = 0;
    std::vector<double> values;
  };
  std::vector<PendingRow> pending;
  uint64_t skipped_rows = 0;
};

struct SeriesReadOptions {
  double tick_s = 0;  // 0: detect
};

// Adds one CSV file's rows to *table (several files: one cluster; their
// columns must match). False with a one-line *error when the file cannot be
// used at all. Call FinishSeriesTable once every file is read.
bool ReadSeriesCsv(const std::string& text, const std::string& path, const SeriesReadOptions& options,
                   SeriesTable* table, std::string* error);
// Puts the rows on the tick grid and sorts them; warns once per column with
// missing values. False with *error when no usable row is left.
bool FinishSeriesTable(const SeriesReadOptions& options, SeriesTable* table, std::string* error);

// The seed rule's reading of a table (limpwatch diagnose --rule seed): every
// column a feature of the `time` vector, scaled by its median over the table
// so that columns of different units weigh alike, compared by distance.
std::map<std::string, std::vector<TickRecord>> SeedRuleTicks(const SeriesTable& table, NameBook* names);

// Unix seconds of an ISO 8601 date or a number (seconds, or milliseconds when
// too large for seconds); false when it is neither, or before 1970 or after
// 9999.
bool ParseTimestamp(const std::string& text, double* unix_seconds);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_SERIES_TABLE_H_
