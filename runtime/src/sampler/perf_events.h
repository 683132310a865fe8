// Opening the sampling perf events: which event the kernel grants, and one
// event per (task, CPU) with all events of a CPU writing into one ring.
//
// Why per-CPU events on the process's tasks with inherit=1: it is how `perf
// record` follows a command. Every thread a sampled thread starts inherits
// the events in the kernel, at clone time, so threads started later are
// covered without a hook in pthread_create and without a system call on any
// thread of the server. The kernel refuses to mmap inherited per-task events
// that are not bound to a CPU (their samples would race on one ring), hence
// one event per CPU. inherit_thread=1 keeps forked child processes out: a
// daemonizing server's child samples itself into its own segment.
#ifndef LIMPWATCH_RUNTIME_SRC_SAMPLER_PERF_EVENTS_H_
#define LIMPWATCH_RUNTIME_SRC_SAMPLER_PERF_EVENTS_H_

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "limpwatch/shm/layout.h"
#include "sampler/perf_ring.h"

namespace limpwatch::runtime {

// User frames recorded under a kernel sample; only the innermost is used,
// the bound keeps the kernel's stack walk in the interrupt short and the
// records small.
inline constexpr uint16_t kCallchainFrames = 4;

// What the kernel granted for this process.
struct PerfEventKind {
  shm::SampleSource source = shm::SampleSource::kPerfCpuClock;  // kPerfCycles or kPerfCpuClock
  bool kernel = false;          // kernel-mode samples (perf_event_paranoid <= 1, CAP_PERFMON or root)
  bool callchain = false;       // user callchain under kernel samples
  bool inherit_thread = false;  // forked children not inherited (Linux 5.13+)
};

struct PerfProbe {
  bool granted = false;
  PerfEventKind kind;
  int kernel_errno = 0;  // why kernel samples were refused, when kind.kernel is false
  int refusal_errno = 0;  // why every perf event was refused, when !granted
};

// Tries the events in order of preference (hardware cycles, then cpu-clock;
// kernel included, then user only) on this process and CPU `cpu`. Opens and
// closes test events; nothing stays open.
PerfProbe ProbeProcessEvents(uint32_t rate_hz, int cpu);

perf_event_attr ProcessEventAttributes(const PerfEventKind& kind, uint32_t rate_hz, size_t ring_bytes);

// Kernel-mode samples of every task on a CPU, for the node's kernel profile.
perf_event_attr NodeEventAttributes(shm::SampleSource source, uint32_t rate_hz, size_t ring_bytes);

// Data pages per ring: two seconds or more of samples at `rate_hz` on one
// CPU, so a late reader loses nothing (the service thread runs at nice 19:
// on a saturated machine it can wait a second for its turn).
size_t RingPagesFor(uint32_t rate_hz, bool callchain);

// The CPUs listed in /sys/devices/system/cpu/online (0..nprocs-1 if unreadable).
std::vector<int> OnlineCpus();

// The thread ids of this process, from /proc/self/task.
std::vector<pid_t> ProcessTasks();

// A set of open sampling events and their rings.
class PerfEventSet {
 public:
  // One event per (task, online CPU). Returns null with a one-line *error.
  static std::unique_ptr<PerfEventSet> OpenForTasks(const perf_event_attr& attributes, size_t ring_pages,
                                                    const std::vector<pid_t>& tasks, std::string* error);
  // One event per online CPU, any task (pid -1).
  static std::unique_ptr<PerfEventSet> OpenSystemWide(const perf_event_attr& attributes, size_t ring_pages,
                                                      std::string* error);
  ~PerfEventSet();  // disables and closes the events, unmaps the rings
  PerfEventSet(const PerfEventSet&) = delete;
  PerfEventSet& operator=(const PerfEventSet&) = delete;

  // Starts sampling (events are opened disabled). Returns false with *error.
  bool Enable(std::string* error);

  // Reads every ring once; see PerfRing::Drain.
  size_t Drain(const std::function<void(const perf_event_header&)>& visit);

  // Restarts every event with the period `next_period()` returns (in the
  // event's unit: nanoseconds for cpu-clock). Returns false with *error at
  // the first event the kernel refuses.
  bool RestartWithPeriods(const std::function<uint64_t()>& next_period, std::string* error);

  // In a forked child: closes the inherited descriptors (the parent's events
  // live on in the parent) and forgets the rings, which the child never had.
  void ReleaseAfterFork();

  uint64_t sample_type() const { return sample_type_; }
  size_t event_count() const { return fds_.size(); }

 private:
  PerfEventSet() = default;
  bool AddEvent(const perf_event_attr& attributes, size_t ring_pages, pid_t pid, int cpu, std::string* error);

  std::vector<int> fds_;
  std::vector<int> cpus_;                          // CPU of each ring
  std::vector<int> ring_fds_;                      // the event each ring is mapped from
  std::vector<std::unique_ptr<PerfRing>> rings_;   // one per CPU
  uint64_t sample_type_ = 0;
};

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_SAMPLER_PERF_EVENTS_H_
