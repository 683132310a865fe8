#include "limpwatch/analyzer/node_metrics.h"

#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <iterator>
#include <optional>

#include "limpwatch/shm/segment.h"
#include "limpwatch/shm/snapshot.h"

namespace limpwatch::analyzer {
namespace {

constexpr size_t kReadChunk = 16384;

uint64_t ClockNs(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return uint64_t(now.tv_sec) * 1000000000ull + uint64_t(now.tv_nsec);
}

// The whole of a (small, /proc or /sys) file; false with errno set on failure.
bool ReadWholeFile(const std::string& path, std::string* out) {
  out->clear();
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  while (true) {
    size_t used = out->size();
    out->resize(used + kReadChunk);
    ssize_t count = read(fd, out->data() + used, kReadChunk);
    if (count < 0) {
      if (errno == EINTR) {
        out->resize(used);
        continue;
      }
      int error = errno;
      close(fd);
      errno = error;
      return false;
    }
    out->resize(used + static_cast<size_t>(count));
    if (count == 0) break;
  }
  close(fd);
  return true;
}

std::string Unreadable(const std::string& path) { return "cannot read " + path + ": " + std::strerror(errno); }

// Splits off the next whitespace-separated field of *text.
std::string_view NextField(std::string_view* text) {
  size_t start = text->find_first_not_of(" \t");
  if (start == std::string_view::npos) {
    *text = {};
    return {};
  }
  size_t end = text->find_first_of(" \t", start);
  std::string_view field = text->substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
  *text = end == std::string_view::npos ? std::string_view{} : text->substr(end);
  return field;
}

bool ParseNumber(std::string_view field, uint64_t* out) {
  if (field.empty()) return false;
  auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), *out);
  return error == std::errc() && end == field.data() + field.size();
}

// Calls visit(line) for each line of text until it returns false.
template <typename Visit>
void ForEachLine(std::string_view text, Visit visit) {
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!visit(line)) return;
    if (end == std::string_view::npos) return;
    text.remove_prefix(end + 1);
  }
}

// Threads that exit between the listing and the read are skipped: their
// waiting is lost for this tick only.
uint64_t ProcessRunDelayNs(const std::string& proc_root) {
  std::string directory = proc_root + "/self/task";
  DIR* tasks = opendir(directory.c_str());
  if (tasks == nullptr) return 0;
  uint64_t total = 0;
  std::string text;
  while (dirent* entry = readdir(tasks)) {
    if (entry->d_name[0] == '.') continue;
    uint64_t delay = 0;
    if (ReadWholeFile(directory + "/" + entry->d_name + "/schedstat", &text) && ParseSchedstatRunDelay(text, &delay)) {
      total += delay;
    }
  }
  closedir(tasks);
  return total;
}

uint64_t HeapBytes(const std::string& proc_root) {
  struct mallinfo2 info = mallinfo2();
  uint64_t bytes = uint64_t(info.arena) + uint64_t(info.hblkhd);
  if (bytes != 0) return bytes;
  // Another allocator: the data segment (heap and anonymous mappings) instead.
  std::string statm;
  if (!ReadWholeFile(proc_root + "/self/statm", &statm)) return 0;
  std::string_view rest = statm;
  uint64_t data_pages = 0;
  for (int field = 0; field < 6; ++field) {
    std::string_view value = NextField(&rest);
    if (field == 5 && !ParseNumber(value, &data_pages)) return 0;
  }
  return data_pages * uint64_t(sysconf(_SC_PAGESIZE));
}

}  // namespace

