// Ctrl-C and SIGTERM for the test-bed's helper processes (relay, delayer,
// hogs): the handler only sets the flag their loops check, so each finishes
// its own way (the delayer lets the packets it holds through, a hog removes
// its scratch file) instead of dying mid-work.
#ifndef LIMPWATCH_TOOLS_TESTBED_COMMON_STOP_SIGNAL_H_
#define LIMPWATCH_TOOLS_TESTBED_COMMON_STOP_SIGNAL_H_

#include <atomic>

namespace limpwatch::testbed {

// SIGINT and SIGTERM set *flag from now on.
void StopOnSignals(std::atomic<bool>* flag);

}  // namespace limpwatch::testbed

#endif  // LIMPWATCH_TOOLS_TESTBED_COMMON_STOP_SIGNAL_H_
