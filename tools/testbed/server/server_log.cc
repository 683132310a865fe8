#include "server/server_log.h"

#include <time.h>

#include <cstdio>
#include <map>
#include <mutex>

namespace limpwatch::testbed {
namespace {

std::mutex log_mutex;
std::string log_name = "server";
std::map<int, time_t> last_rate_limited;

}  // namespace

void SetLogName(const std::string& name) {
  std::lock_guard lock(log_mutex);
  log_name = name;
}

void LogLine(const std::string& message) {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  tm local{};
  localtime_r(&now.tv_sec, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%H:%M:%S", &local);
  std::lock_guard lock(log_mutex);
  std::fprintf(stderr, "%s.%03ld [%s] %s\n", stamp, now.tv_nsec / 1000000, log_name.c_str(), message.c_str());
  std::fflush(stderr);
}

void LogLineRateLimited(int key, const std::string& message) {
  time_t now = time(nullptr);
  {
    std::lock_guard lock(log_mutex);
    auto& last = last_rate_limited[key];
    if (last == now) return;
    last = now;
  }
  LogLine(message);
}

}  // namespace limpwatch::testbed
