// Node-local invariants (seed 003): stable relationships between the load a
// server receives and its resource statistics, checked over periods of
// `invariant_period_ticks` one-second samples.
//
//   I_req   = (req_{n-1} - req_n) / req_n >= alpha   the request rate dropped
//   I_cpu   = corr(req, interrupts) >= 0             holds unless CPU-starved
//   I_mem   = corr(req, pages allocated) >= 0        holds unless memory-starved
//   I_disk  = corr(iosize, svctm) >= 0               holds unless the disk misbehaves
//   I_net   = I_req and all three invariants hold    (to be confirmed by peers)
//
// A correlation over a constant series is undefined; the invariant is then
// taken as holding (nothing contradicts it).
#ifndef LIMPWATCH_ANALYZER_INVARIANTS_H_
#define LIMPWATCH_ANALYZER_INVARIANTS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "limpwatch/analyzer/tick_record.h"

namespace limpwatch::analyzer {

struct InvariantPeriod {
  uint64_t period = 0;  // last tick / period length
  bool request_dropped = false;  // I_req
  bool cpu_holds = true;
  bool memory_holds = true;
  bool disk_holds = true;
  std::optional<double> cpu_correlation;
  std::optional<double> memory_correlation;
  std::optional<double> disk_correlation;
  double request_rate = 0;  // mean req (bytes/s) over the period

  bool NetworkSuspected() const { return request_dropped && cpu_holds && memory_holds && disk_holds; }
  // A performance anomaly (seed 003's trigger): the request rate dropped and
  // an invariant names the resource.
  bool Anomalous() const { return request_dropped && (!cpu_holds || !memory_holds || !disk_holds); }
  // PeerSummary invariant bits (set = violated / suspected).
  uint32_t Bits() const;
};

class InvariantChecker {
 public:
  InvariantChecker(uint32_t period_ticks, double alpha) : period_ticks_(period_ticks), alpha_(alpha) {}

  // Adds a tick; returns the period it completes, if any. Ticks without node
  // statistics are kept for the request rate but not for the correlations.
  std::optional<InvariantPeriod> Add(const TickRecord& tick);

  // The bits of the last completed period (0 before the first).
  uint32_t LatestBits() const { return latest_bits_; }

 private:
  uint32_t period_ticks_;
  double alpha_;
  std::vector<TickRecord> current_;
  std::optional<double> previous_request_rate_;
  uint32_t latest_bits_ = 0;
};

// Evaluates one period's ticks against the previous period's request rate.
InvariantPeriod EvaluatePeriod(const std::vector<TickRecord>& ticks, std::optional<double> previous_request_rate,
                               double alpha);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_INVARIANTS_H_
