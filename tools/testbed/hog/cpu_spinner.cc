// cpu-hog: one busy loop pinned to one CPU.
#include <sched.h>

#include <cerrno>
#include <cstring>

#include "common/json_line.h"
#include "hog/hog.h"

namespace limpwatch::testbed::hog {

int RunCpuSpinner(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpu >= 0) CPU_SET(cpu, &set);
  if (cpu >= 0 && sched_setaffinity(0, sizeof set, &set) != 0) {
    EmitJsonLine(JsonLine().Add("event", "error").Add("error", std::string("sched_setaffinity: ") + strerror(errno)));
    return 1;
  }
  EmitJsonLine(JsonLine().Add("event", "cpu-hog").Add("cpu", cpu));
  volatile uint64_t counter = 0;
  while (!stop_requested.load(std::memory_order_relaxed)) {
    for (int i = 0; i < 1000000; ++i) counter = counter + 1;
  }
  return 0;
}

}  // namespace limpwatch::testbed::hog
