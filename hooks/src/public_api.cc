// The C API of limpwatch/limpwatch.h.
#include <cstring>

#include "limpwatch/limpwatch.h"
#include "process.h"
#include "symbolizer.h"

namespace {

bool Recording() {
  return limpwatch::runtime::EnsureProcessInitialized();
}

// Keeps the calling thread's hooks quiet while the API runs.
class HookGuard {
 public:
  HookGuard() : saved_(limpwatch::runtime::t_thread.in_hook) { limpwatch::runtime::t_thread.in_hook = 1; }
  ~HookGuard() { limpwatch::runtime::t_thread.in_hook = saved_; }

 private:
  uint32_t saved_;
};

}  // namespace

extern "C" {

[[gnu::visibility("default")]] int lw_is_recording(void) {
  HookGuard guard;
  return Recording() ? 1 : 0;
}

[[gnu::visibility("default")]] int lw_segment_name(char* buffer, size_t size) {
  HookGuard guard;
  if (!Recording() || buffer == nullptr) return -1;
  const limpwatch::shm::SegmentHeader* header = limpwatch::runtime::CurrentSegmentView().header();
  std::string name = limpwatch::shm::SegmentObjectName(header->name, static_cast<pid_t>(header->owner_pid));
  if (name.size() + 1 > size) return -1;
  std::memcpy(buffer, name.c_str(), name.size() + 1);
  return static_cast<int>(name.size());
}

[[gnu::visibility("default")]] int lw_publish_names(void) {
  HookGuard guard;
  if (!Recording()) return 0;
  return static_cast<int>(
      limpwatch::runtime::ProcessSymbolizer().PublishPendingNames(limpwatch::runtime::CurrentSegmentView()));
}

}  // extern "C"