StorageDevice ResolveStorageDevice(const std::string& directory, const std::string& sys_root) {
  StorageDevice device;
  device.directory = directory;
  struct stat status;
  if (stat(directory.c_str(), &status) != 0) {
    device.state = shm::DiskState::kBadDirectory;
    device.problem = "storage directory '" + directory + "': " + std::strerror(errno);
    return device;
  }
  if (!S_ISDIR(status.st_mode)) {
    device.state = shm::DiskState::kBadDirectory;
    device.problem = "storage directory '" + directory + "' is not a directory";
    return device;
  }
  device.major = gnu_dev_major(status.st_dev);
  device.minor = gnu_dev_minor(status.st_dev);
  std::string numbers = std::to_string(device.major) + ":" + std::to_string(device.minor);
  char target[4096];
  ssize_t length = readlink((sys_root + "/dev/block/" + numbers).c_str(), target, sizeof target - 1);
  if (length <= 0) {
    device.state = shm::DiskState::kNoBlockDevice;
    device.problem = "storage directory '" + directory + "' is on device " + numbers +
                     ", which is no block device (tmpfs, overlay, NFS, ...): no disk metrics";
    return device;
  }
  target[length] = '\0';
  const char* slash = std::strrchr(target, '/');
  device.name = slash != nullptr ? slash + 1 : target;
  device.state = shm::DiskState::kDevice;
  return device;
}

bool ParseProcStat(std::string_view text, uint64_t* interrupts, uint64_t* context_switches) {
  bool have_interrupts = false, have_switches = false;
  ForEachLine(text, [&](std::string_view line) {
    std::string_view rest = line;
    std::string_view key = NextField(&rest);
    if (key == "intr") have_interrupts = ParseNumber(NextField(&rest), interrupts);
    if (key == "ctxt") have_switches = ParseNumber(NextField(&rest), context_switches);
    return !(have_interrupts && have_switches);
  });
  return have_interrupts && have_switches;
}

bool ParseVmstatPagesAllocated(std::string_view text, uint64_t* pages) {
  bool found = false;
  uint64_t total = 0;
  ForEachLine(text, [&](std::string_view line) {
    std::string_view rest = line;
    std::string_view key = NextField(&rest);
    uint64_t value = 0;
    if (key.substr(0, 8) == "pgalloc_" && ParseNumber(NextField(&rest), &value)) {
      total += value;
      found = true;
    }
    return true;
  });
  if (found) *pages = total;
  return found;
}

bool ParseDiskstats(std::string_view text, uint32_t major, uint32_t minor, DiskCounters* out) {
  bool found = false;
  ForEachLine(text, [&](std::string_view line) {
    std::string_view rest = line;
    uint64_t line_major = 0, line_minor = 0;
    if (!ParseNumber(NextField(&rest), &line_major) || !ParseNumber(NextField(&rest), &line_minor)) return true;
    if (line_major != major || line_minor != minor) return true;
    NextField(&rest);  // the name
    uint64_t fields[11];
    for (uint64_t& field : fields) {
      if (!ParseNumber(NextField(&rest), &field)) return false;
    }
    // reads, merged, sectors, ms, writes, merged, sectors, ms, in flight, io ms, weighted ms
    *out = DiskCounters{fields[0], fields[2], fields[3], fields[4], fields[6], fields[7], fields[9], fields[10]};
    found = true;
    return false;
  });
  return found;
}

bool ParseSchedstatRunDelay(std::string_view text, uint64_t* run_delay_ns) {
  NextField(&text);  // time on the CPU
  return ParseNumber(NextField(&text), run_delay_ns);
}

bool ParseProcessStatMajorFaults(std::string_view text, uint64_t* major_faults) {
  std::optional<uint64_t> majflt = shm::ProcStatField(text, 12);
  if (majflt) *major_faults = *majflt;
  return majflt.has_value();
}

