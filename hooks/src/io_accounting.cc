#include "io_accounting.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "io_settings.h"
#include "process.h"

namespace limpwatch::hooks {

// A call this long or longer is timed every time: measuring it costs under 0.5 %.
constexpr uint64_t kSlowCallNs = 10000;
// Faster calls are timed one in this many (a power of two, at most 128).
constexpr uint32_t kFastCallPeriod = 32;

constinit IoTimingPolicy g_timing{kFastCallPeriod - 1, 0};
constinit thread_local IoTimingState t_timing [[gnu::tls_model("initial-exec")]] = {};

namespace {

bool ProcessReady() {
  return runtime::g_process.phase.load(std::memory_order_acquire) ==
         static_cast<uint32_t>(runtime::ProcessPhase::kReady);
}

// The slow-call threshold in ticks, once the clock is calibrated.
void SetSlowCallTicks() {
  if (g_timing.slow_call_ticks.load(std::memory_order_relaxed) != 0 || !ProcessReady()) return;
  // The service thread refines the factor while the program runs.
  double ns_per_tick = std::atomic_ref<double>(runtime::g_process.header->ns_per_tick).load(std::memory_order_relaxed);
  if (ns_per_tick > 0) {
    g_timing.slow_call_ticks.store(static_cast<uint64_t>(double(kSlowCallNs) / ns_per_tick), std::memory_order_relaxed);
  }
}

void LogOnce(const std::string& message) {
  runtime::ThreadState& thread = runtime::t_thread;
  uint32_t saved_guard = thread.in_hook;
  thread.in_hook = 1;
  runtime::LogLine(message);
  thread.in_hook = saved_guard;
}

// After the runtime's start-up (priority 101), so the clock is calibrated;
// before the library's threads start (105), which read the table's size.
[[gnu::constructor(102)]] void ReadIoConfig() {
  int saved_errno = errno;
  std::vector<std::string> problems;
  IoSettings settings = ReadIoSettings(kFdTableSize, &problems);
  for (const std::string& problem : problems) LogOnce("ignoring " + problem);
  g_fd_table_size = settings.fd_table_size;
  if (settings.time_every_call) g_timing.fast_call_mask = 0;
  SetSlowCallTicks();
  errno = saved_errno;
}

}  // namespace

bool AcquireSinkUnusual(runtime::ThreadState& thread, IoSink* sink) {
  if (thread.in_hook != 0) {
    // A signal handler's call, in the middle of counting one of the
    // thread's own: the process totals take it (limpwatch's own I/O, under
    // kGuardOwnWork, is not the program's and passes through).
    if (thread.in_hook != runtime::kGuardCounting || thread.status == runtime::ThreadStatus::kIgnored ||
        !ProcessReady()) {
      return false;
    }
    runtime::g_process.header->counters.calls_during_hooks.fetch_add(1, std::memory_order_relaxed);
    sink->block = &runtime::CurrentSegmentView().retired()->io;
    sink->shared = true;
    return true;
  }
  SetSlowCallTicks();
  if (thread.status == runtime::ThreadStatus::kUnattached) {
    thread.in_hook = runtime::kGuardCounting;
    bool recording = runtime::AttachThread(thread);
    thread.in_hook = 0;
    if (recording) {
      sink->block = thread.io;
      sink->shared = false;
      return true;
    }
  }
  if (thread.status == runtime::ThreadStatus::kNoSlot && ProcessReady()) {
    // No slot of its own: the process totals take its calls, so none is lost.
    sink->block = &runtime::CurrentSegmentView().retired()->io;
    sink->shared = true;
    return true;
  }
  return false;
}

void CountErrno(const IoSink& sink, shm::FdKind kind, shm::IoOperation operation, int error) {
  uint32_t key = ((static_cast<uint32_t>(error) & 0xffff) << 16 | static_cast<uint32_t>(kind) << 8 |
                  static_cast<uint32_t>(operation)) +
                 1;
  for (shm::ErrnoCount& slot : sink.block->errnos) {
    uint32_t existing = slot.key.load(std::memory_order_acquire);
    if (existing == 0) {
      if (!sink.shared) {
        // Single writer: the count is in place before a reader can see the key.
        slot.count.store(1, std::memory_order_relaxed);
        slot.key.store(key, std::memory_order_release);
        return;
      }
      if (slot.key.compare_exchange_strong(existing, key, std::memory_order_acq_rel)) existing = key;
    }
    if (existing == key) {
      Add(slot.count, 1, sink.shared);
      return;
    }
  }
  Add(sink.block->errno_overflow, 1, sink.shared);
}

}  // namespace limpwatch::hooks
