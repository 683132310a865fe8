#include "datagram_forger.h"

#include <cstring>
#include <string>

namespace limpwatch::soak {
namespace {

// Offsets of the fixed header (analyzer/peer_wire.h).
constexpr size_t kMajorOffset = 4;
constexpr size_t kOldestMajorOffset = 6;
constexpr size_t kHeaderSizeOffset = 8;
constexpr size_t kTotalSizeOffset = 10;
constexpr size_t kFeatureCountOffset = 14;
constexpr size_t kFirstMedianOffset = 52;
constexpr size_t kHeaderBytes = 72;
constexpr uint8_t kForgedNodeLength = 11;  // "soak-forged"

std::vector<uint8_t> RandomBytes(size_t size, std::mt19937_64& random) {
  std::vector<uint8_t> bytes(size);
  for (uint8_t& byte : bytes) byte = uint8_t(random());
  return bytes;
}

}  // namespace

std::vector<uint8_t> DatagramForger::Genuine(std::mt19937_64& random, const analyzer::PeerKey* key) const {
  analyzer::PeerSummary summary;
  summary.node = "soak-forged";
  summary.boot_id = random() | 1;
  summary.window = 1 + random() % 1000;
  summary.window_end_unix_ms = 1'700'000'000'000ull + random() % 1'000'000;
  summary.window_ticks = 4;
  summary.tick_ms = 1000;
  summary.io = {1.0f, 2.0f, 0.5f, 0.25f, 4096.0f};
  analyzer::MetricFeatures counts;
  counts.metric = analyzer::Metric::kCount;
  for (uint32_t key_value : {11u, 22u, 33u}) counts.features.push_back({key_value, float(key_value)});
  summary.metrics.push_back(counts);
  std::vector<uint8_t> datagram;
  analyzer::EncodeSummary(summary, key, &datagram);
  return datagram;
}

void DatagramForger::Sign(std::vector<uint8_t>* datagram) const {
  size_t body = datagram->size() - analyzer::kPeerWireTagBytes;
  analyzer::Sha256::Digest tag = key_.hmac().Compute(std::span(*datagram).first(body));
  std::memcpy(datagram->data() + body, tag.data(), analyzer::kPeerWireTagBytes);
}

std::vector<uint8_t> DatagramForger::Forge(analyzer::DecodeError refusal, std::mt19937_64& random) const {
  using analyzer::DecodeError;
  std::vector<uint8_t> datagram = Genuine(random, &key_);
  // The node name starts at header_size (the fixed header, then since wire
  // minor 1 the verdict list); then the first metric's block: id (1), count
  // (2), then {key (4), value (2)}.
  size_t node_at = datagram[kHeaderSizeOffset] | size_t{datagram[kHeaderSizeOffset + 1]} << 8;
  size_t metric_at = node_at + kForgedNodeLength;
  switch (refusal) {
    case DecodeError::kTruncated:
      datagram.resize(kHeaderBytes / 2);
      return datagram;
    case DecodeError::kOversized: {
      std::vector<uint8_t> large = RandomBytes(analyzer::kMaxDatagramBytes + 1 + random() % 400, random);
      std::memcpy(large.data(), "LWPS", 4);
      return large;
    }
    case DecodeError::kBadMagic: {
      std::vector<uint8_t> foreign = RandomBytes(16 + random() % 200, random);
      foreign[0] = 'X';
      return foreign;
    }
    case DecodeError::kForeignVersion:
      datagram[kMajorOffset] = 9;
      datagram[kOldestMajorOffset] = 9;
      return datagram;
    case DecodeError::kBadLength:
      datagram[kTotalSizeOffset] = uint8_t(datagram[kTotalSizeOffset] - 1);  // says one byte less than there is
      return datagram;
    case DecodeError::kBadCount:
      datagram[kFeatureCountOffset] = uint8_t(datagram[kFeatureCountOffset] + 1);
      break;
    case DecodeError::kBadNodeName:
      datagram[node_at] = 0x01;
      break;
    case DecodeError::kBadMetric:
      datagram[metric_at] = 200;
      break;
    case DecodeError::kUnsortedKeys: {
      uint8_t first[4];
      std::memcpy(first, &datagram[metric_at + 3], 4);
      std::memcpy(&datagram[metric_at + 3], &datagram[metric_at + 9], 4);
      std::memcpy(&datagram[metric_at + 9], first, 4);
      break;
    }
    case DecodeError::kNonFiniteValue: {
      uint32_t not_a_number = 0x7fc00000u;
      std::memcpy(&datagram[kFirstMedianOffset], &not_a_number, 4);
      break;
    }
    case DecodeError::kUnauthenticated:
      return Genuine(random, nullptr);
    case DecodeError::kBadAuthentication: {
      std::vector<uint8_t> other_key_bytes = RandomBytes(32, random);
      std::string ignored;
      std::optional<analyzer::PeerKey> other = analyzer::PeerKey::FromBytes(other_key_bytes, &ignored);
      return Genuine(random, &*other);
    }
    default:
      return RandomBytes(64, random);
  }
  Sign(&datagram);
  return datagram;
}

}  // namespace limpwatch::soak
