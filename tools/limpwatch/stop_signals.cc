#include "stop_signals.h"

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cmath>

namespace limpwatch::cli {
namespace {

double MonotonicSeconds() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return double(now.tv_sec) + double(now.tv_nsec) / 1e9;
}

}  // namespace

StopSignals::StopSignals() {
  sigemptyset(&stop_set_);
  sigaddset(&stop_set_, SIGINT);
  sigaddset(&stop_set_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_set_, &previous_mask_);
}

StopSignals::~StopSignals() {
  timespec zero{0, 0};
  while (sigtimedwait(&stop_set_, nullptr, &zero) > 0) {
  }
  pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

bool StopSignals::Sleep(double seconds) {
  double deadline = MonotonicSeconds() + seconds;
  for (;;) {
    double remaining = std::max(0.0, deadline - MonotonicSeconds());
    timespec timeout{};
    timeout.tv_sec = static_cast<time_t>(remaining);
    timeout.tv_nsec = static_cast<long>((remaining - std::floor(remaining)) * 1e9);
    int signal_number = sigtimedwait(&stop_set_, nullptr, &timeout);
    if (signal_number > 0) return true;
    // EINTR: another signal (SIGWINCH, SIGCONT after ^Z) cut the wait short.
    if (errno == EINTR && MonotonicSeconds() < deadline) continue;
    return false;
  }
}

}  // namespace limpwatch::cli
