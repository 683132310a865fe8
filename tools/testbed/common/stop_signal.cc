#include "common/stop_signal.h"

#include <signal.h>

namespace limpwatch::testbed {
namespace {

std::atomic<std::atomic<bool>*> g_flag{nullptr};

void OnStopSignal(int) {
  if (std::atomic<bool>* flag = g_flag.load()) flag->store(true);
}

}  // namespace

void StopOnSignals(std::atomic<bool>* flag) {
  g_flag.store(flag);
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

}  // namespace limpwatch::testbed
