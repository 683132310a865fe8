// Handing a signal that is not limpwatch's to the handler that was installed
// before limpwatch's own (SIGPROF for the sampler, SIGTRAP for patching).
#ifndef LIMPWATCH_RUNTIME_SRC_SIGNAL_FORWARDING_H_
#define LIMPWATCH_RUNTIME_SRC_SIGNAL_FORWARDING_H_

#include <signal.h>

#include "thread_state.h"

namespace limpwatch::runtime {

// Does what `previous` would have done. For the default action, that action
// is restored and the signal raised again: it is delivered, with its
// default effect (ending the process, a core dump), once the calling handler
// returns.
LW_NO_INSTRUMENT inline void ForwardToPreviousHandler(const struct sigaction& previous, int signal_number,
                                                      siginfo_t* info, void* context) {
  if ((previous.sa_flags & SA_SIGINFO) != 0) {
    if (previous.sa_sigaction != nullptr) previous.sa_sigaction(signal_number, info, context);
    return;
  }
  if (previous.sa_handler == SIG_IGN) return;
  if (previous.sa_handler == SIG_DFL) {
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigaction(signal_number, &default_action, nullptr);
    raise(signal_number);
    return;
  }
  previous.sa_handler(signal_number);
}

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_SIGNAL_FORWARDING_H_
