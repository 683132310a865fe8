#include "limpwatch/analyzer/window.h"

#include "limpwatch/analyzer/tick_record.h"
#include "limpwatch/shm/name_hash.h"

namespace limpwatch::analyzer {
namespace {

uint64_t CpuTimeHash() {
  static const uint64_t hash = shm::FunctionNameHash(kCpuTimeName);
  return hash;
}

}  // namespace

std::vector<Window> WindowBuilder::Add(const TickRecord& tick) {
  std::vector<Window> complete;
  if (!recent_.empty() && tick.tick <= recent_.back().tick) return complete;
  uint64_t previous = recent_.empty() ? tick.tick - 1 : recent_.back().tick;
  recent_.push_back(tick);
  while (!recent_.empty() && recent_.front().tick + window_ticks_ <= tick.tick) recent_.pop_front();
  // A gap of several ticks (the server was stopped) can complete several windows.
  for (uint64_t last = previous + 1; last <= tick.tick; ++last) {
    if ((last + 1) % shift_ticks_ != 0) continue;
    Window window = Build(last);
    if (window.ticks_present > 0) complete.push_back(std::move(window));
  }
  return complete;
}

Window WindowBuilder::Build(uint64_t last_tick) const {
  Window window;
  window.index = (last_tick + 1) / shift_ticks_;
  window.last_tick = last_tick;
  window.first_tick = last_tick + 1 >= window_ticks_ ? last_tick + 1 - window_ticks_ : 0;
  for (const TickRecord& tick : recent_) {
    if (tick.tick < window.first_tick || tick.tick > last_tick) continue;
    window.node = tick.node;
    window.end_unix_ms = tick.unix_ms;
    ++window.ticks_present;
    for (const FunctionTick& function : tick.functions) {
      FunctionTotals& totals = window.functions[function.name_hash];
      totals.calls += function.calls;
      totals.self_ms += function.self_ms;
      totals.samples += function.samples;
    }
    if (tick.node_stats.valid) {
      FunctionTotals& cpu = window.functions[CpuTimeHash()];
      cpu.calls += 1;
      cpu.self_ms += tick.node_stats.cpu_ms * double(tick.tick_ms) / 1000.0;  // cpu_ms is per second
    }
    window.ticks.push_back(tick);
  }
  return window;
}

}  // namespace limpwatch::analyzer
