// limpwatch-soak: a traced server under a mixed load among peers for a
// long while, with faults injected at random; then the properties that
// must hold (docs/soak.md). Usage: limpwatch-soak --help.
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "dying_readers.h"
#include "fault_actions.h"
#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/analyzer/trace_file.h"
#include "limpwatch/shm/segment.h"
#include "limpwatch/shm/snapshot.h"
#include "load_client.h"
#include "resource_trend.h"
#include "soak_cluster.h"
#include "soak_options.h"
#include "soak_verdict.h"
#include "soak_clock.h"

namespace limpwatch::soak {
namespace {

constexpr uint64_t kSampleEveryMs = 2000;
constinit std::atomic<bool> g_interrupted{false};

void OnInterrupt(int) { g_interrupted.store(true); }

std::string SelfPath() {
  std::error_code error;
  return std::filesystem::read_symlink("/proc/self/exe", error).string();
}

std::vector<std::string> LimpwatchThreads(pid_t pid) {
  std::vector<std::string> own;
  for (const std::string& name : ThreadNames(pid)) {
    if (IsLimpwatchThreadName(name)) own.push_back(name);
  }
  std::sort(own.begin(), own.end());
  return own;
}

// The drops of the UDP socket bound to 127.0.0.1:`port` (/proc/net/udp's last column).
uint64_t KernelDrops(uint16_t port) {
  std::ifstream table("/proc/net/udp");
  std::string line;
  char wanted[16];
  std::snprintf(wanted, sizeof wanted, "0100007F:%04X", port);
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local;
    fields >> slot >> local;
    if (local != wanted) continue;
    std::string field, last;
    while (fields >> field) last = field;
    return std::strtoull(last.c_str(), nullptr, 10);
  }
  return 0;
}

uint64_t AnalyzerTicks(const std::string& object) {
  std::string error;
  std::unique_ptr<shm::SegmentReader> reader = shm::SegmentReader::Open(object, &error);
  if (!reader) return 0;
  return reader->view().analyzer_health()->ticks.load();
}

// The descriptors of `pid` once they stop changing (the connections the
// load left are being closed).
uint64_t QuietFds(pid_t pid) {
  ResourceSample previous, now;
  SampleProcess(pid, 0, &previous);
  for (int round = 0; round < 50; ++round) {
    SleepMs(200);
    if (!SampleProcess(pid, 0, &now)) break;
    if (now.fds == previous.fds) return uint64_t(now.fds);
    previous = now;
  }
  return uint64_t(previous.fds);
}

class ResourceMonitor {
 public:
  ResourceMonitor(pid_t pid, uint64_t start_ms) : pid_(pid), start_ms_(start_ms) {
    thread_ = std::thread([this] { Run(); });
  }
  ~ResourceMonitor() { Stop(); }
  void Stop() {
    if (running_.exchange(false)) thread_.join();
  }
  std::vector<ResourceSample> samples() {
    std::lock_guard lock(mutex_);
    return samples_;
  }
  bool host_died() const { return host_died_.load(); }

 private:
  void Run() {
    while (running_.load()) {
      ResourceSample sample;
      if (!SampleProcess(pid_, double(NowMs() - start_ms_) / 1000.0, &sample)) {
        host_died_.store(true);
        return;
      }
      {
        std::lock_guard lock(mutex_);
        samples_.push_back(sample);
      }
      for (uint64_t slept = 0; slept < kSampleEveryMs && running_.load(); slept += 100) SleepMs(100);
    }
  }

