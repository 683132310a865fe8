#include "clock.h"

#include <cpuid.h>

namespace limpwatch::runtime {

constinit bool g_clock_uses_tsc = false;

namespace {

uint64_t ReadClockNs(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return uint64_t(now.tv_sec) * 1000000000ull + uint64_t(now.tv_nsec);
}

// A (ticks, ns) pair taken as close together as possible: the read of the
// clock is bracketed by two TSC reads and the narrowest of a few tries wins.
void PairedRead(uint64_t* ticks, uint64_t* ns) {
  uint64_t best_width = ~0ull;
  for (int attempt = 0; attempt < 8; ++attempt) {
    _mm_lfence();
    uint64_t before = __rdtsc();
    _mm_lfence();
    uint64_t clock_ns = ReadClockNs(CLOCK_MONOTONIC_RAW);
    _mm_lfence();
    uint64_t after = __rdtsc();
    if (after - before < best_width) {
      best_width = after - before;
      *ticks = before + (after - before) / 2;
      *ns = clock_ns;
    }
  }
}

}  // namespace

bool CpuHasInvariantTsc() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0x80000000, nullptr) < 0x80000007) return false;
  __cpuid(0x80000007, eax, ebx, ecx, edx);
  return (edx & (1u << 8)) != 0;
}

ClockCalibration CalibrateClock(bool force_monotonic, uint64_t calibration_ns) {
  ClockCalibration calibration;
  if (force_monotonic || !CpuHasInvariantTsc()) {
    g_clock_uses_tsc = false;
    calibration.source = shm::ClockSource::kMonotonicRaw;
    calibration.ns_per_tick = 1.0;
    calibration.ref_ticks = ReadTicks();
    calibration.ref_realtime_ns = ReadClockNs(CLOCK_REALTIME);
    return calibration;
  }
  uint64_t start_ticks = 0, start_ns = 0, end_ticks = 0, end_ns = 0;
  PairedRead(&start_ticks, &start_ns);
  uint64_t realtime_ns = ReadClockNs(CLOCK_REALTIME);
  do {
    PairedRead(&end_ticks, &end_ns);
  } while (end_ns - start_ns < calibration_ns);
  calibration.source = shm::ClockSource::kTsc;
  calibration.ns_per_tick = double(end_ns - start_ns) / double(end_ticks - start_ticks);
  calibration.ref_ticks = start_ticks;
  calibration.ref_realtime_ns = realtime_ns;
  calibration.ref_monotonic_ns = start_ns;
  g_clock_uses_tsc = true;
  return calibration;
}

uint64_t RefineClockCalibration(ClockCalibration* calibration) {
  if (calibration->source != shm::ClockSource::kTsc) return 0;
  uint64_t ticks = 0, ns = 0;
  PairedRead(&ticks, &ns);
  if (ticks <= calibration->ref_ticks || ns <= calibration->ref_monotonic_ns) return 0;
  calibration->ns_per_tick = double(ns - calibration->ref_monotonic_ns) / double(ticks - calibration->ref_ticks);
  return ns - calibration->ref_monotonic_ns;
}

}  // namespace limpwatch::runtime