void PublishNodeSample(const NodeSample& sample, const StorageDevice& device, shm::NodeMetricsRecord* record) {
  shm::DiskState state = device.state;
  if (state == shm::DiskState::kDevice && !sample.disk_found) state = shm::DiskState::kNotInDiskstats;
  DiskCounters disk = sample.disk_found ? sample.disk : DiskCounters{};

  uint64_t sequence = record->sequence.load(std::memory_order_relaxed);
  record->sequence.store(sequence + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  record->timestamp_ns.store(sample.timestamp_ns, std::memory_order_relaxed);
  record->interrupts.store(sample.interrupts, std::memory_order_relaxed);
  record->context_switches.store(sample.context_switches, std::memory_order_relaxed);
  record->pages_allocated.store(sample.pages_allocated, std::memory_order_relaxed);
  record->heap_bytes.store(sample.heap_bytes, std::memory_order_relaxed);
  record->process_cpu_ns.store(sample.process_cpu_ns, std::memory_order_relaxed);
  record->run_delay_ns.store(sample.run_delay_ns, std::memory_order_relaxed);
  record->cpu_throttled_ns.store(sample.cpu_throttled_ns, std::memory_order_relaxed);
  record->tcp_retransmitted.store(sample.tcp_retransmitted, std::memory_order_relaxed);
  record->tcp_out_of_order.store(sample.tcp_out_of_order, std::memory_order_relaxed);
  record->tcp_retransmit_timeout_us.store(sample.tcp_retransmit_timeout_us, std::memory_order_relaxed);
  record->tcp_round_trip_us.store(sample.tcp_round_trip_us, std::memory_order_relaxed);
  record->major_faults.store(sample.major_faults, std::memory_order_relaxed);
  record->tcp_opened_retransmitted.store(sample.tcp_opened.retransmitted, std::memory_order_relaxed);
  record->tcp_opened_out_of_order.store(sample.tcp_opened.out_of_order, std::memory_order_relaxed);
  record->tcp_opened_retransmit_timeout_us.store(sample.tcp_opened.retransmit_timeout_us, std::memory_order_relaxed);
  record->disk_reads_completed.store(disk.reads_completed, std::memory_order_relaxed);
  record->disk_writes_completed.store(disk.writes_completed, std::memory_order_relaxed);
  record->disk_sectors_read.store(disk.sectors_read, std::memory_order_relaxed);
  record->disk_sectors_written.store(disk.sectors_written, std::memory_order_relaxed);
  record->disk_read_ms.store(disk.read_ms, std::memory_order_relaxed);
  record->disk_write_ms.store(disk.write_ms, std::memory_order_relaxed);
  record->disk_io_ms.store(disk.io_ms, std::memory_order_relaxed);
  record->disk_weighted_io_ms.store(disk.weighted_io_ms, std::memory_order_relaxed);
  record->disk_state.store(static_cast<uint32_t>(state), std::memory_order_relaxed);
  record->disk_major.store(device.major, std::memory_order_relaxed);
  record->disk_minor.store(device.minor, std::memory_order_relaxed);
  shm::StoreNameWords(device.name, record->disk_name, std::size(record->disk_name));
  record->sequence.store(sequence + 2, std::memory_order_release);
}

NodeMetricsSampler::NodeMetricsSampler(const std::string& storage_directory, std::string proc_root,
                                       std::string sys_root)
    : proc_root_(std::move(proc_root)),
      sys_root_(std::move(sys_root)),
      device_(ResolveStorageDevice(storage_directory, sys_root_)),
      tcp_loss_(proc_root_) {}

bool ParseCpuStatThrottledNs(std::string_view text, uint64_t* throttled_ns) {
  bool found = false;
  ForEachLine(text, [&](std::string_view line) {
    std::string_view key = NextField(&line);
    uint64_t number = 0;
    if (!ParseNumber(NextField(&line), &number)) return true;
    if (key == "throttled_time") {  // v1: ns
      *throttled_ns = number;
      found = true;
    } else if (key == "throttled_usec") {  // v2: us
      *throttled_ns = number * 1000;
      found = true;
    }
    return !found;
  });
  return found;
}

std::string CpuStatPath(std::string_view proc_cgroup, const std::string& cgroup_root) {
  std::string unified;
  while (!proc_cgroup.empty()) {
    size_t end = proc_cgroup.find('\n');
    std::string_view line = proc_cgroup.substr(0, end);
    proc_cgroup.remove_prefix(end == std::string_view::npos ? proc_cgroup.size() : end + 1);
    size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string_view::npos || second == std::string_view::npos) continue;
    std::string_view controllers = line.substr(first + 1, second - first - 1);
    std::string path(line.substr(second + 1));
    if (controllers.empty()) {
      unified = path;
      continue;
    }
    for (std::string_view rest = controllers; !rest.empty();) {
      size_t comma = rest.find(',');
      if (rest.substr(0, comma) == "cpu") return cgroup_root + "/" + std::string(controllers) + path + "/cpu.stat";
      rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
    }
  }
  if (unified.empty()) return "";
  // Hybrid systems mount the v2 hierarchy under unified/.
  std::string hybrid = cgroup_root + "/unified" + unified + "/cpu.stat";
  return access(hybrid.c_str(), R_OK) == 0 ? hybrid : cgroup_root + unified + "/cpu.stat";
}