  pid_t pid_;
  uint64_t start_ms_;
  std::atomic<bool> running_{true};
  std::atomic<bool> host_died_{false};
  std::mutex mutex_;
  std::vector<ResourceSample> samples_;
  std::thread thread_;
};

bool MakeWorkDir(SoakOptions* options, std::string* error) {
  if (options->work_dir.empty()) {
    char pattern[] = "/tmp/limpwatch-soak-XXXXXX";
    if (mkdtemp(pattern) == nullptr) {
      *error = std::string("mkdtemp: ") + std::strerror(errno);
      return false;
    }
    options->work_dir = pattern;
    return true;
  }
  std::error_code failed;
  std::filesystem::create_directories(options->work_dir, failed);
  if (failed) *error = "cannot create " + options->work_dir + ": " + failed.message();
  return !failed;
}

int RunSoak(SoakOptions options) {
  if (options.seed == 0) options.seed = (uint64_t(std::random_device()()) << 32) | std::random_device()();
  std::string error;
  if (!MakeWorkDir(&options, &error)) {
    std::fprintf(stderr, "limpwatch-soak: %s\n", error.c_str());
    return 1;
  }
  std::printf("limpwatch-soak: seed %" PRIu64 " (--seed %" PRIu64 " replays its choices), %" PRIu64
              " s, %u peers, work directory %s\n",
              options.seed, options.seed, options.seconds, options.peers, options.work_dir.c_str());
  std::fflush(stdout);
  std::string actions_path = options.work_dir + "/actions.log";
  std::FILE* actions_log = std::fopen(actions_path.c_str(), "w");
  if (actions_log == nullptr) {
    std::fprintf(stderr, "limpwatch-soak: cannot write %s\n", actions_path.c_str());
    return 1;
  }

  SoakFigures figures;
  figures.seed = options.seed;
  LoadTally load;
  figures.load = &load;
  bool passed = false;
  {
    std::unique_ptr<SoakCluster> cluster = SoakCluster::Start(options, options.work_dir, options.seed, &error);
    if (!cluster || !cluster->WaitUntilServing(20000, &error)) {
      std::fprintf(stderr, "limpwatch-soak: %s\n", error.c_str());
      std::fclose(actions_log);
      return 1;
    }
    pid_t host_pid = cluster->host().pid();
    SleepMs(3000);  // the analyzer's first ticks, with no load yet
    figures.quiet_fds_before = QuietFds(host_pid);
    figures.threads_at_start = LimpwatchThreads(host_pid);

    uint64_t start_ms = NowMs();
    ResourceMonitor monitor(host_pid, start_ms);
    LoadGenerator generator(cluster->endpoint(), options.clients, options.short_threads, options.seconds,
                            options.seed, &load);
    FaultActions faults(cluster.get(), options, options.seed, &load, SelfPath(), actions_log);
    generator.Start();
    faults.RunUntil(start_ms, options.seconds, &g_interrupted);
    figures.run_seconds = double(NowMs() - start_ms) / 1000.0;
    figures.warm_up_seconds = double(options.warm_up_seconds);
    if (g_interrupted.load()) figures.problems.push_back("interrupted: the run was cut short");
    for (const std::string& problem : faults.Settle()) figures.problems.push_back(problem);

    // Still alive and still looking, with every fault undone.
    uint64_t ticks_before = AnalyzerTicks(cluster->host_object());
    SleepMs(3000);
    figures.ticks_in_last_seconds = AnalyzerTicks(cluster->host_object()) - ticks_before;
    figures.threads_at_end = LimpwatchThreads(host_pid);

    generator.Stop();
    figures.quiet_fds_after = QuietFds(host_pid);
    monitor.Stop();
    if (monitor.host_died()) figures.problems.push_back("the host server died during the run");
    figures.resources = monitor.samples();

    // Nothing more reaches the host; two ticks later it has read and counted everything.
    cluster->proxy().Stop();
    SleepMs(2500);
    figures.proxy = cluster->proxy().tally();
    figures.faults = faults.tally();
    figures.kernel_drops = KernelDrops(cluster->host_peer_port());
    for (const shm::SegmentListing& listing : shm::ListSegments()) {
      if (listing.parts.name != cluster->host_name() || listing.parts.pid == host_pid) continue;
      ++(listing.liveness == shm::Liveness::kExited ? figures.children_segments_kept : figures.children_segments_stale);
    }

    std::string tally_text;
    figures.server_stopped_cleanly = cluster->host().Stop(20000, &tally_text, &error);
    if (!figures.server_stopped_cleanly) figures.problems.push_back("stopping the host server: " + error);
    figures.server_tally = ParseServerTally(tally_text);

    std::unique_ptr<shm::SegmentReader> reader = shm::SegmentReader::Open(cluster->host_object(), &error);
    if (reader) {
      shm::TakeSnapshot(*reader, &figures.snapshot);
      figures.snapshot_taken = true;
      figures.alarms_published = reader->view().alarm_ring()->next_sequence.load();
    } else {
      figures.problems.push_back("the host's segment: " + error);
    }
    CountAlarmLines(cluster->alarms_path(), &figures.alarm_lines, &figures.torn_alarm_lines);
    analyzer::Trace trace;
    figures.recording_read = analyzer::ReadTrace(cluster->record_path(), &trace, &error);
    if (!figures.recording_read) figures.problems.push_back(error);
    figures.recorded_ticks = trace.ticks.size();
    figures.recording_problems = trace.problems;

    passed = ReportVerdict(figures);
  }
  std::fclose(actions_log);
  if (options.keep || !passed) {
    std::printf("limpwatch-soak: the work directory stays: %s (actions.log, the servers' logs)\n",
                options.work_dir.c_str());
  } else {
    std::error_code ignored;
    std::filesystem::remove_all(options.work_dir, ignored);
  }
  return passed ? 0 : 1;
}

}  // namespace
}  // namespace limpwatch::soak

int main(int argc, char** argv) {
  using namespace limpwatch::soak;
  if (argc == 3 && std::strcmp(argv[1], "--snapshot-loop") == 0) return SnapshotLoop(argv[2]);
  SoakOptions options;
  options.server_path = LIMPWATCH_SOAK_SERVER_PATH;
  options.cli_path = LIMPWATCH_SOAK_CLI_PATH;
  int exit_status = 0;
  if (!ParseSoakOptions(argc, argv, &options, &exit_status)) return exit_status;
  signal(SIGPIPE, SIG_IGN);
  struct sigaction interrupt{};
  interrupt.sa_handler = OnInterrupt;
  sigaction(SIGINT, &interrupt, nullptr);
  sigaction(SIGTERM, &interrupt, nullptr);
  return RunSoak(std::move(options));
}
