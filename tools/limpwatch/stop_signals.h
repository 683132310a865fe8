// SIGINT and SIGTERM as an orderly stop request for a refresh loop.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_STOP_SIGNALS_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_STOP_SIGNALS_H_

#include <signal.h>

namespace limpwatch::cli {

// While alive, SIGINT and SIGTERM are blocked and only collected by Sleep().
// Blocking rather than a handler that sets a flag closes the race where the
// signal lands between checking the flag and starting to sleep, and the loop
// never runs a snapshot half-way when interrupted.
class StopSignals {
 public:
  StopSignals();
  // Discards a stop signal still pending, then restores the old mask: the
  // caller has already decided to stop, and an unblocked pending SIGINT
  // would kill the process with the wrong exit status.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Sleeps `seconds`; returns true as soon as a stop signal arrives (also
  // one that arrived before the call).
  bool Sleep(double seconds);

 private:
  sigset_t stop_set_;
  sigset_t previous_mask_;
};

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_STOP_SIGNALS_H_
