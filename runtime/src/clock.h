// The time source of the hot path: raw ticks, converted to ns by readers.
//
// The invariant TSC costs 8-17 ns a read on our VMs against 22-50 ns for
// clock_gettime, so it is used whenever the CPU guarantees it ticks at a
// constant rate in every power state (CPUID 0x80000007 EDX bit 8).
// LIMPWATCH_CLOCK=monotonic forces CLOCK_MONOTONIC_RAW, where a tick is a ns.
//
// Its rate is measured against CLOCK_MONOTONIC_RAW: briefly at start-up (a
// long busy wait there would be paid by every short-lived traced program),
// then again over the whole time since, off the hot path, where a baseline
// of seconds makes the error of the two paired reads negligible.
#ifndef LIMPWATCH_RUNTIME_SRC_CLOCK_H_
#define LIMPWATCH_RUNTIME_SRC_CLOCK_H_

#include <time.h>
#include <x86intrin.h>

#include <cstdint>

#include "limpwatch/shm/layout.h"

namespace limpwatch::runtime {

struct ClockCalibration {
  shm::ClockSource source = shm::ClockSource::kMonotonicRaw;
  double ns_per_tick = 1.0;
  uint64_t ref_ticks = 0;
  uint64_t ref_realtime_ns = 0;
  uint64_t ref_monotonic_ns = 0;  // CLOCK_MONOTONIC_RAW at ref_ticks
};

// Set once by CalibrateClock() before any thread records; read-only after.
extern bool g_clock_uses_tsc;

[[gnu::always_inline]] inline uint64_t ReadTicks() {
  if (__builtin_expect(g_clock_uses_tsc, 1)) return __rdtsc();
  timespec now;
  clock_gettime(CLOCK_MONOTONIC_RAW, &now);
  return uint64_t(now.tv_sec) * 1000000000ull + uint64_t(now.tv_nsec);
}

bool CpuHasInvariantTsc();

// Chooses the source (honouring `force_monotonic`) and, for the TSC, measures
// ticks per ns against CLOCK_MONOTONIC_RAW over `calibration_ns`.
ClockCalibration CalibrateClock(bool force_monotonic, uint64_t calibration_ns);

// Measures the TSC's ns per tick again, over the whole time since
// `calibration` was taken, and returns that baseline in ns (0 when the clock
// is not the TSC, which needs no calibration).
uint64_t RefineClockCalibration(ClockCalibration* calibration);

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_CLOCK_H_
