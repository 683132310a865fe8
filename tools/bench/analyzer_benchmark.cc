// The analyzer's costs, each next to what it is judged against:
//   - peer comparison of one window for N = 10, 100, 1,000 servers with
//     F = 200 features each (target: <= 10 ms at N = 1,000 on one core),
//     without and with a manifest whose idle functions are left out;
//   - bytes per summary on the wire;
//   - analyzer CPU per server per tick on a live segment, as a share of the
//     tick (target: <= 1 % of a core);
//   - the service thread's node metrics sample (once a second) and, within
//     it, the walk over the process's TCP connections, in a process holding
//     what a storage server holds: 8 served and 8 opened loopback
//     connections, 2 listeners and 200 open files (target: the service
//     thread at <= 0.3 % of a core);
//   - robust PCA of a 2,000 x 200 matrix (seed 004's requests x methods;
//     target: <= 50 ms on one core), against the full SVD of the same
//     matrix, which is one iteration's work without the tracked subspace.
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "limpwatch/analyzer/analyzer_loop.h"
#include "limpwatch/analyzer/cluster_diagnoser.h"
#include "limpwatch/analyzer/node_metrics.h"
#include "limpwatch/analyzer/peer_wire.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "limpwatch/analyzer/robust_pca.h"
#include "limpwatch/analyzer/tcp_loss_counters.h"
#include "limpwatch/shm/name_hash.h"
#include "limpwatch/shm/segment.h"

