// The CPU sampler's life cycle: start with the library, read the samples on
// a thread of its own, follow fork, read them a last time at exit.
//
// Sources, in order of preference (the first the kernel grants wins):
//   1. perf_event_open, hardware cycles, else software cpu-clock: one event
//      per CPU for every task, shared by the traced processes of the node
//      (node_sample_sharing.h: one of them opens the events and files the
//      others' samples into their inboxes), or one per
//      (task, CPU) with inherit=1 (EventPlacement in sampler_config.h says
//      which and why; perf_events.h how), kernel samples and a bounded user
//      callchain when permitted (perf_event_paranoid <= 1, CAP_PERFMON or
//      root), else user space only (exclude_kernel);
//   2. a process CPU-time timer and SIGPROF (sigprof_sampling.h);
//   3. off, with one log line.
// LIMPWATCH_SAMPLE_HZ=0 skips all of it: no event, no timer, no handler, no
// thread. Any failure later turns sampling off with one log line; the
// program runs on.
//
// Why a thread of our own rather than a task on the runtime's service
// thread: that thread runs at nice 19, and on a saturated CPU (a CPU-hog
// fault, exactly when samples matter) it was measured here going more than
// two seconds between turns, so rings overflowed and live views lagged. The
// reader thread runs at the server's own priority, wakes every 100 ms, does
// a few microseconds of work per sample, and is created with every signal
// blocked, so the server's signal handling is untouched. A reader that
// still falls behind loses samples (counted), never blocks the server.
//
// The runtime's own threads (service, this reader, the analyzer) are left
// out of the profile: it is the program's, and the peers compare it. The
// reader's one-time /proc/kallsyms load alone took 4 % of the samples of a
// program burning 3 s of CPU (at 4,000 Hz, idle machine), more under load.
//
// fork(): the runtime's own child handler gives the child its segment;
// ours, registered later, runs after it (pthread_atfork runs child handlers
// in registration order) and reopens the events for the child, restarts the
// SIGPROF timer and the reader thread there.
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "limpwatch/shm/snapshot.h"
#include "process.h"
#include "sampler/node_sample_sharing.h"
#include "sampler/perf_events.h"
#include "sampler/perf_record.h"
#include "sampler/period_jitter.h"
#include "sampler/sample_attribution.h"
#include "sampler/sampler_config.h"
#include "sampler/sigprof_sampling.h"
#include "thread_state.h"

