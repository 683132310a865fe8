#include "launcher/stop_flag.h"

#include <signal.h>

#include <algorithm>
#include <atomic>

#include "launcher/process_control.h"

namespace limpwatch::testbed::launcher {
namespace {

std::atomic<bool> stop_requested{false};

void OnStopSignal(int) { stop_requested.store(true); }

}  // namespace

void InstallStopHandlers() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGHUP, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

bool StopRequested() { return stop_requested.load(); }

bool SleepUnlessStopped(int milliseconds) {
  for (int slept = 0; slept < milliseconds; slept += 50) {
    if (StopRequested()) return false;
    SleepMs(std::min(50, milliseconds - slept));
  }
  return !StopRequested();
}

}  // namespace limpwatch::testbed::launcher
