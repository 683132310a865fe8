#include "patching/refusal_log.h"

#include "process.h"

namespace limpwatch::runtime::patching {

void RefusalLog::Refused(const std::string& reason, bool may_pass) {
  if (reason == logged_) return;
  if (may_pass && reason != seen_once_) {
    seen_once_ = reason;
    return;
  }
  LogLine(prefix_ + reason);
  logged_ = reason;
  seen_once_.clear();
}

void RefusalLog::Cleared() {
  logged_.clear();
  seen_once_.clear();
}

}  // namespace limpwatch::runtime::patching
