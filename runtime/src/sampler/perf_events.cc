#include "sampler/perf_events.h"

#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "sampler/perf_record.h"

namespace limpwatch::runtime {
namespace {

constexpr uint64_t kNsPerSecond = 1000000000ull;
constexpr size_t kMinRingPages = 4;
constexpr size_t kMaxRingPages = 64;

int OpenEvent(perf_event_attr* attributes, pid_t pid, int cpu) {
  long fd = syscall(SYS_perf_event_open, attributes, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
  return fd < 0 ? -errno : static_cast<int>(fd);
}

void SetRate(shm::SampleSource source, uint32_t rate_hz, perf_event_attr* attributes) {
  if (source == shm::SampleSource::kPerfCycles) {
    attributes->type = PERF_TYPE_HARDWARE;
    attributes->config = PERF_COUNT_HW_CPU_CYCLES;
    // Cycles per second vary with the clock: let the kernel adjust the period.
    attributes->freq = 1;
    attributes->sample_freq = rate_hz;
  } else {
    attributes->type = PERF_TYPE_SOFTWARE;
    attributes->config = PERF_COUNT_SW_CPU_CLOCK;
    attributes->sample_period = kNsPerSecond / rate_hz;  // cpu-clock counts nanoseconds
  }
}

void SetRing(size_t ring_bytes, perf_event_attr* attributes) {
  // Nobody polls these rings; a wakeup only when half full keeps the
  // kernel's irq_work rare.
  attributes->watermark = 1;
  attributes->wakeup_watermark = static_cast<uint32_t>(ring_bytes / 2);
}

std::string ErrnoText(int error_number) { return std::strerror(error_number); }

}  // namespace

perf_event_attr ProcessEventAttributes(const PerfEventKind& kind, uint32_t rate_hz, size_t ring_bytes) {
  perf_event_attr attributes{};
  attributes.size = sizeof attributes;
  SetRate(kind.source, rate_hz, &attributes);
  attributes.sample_type = kind.callchain ? kSampleTypeWithCallchain : kSampleTypeBase;
  attributes.disabled = 1;
  attributes.inherit = 1;
  attributes.inherit_thread = kind.inherit_thread ? 1 : 0;
  attributes.exclude_kernel = kind.kernel ? 0 : 1;
  attributes.exclude_hv = 1;
  attributes.exclude_callchain_kernel = 1;
  if (kind.callchain) attributes.sample_max_stack = kCallchainFrames;
  SetRing(ring_bytes, &attributes);
  return attributes;
}

perf_event_attr NodeEventAttributes(shm::SampleSource source, uint32_t rate_hz, size_t ring_bytes) {
  perf_event_attr attributes{};
  attributes.size = sizeof attributes;
  SetRate(source, rate_hz, &attributes);
  attributes.sample_type = kSampleTypeBase;
  attributes.disabled = 1;
  attributes.exclude_user = 1;
  attributes.exclude_hv = 1;
  SetRing(ring_bytes, &attributes);
  return attributes;
}

PerfProbe ProbeProcessEvents(uint32_t rate_hz, int cpu) {
  PerfProbe probe;
  pid_t self = getpid();
  for (shm::SampleSource source : {shm::SampleSource::kPerfCycles, shm::SampleSource::kPerfCpuClock}) {
    for (bool kernel : {true, false}) {
      for (int variant = 0; variant < 4; ++variant) {
        PerfEventKind kind;
        kind.source = source;
        kind.kernel = kernel;
        kind.inherit_thread = (variant & 1) == 0;
        kind.callchain = (variant & 2) == 0;
        perf_event_attr attributes = ProcessEventAttributes(kind, rate_hz, 4096);
        int fd = OpenEvent(&attributes, self, cpu);
        if (fd >= 0) {
          close(fd);
          probe.granted = true;
          probe.kind = kind;
          return probe;
        }
        int error_number = -fd;
        if (source == shm::SampleSource::kPerfCpuClock) {
          if (kernel && probe.kernel_errno == 0) probe.kernel_errno = error_number;
          if (!kernel && probe.refusal_errno == 0) probe.refusal_errno = error_number;
        }
        // Permission and absence do not depend on inherit_thread or callchains.
        if (error_number == EACCES || error_number == EPERM || error_number == ENOENT ||
            error_number == ENODEV || error_number == EOPNOTSUPP || error_number == ENOSYS) {
          break;
        }
      }
    }
  }
  return probe;
}

size_t RingPagesFor(uint32_t rate_hz, bool callchain) {
  size_t record_bytes = sizeof(perf_event_header) + 2 * sizeof(uint64_t);
  if (callchain) record_bytes += (kCallchainFrames + 3) * sizeof(uint64_t);
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t wanted = (2 * size_t{rate_hz} * record_bytes + page - 1) / page;
  size_t pages = kMinRingPages;
  while (pages < wanted && pages < kMaxRingPages) pages *= 2;
  return pages;
}

std::vector<int> OnlineCpus() {
  std::vector<int> cpus;
  if (FILE* file = std::fopen("/sys/devices/system/cpu/online", "re")) {
    char line[4096];
    if (std::fgets(line, sizeof line, file) != nullptr) {
      // "0-3,5,7-8"
      char* cursor = line;
      while (*cursor != '\0' && *cursor != '\n') {
        char* end = nullptr;
        long first = std::strtol(cursor, &end, 10);
        if (end == cursor) break;
        long last = first;
        if (*end == '-') {
          cursor = end + 1;
          last = std::strtol(cursor, &end, 10);
          if (end == cursor) break;
        }
        for (long cpu = first; cpu <= last && cpu < 65536; ++cpu) cpus.push_back(static_cast<int>(cpu));
        cursor = (*end == ',') ? end + 1 : end;
      }
    }
    std::fclose(file);
  }
  if (cpus.empty()) {
    long count = sysconf(_SC_NPROCESSORS_ONLN);
    for (long cpu = 0; cpu < (count > 0 ? count : 1); ++cpu) cpus.push_back(static_cast<int>(cpu));
  }
  return cpus;
}

std::vector<pid_t> ProcessTasks() {
  std::vector<pid_t> tasks;
  if (DIR* directory = opendir("/proc/self/task")) {
    while (dirent* entry = readdir(directory)) {
      char* end = nullptr;
      long tid = std::strtol(entry->d_name, &end, 10);
      if (end != entry->d_name && *end == '\0' && tid > 0) tasks.push_back(static_cast<pid_t>(tid));
    }
    closedir(directory);
  }
  if (tasks.empty()) tasks.push_back(getpid());
  return tasks;
}

bool PerfEventSet::AddEvent(const perf_event_attr& attributes, size_t ring_pages, pid_t pid, int cpu,
                            std::string* error) {
  perf_event_attr copy = attributes;
  int fd = OpenEvent(&copy, pid, cpu);
  if (fd < 0) {
    if (-fd == ESRCH) return true;  // the task exited meanwhile
    *error = "perf_event_open(pid " + std::to_string(pid) + ", cpu " + std::to_string(cpu) + "): " + ErrnoText(-fd);
    return false;
  }
  fds_.push_back(fd);
  for (size_t ring = 0; ring < cpus_.size(); ++ring) {
    if (cpus_[ring] != cpu) continue;
    if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring_fds_[ring]) != 0) {
      *error = "redirecting a perf event to its CPU's ring: " + ErrnoText(errno);
      return false;
    }
    return true;
  }
  int error_number = 0;
  std::unique_ptr<PerfRing> ring = PerfRing::Map(fd, ring_pages, &error_number);
  if (!ring) {
    *error = "mapping a perf ring: " + ErrnoText(error_number);
    return false;
  }
  cpus_.push_back(cpu);
  ring_fds_.push_back(fd);
  rings_.push_back(std::move(ring));
  return true;
}