uint64_t NodeMetricsSampler::CpuThrottledNs() const {
  std::string text;
  if (!ReadWholeFile(proc_root_ + "/self/cgroup", &text)) return throttle_.total_ns;
  std::string path = CpuStatPath(text, sys_root_ + "/fs/cgroup");
  uint64_t now = 0;
  if (path.empty() || !ReadWholeFile(path, &text) || !ParseCpuStatThrottledNs(text, &now)) {
    throttle_.cpu_stat_path.clear();
    return throttle_.total_ns;
  }
  if (path == throttle_.cpu_stat_path && now >= throttle_.last_ns) throttle_.total_ns += now - throttle_.last_ns;
  throttle_.cpu_stat_path = path;
  throttle_.last_ns = now;
  return throttle_.total_ns;
}

NodeSample NodeMetricsSampler::Read(std::vector<std::string>* problems) const {
  NodeSample sample;
  sample.timestamp_ns = ClockNs(CLOCK_REALTIME);
  std::string text;
  std::string path = proc_root_ + "/stat";
  if (!ReadWholeFile(path, &text)) {
    problems->push_back(Unreadable(path));
  } else if (!ParseProcStat(text, &sample.interrupts, &sample.context_switches)) {
    problems->push_back(path + " has no intr or ctxt line");
  }
  path = proc_root_ + "/vmstat";
  if (!ReadWholeFile(path, &text)) {
    problems->push_back(Unreadable(path));
  } else if (!ParseVmstatPagesAllocated(text, &sample.pages_allocated)) {
    problems->push_back(path + " has no pgalloc_* line");
  }
  sample.heap_bytes = HeapBytes(proc_root_);
  sample.process_cpu_ns = ClockNs(CLOCK_PROCESS_CPUTIME_ID);
  sample.run_delay_ns = ProcessRunDelayNs(proc_root_);
  sample.cpu_throttled_ns = CpuThrottledNs();
  tcp_loss_.Update();  // a process without /proc/self/fd (a test's fake root) counts none
  sample.tcp_retransmitted = tcp_loss_.retransmitted();
  sample.tcp_out_of_order = tcp_loss_.out_of_order();
  sample.tcp_retransmit_timeout_us = tcp_loss_.retransmit_timeout_us();
  sample.tcp_round_trip_us = tcp_loss_.round_trip_us();
  sample.tcp_opened = tcp_loss_.opened();
  path = proc_root_ + "/self/stat";
  if (ReadWholeFile(path, &text) && !ParseProcessStatMajorFaults(text, &sample.major_faults)) {
    problems->push_back(path + " has no majflt field");
  }
  if (device_.state == shm::DiskState::kDevice) {
    path = proc_root_ + "/diskstats";
    if (!ReadWholeFile(path, &text)) {
      problems->push_back(Unreadable(path));
    } else {
      sample.disk_found = ParseDiskstats(text, device_.major, device_.minor, &sample.disk);
      if (!sample.disk_found) {
        problems->push_back(path + " has no line for " + device_.name + " (" + std::to_string(device_.major) + ":" +
                            std::to_string(device_.minor) + ")");
      }
    }
  }
  return sample;
}

void NodeMetricsSampler::SampleInto(shm::NodeMetricsRecord* record, std::vector<std::string>* problems) {
  PublishNodeSample(Read(problems), device_, record);
}

}  // namespace limpwatch::analyzer
