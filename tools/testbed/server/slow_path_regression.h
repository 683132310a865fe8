// request: the code a `slow-path` fault switches on, standing for a
// regression in one request type's path (small-file create) on every server.
#ifndef LIMPWATCH_TOOLS_TESTBED_SERVER_SLOW_PATH_REGRESSION_H_
#define LIMPWATCH_TOOLS_TESTBED_SERVER_SLOW_PATH_REGRESSION_H_

#include <cstdint>

namespace limpwatch::testbed::request {

// Burns `cpu_us` microseconds of this thread's CPU time. Never inlined: the
// profile and the CPU samples must name it as where the create's time went.
void SlowPathRegression(uint64_t cpu_us);

}  // namespace limpwatch::testbed::request

#endif  // LIMPWATCH_TOOLS_TESTBED_SERVER_SLOW_PATH_REGRESSION_H_
