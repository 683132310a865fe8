// What `limpwatch compare` prints: the ranked mutations as a table with a
// summary line, or as one JSON object; and the page `--html` writes.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_COMPARE_OUTPUT_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_COMPARE_OUTPUT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "limpwatch/analyzer/period_comparison.h"

namespace limpwatch::cli {

struct ComparedPeriod {
  std::vector<std::string> recordings;
  std::vector<const analyzer::PeriodProfile*> runs;  // the baseline's runs; the AFTER period is one
};

struct ComparisonReport {
  ComparedPeriod before;
  ComparedPeriod after;
  uint64_t split_unix_ms = 0;  // 0 when the periods are two sets of recordings
  analyzer::ComparisonSettings settings;
  const analyzer::PeriodComparison* comparison = nullptr;
  // The request-flow categories' comparison; null, or with no flows, when
  // the recordings hold none.
  const analyzer::CategoryComparison* categories = nullptr;
  const std::unordered_map<uint64_t, std::string>* names = nullptr;
  size_t limit = 20;  // rows shown; 0 for every mutation
};

std::string RenderComparisonText(const ComparisonReport& report);

// Its parts, which the HTML page shows too: how many rows are shown, one
// row's cells (rank, function, kind, ticks, medians, ratio, p, MS/S) and
// the summary line (no newline).
size_t MutationRowsShown(const ComparisonReport& report);
std::vector<std::string> MutationRowCells(const ComparisonReport& report, size_t rank);
std::string ComparisonSummary(const ComparisonReport& report);
std::string RenderComparisonJson(const ComparisonReport& report);

// The categories' part: whether there is one, rows shown, one row's cells
// (rank, category, kind, flows, median latencies, ratio, p, MS/S), the
// lines under a new category naming its precursors, and the summary line.
bool HasCategories(const ComparisonReport& report);
size_t CategoryRowsShown(const ComparisonReport& report);
std::vector<std::string> CategoryRowCells(const ComparisonReport& report, size_t rank);
std::vector<std::string> PrecursorLines(const ComparisonReport& report, size_t rank);
std::string CategorySummary(const ComparisonReport& report);
// A category's structure (short names for reading, or the full key text).
std::string CategoryLabel(const ComparisonReport& report, uint64_t category, bool short_names);

// The page: the summary, the recordings, the table, and per mutation shown
// the distribution of its time per call before (a line per baseline run)
// and after, drawn as inline SVG like the report's charts: no script,
// nothing fetched, readable offline (compare_html.cc).
std::string RenderComparisonHtml(const ComparisonReport& report);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_COMPARE_OUTPUT_H_
