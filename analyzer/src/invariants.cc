#include "limpwatch/analyzer/invariants.h"

#include "limpwatch/analyzer/peer_summary.h"
#include "limpwatch/analyzer/statistics.h"

namespace limpwatch::analyzer {

uint32_t InvariantPeriod::Bits() const {
  uint32_t bits = 0;
  if (request_dropped) bits |= kInvariantRequestRate;
  if (!cpu_holds) bits |= kInvariantCpu;
  if (!memory_holds) bits |= kInvariantMemory;
  if (!disk_holds) bits |= kInvariantDisk;
  if (NetworkSuspected()) bits |= kInvariantNetwork;
  return bits;
}

InvariantPeriod EvaluatePeriod(const std::vector<TickRecord>& ticks, std::optional<double> previous_request_rate,
                               double alpha) {
  InvariantPeriod period;
  if (ticks.empty()) return period;
  period.period = ticks.back().tick / ticks.size();
  std::vector<double> request, interrupts, memory, iosize, svctm;
  double request_sum = 0;
  for (const TickRecord& tick : ticks) {
    double rate = tick.io.request_bytes * 1000.0 / tick.tick_ms;
    request_sum += rate;
    if (!tick.node_stats.valid) continue;
    request.push_back(rate);
    interrupts.push_back(tick.node_stats.interrupts);
    memory.push_back(tick.node_stats.pages_allocated);
    if (tick.node_stats.disk_requests > 0) {
      iosize.push_back(tick.node_stats.disk_iosize_kb);
      svctm.push_back(tick.node_stats.disk_svctm_ms);
    }
  }
  period.request_rate = request_sum / double(ticks.size());
  // Formula 1 of seed 003: FALSE when req_n = 0.
  if (previous_request_rate && period.request_rate > 0) {
    period.request_dropped = (*previous_request_rate - period.request_rate) / period.request_rate >= alpha;
  }
  period.cpu_correlation = Correlation(request, interrupts);
  period.memory_correlation = Correlation(request, memory);
  period.disk_correlation = Correlation(iosize, svctm);
  period.cpu_holds = !period.cpu_correlation || *period.cpu_correlation >= 0;
  period.memory_holds = !period.memory_correlation || *period.memory_correlation >= 0;
  period.disk_holds = !period.disk_correlation || *period.disk_correlation >= 0;
  return period;
}

std::optional<InvariantPeriod> InvariantChecker::Add(const TickRecord& tick) {
  if (!current_.empty() && tick.tick / period_ticks_ != current_.back().tick / period_ticks_) {
    current_.clear();  // a gap: the period we were filling will never complete
  }
  current_.push_back(tick);
  if ((tick.tick + 1) % period_ticks_ != 0) return std::nullopt;
  InvariantPeriod period = EvaluatePeriod(current_, previous_request_rate_, alpha_);
  period.period = tick.tick / period_ticks_;
  previous_request_rate_ = period.request_rate;
  latest_bits_ = period.Bits();
  current_.clear();
  return period;
}

}  // namespace limpwatch::analyzer