std::unique_ptr<PerfEventSet> PerfEventSet::OpenForTasks(const perf_event_attr& attributes, size_t ring_pages,
                                                         const std::vector<pid_t>& tasks, std::string* error) {
  auto set = std::unique_ptr<PerfEventSet>(new PerfEventSet());
  set->sample_type_ = attributes.sample_type;
  for (int cpu : OnlineCpus()) {
    for (pid_t task : tasks) {
      if (!set->AddEvent(attributes, ring_pages, task, cpu, error)) return nullptr;
    }
  }
  if (set->fds_.empty()) {
    *error = "no perf event could be opened";
    return nullptr;
  }
  return set;
}

std::unique_ptr<PerfEventSet> PerfEventSet::OpenSystemWide(const perf_event_attr& attributes, size_t ring_pages,
                                                           std::string* error) {
  auto set = std::unique_ptr<PerfEventSet>(new PerfEventSet());
  set->sample_type_ = attributes.sample_type;
  for (int cpu : OnlineCpus()) {
    if (!set->AddEvent(attributes, ring_pages, -1, cpu, error)) return nullptr;
  }
  return set;
}

PerfEventSet::~PerfEventSet() {
  for (int fd : fds_) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  rings_.clear();
  for (int fd : fds_) close(fd);
}

bool PerfEventSet::RestartWithPeriods(const std::function<uint64_t()>& next_period, std::string* error) {
  for (int fd : fds_) {
    uint64_t period = next_period();
    if (ioctl(fd, PERF_EVENT_IOC_PERIOD, &period) != 0) {
      *error = "changing a perf event's period: " + ErrnoText(errno);
      return false;
    }
  }
  return true;
}

bool PerfEventSet::Enable(std::string* error) {
  for (int fd : fds_) {
    if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
      *error = "enabling a perf event: " + ErrnoText(errno);
      return false;
    }
  }
  return true;
}

size_t PerfEventSet::Drain(const std::function<void(const perf_event_header&)>& visit) {
  size_t records = 0;
  for (auto& ring : rings_) records += ring->Drain(visit);
  return records;
}

void PerfEventSet::ReleaseAfterFork() {
  for (auto& ring : rings_) ring->Forget();
  rings_.clear();
  // Closing the child's copies only drops references: the parent's events
  // keep sampling the parent. No ioctl here, it would disable them there too.
  for (int fd : fds_) close(fd);
  fds_.clear();
  ring_fds_.clear();
  cpus_.clear();
}

}  // namespace limpwatch::runtime
