// lw_begin / lw_end: explicit call sites feeding the shadow stack.
//
// A site is keyed by the address of its static handle, so the hot path is the
// automatic hooks' own (RecordEnter / RecordExit): an index lookup, a frame
// push or pop. The handle is registered once, with its name published at
// registration, so the symbolizer never tries to resolve a data address.
// The handle remembers the process generation it was registered in: a fork
// child records into a new, empty segment and registers its sites again.
#include <pthread.h>

#include <atomic>
#include <cerrno>

#include "function_registry.h"
#include "limpwatch/limpwatch.h"
#include "process.h"
#include "shadow_stack.h"

namespace limpwatch::runtime {
namespace {

constinit std::atomic<int> g_site_generation{1};

uint64_t SiteKey(lw_site* site) { return reinterpret_cast<uint64_t>(site); }

void NewSiteGenerationInChild() { g_site_generation.fetch_add(1, std::memory_order_relaxed); }

[[gnu::constructor(102)]] void WatchForks() { pthread_atfork(nullptr, nullptr, NewSiteGenerationInChild); }

}  // namespace

LW_COLD void RegisterSite(lw_site* site) {
  ThreadState& thread = t_thread;
  uint32_t saved_guard = thread.in_hook;
  thread.in_hook = 1;
  int saved_errno = errno;
  if (EnsureProcessInitialized()) {
    const char* name = site->name != nullptr && site->name[0] != '\0' ? site->name : "(unnamed scope)";
    uint32_t mask = g_process.function_index_mask;
    uint32_t position = IndexPosition(SiteKey(site), mask);
    // Already registered by another thread, or by a fork's parent? Look first.
    for (;;) {
      uint64_t packed = g_process.function_index[position].packed.load(std::memory_order_acquire);
      if ((packed >> shm::kFunctionIdBits) == SiteKey(site)) break;
      if (packed == 0) {
        RegisterNamedScope(SiteKey(site), name);
        break;
      }
      position = (position + 1) & mask;
    }
    std::atomic_ref<int>(site->registered)
        .store(g_site_generation.load(std::memory_order_relaxed), std::memory_order_release);
  }
  errno = saved_errno;
  thread.in_hook = saved_guard;
}

}  // namespace limpwatch::runtime

extern "C" {

[[gnu::visibility("default"), gnu::no_instrument_function]] void lw_begin(lw_site* site) {
  using namespace limpwatch::runtime;
  if (site == nullptr) return;
  if (__builtin_expect(std::atomic_ref<int>(site->registered).load(std::memory_order_acquire) !=
                           g_site_generation.load(std::memory_order_relaxed),
                       0)) {
    RegisterSite(site);
  }
  RecordEnter(SiteKey(site));
}

[[gnu::visibility("default"), gnu::no_instrument_function]] void lw_end(lw_site* site) {
  using namespace limpwatch::runtime;
  if (site == nullptr) return;
  RecordExit(SiteKey(site));
}

}  // extern "C"
