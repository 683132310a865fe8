// Why code cannot be rewritten now, written to the log once per reason.
//
// A reason that may pass by itself (a thread of the program blocking
// SIGTRAP) is written only when the next retry meets it again: glibc's
// pthread_create blocks every signal in both threads for the moment of the
// clone, and a thread's exit does the same, so a program that starts or
// ends threads while a selection is applied would otherwise log a refusal
// that is gone half a second later.
#ifndef LIMPWATCH_RUNTIME_SRC_PATCHING_REFUSAL_LOG_H_
#define LIMPWATCH_RUNTIME_SRC_PATCHING_REFUSAL_LOG_H_

#include <string>

namespace limpwatch::runtime::patching {

class RefusalLog {
 public:
  explicit RefusalLog(std::string prefix) : prefix_(std::move(prefix)) {}

  // The current pass is refused for `reason`; `may_pass`: it is retried.
  void Refused(const std::string& reason, bool may_pass);
  // A pass went ahead: a later refusal is news again.
  void Cleared();

 private:
  std::string prefix_;
  std::string logged_;      // the reason last written
  std::string seen_once_;   // a passing reason met once and not yet written
};

}  // namespace limpwatch::runtime::patching

#endif  // LIMPWATCH_RUNTIME_SRC_PATCHING_REFUSAL_LOG_H_
