#include "sampler/sigprof_sampling.h"

#include <signal.h>
#include <time.h>
#include <ucontext.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "signal_forwarding.h"
#include "thread_state.h"

namespace limpwatch::runtime {
namespace {

// A bounded multi-producer ring (D. Vyukov's): each slot's sequence says
// whose turn it is, so producers in signal handlers on several threads never
// wait for each other nor for the reader, and a full ring drops the sample.
//   slot.sequence == position          free for the producer of `position`
//   slot.sequence == position + 1      holds the sample of `position`
//   slot.sequence == position + kSlots  freed by the reader for the next lap
constexpr uint64_t kSlots = 4096;

struct Slot {
  std::atomic<uint64_t> sequence;
  uint64_t ip;
};

constinit Slot g_slots[kSlots] = {};
constinit std::atomic<uint64_t> g_head{0};
constinit uint64_t g_tail = 0;  // reader only
constinit std::atomic<uint64_t> g_lost{0};
constinit std::atomic<bool> g_recording{false};
constinit bool g_handler_installed = false;
constinit bool g_timer_running = false;
// The address our timer puts in si_value, to recognise its signals.
constinit char g_timer_cookie = 0;
constinit timer_t g_timer = nullptr;
struct sigaction g_previous_action;

static_assert(std::atomic<uint64_t>::is_always_lock_free, "the signal handler needs lock-free atomics");

LW_NO_INSTRUMENT uint64_t InterruptedIp(void* context) {
  const auto* user_context = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  return static_cast<uint64_t>(user_context->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<uint64_t>(user_context->uc_mcontext.pc);
#else
  return 0;
#endif
}

LW_NO_INSTRUMENT void Push(uint64_t ip) {
  uint64_t position = g_head.load(std::memory_order_relaxed);
  for (;;) {
    Slot& slot = g_slots[position % kSlots];
    uint64_t sequence = slot.sequence.load(std::memory_order_acquire);
    int64_t difference = static_cast<int64_t>(sequence - position);
    if (difference == 0) {
      if (g_head.compare_exchange_weak(position, position + 1, std::memory_order_relaxed)) {
        slot.ip = ip;
        slot.sequence.store(position + 1, std::memory_order_release);
        return;
      }
    } else if (difference < 0) {
      g_lost.fetch_add(1, std::memory_order_relaxed);
      return;
    } else {
      position = g_head.load(std::memory_order_relaxed);
    }
  }
}

// What would have happened to a signal that is not ours.
LW_NO_INSTRUMENT void Forward(int signal_number, siginfo_t* info, void* context) {
  ForwardToPreviousHandler(g_previous_action, signal_number, info, context);
}

LW_NO_INSTRUMENT void OnSigprof(int signal_number, siginfo_t* info, void* context) {
  int saved_errno = errno;
  if (info != nullptr && info->si_code == SI_TIMER && info->si_value.sival_ptr == &g_timer_cookie) {
    if (g_recording.load(std::memory_order_relaxed) && context != nullptr) Push(InterruptedIp(context));
  } else {
    Forward(signal_number, info, context);
  }
  errno = saved_errno;
}

void ResetRing() {
  for (uint64_t index = 0; index < kSlots; ++index) g_slots[index].sequence.store(index, std::memory_order_relaxed);
  g_head.store(0, std::memory_order_relaxed);
  g_tail = 0;
  g_lost.store(0, std::memory_order_release);
}

bool StartTimer(uint32_t rate_hz, std::string* error) {
  sigevent event{};
  event.sigev_notify = SIGEV_SIGNAL;
  event.sigev_signo = SIGPROF;
  event.sigev_value.sival_ptr = &g_timer_cookie;
  if (timer_create(CLOCK_PROCESS_CPUTIME_ID, &event, &g_timer) != 0) {
    *error = std::string("timer_create(CLOCK_PROCESS_CPUTIME_ID): ") + std::strerror(errno);
    return false;
  }
  uint64_t period_ns = 1000000000ull / rate_hz;
  itimerspec period{};
  period.it_interval.tv_sec = static_cast<time_t>(period_ns / 1000000000ull);
  period.it_interval.tv_nsec = static_cast<long>(period_ns % 1000000000ull);
  period.it_value = period.it_interval;
  g_recording.store(true, std::memory_order_release);
  if (timer_settime(g_timer, 0, &period, nullptr) != 0) {
    *error = std::string("timer_settime: ") + std::strerror(errno);
    g_recording.store(false, std::memory_order_release);
    timer_delete(g_timer);
    return false;
  }
  g_timer_running = true;
  return true;
}

}  // namespace

bool StartSigprofSampling(uint32_t rate_hz, std::string* error) {
  ResetRing();
  if (!g_handler_installed) {
    struct sigaction action {};
    action.sa_sigaction = OnSigprof;
    // SA_RESTART: a sample must not make the program's system calls fail with EINTR.
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGPROF, nullptr, &g_previous_action);
    struct sigaction replaced {};
    if (sigaction(SIGPROF, &action, &replaced) != 0) {
      *error = std::string("sigaction(SIGPROF): ") + std::strerror(errno);
      return false;
    }
    g_previous_action = replaced;
    g_handler_installed = true;
  }
  return StartTimer(rate_hz, error);
}

void StopSigprofSampling() {
  g_recording.store(false, std::memory_order_release);
  if (g_timer_running) timer_delete(g_timer);
  g_timer_running = false;
}

bool SigprofHandlerIsOurs() {
  struct sigaction current {};
  if (sigaction(SIGPROF, nullptr, &current) != 0) return false;
  return (current.sa_flags & SA_SIGINFO) != 0 && current.sa_sigaction == OnSigprof;
}

size_t DrainSigprofSamples(const std::function<void(uint64_t ip)>& visit) {
  size_t drained = 0;
  for (;;) {
    Slot& slot = g_slots[g_tail % kSlots];
    if (slot.sequence.load(std::memory_order_acquire) != g_tail + 1) break;
    uint64_t ip = slot.ip;
    slot.sequence.store(g_tail + kSlots, std::memory_order_release);
    ++g_tail;
    ++drained;
    visit(ip);
  }
  return drained;
}

uint64_t TakeSigprofSamplesLost() { return g_lost.exchange(0, std::memory_order_relaxed); }

bool RestartSigprofSamplingInChild(uint32_t rate_hz, std::string* error) {
  g_timer_running = false;  // the parent's timer does not exist here
  ResetRing();
  return StartTimer(rate_hz, error);
}

}  // namespace limpwatch::runtime
