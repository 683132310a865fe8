// What one server tells its peers about one window: the compact summary
// that peer comparison runs on.
//
// A summary carries, per metric, the window's reduced feature vector (the
// functions that matter, keyed by the 32-bit fold of their name hash, so two
// servers built from the same sources agree on keys), the node-local
// invariants that were violated, and the medians of the I/O service times.
// Its wire form (peer_wire.h) fits one UDP datagram for 200 features.
#ifndef LIMPWATCH_ANALYZER_PEER_SUMMARY_H_
#define LIMPWATCH_ANALYZER_PEER_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

namespace limpwatch::analyzer {

// The metrics peers compare. Vector metrics carry one value per function.
enum class Metric : uint8_t {
  kSamples = 0,  // CPU samples per function (seed 000)
  kCount = 1,    // calls per function
  kTime = 2,     // self time per function, ms
};
inline constexpr uint8_t kVectorMetricCount = 3;

// Bits of PeerSummary::invariant_bits: a set bit means the invariant was
// violated in the window (seed 003).
enum InvariantBit : uint32_t {
  kInvariantRequestRate = 1u << 0,  // I_req: request rate dropped by more than alpha
  kInvariantCpu = 1u << 1,          // I_cpu: corr(req, interrupts) < 0
  kInvariantMemory = 1u << 2,       // I_mem: corr(req, memory allocated) < 0
  kInvariantDisk = 1u << 3,         // I_disk: corr(iosize, svctm) < 0
  kInvariantNetwork = 1u << 4,      // network indicator, before peer confirmation
};

struct Feature {
  uint32_t key = 0;    // FoldNameHash(name hash)
  float value = 0.0f;  // the metric summed over the window
};

struct MetricFeatures {
  Metric metric = Metric::kCount;
  std::vector<Feature> features;  // sorted by key, keys unique
};

// Medians over the window's ticks of the per-tick values (seed 001).
struct IoMedians {
  float dread_ms = 0;         // service time of reads on storage files, per call
  float dwrite_ms = 0;        // same for writes
  float nsread_ms = 0;        // time to read a request from a socket, per call
  float ncread_ms = 0;        // client-side network read time, per call
  float request_bytes_per_s = 0;  // socket bytes in + out (seed 003's req)
};

// One server the sending analyzer holds an alarm open against (wire minor
// 1): how the analyzers of a cluster learn which of them agree, so that an
// alarm can say "reported by 4 of 4" on every node (verdict_board.h).
struct OpenVerdict {
  uint64_t server_hash = 0;  // shm::FunctionNameHash of the indicted server's name
  uint8_t resource = 0;      // shm::Resource; a value this reader does not know stands for unknown
  uint8_t kind = 0;          // AlarmKind
  bool operator==(const OpenVerdict&) const = default;
};
inline constexpr size_t kMaxOpenVerdicts = 8;  // the newest ones, when an analyzer holds more

struct PeerSummary {
  std::string node;             // the server's name (at most 47 bytes on the wire)
  uint64_t boot_id = 0;         // random per process start: a restarted peer is a new stream
  uint64_t window = 0;          // window sequence number, increasing per boot_id
  uint64_t window_end_unix_ms = 0;
  uint16_t window_ticks = 0;    // WinSize in ticks
  uint16_t tick_ms = 0;
  uint32_t invariant_bits = 0;  // InvariantBit
  uint32_t flags = 0;           // reserved, 0
  IoMedians io;
  std::vector<MetricFeatures> metrics;
  // The sender's open verdicts, at most kMaxOpenVerdicts. `carries_verdicts`
  // is false for a sender of wire minor 0, whose silence is no verdict.
  std::vector<OpenVerdict> verdicts;
  bool carries_verdicts = true;

  size_t FeatureCount() const {
    size_t count = 0;
    for (const auto& metric : metrics) count += metric.features.size();
    return count;
  }
};

// The 32-bit feature key of a 64-bit function-name hash.
constexpr uint32_t FoldNameHash(uint64_t name_hash) {
  uint32_t folded = static_cast<uint32_t>(name_hash ^ (name_hash >> 32));
  return folded == 0 ? 1 : folded;
}

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_PEER_SUMMARY_H_
