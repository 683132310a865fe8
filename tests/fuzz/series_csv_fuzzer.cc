// Fuzz target for the CSV reader of `limpwatch diagnose` (per-peer time
// series; analyzer/series_table.h, and ParseCsvRun of
// tools/limpwatch/recordings.h, which is how the command reads a .csv).
//
// Invariants, for every input:
//   - a refusal is one line naming the file;
//   - an accepted table has rows on its tick grid, in order of tick then
//     peer, at most one per peer and tick, each with a value (or NaN) per
//     kept column and a peer it knows; a positive, finite sample interval;
//     a count of missing cells per column that its rows bear out;
//   - the seed rule's ticks from it are in strictly increasing order per
//     peer, with finite features sorted by key and named;
//   - the command's reader agrees with the table on accepting the file.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "limpwatch/analyzer/name_book.h"
#include "limpwatch/analyzer/series_table.h"
#include "recordings.h"

namespace limpwatch::analyzer::fuzzing {
namespace {

using limpwatch::fuzzing::Require;

constexpr const char* kPath = "fuzz.csv";

void Check(bool condition, const char* invariant) { Require(condition, "series CSV", invariant); }

void CheckOneLine(const std::string& error) {
  Check(!error.empty() && error.find('\n') == std::string::npos, "a refusal is one line");
}

void CheckTable(const SeriesTable& table) {
  Check(std::isfinite(table.tick_s) && table.tick_s > 0, "the sample interval is positive and finite");
  Check(table.missing.size() == table.columns.size(), "a missing count per column");
  Check(table.pending.empty(), "every pending row is placed");
  std::vector<uint64_t> missing(table.columns.size(), 0);
  for (size_t index = 0; index < table.rows.size(); ++index) {
    const SeriesRow& row = table.rows[index];
    Check(row.peer < table.peers.size(), "a row's peer is known");
    Check(row.values.size() == table.columns.size(), "a row has a value per column");
    for (size_t column = 0; column < row.values.size(); ++column) missing[column] += !std::isfinite(row.values[column]);
    if (index == 0) continue;
    const SeriesRow& previous = table.rows[index - 1];
    Check(previous.tick < row.tick || (previous.tick == row.tick && previous.peer < row.peer),
          "rows are in order of tick, then peer, one per peer and tick");
  }
  Check(missing == table.missing, "the missing counts are the rows' empty cells");
}

void CheckSeedTicks(const SeriesTable& table) {
  NameBook names;
  auto ticks = SeedRuleTicks(table, &names);
  for (const auto& [peer, series] : ticks) {
    for (size_t index = 0; index < series.size(); ++index) {
      const TickRecord& tick = series[index];
      Check(tick.node == peer, "a tick belongs to its peer");
      if (index > 0) Check(series[index - 1].tick < tick.tick, "a peer's ticks strictly increase");
      for (size_t feature = 0; feature < tick.functions.size(); ++feature) {
        Check(std::isfinite(tick.functions[feature].self_ms), "a feature's value is finite");
        Check(names.HashOfKey(FoldNameHash(tick.functions[feature].name_hash)) != 0, "and named");
        if (feature > 0) {
          Check(tick.functions[feature - 1].name_hash < tick.functions[feature].name_hash, "features sorted by key");
        }
      }
    }
  }
}

}  // namespace
}  // namespace limpwatch::analyzer::fuzzing

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace limpwatch::analyzer;
  using namespace limpwatch::analyzer::fuzzing;
  const std::string text = limpwatch::fuzzing::Text(std::span(data, size));
  SeriesTable table;
  SeriesReadOptions options;
  std::string error;
  bool accepted = ReadSeriesCsv(text, kPath, options, &table, &error);
  if (!accepted) {
    CheckOneLine(error);
    Check(error.compare(0, 8, kPath) == 0, "and names the file");
  } else {
    std::string finish_error;
    accepted = FinishSeriesTable(options, &table, &finish_error);
    if (accepted) {
      CheckTable(table);
      CheckSeedTicks(table);
    } else {
      CheckOneLine(finish_error);
    }
  }

  limpwatch::cli::LoadedRun run;
  std::string run_error;
  bool run_accepted = limpwatch::cli::ParseCsvRun(text, kPath, &run, &run_error);
  Check(run_accepted == accepted, "the command accepts the file exactly when the table does");
  if (!run_accepted) CheckOneLine(run_error);
  return 0;
}
