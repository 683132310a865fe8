// Starts the analyzer inside the server when LIMPWATCH_ANALYZE=1.
//
// The analyzer runs on a thread of its own (not the runtime's service
// thread: a slow comparison must not delay names or node metrics), started
// with every signal blocked and at the lowest priority. A PVFS server
// daemonizes with fork() and its parent exits, so the thread is started
// again in the child, which analyzes the child's own segment.
//
// At exit the thread is stopped, and waited for, from an exit handler that
// it registers itself just before its first tick. Exit handlers run in
// reverse order of registration, so this one runs before the destructors of
// the static objects constructed until then; a tick that kept running while
// exit() destroyed them could crash the server before the runtime removes
// its segment.
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "limpwatch/analyzer/analyzer_loop.h"
#include "limpwatch/analyzer/inherited_descriptors.h"
#include "limpwatch/analyzer/transport_exchange.h"
#include "fork_gate.h"
#include "process.h"
#include "thread_state.h"

namespace limpwatch::hooks {
namespace {

// Bumped to stop the running thread; its sleep between ticks waits on it.
constinit std::atomic<uint32_t> g_analyzer_epoch{0};
// Analyzer threads of this process not yet finished (0 or 1).
constinit std::atomic<uint32_t> g_analyzer_threads{0};
// Inherited over fork, as the exit handler itself is.
constinit std::atomic<bool> g_exit_handler_registered{false};

constexpr uint64_t kExitWaitMs = 1000;

uint64_t RealtimeMs() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return uint64_t(now.tv_sec) * 1000 + uint64_t(now.tv_nsec) / 1000000;
}

std::string NodeName() {
  const char* name = std::getenv("LIMPWATCH_NAME");
  if (name != nullptr && name[0] != '\0') return name;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return std::string(host) + "-" + std::to_string(getpid());
}

void Log(const std::string& line) { runtime::LogLine(line); }

uint32_t* FutexWord(std::atomic<uint32_t>* word) { return reinterpret_cast<uint32_t*>(word); }

// Sleeps until the next tick, or until the epoch moves on. Returns whether
// this thread's epoch is still the current one.
bool SleepUnlessStopped(uint32_t epoch, uint64_t milliseconds) {
  timespec pause{time_t(milliseconds / 1000), long(milliseconds % 1000) * 1000000L};
  syscall(SYS_futex, FutexWord(&g_analyzer_epoch), FUTEX_WAIT_PRIVATE, epoch, &pause, nullptr, 0);
  return g_analyzer_epoch.load(std::memory_order_acquire) == epoch;
}

// Bounded: a tick blocked on something the exiting thread holds must not
// keep the server from exiting.
void StopAnalyzerAndWait() {
  g_analyzer_epoch.fetch_add(1, std::memory_order_acq_rel);
  syscall(SYS_futex, FutexWord(&g_analyzer_epoch), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
  uint64_t deadline = RealtimeMs() + kExitWaitMs;
  while (g_analyzer_threads.load(std::memory_order_acquire) != 0 && RealtimeMs() < deadline) {
    timespec step{0, 1000000L};
    nanosleep(&step, nullptr);
  }
}

void StopAnalyzerAtExit() {
  runtime::ThreadState& thread = runtime::t_thread;
  uint32_t saved_guard = thread.in_hook;
  thread.in_hook = 1;
  int saved_errno = errno;
  StopAnalyzerAndWait();
  errno = saved_errno;
  thread.in_hook = saved_guard;
}

void RegisterExitHandlerOnce() {
  if (g_exit_handler_registered.exchange(true, std::memory_order_acq_rel)) return;
  if (std::atexit(StopAnalyzerAtExit) != 0) {
    g_exit_handler_registered.store(false, std::memory_order_release);
    Log("analyzer: cannot register its exit handler; it is stopped only after the program's static objects are gone");
  }
}

// Runs the thread; the loop (its files and sockets) is closed before the
// thread counts itself finished, so an exit that waited for it loses no
// record.
void RunAnalyzer(uint32_t epoch) {
  std::string node = NodeName();
  analyzer::AnalyzerSetup setup = analyzer::AnalyzerSetupFromEnvironment(node, Log);
  std::vector<std::string> problems;
  setup.exchange = analyzer::MakeExchangeFromEnvironment(Log, &problems);
  for (const auto& problem : problems) Log("analyzer: " + problem);
  if (!setup.exchange && problems.empty()) {
    Log("analyzer: no peers configured (LIMPWATCH_PEERS, LIMPWATCH_PEERS_FILE or LIMPWATCH_PVFS_CONFIG); comparing "
        "nothing");
  } else if (!setup.exchange) {
    Log("analyzer: no exchange with the peers (the line above says why); checking this server alone");
  }
  analyzer::AnalyzerLoop loop(std::move(setup));
  for (;;) {
    uint64_t now = RealtimeMs();
    uint64_t next = loop.NextTickUnixMs(now);
    bool running = false;
    {
      runtime::ForkGateScope::Outside sleeping;
      running = SleepUnlessStopped(epoch, next > now ? next - now : 0);
    }
    if (!running) break;
    if (RealtimeMs() < next) continue;  // woken early by a stop of an earlier epoch, or spuriously
    RegisterExitHandlerOnce();
    const shm::SegmentView& segment = runtime::CurrentSegmentView();
    std::string object = shm::SegmentObjectName(segment.header()->name, pid_t(segment.header()->owner_pid));
    loop.Tick(segment, object, true);
  }
  loop.Finish(runtime::CurrentSegmentView());
}

void* AnalyzerThreadMain(void* argument) {
  runtime::ThreadState& thread = runtime::t_thread;
  thread.in_hook = 1;  // nothing on this thread is traced
  thread.status = runtime::ThreadStatus::kIgnored;
  uint32_t epoch = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(argument));
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);
  runtime::ForkGateScope at_work;  // a fork waits for the tick to end (fork_gate.h)
  try {
    RunAnalyzer(epoch);
  } catch (const std::exception& error) {
    Log(std::string("analyzer: stopped: ") + error.what() + "; the server runs on untouched");
  } catch (...) {
    Log("analyzer: stopped after an unknown error; the server runs on untouched");
  }
  g_analyzer_threads.fetch_sub(1, std::memory_order_acq_rel);
  return nullptr;
}

