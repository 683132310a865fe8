#include "server/slow_path_regression.h"

#include <time.h>

namespace limpwatch::testbed::request {
namespace {

// Not traced: the clock it reads is the fault's scaffolding, not part of the
// regression it models, whose time belongs to SlowPathRegression alone.
__attribute__((no_instrument_function)) uint64_t ThreadCpuNs() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return uint64_t(now.tv_sec) * 1000000000 + uint64_t(now.tv_nsec);
}

}  // namespace

// A spin rather than a sleep: a code regression costs CPU, and on a loaded
// node its requests wait for a CPU too, which a sleep would never show. The
// spin counts the thread's own CPU time, so the cost is the same amount of
// work however busy the machine is (its wall time can only be longer).
__attribute__((noinline)) void SlowPathRegression(uint64_t cpu_us) {
  const uint64_t until = ThreadCpuNs() + cpu_us * 1000;
  volatile uint64_t churn = 0;
  while (ThreadCpuNs() < until) {
    for (int step = 0; step < 256; ++step) churn = churn * 6364136223846793005ULL + 1442695040888963407ULL;
  }
}

}  // namespace limpwatch::testbed::request
