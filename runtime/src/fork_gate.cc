#include "fork_gate.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

namespace limpwatch::runtime {
namespace {

// The high bit: a fork is under way. The rest: threads inside.
constexpr uint32_t kClosed = 1u << 31;
constexpr uint32_t kInsideMask = kClosed - 1;

constinit std::atomic<uint32_t> g_gate{0};
constinit std::atomic<bool> g_installed{false};
constinit BusyForkReport g_report = nullptr;
// Written by the prepare handler, read by the parent's: the same thread.
constinit uint32_t g_inside_at_fork = 0;
constinit thread_local bool t_inside [[gnu::tls_model("initial-exec")]] = false;

uint32_t* FutexWord() { return reinterpret_cast<uint32_t*>(&g_gate); }

void WaitWhileEquals(uint32_t value, const timespec* timeout) {
  syscall(SYS_futex, FutexWord(), FUTEX_WAIT_PRIVATE, value, timeout, nullptr, 0);
}

void WakeAll() { syscall(SYS_futex, FutexWord(), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0); }

uint64_t MonotonicMs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return uint64_t(now.tv_sec) * 1000 + uint64_t(now.tv_nsec) / 1000000;
}

// A thread of ours that forks from inside the gate does not wait for itself.
void CloseForFork() {
  uint32_t own = t_inside ? 1 : 0;
  uint32_t state = g_gate.fetch_or(kClosed, std::memory_order_acq_rel) | kClosed;
  uint64_t deadline = MonotonicMs() + kForkGateWaitMs;
  while ((state & kInsideMask) > own) {
    uint64_t now = MonotonicMs();
    if (now >= deadline) break;
    uint64_t left = deadline - now;
    timespec timeout{time_t(left / 1000), long(left % 1000) * 1000000L};
    WaitWhileEquals(state, &timeout);
    state = g_gate.load(std::memory_order_acquire);
  }
  g_inside_at_fork = (state & kInsideMask) - own;
}

void OpenInParent() {
  uint32_t busy = g_inside_at_fork;
  g_gate.fetch_and(kInsideMask, std::memory_order_acq_rel);
  WakeAll();
  if (busy != 0 && g_report != nullptr) g_report(busy);
}

// The child has only the forking thread; a thread of ours the child starts
// may already wait at the closed gate.
void OpenInChild() {
  g_gate.store(t_inside ? 1 : 0, std::memory_order_release);
  WakeAll();
}

}  // namespace

void InstallForkGate(BusyForkReport report) {
  if (g_installed.exchange(true, std::memory_order_acq_rel)) return;
  g_report = report;
  if (pthread_atfork(CloseForFork, OpenInParent, OpenInChild) != 0) {
    g_installed.store(false, std::memory_order_release);
  }
}

void EnterForkGate() {
  uint32_t state = g_gate.load(std::memory_order_acquire);
  for (;;) {
    if ((state & kClosed) != 0) {
      WaitWhileEquals(state, nullptr);
      state = g_gate.load(std::memory_order_acquire);
      continue;
    }
    if (g_gate.compare_exchange_weak(state, state + 1, std::memory_order_acq_rel, std::memory_order_acquire)) break;
  }
  t_inside = true;
}

void LeaveForkGate() {
  t_inside = false;
  uint32_t state = g_gate.fetch_sub(1, std::memory_order_acq_rel) - 1;
  if ((state & kClosed) != 0) WakeAll();
}

bool InsideForkGate() { return t_inside; }

}  // namespace limpwatch::runtime
