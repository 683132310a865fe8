#include "sampler/period_jitter.h"

namespace limpwatch::runtime {

PeriodJitter::PeriodJitter(uint32_t rate_hz, uint64_t seed)
    : rate_hz_(rate_hz == 0 ? 1 : rate_hz), state_(seed == 0 ? 0x9e3779b97f4a7c15ull : seed) {}

uint64_t PeriodJitter::NextPeriodNs() {
  // xorshift64*: plenty for spreading timer phases, and no locks or libc state.
  state_ ^= state_ >> 12;
  state_ ^= state_ << 25;
  state_ ^= state_ >> 27;
  uint64_t random = state_ * 0x2545f4914f6cdd1dull;
  // Millihertz, so that low rates still spread.
  uint64_t nominal_mhz = uint64_t(rate_hz_) * 1000;
  uint64_t rate_mhz = nominal_mhz - nominal_mhz / 4 + random % (nominal_mhz / 2 + 1);
  return 1'000'000'000'000ull / rate_mhz;
}

}  // namespace limpwatch::runtime
