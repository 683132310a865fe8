// Random sampling periods for per-CPU cpu-clock events.
//
// A per-CPU cpu-clock event fires at fixed wall-clock instants, whoever
// runs. A server whose work is periodic (wake, work, sleep a fixed time)
// can lock onto that grid: its wake-ups are pulled onto the same timer
// interrupts (timer slack), and for seconds on end the samples land on it
// far more or far less often than its CPU time says. Measured here: four
// identical servers sleeping 500 us between short bursts of work, one of
// them drew 3-6x the samples of the others for several seconds, and the
// peers raised false "samples" alarms in 3 runs of 5. Per-thread events
// count the thread's own CPU time and do not alias this way.
//
// The sampler's reader restarts each event with a new period every time it
// drains the rings (100 ms), the period of a rate drawn uniformly from
// [3/4, 5/4] of the nominal rate: the grid's phase and spacing keep moving,
// so no workload stays locked onto it, and the mean rate is the nominal
// one, less the part of a period each restart drops (half a period per
// 100 ms: 2.5 % at 199 Hz). The runtime's tests check the samples against
// the CPU time actually used.
#ifndef LIMPWATCH_RUNTIME_SRC_SAMPLER_PERIOD_JITTER_H_
#define LIMPWATCH_RUNTIME_SRC_SAMPLER_PERIOD_JITTER_H_

#include <cstdint>

namespace limpwatch::runtime {

class PeriodJitter {
 public:
  PeriodJitter(uint32_t rate_hz, uint64_t seed);

  // The next period in nanoseconds: 1 s / r, r uniform in [3/4, 5/4] of rate_hz.
  uint64_t NextPeriodNs();

  uint32_t nominal_rate_hz() const { return rate_hz_; }

 private:
  uint32_t rate_hz_;
  uint64_t state_;
};

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_SAMPLER_PERIOD_JITTER_H_
