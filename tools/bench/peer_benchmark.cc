// The peer exchange's costs, each next to a baseline measured in the same run:
//   size        bytes per summary for 10 / 50 / 200 features, against the
//               same summary with float32 values (8 bytes per feature)
//   encode      EncodeSummary, without and with the HMAC tag, against a deep
//               copy of the PeerSummary (what producing it in memory costs)
//   decode      DecodeSummary, likewise
//   round trip  A sends a summary to B over loopback, B answers with its own:
//               PeerTransport over io_uring and over plain sockets, against
//               two blocking sockets doing sendto / recvfrom of the same bytes
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>

#include "limpwatch/analyzer/peer_transport.h"
#include "limpwatch/analyzer/peer_wire.h"
#include "peer/loopback.h"
#include "peer/summary_builder.h"

namespace limpwatch::analyzer {
namespace {

PeerSummary BenchSummary(size_t features) {
  return testing::MakeSummary({.node = "pvfs-server-07", .features = features, .metrics = 3});
}

const PeerKey& BenchKey() {
  static const PeerKey key = [] {
    std::string error;
    return *PeerKey::FromBytes(std::vector<uint8_t>(32, 0x6b), &error);
  }();
  return key;
}

void BM_CopySummary(benchmark::State& state) {
  PeerSummary summary = BenchSummary(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    PeerSummary copy = summary;
    benchmark::DoNotOptimize(copy);
  }
}

void BM_Encode(benchmark::State& state) {
  PeerSummary summary = BenchSummary(static_cast<size_t>(state.range(0)));
  const PeerKey* key = state.range(1) ? &BenchKey() : nullptr;
  std::vector<uint8_t> bytes;
  for (auto _ : state) {
    EncodeSummary(summary, key, &bytes);
    benchmark::DoNotOptimize(bytes.data());
  }
  state.counters["bytes"] = static_cast<double>(bytes.size());
}

void BM_Decode(benchmark::State& state) {
  PeerSummary summary = BenchSummary(static_cast<size_t>(state.range(0)));
  const PeerKey* key = state.range(1) ? &BenchKey() : nullptr;
  std::vector<uint8_t> bytes;
  EncodeSummary(summary, key, &bytes);
  for (auto _ : state) {
    DecodeResult result = DecodeSummary(bytes, key);
    if (!result.ok()) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(result);
  }
}

BENCHMARK(BM_CopySummary)->Arg(10)->Arg(50)->Arg(200);
BENCHMARK(BM_Encode)->ArgsProduct({{10, 50, 200}, {0, 1}})->ArgNames({"features", "key"});
BENCHMARK(BM_Decode)->ArgsProduct({{10, 50, 200}, {0, 1}})->ArgNames({"features", "key"});

// One summary each way between two transports on loopback.
void BM_TransportRoundTrip(benchmark::State& state) {
  unsetenv(kIoUringVariable);
  auto preference = state.range(0) ? IoPreference::kAuto : IoPreference::kPlainSockets;
  auto a = testing::OpenTransport(preference);
  auto b = testing::OpenTransport(preference);
  if (!a || !b || !testing::ConnectAll({a.get(), b.get()})) {
    state.SkipWithError("cannot open loopback transports");
    return;
  }
  if (state.range(0) && a->io_path() != IoPath::kIoUring) {
    state.SkipWithError(("io_uring refused: " + a->fallback_reason()).c_str());
    return;
  }
  PeerSummary from_a = BenchSummary(200);
  PeerSummary from_b = BenchSummary(200);
  from_a.node = "a";
  from_b.node = "b";
  for (auto _ : state) {
    ++from_a.window;
    ++from_b.window;
    a->Send(from_a);
    while (b->Poll(std::chrono::seconds(1)).empty()) {
    }
    b->Send(from_b);
    while (a->Poll(std::chrono::seconds(1)).empty()) {
    }
  }
  if (a->counters().TotalRejected() + b->counters().TotalRejected() != 0) state.SkipWithError("rejections");
}

// The floor: the same bytes between two blocking sockets, nothing else.
void BM_RawSocketRoundTrip(benchmark::State& state) {
  std::vector<uint8_t> bytes;
  EncodeSummary(BenchSummary(200), nullptr, &bytes);
  std::vector<uint8_t> buffer(2048);
  int fd_a = ::socket(AF_INET, SOCK_DGRAM, 0), fd_b = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in address_a{}, address_b{};
  address_a.sin_family = address_b.sin_family = AF_INET;
  address_a.sin_addr.s_addr = address_b.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd_a, reinterpret_cast<sockaddr*>(&address_a), sizeof(address_a));
  ::bind(fd_b, reinterpret_cast<sockaddr*>(&address_b), sizeof(address_b));
  socklen_t length = sizeof(address_a);
  ::getsockname(fd_a, reinterpret_cast<sockaddr*>(&address_a), &length);
  length = sizeof(address_b);
  ::getsockname(fd_b, reinterpret_cast<sockaddr*>(&address_b), &length);
  for (auto _ : state) {
    ::sendto(fd_a, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&address_b), sizeof(address_b));
    ::recv(fd_b, buffer.data(), buffer.size(), 0);
    ::sendto(fd_b, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&address_a), sizeof(address_a));
    ::recv(fd_a, buffer.data(), buffer.size(), 0);
  }
  ::close(fd_a);
  ::close(fd_b);
}

