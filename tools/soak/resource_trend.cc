#include "resource_trend.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string_view>

namespace limpwatch::soak {
namespace {

// The process's descriptors, its perf events left out: their number is one
// per CPU while the process holds the node's shared sampling events and none
// while another does (runtime/src/sampler/node_sample_sharing.h), so it
// steps when a peer that held them is killed, bounded by the CPUs; a leak
// grows without bound.
size_t CountDescriptorsButPerfEvents(const std::string& directory) {
  DIR* listing = opendir(directory.c_str());
  if (listing == nullptr) return 0;
  size_t count = 0;
  while (dirent* entry = readdir(listing)) {
    if (entry->d_name[0] == '.') continue;
    char target[64];
    ssize_t length = readlinkat(dirfd(listing), entry->d_name, target, sizeof target - 1);
    if (length > 0 && std::string_view(target, size_t(length)) == "anon_inode:[perf_event]") continue;
    ++count;
  }
  closedir(listing);
  return count;
}

}  // namespace

bool SampleProcess(pid_t pid, double seconds, ResourceSample* sample) {
  std::string base = "/proc/" + std::to_string(pid);
  std::ifstream status(base + "/status");
  if (!status) return false;
  sample->seconds = seconds;
  sample->rss_kib = -1;
  std::string line;
  while (std::getline(status, line)) {
    std::istringstream fields(line);
    std::string key;
    fields >> key;
    if (key == "VmRSS:") fields >> sample->rss_kib;
    if (key == "Threads:") fields >> sample->threads;
  }
  sample->fds = double(CountDescriptorsButPerfEvents(base + "/fd"));
  return sample->rss_kib >= 0;
}

Trend FitTrend(const std::vector<ResourceSample>& samples, double from_seconds, double ResourceSample::*value) {
  Trend trend;
  double sum_t = 0, sum_v = 0;
  std::vector<const ResourceSample*> used;
  for (const ResourceSample& sample : samples) {
    if (sample.seconds < from_seconds) continue;
    used.push_back(&sample);
    sum_t += sample.seconds;
    sum_v += sample.*value;
  }
  trend.samples = used.size();
  if (used.size() < 2) return trend;
  double mean_t = sum_t / double(used.size()), mean_v = sum_v / double(used.size());
  double covariance = 0, variance = 0;
  trend.low = trend.high = used.front()->*value;
  for (const ResourceSample* sample : used) {
    covariance += (sample->seconds - mean_t) * (sample->*value - mean_v);
    variance += (sample->seconds - mean_t) * (sample->seconds - mean_t);
    trend.low = std::min(trend.low, sample->*value);
    trend.high = std::max(trend.high, sample->*value);
  }
  double slope = variance > 0 ? covariance / variance : 0;
  trend.slope_per_hour = slope * 3600;
  trend.first = mean_v + slope * (used.front()->seconds - mean_t);
  trend.last = mean_v + slope * (used.back()->seconds - mean_t);
  return trend;
}

bool IsLimpwatchThreadName(const std::string& name) {
  return name == "limpwatch" || name == "limpwatch-anlz" || name == "limpwatch-samp";
}

std::vector<std::string> ThreadNames(pid_t pid) {
  std::vector<std::string> names;
  std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* listing = opendir(tasks.c_str());
  if (listing == nullptr) return names;
  while (dirent* entry = readdir(listing)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream comm(tasks + "/" + entry->d_name + "/comm");
    std::string name;
    if (std::getline(comm, name)) names.push_back(name);
  }
  closedir(listing);
  return names;
}

}  // namespace limpwatch::soak
