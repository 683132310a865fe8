// The soak driver's clock: deadlines and pauses on the monotonic clock.
#ifndef LIMPWATCH_TOOLS_SOAK_SOAK_CLOCK_H_
#define LIMPWATCH_TOOLS_SOAK_SOAK_CLOCK_H_

#include <cstdint>

namespace limpwatch::soak {

// Milliseconds on CLOCK_MONOTONIC.
uint64_t NowMs();

// Sleeps the whole time, through signals that interrupt the sleep.
void SleepMs(uint64_t milliseconds);

}  // namespace limpwatch::soak

#endif  // LIMPWATCH_TOOLS_SOAK_SOAK_CLOCK_H_
