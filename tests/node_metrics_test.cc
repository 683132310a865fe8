// Node metrics from the real /proc and /sys: the sampler in this process,
// and the sampler running inside a traced process on its service thread.
#include <fcntl.h>
#include <sys/mman.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "limpwatch/analyzer/io_metrics.h"
#include "limpwatch/analyzer/node_metrics.h"
#include "support/io_run.h"

namespace limpwatch::testing {
namespace {

using analyzer::NodeMetricsSampler;
using analyzer::NodeSample;
using analyzer::StorageDevice;

constexpr size_t kMiB = 1 << 20;

// A scratch directory on a block device: under /tmp if that has one, else
// /var/tmp; empty (with the reason) when neither has.
struct DiskDirectory {
  std::unique_ptr<ScratchDirectory> scratch;
  StorageDevice device;
  std::string reason;
};

DiskDirectory FindDiskDirectory() {
  DiskDirectory found;
  for (const char* parent : {"/tmp", "/var/tmp"}) {
    StorageDevice device = analyzer::ResolveStorageDevice(parent);
    if (device.state == shm::DiskState::kDevice) {
      found.scratch = std::make_unique<ScratchDirectory>(parent);
      found.device = device;
      return found;
    }
    found.reason += std::string(parent) + ": " + device.problem + "; ";
  }
  return found;
}

// Writes `megabytes` MiB the device must see (O_DIRECT, else buffered + fsync).
void WriteToDevice(const std::string& directory, int megabytes) {
  std::string path = directory + "/node-metrics-io";
  int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_DIRECT, 0600);
  if (fd < 0) fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  void* block = nullptr;
  ASSERT_EQ(posix_memalign(&block, 4096, kMiB), 0);
  std::memset(block, 'n', kMiB);
  for (int i = 0; i < megabytes; ++i) {
    ASSERT_EQ(pwrite(fd, block, kMiB, off_t(i) * off_t(kMiB)), ssize_t(kMiB)) << std::strerror(errno);
  }
  ASSERT_EQ(fsync(fd), 0);
  close(fd);
  unlink(path.c_str());
  std::free(block);
}

TEST(NodeMetricsTest, StorageDirectoriesResolveToTheirDeviceOrSayWhyNot) {
  StorageDevice missing = analyzer::ResolveStorageDevice("/nonexistent/limpwatch");
  EXPECT_EQ(missing.state, shm::DiskState::kBadDirectory);
  EXPECT_NE(missing.problem.find("No such file or directory"), std::string::npos) << missing.problem;

  StorageDevice not_directory = analyzer::ResolveStorageDevice("/proc/self/stat");
  EXPECT_EQ(not_directory.state, shm::DiskState::kBadDirectory);
  EXPECT_NE(not_directory.problem.find("not a directory"), std::string::npos) << not_directory.problem;

  StorageDevice shm_device = analyzer::ResolveStorageDevice("/dev/shm");  // tmpfs
  EXPECT_EQ(shm_device.state, shm::DiskState::kNoBlockDevice);
  EXPECT_EQ(shm_device.major, 0u);
  EXPECT_NE(shm_device.problem.find("no block device"), std::string::npos) << shm_device.problem;

  DiskDirectory disk = FindDiskDirectory();
  if (!disk.scratch) GTEST_SKIP() << "no block device under /tmp or /var/tmp: " << disk.reason;
  // The name is the kernel's, and /proc/diskstats has a line for it.
  char link[4096] = {};
  std::string sys_path = "/sys/dev/block/" + std::to_string(disk.device.major) + ":" + std::to_string(disk.device.minor);
  ASSERT_GT(readlink(sys_path.c_str(), link, sizeof link - 1), 0);
  EXPECT_EQ(disk.device.name, std::string(std::strrchr(link, '/') + 1));
  NodeMetricsSampler sampler(disk.scratch->path());
  std::vector<std::string> problems;
  NodeSample sample = sampler.Read(&problems);
  EXPECT_TRUE(problems.empty()) << problems.front();
  EXPECT_TRUE(sample.disk_found);
}

TEST(NodeMetricsTest, RealProcCountersMoveWhenTheTestDoesDiskIo) {
  DiskDirectory disk = FindDiskDirectory();
  if (!disk.scratch) GTEST_SKIP() << "no block device under /tmp or /var/tmp: " << disk.reason;
  NodeMetricsSampler sampler(disk.scratch->path());
  std::vector<std::string> problems;
  NodeSample before = sampler.Read(&problems);

  constexpr int kMegabytes = 8;
  WriteToDevice(disk.scratch->path(), kMegabytes);
  // 32 MiB malloc'ed and touched: the kernel allocates pages, malloc holds more.
  std::vector<char> held(32 * kMiB, 'm');
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  NodeSample after = sampler.Read(&problems);
  ASSERT_TRUE(problems.empty()) << problems.front();

  EXPECT_GT(after.timestamp_ns, before.timestamp_ns);
  EXPECT_GT(after.interrupts, before.interrupts);
  EXPECT_GT(after.context_switches, before.context_switches);
  EXPECT_GE(after.pages_allocated - before.pages_allocated, 32 * kMiB / 4096);
  EXPECT_GE(after.heap_bytes, before.heap_bytes + 31 * kMiB);  // the arena may have trimmed a little meanwhile
  EXPECT_GT(after.process_cpu_ns, before.process_cpu_ns);
  ASSERT_TRUE(after.disk_found);
  EXPECT_GT(after.disk.writes_completed, before.disk.writes_completed);
  EXPECT_GE(after.disk.sectors_written - before.disk.sectors_written, uint64_t(kMegabytes) * kMiB / 512);
  EXPECT_GE(after.disk.io_ms, before.disk.io_ms);
  EXPECT_GT(held[12345], 0);
}

TEST(NodeMetricsTest, RunDelayCountsTheTimeThreadsWaitForACpu) {
  uint64_t parsed = 0;
  EXPECT_TRUE(analyzer::ParseSchedstatRunDelay("123456 7890123 42\n", &parsed));
  EXPECT_EQ(parsed, 7890123u);
  EXPECT_FALSE(analyzer::ParseSchedstatRunDelay("123456\n", &parsed));
  if (access(("/proc/self/task/" + std::to_string(gettid()) + "/schedstat").c_str(), R_OK) != 0) {
    GTEST_SKIP() << "this kernel has no per-thread schedstat";
  }

  NodeMetricsSampler sampler("/");
  std::vector<std::string> problems;
  NodeSample before = sampler.Read(&problems);
  // More spinning threads than CPUs: some of them must wait for one.
  unsigned spinners = 2 * std::max(1u, std::thread::hardware_concurrency()) + 2;
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < spinners; ++i) {
    threads.emplace_back([&stop] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // Read while they still spin: an exited thread's waiting leaves the sum.
  NodeSample during = sampler.Read(&problems);
  stop = true;
  for (auto& thread : threads) thread.join();
  // At least spinners - CPUs threads waited the whole 300 ms; ask for far less.
  EXPECT_GT(during.run_delay_ns, before.run_delay_ns + 100'000'000u);

  shm::NodeMetricsRecord record{};
  analyzer::PublishNodeSample(during, StorageDevice{}, &record);
  EXPECT_EQ(record.run_delay_ns.load(), during.run_delay_ns);
}

TEST(NodeMetricsTest, CpuQuotaThrottlingIsReadFromTheProcessCgroup) {
  uint64_t ns = 0;
  EXPECT_TRUE(analyzer::ParseCpuStatThrottledNs("nr_periods 10\nnr_throttled 4\nthrottled_time 5000000\n", &ns));
  EXPECT_EQ(ns, 5000000u);
  EXPECT_TRUE(analyzer::ParseCpuStatThrottledNs("usage_usec 9\nnr_throttled 1\nthrottled_usec 250\n", &ns));
  EXPECT_EQ(ns, 250000u);
  EXPECT_FALSE(analyzer::ParseCpuStatThrottledNs("usage_usec 9\n", &ns));

  // cgroup v1: the hierarchy holding the cpu controller, whatever it shares its mount with.
  EXPECT_EQ(analyzer::CpuStatPath("4:memory:/a\n2:cpu,cpuacct:/limp/s1\n0::/\n", "/cg"), "/cg/cpu,cpuacct/limp/s1/cpu.stat");
  EXPECT_EQ(analyzer::CpuStatPath("2:cpuacct:/x\n1:cpu:/y\n", "/cg"), "/cg/cpu/y/cpu.stat");
  // cgroup v2 only.
  EXPECT_EQ(analyzer::CpuStatPath("0::/system.slice/pvfs.service\n", "/cg"), "/cg/system.slice/pvfs.service/cpu.stat");
  EXPECT_EQ(analyzer::CpuStatPath("", "/cg"), "");
}

// A page read through a mapping after the page cache dropped it is a major
// fault: the sampler counts it, and publishes the count.
TEST(NodeMetricsTest, MajorFaultsCountPagesReadBackFromStorage) {
  uint64_t faults = 0;
  EXPECT_TRUE(analyzer::ParseProcessStatMajorFaults(
      "42 (a (strange) name) S 1 42 42 0 -1 4194560 900 0 17 0 5 3 0 0 20 0 1 0 100 0 0\n", &faults));
  EXPECT_EQ(faults, 17u);
  EXPECT_FALSE(analyzer::ParseProcessStatMajorFaults("42 (name) S 1 42\n", &faults));

  DiskDirectory disk = FindDiskDirectory();
  if (!disk.scratch) GTEST_SKIP() << "no directory on a block device to map a file from: " << disk.reason;
  std::string path = disk.scratch->path() + "/major-faults";
  const size_t bytes = 4 << 20;
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  std::vector<char> data(bytes, 'x');
  ASSERT_EQ(write(fd, data.data(), bytes), ssize_t(bytes));
  ASSERT_EQ(fsync(fd), 0);  // clean pages: the kernel may drop them
  ASSERT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  void* mapping = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(mapping, MAP_FAILED);
  NodeMetricsSampler sampler("/");
  std::vector<std::string> problems;
  NodeSample before = sampler.Read(&problems);
  uint64_t sum = 0;
  for (size_t offset = 0; offset < bytes; offset += 4096) sum += static_cast<const char*>(mapping)[offset];
  NodeSample after = sampler.Read(&problems);
  EXPECT_EQ(sum, uint64_t('x') * (bytes / 4096));
  munmap(mapping, bytes);
  close(fd);
  unlink(path.c_str());
  EXPECT_TRUE(problems.empty()) << problems.front();
  // Read-ahead brings many pages in with one fault: at least one, not one a page.
  EXPECT_GE(after.major_faults, before.major_faults + 1);
  shm::NodeMetricsRecord record{};
  analyzer::PublishNodeSample(after, StorageDevice{}, &record);
  EXPECT_EQ(record.major_faults.load(), after.major_faults);
}

TEST(NodeMetricsTest, PublishingUsesTheSequenceLock) {
  shm::NodeMetricsRecord record{};
  NodeSample sample;
  sample.timestamp_ns = 1234;
  sample.interrupts = 7;
  sample.disk_found = true;
  sample.disk.sectors_written = 99;
  StorageDevice device;
  device.state = shm::DiskState::kDevice;
  device.major = 254;
  device.name = "vda";
  analyzer::PublishNodeSample(sample, device, &record);
  EXPECT_EQ(record.sequence.load(), 2u);  // odd while written, even and advanced by two after
  EXPECT_EQ(record.interrupts.load(), 7u);
  EXPECT_EQ(record.disk_sectors_written.load(), 99u);
  EXPECT_EQ(record.disk_state.load(), uint32_t(shm::DiskState::kDevice));
  EXPECT_EQ(record.disk_name[0].load() & 0xffffff, uint64_t('v' | 'd' << 8 | 'a' << 16));
  sample.disk_found = false;  // the device vanished from /proc/diskstats
  analyzer::PublishNodeSample(sample, device, &record);
  EXPECT_EQ(record.sequence.load(), 4u);
  EXPECT_EQ(record.disk_state.load(), uint32_t(shm::DiskState::kNotInDiskstats));
  EXPECT_EQ(record.disk_sectors_written.load(), 0u);
}

TEST(NodeMetricsTest, ATracedProcessPublishesNodeMetricsEverySecond) {
  DiskDirectory disk = FindDiskDirectory();
  if (!disk.scratch) GTEST_SKIP() << "no block device under /tmp or /var/tmp: " << disk.reason;
  std::string name = UniqueSegmentName("io-disk");
  SegmentCleanup cleanup(name);
  int output = -1;
  pid_t pid = StartProgram(TestProgram("io_calls"), {"disk", disk.scratch->path(), "3200"},
                           {"LIMPWATCH_NAME=" + name, "LIMPWATCH_KEEP=1", "LIMPWATCH_STORAGE_DIR=" + disk.scratch->path()},
                           &output);
  ASSERT_GT(pid, 0);
  std::string started = ReadLine(output);
  ASSERT_EQ(started.rfind("started", 0), 0u) << started;
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  shm::Snapshot first = ReadSegment(name, pid);
  // The next sample, at least a second later: the service thread samples
  // every second, later when the machine (or a sanitizer) slows it down.
  shm::Snapshot second;
  for (int wait = 0; wait < 40; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    second = ReadSegment(name, pid);
    bool newer = second.node_metrics.timestamp_ns >= first.node_metrics.timestamp_ns + 1000000000ull;
    if (wait >= 10 && first.node_metrics.valid && newer) break;
  }
  std::string rest;
  for (std::string line = ReadLine(output); !line.empty(); line = ReadLine(output)) rest += line + "\n";
  close(output);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << rest;

  ASSERT_TRUE(second.node_metrics.valid);
  EXPECT_EQ(second.node_metrics.disk_state, shm::DiskState::kDevice);
  EXPECT_EQ(second.node_metrics.disk_name, disk.device.name);
  EXPECT_EQ(second.node_metrics.disk_major, disk.device.major);
  analyzer::IoMetrics interval = analyzer::DeriveIoMetrics(first, second);
  ASSERT_TRUE(interval.node.valid) << "two distinct samples at least a second apart";
  EXPECT_EQ(interval.node.disk_name, disk.device.name);
  EXPECT_GT(interval.node.interrupts_per_s, 0);
  EXPECT_GT(interval.node.context_switches_per_s, 0);
  EXPECT_GT(interval.node.process_cpu_percent, 0);
  EXPECT_GT(interval.node.disk_requests_per_s, 0);
  EXPECT_GT(interval.node.disk_write_mb_per_s, 1.0);  // the program alone writes ~12 MB/s
  EXPECT_GT(interval.node.disk_iosize_kb, 0);
  EXPECT_GT(interval.node.disk_utilization, 0);
  EXPECT_GE(interval.node.disk_await_ms, 0);
  // The program's own writes and syncs in the same interval: dwrite and dsync.
  EXPECT_GT(interval.dwrite.calls, 0u);
  EXPECT_EQ(interval.dwrite.bytes, interval.dwrite.calls * 256 * 1024);  // the program's block size
  EXPECT_GT(interval.dwrite.ms_per_call, 0);
  EXPECT_GT(interval.dsync.calls, 0u);
}

// The program's stdout and stderr together, through a shell that execs it
// (same pid).
IoRun RunWithStderr(const std::string& storage_directory, const std::string& milliseconds) {
  IoRun io;
  io.name = UniqueSegmentName("io-storage");
  io.run = RunProgram("/bin/sh", {"-c", "exec \"$0\" idle \"$1\" 2>&1", TestProgram("io_calls"), milliseconds},
                      {"LIMPWATCH_NAME=" + io.name, "LIMPWATCH_KEEP=1", "LIMPWATCH_STORAGE_DIR=" + storage_directory});
  EXPECT_EQ(io.run.exit_status, 0) << io.run.output;
  if (io.run.pid > 0) io.snapshot = ReadSegment(io.name, io.run.pid);
  return io;
}

size_t CountOccurrences(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

TEST(NodeMetricsTest, ABadStorageDirectoryIsReportedOnceAndTheRestIsSampled) {
  IoRun io = RunWithStderr("/nonexistent/limpwatch-storage", "2300");  // three samples
  SegmentCleanup cleanup(io.name);
  EXPECT_EQ(CountOccurrences(io.run.output, "LIMPWATCH_STORAGE_DIR"), 1u) << io.run.output;
  EXPECT_NE(io.run.output.find("/nonexistent/limpwatch-storage"), std::string::npos) << io.run.output;
  ASSERT_TRUE(io.snapshot.node_metrics.valid);
  EXPECT_EQ(io.snapshot.node_metrics.disk_state, shm::DiskState::kBadDirectory);
  EXPECT_GT(io.snapshot.node_metrics.interrupts, 0u);
  EXPECT_GT(io.snapshot.node_metrics.context_switches, 0u);
  EXPECT_EQ(io.snapshot.node_metrics.disk_writes_completed, 0u);
}

TEST(NodeMetricsTest, AStorageDirectoryOnTmpfsHasNoDiskMetrics) {
  IoRun io = RunWithStderr("/dev/shm", "1300");
  SegmentCleanup cleanup(io.name);
  ASSERT_TRUE(io.snapshot.node_metrics.valid);
  EXPECT_EQ(io.snapshot.node_metrics.disk_state, shm::DiskState::kNoBlockDevice);
  EXPECT_EQ(CountOccurrences(io.run.output, "no block device"), 1u) << io.run.output;
  analyzer::NodeRates rates = analyzer::DeriveNodeRates(shm::NodeMetricsValues{}, io.snapshot.node_metrics);
  EXPECT_NE(analyzer::DiskStateText(rates.disk_state, rates.disk_name, rates.disk_major, rates.disk_minor)
                .find("no block device"),
            std::string::npos);
}

}  // namespace
}  // namespace limpwatch::testing
