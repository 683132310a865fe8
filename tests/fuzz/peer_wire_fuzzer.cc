// Fuzz target for the peer summary decoder (libFuzzer's entry point; the
// standalone driver calls the same function when libFuzzer is missing).
//
// Invariants, checked for every input and stopped with a trap when broken:
//   - decoding never crashes or reads out of bounds (the sanitizers watch);
//   - a refusal is one of the decoder's own classes;
//   - an accepted datagram re-encodes (never larger) and decodes again to the
//     same summary, with the authentication the key implies.
// Each input is tried without a key, with the fuzz key, and re-signed with
// the fuzz key, so mutations behind a valid tag reach the body parser too.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <vector>

#include "fuzz_key.h"
#include "limpwatch/analyzer/peer_wire.h"

namespace limpwatch::analyzer::fuzzing {
namespace {

void Require(bool condition, const char* invariant) {
  if (condition) return;
  std::fprintf(stderr, "peer wire fuzzer: invariant broken: %s\n", invariant);
  __builtin_trap();
}

void CheckDecode(std::span<const uint8_t> bytes, const PeerKey* key) {
  DecodeResult first = DecodeSummary(bytes, key);
  if (!first.ok()) {
    Require(first.error >= DecodeError::kTruncated && first.error <= DecodeError::kBadAuthentication,
            "a refusal is one of the decoder's classes");
    return;
  }
  Require(first.decoded.authentication != Authentication::kVerified || key != nullptr, "verified only with a key");
  std::vector<uint8_t> again;
  Require(EncodeSummary(first.decoded.summary, key, &again) == EncodeError::kNone, "a decoded summary re-encodes");
  Require(again.size() <= bytes.size(), "re-encoding is never larger");
  DecodeResult second = DecodeSummary(again, key);
  Require(second.ok(), "the re-encoded summary decodes");
  Require(SameSummary(first.decoded.summary, second.decoded.summary), "and decodes to the same summary");
  Require(second.decoded.authentication == (key != nullptr ? Authentication::kVerified : Authentication::kNone),
          "with the authentication its key implies");
}

// The input with its last 16 bytes replaced by the tag the fuzz key gives
// everything before them.
std::vector<uint8_t> Resigned(std::span<const uint8_t> bytes) {
  std::vector<uint8_t> copy(bytes.begin(), bytes.end());
  if (copy.size() < kPeerWireTagBytes) return copy;
  size_t body = copy.size() - kPeerWireTagBytes;
  Sha256::Digest tag = FuzzKey().hmac().Compute(std::span(copy).first(body));
  std::copy(tag.begin(), tag.begin() + kPeerWireTagBytes, copy.begin() + static_cast<std::ptrdiff_t>(body));
  return copy;
}

}  // namespace
}  // namespace limpwatch::analyzer::fuzzing

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace limpwatch::analyzer::fuzzing;
  std::span<const uint8_t> bytes(data, size);
  CheckDecode(bytes, nullptr);
  CheckDecode(bytes, &FuzzKey());
  std::vector<uint8_t> resigned = Resigned(bytes);
  CheckDecode(resigned, &FuzzKey());
  return 0;
}