namespace {

using namespace limpwatch;

constexpr int kFeatures = 200;

std::string FunctionName(int key) { return "function_" + std::to_string(key); }
uint32_t KeyOf(int key) { return analyzer::FoldNameHash(shm::FunctionNameHash(FunctionName(key))); }

std::vector<analyzer::PeerSummary> MakeWindow(int servers, uint64_t window, std::mt19937& random) {
  std::uniform_real_distribution<float> noise(0.9f, 1.1f);
  std::vector<analyzer::PeerSummary> summaries;
  for (int server = 0; server < servers; ++server) {
    analyzer::PeerSummary summary;
    summary.node = "server" + std::to_string(server);
    summary.window = window;
    summary.io.dread_ms = 0.5f * noise(random);
    summary.io.dwrite_ms = 0.8f * noise(random);
    summary.io.nsread_ms = 0.05f * noise(random);
    // 100 sampled functions, 50 timed ones for count and for time: 200 features.
    const std::pair<analyzer::Metric, int> layout[] = {
        {analyzer::Metric::kSamples, 100}, {analyzer::Metric::kCount, 50}, {analyzer::Metric::kTime, 50}};
    for (auto [metric, count] : layout) {
      analyzer::MetricFeatures features;
      features.metric = metric;
      for (int key = 1; key <= count; ++key) features.features.push_back({KeyOf(key), 100.0f * key * noise(random)});
      std::sort(features.features.begin(), features.features.end(),
                [](const analyzer::Feature& a, const analyzer::Feature& b) { return a.key < b.key; });
      summary.metrics.push_back(std::move(features));
    }
    summaries.push_back(std::move(summary));
  }
  return summaries;
}

void BM_PeerComparison(benchmark::State& state) {
  int servers = int(state.range(0));
  bool idle_rules = state.range(1) != 0;
  std::mt19937 random(7);
  analyzer::AnalyzerConfig config;
  // Every tenth function is a thread's wait for work.
  analyzer::ResourceManifest manifest;
  analyzer::NameBook names;
  for (int key = 1; key <= 100; ++key) {
    names.Add(shm::FunctionNameHash(FunctionName(key)), FunctionName(key));
    if (idle_rules && key % 10 == 0) manifest.AddIdleRule(FunctionName(key));
  }
  analyzer::ClusterDiagnoser diagnoser(config, {}, manifest, &names, "bench");
  diagnoser.KeepResults(false);
  uint64_t window = 1;
  std::vector<std::vector<analyzer::PeerSummary>> windows;
  for (int index = 0; index < 8; ++index) windows.push_back(MakeWindow(servers, 0, random));
  for (auto _ : state) {
    state.PauseTiming();
    for (auto summary : windows[window % windows.size()]) {
      summary.window = window;
      diagnoser.Add(summary);
    }
    state.ResumeTiming();
    benchmark::DoNotOptimize(diagnoser.Analyze(window, window * 1000));
    ++window;
  }
  state.counters["servers"] = servers;
  state.counters["features"] = kFeatures;
  state.counters["idle_rules"] = idle_rules;
}
BENCHMARK(BM_PeerComparison)
    ->ArgsProduct({{10, 100, 1000}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime();

void BM_SummaryEncoding(benchmark::State& state) {
  std::mt19937 random(7);
  analyzer::PeerSummary summary = MakeWindow(1, 1, random).front();
  std::vector<uint8_t> bytes;
  for (auto _ : state) {
    analyzer::EncodeSummary(summary, nullptr, &bytes);
    benchmark::DoNotOptimize(bytes.data());
  }
  state.counters["bytes"] = double(bytes.size());
  state.counters["features"] = double(summary.FeatureCount());
}
BENCHMARK(BM_SummaryEncoding);

// A segment shaped like a PVFS server's: 5 threads, 600 active functions.
class BusySegment {
 public:
  BusySegment() {
    shm::OwnerInfo owner;
    owner.name = "analyzer-bench";
    owner.program = "analyzer_benchmark";
    owner.pid = getpid();
    std::string error;
    writer_ = shm::SegmentWriter::Create(shm::SegmentObjectName("analyzer-bench", getpid()), shm::Geometry{}, owner,
                                         &error);
    if (!writer_) return;
    const shm::SegmentView& view = writer_->view();
    view.header()->next_function_id.store(kFunctions);
    for (uint32_t id = 0; id < kFunctions; ++id) {
      shm::SymbolEntry& symbol = view.symbols()[id];
      std::string name = "pvfs_function_" + std::to_string(id);
      std::snprintf(symbol.name, sizeof symbol.name, "%s", name.c_str());
      symbol.name_length = uint32_t(name.size());
      symbol.name_hash = shm::FunctionNameHash(name);
      symbol.state.store(uint32_t(shm::SymbolState::kResolved));
    }
    for (uint32_t slot = 0; slot < 5; ++slot) view.slot(slot)->state.store(uint32_t(shm::SlotState::kActive));
  }
  ~BusySegment() {
    if (writer_) writer_->Remove();
  }
  // What a second of server work adds to the counters.
  void Advance() {
    const shm::SegmentView& view = writer_->view();
    for (uint32_t slot = 0; slot < 5; ++slot) {
      for (uint32_t id = 0; id < kFunctions; ++id) {
        view.counters(slot)[id].calls.fetch_add(100 + id % 17);
        view.counters(slot)[id].self_ticks.fetch_add(1000000 + id * 997);
      }
    }
  }
  const shm::SegmentView& view() const { return writer_->view(); }
  bool ok() const { return writer_ != nullptr; }

 private:
  static constexpr uint32_t kFunctions = 600;
  std::unique_ptr<shm::SegmentWriter> writer_;
};

double ThreadCpuNs() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return double(now.tv_sec) * 1e9 + double(now.tv_nsec);
}

void BM_AnalyzerTick(benchmark::State& state) {
  BusySegment segment;
  if (!segment.ok()) {
    state.SkipWithError("cannot create a segment");
    return;
  }
  analyzer::AnalyzerSetup setup;
  setup.node = "analyzer-bench";
  setup.log = [](const std::string&) {};
  analyzer::AnalyzerLoop loop(std::move(setup));
  double cpu_ns = 0;
  int64_t ticks = 0;
  for (auto _ : state) {
    state.PauseTiming();
    segment.Advance();
    state.ResumeTiming();
    double before = ThreadCpuNs();
    loop.Tick(segment.view(), "bench", true);
    cpu_ns += ThreadCpuNs() - before;
    ++ticks;
  }
  double per_tick_ms = cpu_ns / double(ticks) / 1e6;
  state.counters["cpu_ms_per_tick"] = per_tick_ms;
  state.counters["core_percent_at_1s_ticks"] = per_tick_ms / 1000.0 * 100.0;
}
BENCHMARK(BM_AnalyzerTick)->Iterations(200)->Unit(benchmark::kMicrosecond);

// What a storage server holds open while it serves: listeners, the
// connections its clients opened to it, those it opened to its peers, and
// its data files.
class ServerLikeDescriptors {
 public:
  ServerLikeDescriptors(int served, int opened, int files) {
    int own_listener = Listen();
    int peer_listener = Listen();
    for (int i = 0; i < served; ++i) Connect(own_listener);
    for (int i = 0; i < opened; ++i) Connect(peer_listener);
    for (int i = 0; i < files; ++i) {
      int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
      if (fd >= 0) fds_.push_back(fd);
    }
  }
  ~ServerLikeDescriptors() {
    for (int fd : fds_) close(fd);
  }

 private:
  int Listen() {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
    listen(fd, 64);
    fds_.push_back(fd);
    return fd;
  }
  void Connect(int listener) {
    sockaddr_in address{};
    socklen_t length = sizeof address;
    getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
    int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (client < 0) return;
    fds_.push_back(client);
    if (connect(client, reinterpret_cast<sockaddr*>(&address), length) != 0) return;
    int accepted = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (accepted < 0) return;
    fds_.push_back(accepted);
    // One byte from the client to the server: the connection has moved data.
    char byte = 'x';
    [[maybe_unused]] bool delivered = write(client, &byte, 1) == 1 && read(accepted, &byte, 1) == 1;
  }
  std::vector<int> fds_;
};

void ReportCpuPerCall(benchmark::State& state, double cpu_ns, int64_t calls, double calls_per_second) {
  double per_call_us = cpu_ns / double(calls) / 1e3;
  state.counters["cpu_us_per_call"] = per_call_us;
  state.counters["core_percent"] = per_call_us * calls_per_second / 1e6 * 100.0;
}

void BM_TcpLossCountersUpdate(benchmark::State& state) {
  ServerLikeDescriptors descriptors(8, 8, 200);
  analyzer::TcpLossCounters counters;
  double cpu_ns = 0;
  int64_t calls = 0;
  for (auto _ : state) {
    double before = ThreadCpuNs();
    counters.Update();
    cpu_ns += ThreadCpuNs() - before;
    ++calls;
  }
  state.counters["tcp_sockets"] = double(counters.sockets());
  ReportCpuPerCall(state, cpu_ns, calls, 1.0);
}
BENCHMARK(BM_TcpLossCountersUpdate)->Iterations(400)->Unit(benchmark::kMicrosecond);

void BM_NodeMetricsSample(benchmark::State& state) {
  ServerLikeDescriptors descriptors(8, 8, 200);
  analyzer::NodeMetricsSampler sampler(".");
  shm::NodeMetricsRecord record{};
  std::vector<std::string> problems;
  double cpu_ns = 0;
  int64_t calls = 0;
  for (auto _ : state) {
    double before = ThreadCpuNs();
    sampler.SampleInto(&record, &problems);
    cpu_ns += ThreadCpuNs() - before;
    ++calls;
    problems.clear();
  }
  ReportCpuPerCall(state, cpu_ns, calls, 1.0);
}
BENCHMARK(BM_NodeMetricsSample)->Iterations(400)->Unit(benchmark::kMicrosecond);

// Rank 5 with `noise` (relative, per entry), like request latencies driven
// by a few shared causes, and 2 % of the entries 3x off, like slow replicas.
Eigen::MatrixXd RequestLatencies(double noise) {
  std::mt19937_64 random(7);
  std::normal_distribution<double> normal;
  std::bernoulli_distribution slow(0.02);
  Eigen::MatrixXd causes(2000, 5), weights(5, 200);
  for (Eigen::Index i = 0; i < causes.size(); ++i) causes.data()[i] = 1 + std::abs(normal(random));
  for (Eigen::Index i = 0; i < weights.size(); ++i) weights.data()[i] = std::abs(normal(random));
  Eigen::MatrixXd matrix = causes * weights;
  for (Eigen::Index i = 0; i < matrix.size(); ++i) {
    matrix.data()[i] *= (1 + noise * normal(random)) * (slow(random) ? 3 : 1);
  }
  return matrix;
}

void BM_RobustPca2000x200(benchmark::State& state) {
  Eigen::MatrixXd matrix = RequestLatencies(double(state.range(0)) / 100);
  analyzer::RobustPca result;
  for (auto _ : state) {
    result = analyzer::DecomposeRobustPca(matrix);
    benchmark::DoNotOptimize(result.low_rank.data());
  }
  state.counters["iterations"] = result.iterations;
  state.counters["rank"] = result.rank;
  state.counters["converged"] = result.converged;
}
// The argument: the noise in % (exact PCP fits noise into the low-rank
// part, whose rank, and each iteration's cost, grow with it).
BENCHMARK(BM_RobustPca2000x200)->Arg(0)->Arg(1)->Arg(5)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

void BM_FullSvd2000x200(benchmark::State& state) {
  Eigen::MatrixXd matrix = RequestLatencies(0.05);
  for (auto _ : state) {
    Eigen::BDCSVD<Eigen::MatrixXd> svd(matrix, Eigen::ComputeThinU | Eigen::ComputeThinV);
    benchmark::DoNotOptimize(svd.singularValues().data());
  }
}
BENCHMARK(BM_FullSvd2000x200)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
