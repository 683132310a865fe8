// Runs the node-metrics sampler (analyzer/node_metrics.h) inside the traced
// process, once per second on the runtime's service thread, and publishes
// into the segment's NodeMetricsRecord. Here because hooks/ is where the
// runtime and the analyzer meet; neither knows the other.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "limpwatch/analyzer/node_metrics.h"
#include "process.h"
#include "service_tasks.h"

namespace limpwatch::hooks {
namespace {

constexpr uint32_t kSamplePeriodMs = 1000;

// The storage directory made absolute at load time: a daemonizing server
// changes to "/" before the first sample is taken.
constinit char g_storage_directory[PATH_MAX] = {};

constinit analyzer::NodeMetricsSampler* g_sampler = nullptr;
constinit std::set<std::string>* g_reported = nullptr;

void ReportOnce(const std::string& problem) {
  if (g_reported == nullptr) g_reported = new std::set<std::string>;
  if (g_reported->insert(problem).second) runtime::LogLine("node metrics: " + problem);
}

void SampleNodeMetrics(const shm::SegmentView& segment, uint64_t now_ns) {
  if (g_sampler == nullptr) {
    g_sampler = new analyzer::NodeMetricsSampler(g_storage_directory);
    const analyzer::StorageDevice& device = g_sampler->device();
    if (device.state == shm::DiskState::kBadDirectory) {
      ReportOnce("LIMPWATCH_STORAGE_DIR: " + device.problem + "; disk metrics are off, the rest is sampled");
    } else if (device.state == shm::DiskState::kNoBlockDevice) {
      ReportOnce(device.problem);
    }
  }
  std::vector<std::string> problems;
  g_sampler->SampleInto(segment.node_metrics(), &problems);
  for (const auto& problem : problems) ReportOnce(problem);
}

[[gnu::constructor(102)]] void RegisterNodeMetricsTask() {
  int saved_errno = errno;
  const char* configured = std::getenv("LIMPWATCH_STORAGE_DIR");
  std::string directory = configured != nullptr && *configured != '\0' ? configured : ".";
  if (directory[0] != '/') {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) != nullptr) directory = std::string(cwd) + (directory == "." ? "" : "/" + directory);
  }
  std::strncpy(g_storage_directory, directory.c_str(), sizeof g_storage_directory - 1);
  runtime::RegisterServiceTask("node-metrics", SampleNodeMetrics, kSamplePeriodMs);
  errno = saved_errno;
}

}  // namespace
}  // namespace limpwatch::hooks
