// Start-up, fork, thread exit and process exit of the runtime.
#include "process.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "clock.h"
#include "flow_recorder.h"
#include "fork_gate.h"
#include "predecessors.h"
#include "service_tasks.h"
#include "shadow_stack.h"
#include "symbolizer.h"

namespace limpwatch::runtime {

namespace {
// Until the segment exists the full path's index probe reads this empty
// one-entry table and finds nothing.
constinit shm::FunctionIndexEntry g_empty_function_index[1] = {};
// Holds no address, so until the real filter exists every probe misses.
constinit std::atomic<uint64_t> g_empty_unselected_filter[1] = {};
}  // namespace

constinit ProcessState g_process{.phase{},
                                 .header = nullptr,
                                 .function_index = g_empty_function_index,
                                 .function_index_mask = 0,
                                 .unselected_filter = g_empty_unselected_filter,
                                 .unselected_filter_mask = 0,
                                 .unselected_filter_enabled = false,
                                 .max_functions = 0,
                                 .symbols = nullptr,
                                 .flow_sample_every = 0,
                                 .flow_roots{}};

namespace {

// The start-up measurement of the TSC's rate (error about 1e-3), refined by
// the service thread every second until its baseline is long enough for an
// error below 1e-8.
constexpr uint64_t kInitialCalibrationNs = 200'000;
constexpr uint32_t kClockRefinementPeriodMs = 1000;
constexpr uint64_t kClockRefinedAfterNs = 60'000'000'000;

// Globals are plain pointers or trivially destructible: other threads and
// later destructors may still record while the process exits.
constinit std::mutex g_init_mutex;
constinit RuntimeConfig* g_config = nullptr;
constinit ClockCalibration g_calibration;
constinit shm::SegmentWriter* g_writer = nullptr;
constinit shm::SegmentView g_view;
pthread_key_t g_thread_exit_key;
constinit bool g_process_hooks_installed = false;
constinit std::atomic<uint64_t> g_service_epoch{0};
// The library's threads start once its prioritised constructors have run
// (StartRuntimeThreads), never from the first one: a thread started earlier
// reads settings that later constructors are still writing (the fd table's
// size, at 102). Under g_init_mutex.
constinit bool g_constructors_done = false;
constinit bool g_service_thread_started = false;
constinit bool g_clock_refined = false;  // service thread only
constinit bool g_removed_for_exec = false;  // BeforeExec removed (or marked) the segment

// The tids of limpwatch's own running threads, so that code patching can
// tell whether any thread of the program itself is running.
constexpr int kMaxOwnThreads = 8;
constinit std::atomic<pid_t> g_own_threads[kMaxOwnThreads] = {};

// Lives on the creator's stack: the creator waits until the new thread has
// taken its copy and registered its tid, so that a scan of /proc/self/task
// right after StartQuietThread never mistakes it for a program thread.
struct QuietThreadStart {
  void* (*main)(void*);
  void* argument;
  std::atomic<bool> registered;
};

void ForgetOwnThread(void* entry) {
  if (entry != nullptr) static_cast<std::atomic<pid_t>*>(entry)->store(0, std::memory_order_release);
}

void* QuietThreadMain(void* raw_start) {
  auto* start = static_cast<QuietThreadStart*>(raw_start);
  void* (*main)(void*) = start->main;
  void* argument = start->argument;
  std::atomic<pid_t>* entry = nullptr;
  for (std::atomic<pid_t>& candidate : g_own_threads) {
    pid_t expected = 0;
    if (candidate.compare_exchange_strong(expected, gettid(), std::memory_order_acq_rel)) {
      entry = &candidate;
      break;
    }
  }
  start->registered.store(true, std::memory_order_release);  // `start` is gone after this
  void* result = nullptr;
  pthread_cleanup_push(ForgetOwnThread, entry);
  result = main(argument);
  pthread_cleanup_pop(1);
  return result;
}

std::string ProgramName() {
  char path[4096];
  ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) return "?";
  path[length] = '\0';
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

void OnThreadExit(void*) {
  ThreadState& thread = t_thread;
  thread.in_hook = 1;  // nothing this thread runs from now on is recorded
  ReleaseThreadSlot(thread);
  thread.status = ThreadStatus::kExited;
}

// A reader converts ticks with the header's factor: an aligned 8-byte store
// gives it either the previous or the refined value.
void RefineClock(const shm::SegmentView&, uint64_t) {
  if (g_clock_refined || g_process.header == nullptr) return;
  uint64_t baseline_ns = RefineClockCalibration(&g_calibration);
  if (baseline_ns == 0) {
    g_clock_refined = true;
    return;
  }
  std::atomic_ref<double>(g_process.header->ns_per_tick).store(g_calibration.ns_per_tick, std::memory_order_relaxed);
  g_clock_refined = baseline_ns >= kClockRefinedAfterNs;
}

// Creates this process's segment; replaces a leftover of the same name whose
// owner is gone (or is this pid before an exec).
bool CreateSegment(const RuntimeConfig& config) {
  shm::OwnerInfo owner;
  owner.name = config.name;
  owner.program = ProgramName();
  owner.pid = getpid();
  owner.parent_pid = getppid();
  owner.clock_source = g_calibration.source;
  owner.ns_per_tick = g_calibration.ns_per_tick;
  owner.clock_ref_ticks = g_calibration.ref_ticks;
  owner.clock_ref_realtime_ns = g_calibration.ref_realtime_ns;
  std::string object = shm::SegmentObjectName(config.name, owner.pid);
  std::string error;
  auto writer = shm::SegmentWriter::Create(object, config.geometry, owner, &error);
  if (!writer) {
    std::string open_error;
    auto existing = shm::SegmentReader::Open(object, &open_error);
    bool leftover = !existing || shm::SegmentLiveness(existing->header()) != shm::Liveness::kLive ||
                    existing->header().owner_pid == static_cast<uint32_t>(owner.pid);
    existing.reset();
    if (leftover && shm::RemoveSegmentObject(object, &open_error)) {
      writer = shm::SegmentWriter::Create(object, config.geometry, owner, &error);
    }
  }
  if (!writer) {
    LogLine(error + "; this process runs untraced");
    return false;
  }
  g_writer = writer.release();
  g_view = g_writer->view();
  g_process.header = g_view.header();
  g_process.function_index = g_view.function_index();
  g_process.function_index_mask = g_process.header->function_index_capacity - 1;
  PrepareUnselectedFilter(g_process.header->function_index_capacity, !config.patch_functions);
  g_process.max_functions = g_process.header->max_functions;
  g_process.symbols = g_view.symbols();
  g_process.flow_sample_every = g_view.has_flows() ? config.flow_sample_every : 0;
  PrepareFlowRoots(g_process.max_functions);
  if (g_view.has_flows()) {
    g_view.flow_descriptor()->sample_every.store(g_process.flow_sample_every, std::memory_order_relaxed);
  }
  return true;
}

void* ServiceThreadMain(void* argument) {
  ThreadState& thread = t_thread;
  thread.in_hook = 1;
  thread.status = ThreadStatus::kIgnored;
  uint64_t epoch = reinterpret_cast<uint64_t>(argument);
  // At the server's own priority, as the sample reader: its work is small
  // (a few ms of CPU a second) but waited on. At nice 19 on a saturated CPU
  // it got about 1 % of a server thread's share, so a selection change took
  // seconds to tens of seconds to apply and the heartbeat went stale.
  uint32_t interval_ms = g_config->service_interval_ms;
  timespec pause{time_t(interval_ms / 1000), long(interval_ms % 1000) * 1000000L};
  ForkGateScope at_work;
  while (g_service_epoch.load(std::memory_order_acquire) == epoch) {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    g_view.header()->service_heartbeat_ns.store(uint64_t(now.tv_sec) * 1000000000ull + uint64_t(now.tv_nsec),
                                                std::memory_order_relaxed);
    ProcessSymbolizer().PublishPendingNames(g_view);
    clock_gettime(CLOCK_MONOTONIC, &now);
    RunDueServiceTasks(g_view, uint64_t(now.tv_sec) * 1000000000ull + uint64_t(now.tv_nsec), false);
    ForkGateScope::Outside sleeping;
    nanosleep(&pause, nullptr);
  }
  return nullptr;
}

void ReportBusyFork(uint32_t inside) {
  LogLine("fork went ahead while " + std::to_string(inside) + " of limpwatch's threads were still at work after " +
          std::to_string(kForkGateWaitMs) + " ms; the child may inherit a lock one of them held");
}

// The service thread publishes names and a heartbeat. The fork gate is
// registered here, after the runtime's and the patchers' fork handlers,
// whose locks the service tasks take.
void StartServiceThread() {
  InstallForkGate(ReportBusyFork);
  uint64_t epoch = g_service_epoch.fetch_add(1, std::memory_order_acq_rel) + 1;
  int result = StartQuietThread("limpwatch", ServiceThreadMain, reinterpret_cast<void*>(epoch));
  if (result != 0) {
    LogLine(std::string("cannot start the service thread: ") + std::strerror(result) +
            "; names are published at exit only");
  }
}

void StopServiceThread() { g_service_epoch.fetch_add(1, std::memory_order_acq_rel); }

void BeforeFork() {
  g_init_mutex.lock();
  ProcessSymbolizer().mutex().lock();
}

void AfterForkInParent() {
  ProcessSymbolizer().mutex().unlock();
  g_init_mutex.unlock();
  if (g_process.phase.load(std::memory_order_acquire) == static_cast<uint32_t>(ProcessPhase::kReady)) {
    g_process.header->counters.forks_followed.fetch_add(1, std::memory_order_relaxed);
  }
}

// The child has only the forking thread. It records into a segment of its
// own; the frames it inherited are kept (so their exits pair up) but never
// counted, since the parent counted those calls.
void AfterForkInChild() {
  ProcessSymbolizer().mutex().unlock();
  g_init_mutex.unlock();
  for (std::atomic<pid_t>& own : g_own_threads) own.store(0, std::memory_order_relaxed);
  if (g_process.phase.load(std::memory_order_acquire) != static_cast<uint32_t>(ProcessPhase::kReady)) return;
  ThreadState& thread = t_thread;
  uint32_t saved_guard = thread.in_hook;
  thread.in_hook = 1;

  std::vector<uint64_t> inherited_addresses;
  std::vector<uint64_t> inherited_entries;
  uint32_t inherited_depth = 0;
  if (thread.status == ThreadStatus::kRecording) {
    inherited_depth = thread.depth;
    uint32_t stored = std::min(thread.depth, thread.stack_depth);
    for (uint32_t level = 0; level < stored; ++level) {
      inherited_addresses.push_back(thread.frames[level].address.load(std::memory_order_relaxed));
      inherited_entries.push_back(thread.frames[level].entry_ticks.load(std::memory_order_relaxed));
    }
  }
  if (thread.status != ThreadStatus::kExited) thread.status = ThreadStatus::kUnattached;
  thread.slot = nullptr;

  shm::SegmentWriter* parent_segment = g_writer;
  g_writer = nullptr;
  if (!CreateSegment(*g_config)) {
    g_process.phase.store(static_cast<uint32_t>(ProcessPhase::kDisabled), std::memory_order_release);
    thread.status = ThreadStatus::kIgnored;
    thread.in_hook = saved_guard;
    return;  // the parent's mapping stays: nothing in the child writes it
  }
  delete parent_segment;  // unmaps the parent's segment in the child only
  ResetServiceTasksInChild();

  if (thread.status == ThreadStatus::kUnattached && AttachThread(thread)) {
    for (uint32_t level = 0; level < inherited_addresses.size(); ++level) {
      shm::StackFrame& frame = thread.frames[level];
      frame.address.store(inherited_addresses[level], std::memory_order_relaxed);
      frame.function.store(shm::kNoFunction, std::memory_order_relaxed);
      frame.flags.store(shm::kFrameInherited, std::memory_order_relaxed);
      frame.entry_ticks.store(inherited_entries[level], std::memory_order_relaxed);
      frame.child_ticks.store(0, std::memory_order_relaxed);
    }
    thread.depth = inherited_depth;
    thread.slot->depth.store(inherited_depth, std::memory_order_release);
  }
  StartServiceThread();
  thread.in_hook = saved_guard;
}

void InitializeLocked() {
  if (g_process.phase.load(std::memory_order_acquire) != static_cast<uint32_t>(ProcessPhase::kUninitialized)) return;
  std::vector<std::string> problems;
  g_config = new RuntimeConfig(ReadConfigFromEnvironment(&problems));
  for (const auto& problem : problems) LogLine("ignoring " + problem);
  if (g_config->disabled) {
    g_process.phase.store(static_cast<uint32_t>(ProcessPhase::kDisabled), std::memory_order_release);
    return;
  }
  g_calibration = CalibrateClock(g_config->force_monotonic, kInitialCalibrationNs);
  if (!CreateSegment(*g_config)) {
    g_process.phase.store(static_cast<uint32_t>(ProcessPhase::kDisabled), std::memory_order_release);
    return;
  }
  if (!g_process_hooks_installed) {
    RegisterServiceTask("clock", RefineClock, kClockRefinementPeriodMs);
    RemoveDeadPredecessorsSoon(g_config->name);
    pthread_key_create(&g_thread_exit_key, OnThreadExit);
    pthread_atfork(BeforeFork, AfterForkInParent, AfterForkInChild);
    g_process_hooks_installed = true;
  }
  if (g_constructors_done) {
    StartServiceThread();
    g_service_thread_started = true;
  }
  g_process.phase.store(static_cast<uint32_t>(ProcessPhase::kReady), std::memory_order_release);
  if (!g_config->quiet && std::getenv("LIMPWATCH_VERBOSE") != nullptr) {
    LogLine("recording into " + g_writer->object_name());
  }
}

}  // namespace

bool EnsureProcessInitialized() {
  uint32_t phase = g_process.phase.load(std::memory_order_acquire);
  if (phase == static_cast<uint32_t>(ProcessPhase::kUninitialized)) {
    std::lock_guard<std::mutex> lock(g_init_mutex);
    InitializeLocked();
    phase = g_process.phase.load(std::memory_order_acquire);
  }
  return phase == static_cast<uint32_t>(ProcessPhase::kReady);
}

int StartQuietThread(const char* name, void* (*main)(void*), void* argument) {
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  pthread_t thread;
  QuietThreadStart start{main, argument, {false}};
  int result = pthread_create(&thread, &attributes, QuietThreadMain, &start);
  pthread_attr_destroy(&attributes);
  if (result == 0) {
    while (!start.registered.load(std::memory_order_acquire)) sched_yield();
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (result == 0) pthread_setname_np(thread, name);
  return result;
}

bool IsLimpwatchThread(pid_t tid) {
  for (const std::atomic<pid_t>& own : g_own_threads) {
    if (own.load(std::memory_order_acquire) == tid) return true;
  }
  return false;
}

const shm::SegmentView& CurrentSegmentView() { return g_view; }
const RuntimeConfig& CurrentConfig() { return *g_config; }

void RegisterThreadExit() { pthread_setspecific(g_thread_exit_key, reinterpret_cast<void*>(1)); }

void LogLine(const std::string& message) {
  std::string line = "limpwatch[" + std::to_string(getpid()) + "]: " + message + "\n";
  ssize_t ignored = 0;
  // A daemonized server's stderr is /dev/null: LIMPWATCH_LOG keeps the lines.
  // The file comes first: it is the record an operator reads afterwards, and
  // the process may exit while the runtime's thread is still here.
  if (const char* path = std::getenv("LIMPWATCH_LOG"); path != nullptr && path[0] != '\0') {
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ignored = write(fd, line.data(), line.size());
      close(fd);
    }
  }
  ignored = write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

void BeforeExec() {
  if (g_process.phase.load(std::memory_order_acquire) != static_cast<uint32_t>(ProcessPhase::kReady)) return;
  if (g_process.header->owner_pid != static_cast<uint32_t>(getpid()) || g_removed_for_exec) return;
  ThreadState& thread = t_thread;
  uint32_t saved_guard = thread.in_hook;
  thread.in_hook = 1;
  int saved_errno = errno;
  if (g_config->keep_segment) {
    ProcessSymbolizer().PublishPendingNames(g_view);
    g_process.header->owner_state.store(static_cast<uint32_t>(shm::OwnerState::kExited), std::memory_order_release);
  } else {
    g_writer->Remove();
  }
  g_removed_for_exec = true;
  errno = saved_errno;
  thread.in_hook = saved_guard;
}

void AfterFailedExec() {
  if (!g_removed_for_exec) return;
  ThreadState& thread = t_thread;
  uint32_t saved_guard = thread.in_hook;
  thread.in_hook = 1;
  int saved_errno = errno;
  g_removed_for_exec = false;
  if (g_config->keep_segment) {
    g_process.header->owner_state.store(static_cast<uint32_t>(shm::OwnerState::kRunning), std::memory_order_release);
  } else if (std::string error; !g_writer->Republish(&error)) {
    LogLine(error + " after a failed exec; readers no longer see this process");
  }
  errno = saved_errno;
  thread.in_hook = saved_guard;
}

// Runs before the program's own constructors, so the segment exists before
// the first traced call.
[[gnu::constructor(101)]] void StartRuntime() {
  ThreadState& thread = t_thread;
  thread.in_hook = 1;
  int saved_errno = errno;
  EnsureProcessInitialized();
  errno = saved_errno;
  thread.in_hook = 0;
}

// After every prioritised constructor of the library (101-104: the segment,
// the real calls, the I/O settings, the selection, the patchers), before the
// sampler's and the analyzer's threads (106) and the program's constructors.
[[gnu::constructor(105)]] void StartRuntimeThreads() {
  ThreadState& thread = t_thread;
  uint32_t saved_guard = thread.in_hook;
  thread.in_hook = 1;
  int saved_errno = errno;
  {
    std::lock_guard<std::mutex> lock(g_init_mutex);
    g_constructors_done = true;
    bool ready = g_process.phase.load(std::memory_order_acquire) == static_cast<uint32_t>(ProcessPhase::kReady);
    if (ready && !g_service_thread_started) {
      StartServiceThread();
      g_service_thread_started = true;
    }
  }
  errno = saved_errno;
  thread.in_hook = saved_guard;
}

// At a normal exit the segment's name is removed (or, with LIMPWATCH_KEEP,
// marked exited with every name published). The mapping stays until the
// process is gone: other threads may still be recording.
[[gnu::destructor(101)]] void StopRuntime() {
  if (g_process.phase.load(std::memory_order_acquire) != static_cast<uint32_t>(ProcessPhase::kReady)) return;
  if (g_process.header->owner_pid != static_cast<uint32_t>(getpid())) return;
  ThreadState& thread = t_thread;
  uint32_t saved_guard = thread.in_hook;
  thread.in_hook = 1;
  int saved_errno = errno;
  StopServiceThread();
  if (g_config->keep_segment) {
    ProcessSymbolizer().PublishPendingNames(g_view);
    g_process.header->owner_state.store(static_cast<uint32_t>(shm::OwnerState::kExited), std::memory_order_release);
  } else {
    g_writer->Remove();
  }
  errno = saved_errno;
  thread.in_hook = saved_guard;
}

}  // namespace limpwatch::runtime