void StartAnalyzerThread() {
  if (!runtime::EnsureProcessInitialized()) return;
  uint32_t epoch = g_analyzer_epoch.fetch_add(1, std::memory_order_acq_rel) + 1;
  g_analyzer_threads.fetch_add(1, std::memory_order_acq_rel);
  int result = runtime::StartQuietThread("limpwatch-anlz", AnalyzerThreadMain, reinterpret_cast<void*>(uintptr_t(epoch)));
  if (result != 0) {
    g_analyzer_threads.fetch_sub(1, std::memory_order_acq_rel);
    Log(std::string("analyzer: cannot start its thread: ") + std::strerror(result));
  }
}

bool AnalyzerWanted() {
  const char* setting = std::getenv("LIMPWATCH_ANALYZE");
  return setting != nullptr && (!std::strcmp(setting, "1") || !std::strcmp(setting, "yes"));
}

// Registered after the runtime's own fork handler (constructor order), so
// the child's segment exists when its analyzer starts. The parent's analyzer
// thread does not exist here, but its socket and rings do: closed first, so
// the child can bind the peer port once the parent lets go of it.
void StartAnalyzerInChild() {
  g_analyzer_threads.store(0, std::memory_order_release);  // the parent's thread was not copied
  analyzer::CloseInheritedAnalyzerDescriptors();
  StartAnalyzerThread();
}

// After the runtime's constructors (101-105): no thread of the library starts
// while a constructor still writes a setting it reads.
[[gnu::constructor(106)]] void StartAnalyzerWhenAsked() {
  runtime::ThreadState& thread = runtime::t_thread;
  uint32_t saved_guard = thread.in_hook;
  thread.in_hook = 1;
  int saved_errno = errno;
  if (AnalyzerWanted()) {
    pthread_atfork(nullptr, nullptr, StartAnalyzerInChild);
    StartAnalyzerThread();
  }
  errno = saved_errno;
  thread.in_hook = saved_guard;
}

// For an exit before the first tick, or a library unloaded by dlclose.
[[gnu::destructor(101)]] void StopAnalyzer() {
  if (g_analyzer_threads.load(std::memory_order_acquire) != 0) StopAnalyzerAtExit();
}

}  // namespace
}  // namespace limpwatch::hooks
