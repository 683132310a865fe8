// Sliding windows over tick records: WinSize ticks, shifted by WinShift.
//
// Windows are aligned to the tick number (unix time / tick length), not to
// when a server started, so window w covers the same seconds on every server
// and summaries of the same window can be compared.
#ifndef LIMPWATCH_ANALYZER_WINDOW_H_
#define LIMPWATCH_ANALYZER_WINDOW_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "limpwatch/analyzer/tick_record.h"

namespace limpwatch::analyzer {

struct FunctionTotals {
  uint64_t calls = 0;
  double self_ms = 0;
  uint64_t samples = 0;
};

struct Window {
  std::string node;
  uint64_t index = 0;     // last tick / shift: the window's number
  uint64_t first_tick = 0;
  uint64_t last_tick = 0;
  uint64_t end_unix_ms = 0;
  uint32_t ticks_present = 0;  // ticks of the window that had a record
  std::unordered_map<uint64_t, FunctionTotals> functions;
  std::vector<TickRecord> ticks;  // the window's ticks, oldest first (for I/O and node series)
};

class WindowBuilder {
 public:
  WindowBuilder(uint32_t window_ticks, uint32_t shift_ticks) : window_ticks_(window_ticks), shift_ticks_(shift_ticks) {}

  // Adds the next tick of this server (ticks must increase; a repeated or
  // older tick is ignored). Returns the windows that this tick completes:
  // a window is complete when its last tick has arrived.
  std::vector<Window> Add(const TickRecord& tick);

 private:
  Window Build(uint64_t last_tick) const;
  uint32_t window_ticks_;
  uint32_t shift_ticks_;
  std::deque<TickRecord> recent_;
};

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_WINDOW_H_
