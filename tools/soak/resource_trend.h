// The host server's resident memory and open descriptors over the run,
// sampled from /proc, and their trend: a least-squares slope per hour over
// the samples taken after the warm-up.
#ifndef LIMPWATCH_TOOLS_SOAK_RESOURCE_TREND_H_
#define LIMPWATCH_TOOLS_SOAK_RESOURCE_TREND_H_

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace limpwatch::soak {

struct ResourceSample {
  double seconds = 0;  // since the run began
  double rss_kib = 0;
  double fds = 0;  // perf events left out (resource_trend.cc)
  double threads = 0;
};

// Reads /proc/<pid>; false when the process is gone.
bool SampleProcess(pid_t pid, double seconds, ResourceSample* sample);

struct Trend {
  size_t samples = 0;
  double slope_per_hour = 0;  // least squares over the samples
  double first = 0, last = 0, low = 0, high = 0;  // fitted at the first and last sample; range seen
};

// The fit of `value` over the samples at or after `from_seconds`.
Trend FitTrend(const std::vector<ResourceSample>& samples, double from_seconds, double ResourceSample::*value);

// The limpwatch threads of `pid` by name (/proc/<pid>/task/*/comm): the
// service thread "limpwatch", the analyzer "limpwatch-anlz", the sampler
// "limpwatch-samp".
std::vector<std::string> ThreadNames(pid_t pid);
bool IsLimpwatchThreadName(const std::string& name);

}  // namespace limpwatch::soak

#endif  // LIMPWATCH_TOOLS_SOAK_RESOURCE_TREND_H_