namespace limpwatch::runtime {
namespace {

constexpr long kDrainPeriodNs = 100'000'000;
// Where the node's shared sampling files live (node_sample_sharing.h).
constexpr const char* kSharingDirectory = "/dev/shm";
// The holder looks for members that joined or left every second.
constexpr uint32_t kRescanEveryRounds = 10;
// How long a member's exit waits for the holder to read its last samples.
constexpr long kExitFlushTimeoutNs = 300'000'000;

struct SamplerState {
  SamplerConfig config;
  pid_t pid = 0;
  bool running = false;
  shm::SampleSource source = shm::SampleSource::kOff;
  uint32_t flags = 0;
  PerfEventKind kind;
  bool per_cpu_events = false;  // see EventPlacement
  std::optional<PeriodJitter> jitter;  // per-CPU cpu-clock events only: see period_jitter.h
  size_t ring_pages = 0;
  std::unique_ptr<PerfEventSet> process_events;
  std::unique_ptr<PerfEventSet> node_events;
  // Per-CPU events shared with the node's other traced processes: the
  // holder has process_events, a member none.
  std::unique_ptr<NodeSampleSharing> sharing;
  // Left but never destroyed: see StopSources.
  std::vector<std::unique_ptr<NodeSampleSharing>> retired_sharing;
  std::unique_ptr<SampleAttribution> attribution;
};

// Taken by the reader thread, at exit, and across fork (so a child
// never inherits it locked). Order: this mutex, then the symbolizer's.
constinit std::mutex g_mutex;
// Never destroyed: the reader thread may still look at it during exit.
constinit SamplerState* g_state = nullptr;
// The reader thread runs while this equals the epoch it was started with.
constinit std::atomic<uint64_t> g_reader_epoch{0};

bool Quiet() { return CurrentConfig().quiet; }

std::string ErrnoText(int error_number) { return std::strerror(error_number); }

std::string SourceName(shm::SampleSource source) { return shm::SampleSourceName(source); }

std::string ParanoidLevel() {
  std::string level = "?";
  if (FILE* file = std::fopen("/proc/sys/kernel/perf_event_paranoid", "re")) {
    char text[32] = {};
    if (std::fgets(text, sizeof text, file) != nullptr) level.assign(text, strcspn(text, "\n"));
    std::fclose(file);
  }
  return level;
}

void PublishSource(const SamplerState& state) {
  shm::SampleTableHeader& header = state.attribution->table().header();
  header.rate_hz.store(state.running ? state.config.rate_hz : 0, std::memory_order_relaxed);
  header.flags.store(state.flags, std::memory_order_relaxed);
  header.source.store(static_cast<uint32_t>(state.running ? state.source : shm::SampleSource::kOff),
                      std::memory_order_release);
}

// Opens the process's perf events: one per CPU for every task, or one per
// (task of `tasks`, CPU), as state->per_cpu_events says. Returns false with
// *problem.
bool StartPerf(SamplerState* state, const std::vector<pid_t>& tasks, std::string* problem) {
  perf_event_attr attributes =
      ProcessEventAttributes(state->kind, state->config.rate_hz, state->ring_pages * size_t(sysconf(_SC_PAGESIZE)));
  std::string error;
  std::unique_ptr<PerfEventSet> events;
  if (state->per_cpu_events) {
    // Every task's samples arrive; DrainLocked keeps this process's.
    attributes.inherit = 0;
    attributes.inherit_thread = 0;
    events = PerfEventSet::OpenSystemWide(attributes, state->ring_pages, &error);
  } else {
    events = PerfEventSet::OpenForTasks(attributes, state->ring_pages, tasks, &error);
  }
  if (!events || !events->Enable(&error)) {
    *problem = error;
    return false;
  }
  state->process_events = std::move(events);
  state->jitter.reset();
  if (state->per_cpu_events && state->kind.source == shm::SampleSource::kPerfCpuClock) {
    state->jitter.emplace(state->config.rate_hz, (uint64_t(getpid()) << 32) ^ uint64_t(time(nullptr)));
  }
  return true;
}

// Moves the per-CPU sampling grid (period_jitter.h). A kernel that refuses
// keeps the fixed grid, said once.
void JitterPeriods(SamplerState* state) {
  if (!state->jitter || !state->process_events) return;
  std::string error;
  if (!state->process_events->RestartWithPeriods([state] { return state->jitter->NextPeriodNs(); }, &error)) {
    state->jitter.reset();
    LogLine("CPU sampling keeps a fixed period (" + error + "); samples of periodic work may alias with it");
  }
}

// The flags that say where the events sit, after a change of placement.
void NotePlacement(SamplerState* state) {
  state->flags &= ~uint32_t{shm::kSamplesPerCpuEvents | shm::kSamplesSharedEvents};
  if (state->per_cpu_events) state->flags |= shm::kSamplesPerCpuEvents;
  if (state->sharing) state->flags |= shm::kSamplesSharedEvents;
}

// Joins the node's shared per-CPU events: as their holder when nobody holds
// them (this process opens them), else as a member (it opens nothing).
// False, sharing nothing, when the node's files cannot be used or the
// events cannot be opened; the caller then opens events of its own.
bool StartSharedEvents(SamplerState* state) {
  const uint32_t rate = state->config.rate_hz;
  std::string error;
  state->sharing = NodeSampleSharing::Join(kSharingDirectory, SharingScope(), rate, getpid(),
                                           InboxCapacityFor(rate, OnlineCpus().size()), &error);
  if (!state->sharing) {
    LogLine("CPU sampling: the node's shared per-CPU events cannot be used (" + error +
            "); this process opens its own");
    return false;
  }
  if (!state->sharing->TryTakeOver()) return true;
  if (StartPerf(state, {}, &error)) return true;
  state->sharing.reset();  // frees the node's lease
  return false;
}

// A member whose holder has gone takes the events over. If it cannot open
// them, it samples its own threads instead (one line).
void TakeOverIfFree(SamplerState* state) {
  if (!state->sharing || state->sharing->holder() || !state->sharing->TryTakeOver()) return;
  std::string problem;
  if (StartPerf(state, {}, &problem)) return;
  state->sharing.reset();
  state->per_cpu_events = false;
  std::string fallback_problem;
  if (!StartPerf(state, ProcessTasks(), &fallback_problem)) throw std::runtime_error(fallback_problem);
  NotePlacement(state);
  PublishSource(*state);
  LogLine("CPU sampling: taking over the node's shared per-CPU events failed (" + problem +
          "); this process samples its own threads");
}

// Per-CPU events first where the placement allows them (the node's shared
// set unless LIMPWATCH_SAMPLE_SHARE=0, else this process's own); per thread
// when they are not wanted or not granted. Returns false with *problem.
bool StartProcessEvents(SamplerState* state, size_t cpu_count, std::string* problem) {
  EventPlacement placement = state->config.placement;
  bool try_per_cpu = placement == EventPlacement::kPerCpu ||
                     (placement == EventPlacement::kAuto && cpu_count <= kMaxCpusForPerCpuEvents);
  if (try_per_cpu) {
    state->per_cpu_events = true;
    if (state->config.share_events && StartSharedEvents(state)) return true;
    std::string refusal;
    if (StartPerf(state, {}, &refusal)) return true;
    if (placement == EventPlacement::kPerCpu) {
      LogLine("LIMPWATCH_SAMPLE_EVENTS=cpu refused (" + refusal + "); one event per thread instead");
    }
  }
  state->per_cpu_events = false;
  return StartPerf(state, ProcessTasks(), problem);
}

// The node's kernel profile: refused, with a reason, unless root and perf.
void StartNodeProfile(SamplerState* state) {
  std::string refusal;
  if (geteuid() != 0) {
    refusal = "needs root (effective uid " + std::to_string(geteuid()) + ")";
  } else if (state->source == shm::SampleSource::kSigprofTimer) {
    refusal = "needs perf events, which were refused";
  } else {
    perf_event_attr attributes = NodeEventAttributes(state->source, state->config.rate_hz,
                                                     state->ring_pages * size_t(sysconf(_SC_PAGESIZE)));
    auto events = PerfEventSet::OpenSystemWide(attributes, state->ring_pages, &refusal);
    if (events && events->Enable(&refusal)) {
      state->node_events = std::move(events);
      state->flags |= shm::kSamplesNodeProfile;
      return;
    }
  }
  LogLine("LIMPWATCH_SAMPLE_SYSTEM=1 refused: the node's kernel profile " + refusal +
          "; sampling this process only");
}

// Chooses and starts a source. Logs at most one line about the process's
// own sampling (plus one about the node profile when asked for).
void StartSources(SamplerState* state) {
  const uint32_t rate = state->config.rate_hz;
  std::vector<int> cpus = OnlineCpus();
  PerfProbe probe = ProbeProcessEvents(rate, cpus.front());
  std::string perf_problem;
  if (probe.granted) {
    state->kind = probe.kind;
    state->ring_pages = RingPagesFor(rate, probe.kind.callchain);
    if (StartProcessEvents(state, cpus.size(), &perf_problem)) {
      state->source = probe.kind.source;
      state->flags = (probe.kind.kernel ? shm::kSamplesIncludeKernel : 0u) |
                     (probe.kind.kernel && probe.kind.callchain ? shm::kSamplesHaveCallchains : 0u);
      NotePlacement(state);
    }
  } else {
    perf_problem = "perf_event_open refused: " + ErrnoText(probe.refusal_errno);
  }

  if (state->process_events || state->sharing) {
    state->running = true;
    if (!probe.kind.kernel && !Quiet()) {
      LogLine("CPU sampling: kernel samples not permitted (" + ErrnoText(probe.kernel_errno) +
              ", perf_event_paranoid=" + ParanoidLevel() + "); sampling user space only with " +
              SourceName(state->source) + " at " + std::to_string(rate) + " Hz");
    }
  } else {
    std::string error;
    if (StartSigprofSampling(rate, &error)) {
      state->running = true;
      state->source = shm::SampleSource::kSigprofTimer;
      state->flags = 0;
      LogLine("CPU sampling: " + perf_problem + "; falling back to a SIGPROF timer at " + std::to_string(rate) +
              " Hz per thread of CPU time, user space only");
    } else {
      LogLine("CPU sampling is off: " + perf_problem + ", and the SIGPROF fallback failed: " + error);
      return;
    }
  }
  if (state->config.system_wide) StartNodeProfile(state);
  if (std::getenv("LIMPWATCH_VERBOSE") != nullptr && !Quiet()) {
    LogLine("CPU sampling with " + SourceName(state->source) + " at " + std::to_string(rate) + " Hz" +
            ((state->flags & shm::kSamplesIncludeKernel) ? ", kernel included" : ", user space only") +
            ((state->flags & shm::kSamplesNodeProfile) ? ", node kernel profile" : "") +
            (state->per_cpu_events ? ", per-CPU events" : ", per-thread events") +
            (state->sharing ? (state->sharing->holder() ? " shared, held by this process" : " shared, held by another process")
                            : std::string()) +
            (state->process_events ? ", " + std::to_string(state->process_events->event_count()) + " perf events"
                                   : std::string()));
  }
}

// Ends every source; the counts already in the segment stay.
void StopSources(SamplerState* state) {
  state->process_events.reset();
  state->node_events.reset();
  if (state->sharing) {
    // The reader thread may be waiting on the control file's futex right
    // now (at exit it is not joined): the object, and that mapping, stay.
    state->sharing->Leave();
    state->retired_sharing.push_back(std::move(state->sharing));
  }
  if (state->source == shm::SampleSource::kSigprofTimer) StopSigprofSampling();
  state->running = false;
}

void DrainLocked(SamplerState* state) {
  SampleAttribution& attribution = *state->attribution;
  NodeSampleSharing* sharing = state->sharing.get();
  if (sharing != nullptr && sharing->holder()) {
    for (const std::string& problem : sharing->BeginRound(kRescanEveryRounds)) {
      LogLine("CPU sampling: " + problem + "; that process gets no samples from this one");
    }
  }
  if (state->process_events) {
    uint64_t sample_type = state->process_events->sample_type();
    uint32_t pid = static_cast<uint32_t>(state->pid);
    state->process_events->Drain([&](const perf_event_header& record) {
      if (record.type == PERF_RECORD_SAMPLE) {
        DecodedSample sample;
        if (!DecodeSample(record, sample_type, &sample)) return;
        if (sample.pid == pid) {
          if (!IsLimpwatchThread(static_cast<pid_t>(sample.tid))) {
            attribution.CountProcessSample(sample.ip, sample.in_kernel, sample.user_ip);
          }
        } else if (sharing != nullptr) {
          // Another member's (its own threads are left out by that member);
          // any other task's, or a forked child's that has no inbox, is dropped.
          sharing->Deliver(sample.pid, SharedSample{sample.ip, sample.user_ip, sample.tid, sample.in_kernel ? 1u : 0u});
        }
      } else if (record.type == PERF_RECORD_LOST) {
        uint64_t lost = DecodeLostCount(record);
        attribution.CountLost(lost);
        if (sharing != nullptr) sharing->DeliverLost(lost);
      }
    });
  }
  if (sharing != nullptr) {
    // A member's samples, and a new holder's from the holder before it.
    uint64_t lost = 0;
    sharing->DrainInbox(
        [&](const SharedSample& sample) {
          if (!IsLimpwatchThread(static_cast<pid_t>(sample.tid))) {
            attribution.CountProcessSample(sample.ip, sample.in_kernel != 0, sample.user_ip);
          }
        },
        &lost);
    attribution.CountLost(lost);
    if (sharing->holder()) sharing->EndRound();
  }
  JitterPeriods(state);
  if (state->node_events) {
    uint64_t sample_type = state->node_events->sample_type();
    state->node_events->Drain([&](const perf_event_header& record) {
      if (record.type == PERF_RECORD_SAMPLE) {
        DecodedSample sample;
        if (DecodeSample(record, sample_type, &sample) && sample.in_kernel) attribution.CountNodeSample(sample.ip);
      } else if (record.type == PERF_RECORD_LOST) {
        attribution.CountLost(DecodeLostCount(record));
      }
    });
  }
  if (state->source == shm::SampleSource::kSigprofTimer) {
    DrainSigprofSamples([&](uint64_t ip) { attribution.CountProcessSample(ip, false, 0); });
    attribution.CountLost(TakeSigprofSamplesLost());
  }
}

void FailLocked(SamplerState* state, const std::string& what) {
  StopSources(state);
  PublishSource(*state);
  LogLine("CPU sampling failed and is off: " + what);
}

// One read of every source, from the reader thread.
void DrainOnce(SamplerState* state) {
  if (!state->running || state->pid != getpid()) return;
  try {
    if (state->sharing && state->sharing->holder() && !state->sharing->StillHolder()) {
      // Another member took the events over from this stalled holder: its
      // own samples in its rings are still counted, then its events close.
      DrainLocked(state);
      state->process_events.reset();
      state->jitter.reset();
    }
    TakeOverIfFree(state);
    DrainLocked(state);
    if (state->source == shm::SampleSource::kSigprofTimer && !SigprofHandlerIsOurs()) {
      StopSources(state);
      PublishSource(*state);
      LogLine("CPU sampling stops: the program installed its own SIGPROF handler, which must not get our ticks");
    }
  } catch (const std::exception& error) {
    FailLocked(state, error.what());
  } catch (...) {
    FailLocked(state, "unknown error");
  }
}

void* ReaderThreadMain(void* argument) {
  ThreadState& thread = t_thread;
  thread.in_hook = 1;  // nothing this thread does is traced or counted as the server's I/O
  thread.status = ThreadStatus::kIgnored;
  uint64_t epoch = reinterpret_cast<uint64_t>(argument);
  const timespec pause{0, kDrainPeriodNs};
  // Taken under the mutex, waited on without it: the control file's
  // mapping outlives this thread's use of it (StopSources keeps it; only
  // this thread, or a forked child that has no reader yet, frees one).
  std::optional<NodeSampleSharing::WaitTicket> ticket;
  while (g_reader_epoch.load(std::memory_order_acquire) == epoch) {
    if (ticket) {
      NodeSampleSharing::WaitFor(*ticket, kDrainPeriodNs);
    } else {
      nanosleep(&pause, nullptr);
    }
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_reader_epoch.load(std::memory_order_acquire) != epoch || g_state == nullptr) break;
    DrainOnce(g_state);
    ticket.reset();
    if (g_state->sharing) ticket = g_state->sharing->PrepareWait();
  }
  return nullptr;
}

// Starts the reader with every signal blocked. Returns false with *error.
bool StartReaderThread(std::string* error) {
  uint64_t epoch = g_reader_epoch.fetch_add(1, std::memory_order_acq_rel) + 1;
  int result = StartQuietThread("limpwatch-samp", ReaderThreadMain, reinterpret_cast<void*>(epoch));
  if (result != 0) {
    *error = "cannot start its reader thread: " + ErrnoText(result);
    return false;
  }
  return true;
}

void StopReaderThread() { g_reader_epoch.fetch_add(1, std::memory_order_acq_rel); }

// In the child of fork(), which has a segment of its own and only this
// thread: the parent's events, timer and reader are not ours any more.
void FollowFork(SamplerState* state) {
  state->pid = getpid();
  state->attribution->Retarget(CurrentSegmentView());
  std::string problem;
  bool ok = true;
  try {
    bool shared = state->sharing != nullptr;
    if (shared) {
      // The node's lease and the parent's inbox stay the parent's; the child
      // joins with an inbox of its own (or opens its own events).
      state->sharing->ReleaseAfterFork();
      state->sharing.reset();
    }
    if (state->process_events) {
      state->process_events->ReleaseAfterFork();
      state->process_events.reset();
    }
    if (shared || state->per_cpu_events) {
      if (!shared || !StartSharedEvents(state)) ok = StartPerf(state, {}, &problem);
      NotePlacement(state);
    } else if (state->source != shm::SampleSource::kSigprofTimer) {
      // Every thread the child has by now (this one, the runtime's service
      // thread): the same coverage as the parent had.
      ok = StartPerf(state, ProcessTasks(), &problem);
    } else if (state->source == shm::SampleSource::kSigprofTimer) {
      ok = RestartSigprofSamplingInChild(state->config.rate_hz, &problem);
    }
    if (ok && state->node_events) {
      state->node_events->ReleaseAfterFork();
      state->node_events.reset();
      perf_event_attr attributes = NodeEventAttributes(state->source, state->config.rate_hz,
                                                       state->ring_pages * size_t(sysconf(_SC_PAGESIZE)));
      state->node_events = PerfEventSet::OpenSystemWide(attributes, state->ring_pages, &problem);
      if (!state->node_events || !state->node_events->Enable(&problem)) {
        state->node_events.reset();
        state->flags &= ~uint32_t{shm::kSamplesNodeProfile};
        LogLine("CPU sampling: the node's kernel profile could not follow fork: " + problem);
      }
    }
    if (ok) ok = StartReaderThread(&problem);
  } catch (const std::exception& error) {
    ok = false;
    problem = error.what();
  }
  if (!ok) {
    StopSources(state);
    LogLine("CPU sampling could not follow fork and is off in this process: " + problem);
  }
  PublishSource(*state);
}

// Drops what the child inherited when it has no segment to sample into.
void AbandonAfterFork(SamplerState* state) {
  if (state->sharing) state->sharing->ReleaseAfterFork();
  state->sharing.reset();
  if (state->process_events) state->process_events->ReleaseAfterFork();
  if (state->node_events) state->node_events->ReleaseAfterFork();
  state->process_events.reset();
  state->node_events.reset();
  state->running = false;
}

void LockForFork() { g_mutex.lock(); }
void UnlockInParent() { g_mutex.unlock(); }

void UnlockInChild() {
  SamplerState* state = g_state;
  if (state != nullptr && state->running && state->pid != getpid()) {
    ThreadState& thread = t_thread;
    uint32_t saved_guard = thread.in_hook;
    thread.in_hook = 1;
    int saved_errno = errno;
    bool has_segment =
        g_process.phase.load(std::memory_order_acquire) == static_cast<uint32_t>(ProcessPhase::kReady) &&
        CurrentSegmentView().header()->owner_pid == static_cast<uint32_t>(getpid());
    if (has_segment) {
      FollowFork(state);
    } else {
      AbandonAfterFork(state);
    }
    errno = saved_errno;
    thread.in_hook = saved_guard;
  }
  g_mutex.unlock();
}

// After the runtime's constructors: the segment exists (101) and every
// setting is read before the sampler's thread starts (105).
[[gnu::constructor(106)]] void StartSampler() {
  if (g_process.phase.load(std::memory_order_acquire) != static_cast<uint32_t>(ProcessPhase::kReady)) return;
  ThreadState& thread = t_thread;
  uint32_t saved_guard = thread.in_hook;
  thread.in_hook = 1;
  int saved_errno = errno;
  try {
    std::vector<std::string> problems;
    SamplerConfig config = ReadSamplerConfig(&problems);
    for (const auto& problem : problems) LogLine("ignoring " + problem);
    if (config.rate_hz != 0) {
      std::lock_guard<std::mutex> lock(g_mutex);
      auto* state = new SamplerState();
      state->config = config;
      state->pid = getpid();
      state->attribution = std::make_unique<SampleAttribution>(CurrentSegmentView());
      StartSources(state);
      g_state = state;
      if (state->running) {
        std::string problem;
        if (pthread_atfork(LockForFork, UnlockInParent, UnlockInChild) != 0) {
          problem = "cannot follow fork (pthread_atfork failed)";
        } else if (!StartReaderThread(&problem)) {
          // problem says why
        }
        if (!problem.empty()) {
          StopSources(state);
          LogLine("CPU sampling is off: " + problem);
        }
      }
      PublishSource(*state);
    }
  } catch (const std::exception& error) {
    LogLine(std::string("CPU sampling is off: ") + error.what());
  } catch (...) {
    LogLine("CPU sampling is off: unknown error");
  }
  errno = saved_errno;
  thread.in_hook = saved_guard;
}

// Before the runtime's destructor (priority 101) marks the segment exited:
// the samples still in the rings are counted, then the sources stop.
[[gnu::destructor(102)]] void StopSampler() {
  StopReaderThread();
  std::lock_guard<std::mutex> lock(g_mutex);
  SamplerState* state = g_state;
  if (state == nullptr || !state->running || state->pid != getpid()) return;
  ThreadState& thread = t_thread;
  uint32_t saved_guard = thread.in_hook;
  thread.in_hook = 1;
  int saved_errno = errno;
  try {
    // A member's last samples are still in the holder's rings.
    if (state->sharing && !state->sharing->holder()) state->sharing->RequestFlush(kExitFlushTimeoutNs);
    DrainLocked(state);
  } catch (...) {
    // Exiting anyway: the samples of the last interval are lost, nothing else.
  }
  StopSources(state);
  errno = saved_errno;
  thread.in_hook = saved_guard;
}

}  // namespace
}  // namespace limpwatch::runtime
