// The open verdicts a summary carries since wire minor 1: their round trip,
// their bounds, and how minor-0 datagrams are read and passed on.
#include <gtest/gtest.h>

#include "limpwatch/analyzer/peer_wire.h"
#include "limpwatch/shm/name_hash.h"
#include "peer/summary_builder.h"

namespace limpwatch::analyzer {
namespace {

using testing::MakeSummary;

std::vector<OpenVerdict> SomeVerdicts(size_t count) {
  std::vector<OpenVerdict> verdicts;
  for (size_t i = 0; i < count; ++i) {
    verdicts.push_back({shm::FunctionNameHash("server" + std::to_string(i)), uint8_t(1 + i % 5), uint8_t(i % 4)});
  }
  return verdicts;
}

TEST(PeerWireVerdicts, TheyRoundTripInOrderWithAndWithoutAKey) {
  std::string error;
  PeerKey key = *PeerKey::FromBytes(std::vector<uint8_t>(32, 0x42), &error);
  for (size_t count : {size_t{0}, size_t{1}, kMaxOpenVerdicts}) {
    PeerSummary summary = MakeSummary({.features = 40, .metrics = 3});
    summary.verdicts = SomeVerdicts(count);
    for (const PeerKey* k : {static_cast<const PeerKey*>(nullptr), static_cast<const PeerKey*>(&key)}) {
      std::vector<uint8_t> bytes;
      ASSERT_EQ(EncodeSummary(summary, k, &bytes), EncodeError::kNone);
      EXPECT_EQ(bytes[5], kPeerWireMinor);
      EXPECT_EQ(bytes[8] | (bytes[9] << 8), kPeerWireHeaderBytes + kPeerWireVerdictListBytes + 12 * count);
      DecodeResult result = DecodeSummary(bytes, k);
      ASSERT_TRUE(result.ok()) << DecodeErrorMessage(result.error);
      EXPECT_TRUE(result.decoded.summary.carries_verdicts);
      EXPECT_EQ(result.decoded.summary.verdicts, summary.verdicts);
    }
  }
}

TEST(PeerWireVerdicts, MoreThanTheBoundAreRefusedByTheEncoder) {
  PeerSummary summary = MakeSummary({.features = 4, .metrics = 1});
  summary.verdicts = SomeVerdicts(kMaxOpenVerdicts + 1);
  std::vector<uint8_t> bytes;
  EXPECT_EQ(EncodeSummary(summary, nullptr, &bytes), EncodeError::kTooManyVerdicts);
  EXPECT_TRUE(bytes.empty());
}

TEST(PeerWireVerdicts, ACountThatOverrunsTheHeaderOrABoundIsABadCount) {
  PeerSummary summary = MakeSummary({.features = 4, .metrics = 1});
  summary.verdicts = SomeVerdicts(2);
  std::vector<uint8_t> bytes;
  ASSERT_EQ(EncodeSummary(summary, nullptr, &bytes), EncodeError::kNone);
  std::vector<uint8_t> overrun = bytes;
  overrun[kPeerWireHeaderBytes] = 3;  // three entries in a header with room for two
  EXPECT_EQ(DecodeSummary(overrun, nullptr).error, DecodeError::kBadCount);
  std::vector<uint8_t> beyond = bytes;
  beyond[kPeerWireHeaderBytes] = kMaxOpenVerdicts + 1;
  EXPECT_EQ(DecodeSummary(beyond, nullptr).error, DecodeError::kBadCount);
  std::vector<uint8_t> no_name = bytes;
  for (size_t i = 0; i < 8; ++i) no_name[kPeerWireHeaderBytes + kPeerWireVerdictListBytes + i] = 0;
  EXPECT_EQ(DecodeSummary(no_name, nullptr).error, DecodeError::kBadCount);  // no name hashes to 0
}

// A minor-0 sender's datagram, as it was written: no verdict list.
std::vector<uint8_t> MinorZeroDatagram(const PeerSummary& summary) {
  PeerSummary old = summary;
  old.verdicts.clear();
  old.carries_verdicts = false;
  std::vector<uint8_t> bytes;
  EXPECT_EQ(EncodeSummary(old, nullptr, &bytes), EncodeError::kNone);
  return bytes;
}

TEST(PeerWireVerdicts, AMinorZeroDatagramIsReadAsCarryingNoVerdictListAndWrittenBackAsItCame) {
  PeerSummary summary = MakeSummary({.features = 20, .metrics = 3});
  std::vector<uint8_t> bytes = MinorZeroDatagram(summary);
  EXPECT_EQ(bytes[5], 0);
  EXPECT_EQ(bytes[8], kPeerWireHeaderBytes);
  DecodeResult result = DecodeSummary(bytes, nullptr);
  ASSERT_TRUE(result.ok()) << DecodeErrorMessage(result.error);
  EXPECT_FALSE(result.decoded.summary.carries_verdicts);
  EXPECT_TRUE(result.decoded.summary.verdicts.empty());
  std::vector<uint8_t> again;
  ASSERT_EQ(EncodeSummary(result.decoded.summary, nullptr, &again), EncodeError::kNone);
  EXPECT_EQ(again, bytes);
  // Such a summary cannot be given verdicts: there is no list to carry them.
  PeerSummary inconsistent = result.decoded.summary;
  inconsistent.verdicts = SomeVerdicts(1);
  EXPECT_EQ(EncodeSummary(inconsistent, nullptr, &again), EncodeError::kTooManyVerdicts);
}

TEST(PeerWireVerdicts, AMinorZeroHeaderRelabelledAsMinorOneIsRefused) {
  // Its header_size ends at the fixed header: a minor-1 header with no room
  // for its verdict list.
  PeerSummary summary = MakeSummary({.node = "zzzz", .features = 20, .metrics = 3});
  std::vector<uint8_t> bytes = MinorZeroDatagram(summary);
  bytes[5] = 1;
  EXPECT_EQ(DecodeSummary(bytes, nullptr).error, DecodeError::kBadCount);
}

}  // namespace
}  // namespace limpwatch::analyzer
