#include "top_frame.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "format.h"
#include "io_view.h"
#include "peer_view.h"
#include "table.h"

namespace limpwatch::cli {
namespace {

constexpr size_t kFunctionColumn = 0;
constexpr size_t kMinFunctionWidth = 16;

uint64_t Delta(uint64_t before, uint64_t after) { return after >= before ? after - before : 0; }

// The interval length to divide by. The tick clock is authoritative; wall
// time is the fallback when the ticks did not advance (e.g. a TSC read on a
// different socket), and NaN makes every rate print as "-" rather than inf.
double IntervalSeconds(const analyzer::IntervalRecord& interval) {
  if (interval.seconds > 0) return interval.seconds;
  if (interval.end_realtime_ns > interval.start_realtime_ns) {
    return double(interval.end_realtime_ns - interval.start_realtime_ns) / 1e9;
  }
  return std::nan("");
}

double SortValue(const analyzer::FunctionInterval& function, SortKey key) {
  switch (key) {
    case SortKey::kSelf: return function.self_ns;
    case SortKey::kTotal: return function.total_ns;
    case SortKey::kCalls: return double(function.calls);
  }
  return 0;
}

void AppendCount(std::string* line, std::string_view label, uint64_t value) {
  if (value == 0) return;
  *line += "  ";
  *line += label;
  *line += ' ';
  *line += std::to_string(value);
}

// Losses are printed even when zero so a clean interval reads as clean, not
// as "not measured"; every other anomaly only when it happened.
std::string DiagnosticsLine(const shm::Snapshot& before, const shm::Snapshot& after,
                            const analyzer::IntervalRecord& interval) {
  uint64_t without_slot = Delta(before.calls_without_slot, after.calls_without_slot);
  std::string line = "lost calls " + std::to_string(interval.lost_calls);
  if (interval.lost_calls != 0) {
    line += " (untracked " + std::to_string(interval.diagnostics.untracked_calls) + ", without slot " +
            std::to_string(without_slot) + ")";
  }
  AppendCount(&line, "overflowed calls (counted, not timed)", interval.diagnostics.overflowed_calls);
  AppendCount(&line, "unmatched exits", interval.diagnostics.unmatched_exits);
  AppendCount(&line, "resynced frames", interval.diagnostics.resynced_frames);
  AppendCount(&line, "threads without slot", Delta(before.threads_without_slot, after.threads_without_slot));
  AppendCount(&line, "function table full", Delta(before.function_table_full, after.function_table_full));
  AppendCount(&line, "function ids wasted", Delta(before.function_ids_wasted, after.function_ids_wasted));
  AppendCount(&line, "threads started", interval.threads_started);
  AppendCount(&line, "threads retired", interval.threads_retired);
  if (!after.consistent) {
    line += "  INCONSISTENT snapshot (thread retirements raced " + std::to_string(after.attempts) + " tries)";
  }
  return line + "\n";
}

}  // namespace

bool ParseSortKey(std::string_view text, SortKey* out) {
  if (text == "self") {
    *out = SortKey::kSelf;
  } else if (text == "total") {
    *out = SortKey::kTotal;
  } else if (text == "calls") {
    *out = SortKey::kCalls;
  } else {
    return false;
  }
  return true;
}

std::string RenderTopFrame(const shm::Snapshot& before, const shm::Snapshot& after,
                           const analyzer::IntervalRecord& interval, const TopFrameOptions& options) {
  double seconds = IntervalSeconds(interval);
  std::string out;
  out += "segment " + Printable(after.object_name) + "  program " + Printable(after.program) + "  pid " +
         std::to_string(after.pid) + "  " + shm::LivenessName(after.liveness) + "\n";
  out += "threads " + std::to_string(after.threads.size()) + " live  functions " +
         std::to_string(after.functions.size()) + " known  interval " + FormatFixed(seconds, 3) + " s  calls " +
         FormatFixed(double(interval.calls) / seconds, 1) + "/s\n";
  out += DiagnosticsLine(before, after, interval);
  std::string peers = PeerStatusLine(before.peer_status, after.peer_status, after.taken_realtime_ns / 1000000,
                                     kRecentlyHeardMs);
  out += peers;

  std::vector<const analyzer::FunctionInterval*> rows;
  double all_self_ns = 0;
  for (const auto& function : interval.functions) {
    rows.push_back(&function);
    all_self_ns += function.self_ns;
  }
  std::sort(rows.begin(), rows.end(), [&](const analyzer::FunctionInterval* a, const analyzer::FunctionInterval* b) {
    double value_a = SortValue(*a, options.sort);
    double value_b = SortValue(*b, options.sort);
    if (value_a != value_b) return value_a > value_b;
    // Ties in a stable order, so equal rows do not swap places every refresh.
    if (a->name != b->name) return a->name < b->name;
    return a->id < b->id;
  });

  // Between the header and the function table: a frame has no blank line,
  // since blank lines separate the frames of a non-terminal `top`.
  analyzer::IoMetrics io = analyzer::DeriveIoMetrics(before, after);
  std::string io_section = RenderIoInterval(io, options.node_rates ? *options.node_rates : io.node);
  size_t io_lines = static_cast<size_t>(std::count(io_section.begin(), io_section.end(), '\n'));

  size_t shown = rows.size();
  if (options.limit != 0) shown = std::min(shown, options.limit);
  if (options.max_lines != 0) {
    // Three header lines (four with peers), the column titles, a possible "more" line and the I/O section.
    size_t fixed = 5 + io_lines + (peers.empty() ? 0 : 1);
    size_t budget = options.max_lines > fixed ? options.max_lines - fixed : 1;
    shown = std::min(shown, budget);
  }

  Table table({{"FUNCTION"},
               {"CALLS/S", Align::kRight},
               {"SELF ms/s", Align::kRight},
               {"SELF %", Align::kRight},
               {"TOTAL ms/s", Align::kRight},
               {"AVG SELF us/call", Align::kRight}});
  for (size_t i = 0; i < shown; ++i) {
    const analyzer::FunctionInterval& function = *rows[i];
    double self_share = all_self_ns > 0 ? 100.0 * function.self_ns / all_self_ns : 0.0;
    table.AddRow({function.name, FormatFixed(double(function.calls) / seconds, 1),
                  FormatFixed(function.self_ns / 1e6 / seconds, 3), FormatFixed(self_share, 1),
                  FormatFixed(function.total_ns / 1e6 / seconds, 3),
                  function.calls == 0 ? "-" : FormatFixed(function.self_ns / 1e3 / double(function.calls), 3)});
  }
  if (options.max_width != 0) {
    // Long C++ names would wrap every row; shorten only the name column.
    std::vector<size_t> widths = table.Widths();
    size_t others = 0;
    for (size_t column = 0; column < widths.size(); ++column) {
      if (column != kFunctionColumn) others += widths[column] + 2;
    }
    size_t room = options.max_width > others ? options.max_width - others : 0;
    table.SetMaxWidth(kFunctionColumn, std::max(room, kMinFunctionWidth));
  }
  out += io_section;
  out += table.Render();
  if (rows.empty()) {
    out += "(no calls in this interval)\n";
  } else if (shown < rows.size()) {
    out += "(" + std::to_string(rows.size() - shown) + " more active functions not shown)\n";
  }
  return out;
}

}  // namespace limpwatch::cli