// One window's send to 16 peers: io_uring queues the 16 datagrams with one
// system call, plain sockets make 16 sendto calls. Nobody reads (loopback
// drops what overflows the receivers' buffers, after the send succeeded).
void BM_FanOutSend(benchmark::State& state) {
  unsetenv(kIoUringVariable);
  auto sender = testing::OpenTransport(state.range(0) ? IoPreference::kAuto : IoPreference::kPlainSockets);
  std::vector<std::unique_ptr<testing::RawSocket>> receivers;
  std::vector<PeerEndpoint> peers;
  for (int i = 0; i < 16; ++i) {
    receivers.push_back(std::make_unique<testing::RawSocket>());
    peers.push_back(testing::Endpoint("r" + std::to_string(i), receivers.back()->address()));
  }
  std::string error;
  if (!sender || !sender->SetPeers(peers, &error)) {
    state.SkipWithError("cannot open loopback transports");
    return;
  }
  PeerSummary summary = BenchSummary(200);
  for (auto _ : state) {
    ++summary.window;
    sender->Send(summary);
  }
  sender->Poll(std::chrono::nanoseconds(0));
  if (sender->counters().send_errors != 0) state.SkipWithError("send errors");
}

BENCHMARK(BM_TransportRoundTrip)->Arg(1)->Arg(0)->ArgName("io_uring")->UseRealTime();
BENCHMARK(BM_FanOutSend)->Arg(1)->Arg(0)->ArgName("io_uring");
BENCHMARK(BM_RawSocketRoundTrip)->UseRealTime();

void PrintSizes() {
  std::printf("bytes per summary (3 metrics, 14-byte name), bfloat16 values vs float32 values (baseline):\n");
  for (size_t features : {10, 50, 200}) {
    PeerSummary summary = BenchSummary(features);
    size_t plain = EncodedSize(summary, false);
    size_t tagged = EncodedSize(summary, true);
    size_t float32 = plain + features * 2;  // 4-byte values instead of 2
    std::printf("  %3zu features: %4zu bytes, %4zu with tag; float32 values: %4zu (%.0f %%)\n", features, plain,
                tagged, float32, 100.0 * plain / float32);
  }
  std::printf("  most features in one datagram (47-byte name, 3 metrics, tag): %zu\n\n",
              MaxFeaturesThatFit(kMaxNodeNameBytes, 3, true));
}

// Keeps ns per iteration by benchmark name for the closing summary.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& run : runs) {
      ns[run.benchmark_name()] = run.GetAdjustedRealTime();
      cpu_ns[run.benchmark_name()] = run.GetAdjustedCPUTime();
    }
  }
  std::map<std::string, double> ns;      // wall clock: what a waiting peer sees
  std::map<std::string, double> cpu_ns;  // CPU: steadier on a shared machine
};

void PrintSummary(std::map<std::string, double>& ns, std::map<std::string, double>& cpu_ns) {
  std::printf("\nencode / decode CPU ns per summary (baseline: deep copy of the PeerSummary):\n");
  for (int features : {10, 50, 200}) {
    std::string f = std::to_string(features);
    std::printf("  %3d features: copy %6.0f | encode %6.0f, +tag %6.0f | decode %6.0f, +tag %6.0f\n", features,
                cpu_ns["BM_CopySummary/" + f], cpu_ns["BM_Encode/features:" + f + "/key:0"],
                cpu_ns["BM_Encode/features:" + f + "/key:1"], cpu_ns["BM_Decode/features:" + f + "/key:0"],
                cpu_ns["BM_Decode/features:" + f + "/key:1"]);
  }
  double uring = ns["BM_TransportRoundTrip/io_uring:1/real_time"];
  double plain = ns["BM_TransportRoundTrip/io_uring:0/real_time"];
  double raw = ns["BM_RawSocketRoundTrip/real_time"];
  std::printf("\nloopback round trip of a 200-feature summary (wall us), baseline raw blocking sockets %.1f us:\n",
              raw / 1000);
  std::printf("  PeerTransport io_uring      %7.1f us (%.2f x raw; CPU %.1f us)\n", uring / 1000, uring / raw,
              cpu_ns["BM_TransportRoundTrip/io_uring:1/real_time"] / 1000);
  std::printf("  PeerTransport plain sockets %7.1f us (%.2f x raw; CPU %.1f us)\n", plain / 1000, plain / raw,
              cpu_ns["BM_TransportRoundTrip/io_uring:0/real_time"] / 1000);
  std::printf("\none 200-feature summary sent to 16 peers (us, encoding included), wall / CPU:\n");
  std::printf("  io_uring %.1f / %.1f us, plain sockets (baseline) %.1f / %.1f us\n",
              ns["BM_FanOutSend/io_uring:1"] / 1000, cpu_ns["BM_FanOutSend/io_uring:1"] / 1000,
              ns["BM_FanOutSend/io_uring:0"] / 1000, cpu_ns["BM_FanOutSend/io_uring:0"] / 1000);
}

}  // namespace
}  // namespace limpwatch::analyzer

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  limpwatch::analyzer::PrintSizes();
  limpwatch::analyzer::SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  limpwatch::analyzer::PrintSummary(reporter.ns, reporter.cpu_ns);
  benchmark::Shutdown();
  return 0;
}
