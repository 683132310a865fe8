// Every way a datagram can be damaged or forged is refused by the decoder,
// with the class that says what is wrong.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "limpwatch/analyzer/peer_wire.h"
#include "peer/summary_builder.h"

namespace limpwatch::analyzer {
namespace {

using testing::MakeSummary;

// A summary with no open verdict: the fixed header, then an empty verdict list.
constexpr size_t kNodeOffset = kPeerWireHeaderBytes + kPeerWireVerdictListBytes;

PeerKey KeyOf(uint8_t fill) {
  std::string error;
  return *PeerKey::FromBytes(std::vector<uint8_t>(32, fill), &error);
}

class MalformedDatagram : public ::testing::Test {
 protected:
  void SetUp() override {
    summary_ = MakeSummary({.node = "server7", .features = 30, .metrics = 3});
    ASSERT_EQ(EncodeSummary(summary_, nullptr, &plain_), EncodeError::kNone);
    ASSERT_EQ(EncodeSummary(summary_, &key_, &signed_), EncodeError::kNone);
  }

  // Where the first metric's section starts, and its first feature.
  size_t MetricOffset() const { return kNodeOffset + summary_.node.size(); }
  size_t FeatureOffset(size_t index) const { return MetricOffset() + kPeerWireBytesPerMetric + 6 * index; }

  DecodeError Decode(const std::vector<uint8_t>& bytes, const PeerKey* key = nullptr) const {
    return DecodeSummary(bytes, key).error;
  }

  // Recomputes the tag, as a sender holding the key would.
  void Resign(std::vector<uint8_t>* bytes) const {
    size_t body = bytes->size() - kPeerWireTagBytes;
    Sha256::Digest tag = key_.hmac().Compute(std::span(*bytes).first(body));
    std::copy(tag.begin(), tag.begin() + kPeerWireTagBytes, bytes->begin() + static_cast<std::ptrdiff_t>(body));
  }

  static void Put16(std::vector<uint8_t>* bytes, size_t offset, uint16_t value) {
    (*bytes)[offset] = static_cast<uint8_t>(value);
    (*bytes)[offset + 1] = static_cast<uint8_t>(value >> 8);
  }

  PeerSummary summary_;
  PeerKey key_ = KeyOf(0x5A);
  std::vector<uint8_t> plain_;
  std::vector<uint8_t> signed_;
};

TEST_F(MalformedDatagram, EveryTruncationIsTruncated) {
  for (const auto* bytes : {&plain_, &signed_}) {
    for (size_t length = 0; length < bytes->size(); ++length) {
      std::vector<uint8_t> cut(bytes->begin(), bytes->begin() + static_cast<std::ptrdiff_t>(length));
      EXPECT_EQ(Decode(cut, bytes == &signed_ ? &key_ : nullptr), DecodeError::kTruncated) << "length " << length;
    }
  }
}

TEST_F(MalformedDatagram, LongerThanAnySummaryIsOversized) {
  std::vector<uint8_t> bytes = plain_;
  bytes.resize(kMaxDatagramBytes + 1, 0);
  EXPECT_EQ(Decode(bytes), DecodeError::kOversized);
  bytes.resize(65507, 0);
  EXPECT_EQ(Decode(bytes), DecodeError::kOversized);
}

TEST_F(MalformedDatagram, EveryFlippedByteOfAnAuthenticatedDatagramIsRefused) {
  std::map<DecodeError, int> classes;
  for (size_t offset = 0; offset < signed_.size(); ++offset) {
    for (uint8_t mask : {0x01, 0x80, 0xFF}) {
      std::vector<uint8_t> bytes = signed_;
      bytes[offset] ^= mask;
      DecodeError error = Decode(bytes, &key_);
      ASSERT_NE(error, DecodeError::kNone) << "offset " << offset << " mask " << int(mask);
      ++classes[error];
      if (offset < 4) {
        EXPECT_EQ(error, DecodeError::kBadMagic) << offset;
      }
      if (offset >= kPeerWireHeaderBytes) {
        EXPECT_EQ(error, DecodeError::kBadAuthentication) << offset;
      }
    }
  }
  // Tag kind 1 -> 0 is a datagram without a tag, which a keyed receiver refuses.
  std::vector<uint8_t> untagged = signed_;
  untagged[7] = 0;
  EXPECT_EQ(Decode(untagged, &key_), DecodeError::kUnauthenticated);
  EXPECT_GE(classes.size(), 4u);
}

TEST_F(MalformedDatagram, FlippedBytesWithoutAKeyNeverCrashAndDecodeConsistently) {
  size_t refused = 0;
  for (size_t offset = 0; offset < plain_.size(); ++offset) {
    std::vector<uint8_t> bytes = plain_;
    bytes[offset] ^= 0xFF;
    DecodeResult result = DecodeSummary(bytes, nullptr);
    if (!result.ok()) {
      ++refused;
      continue;
    }
    std::vector<uint8_t> again;
    ASSERT_EQ(EncodeSummary(result.decoded.summary, nullptr, &again), EncodeError::kNone) << offset;
    DecodeResult second = DecodeSummary(again, nullptr);
    ASSERT_TRUE(second.ok()) << offset;
    EXPECT_TRUE(SameSummary(result.decoded.summary, second.decoded.summary)) << offset;
  }
  // Everything before the node name but the minor version, the IDs and
  // times is structural.
  EXPECT_GT(refused, 20u);
}

TEST_F(MalformedDatagram, WrongMagicIsBadMagic) {
  std::vector<uint8_t> bytes = plain_;
  bytes[3] = 'X';
  EXPECT_EQ(Decode(bytes), DecodeError::kBadMagic);
  EXPECT_EQ(Decode({'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'}), DecodeError::kBadMagic);
  EXPECT_EQ(Decode({'G', 'E'}), DecodeError::kBadMagic);
  EXPECT_EQ(Decode({'L', 'W'}), DecodeError::kTruncated);
  EXPECT_EQ(Decode({}), DecodeError::kTruncated);
}

TEST_F(MalformedDatagram, NextMajorVersionIsForeignEvenWhenSigned) {
  std::vector<uint8_t> bytes = signed_;
  bytes[4] = kPeerWireMajor + 1;
  bytes[6] = kPeerWireMajor + 1;
  Resign(&bytes);
  EXPECT_EQ(Decode(bytes, &key_), DecodeError::kForeignVersion);
}

TEST_F(MalformedDatagram, CountsThatOverrunTheDatagramAreBadCounts) {
  std::vector<uint8_t> bytes = plain_;
  Put16(&bytes, 14, 0xFFFF);  // feature_count
  EXPECT_EQ(Decode(bytes), DecodeError::kBadCount);
  bytes = plain_;
  bytes[13] = 0xFF;  // metric_count
  EXPECT_EQ(Decode(bytes), DecodeError::kBadCount);
  bytes = plain_;
  bytes[12] = 0xFF;  // node_length
  EXPECT_EQ(Decode(bytes), DecodeError::kBadCount);
  // Header and sizes consistent, but the first metric claims one feature
  // more than it has: it overruns into the next metric's share.
  bytes = plain_;
  Put16(&bytes, MetricOffset() + 1, static_cast<uint16_t>(summary_.metrics[0].features.size() + 1));
  DecodeError error = Decode(bytes);
  EXPECT_TRUE(IsMalformed(error)) << DecodeErrorName(error);
  // A metric count the datagram could hold only without its features.
  bytes = plain_;
  Put16(&bytes, MetricOffset() + 1, 0xFFFF);
  EXPECT_EQ(Decode(bytes), DecodeError::kBadCount);
}

TEST_F(MalformedDatagram, SizeFieldsThatDisagreeAreBadLengths) {
  std::vector<uint8_t> bytes = plain_;
  bytes.push_back(0);  // a trailing byte total_size does not count
  EXPECT_EQ(Decode(bytes), DecodeError::kBadLength);
  bytes = plain_;
  bytes[8] = kPeerWireHeaderBytes - 1;  // header_size below the fixed header
  EXPECT_EQ(Decode(bytes), DecodeError::kBadLength);
  bytes = plain_;
  Put16(&bytes, 8, static_cast<uint16_t>(bytes.size() + 1));  // header beyond the datagram
  EXPECT_EQ(Decode(bytes), DecodeError::kBadLength);
}

TEST_F(MalformedDatagram, DuplicatedOrUnsortedKeysAreRefusedEvenWhenSigned) {
  std::vector<uint8_t> bytes = signed_;
  std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(FeatureOffset(0)), 4,
              bytes.begin() + static_cast<std::ptrdiff_t>(FeatureOffset(1)));
  Resign(&bytes);
  EXPECT_EQ(Decode(bytes, &key_), DecodeError::kUnsortedKeys);

  bytes = signed_;
  std::swap_ranges(bytes.begin() + static_cast<std::ptrdiff_t>(FeatureOffset(0)),
                   bytes.begin() + static_cast<std::ptrdiff_t>(FeatureOffset(0) + 4),
                   bytes.begin() + static_cast<std::ptrdiff_t>(FeatureOffset(1)));
  Resign(&bytes);
  EXPECT_EQ(Decode(bytes, &key_), DecodeError::kUnsortedKeys);
}

TEST_F(MalformedDatagram, NonFiniteValuesAreRefused) {
  for (uint16_t pattern : {0x7FC0, 0x7F80, 0xFF80, 0xFFFF}) {
    std::vector<uint8_t> bytes = plain_;
    Put16(&bytes, FeatureOffset(2) + 4, pattern);
    EXPECT_EQ(Decode(bytes), DecodeError::kNonFiniteValue) << std::hex << pattern;
  }
  std::vector<uint8_t> bytes = plain_;
  bytes[52 + 3] = 0x7F;  // dread_ms = NaN (0x7FC00000)
  bytes[52 + 2] = 0xC0;
  bytes[52 + 1] = 0;
  bytes[52] = 0;
  EXPECT_EQ(Decode(bytes), DecodeError::kNonFiniteValue);
}

TEST_F(MalformedDatagram, RepeatedOrUnknownMetricsAreBadMetrics) {
  std::vector<uint8_t> bytes = plain_;
  size_t second_metric = FeatureOffset(summary_.metrics[0].features.size());
  bytes[second_metric] = bytes[MetricOffset()];
  EXPECT_EQ(Decode(bytes), DecodeError::kBadMetric);
  bytes = plain_;
  bytes[MetricOffset()] = 9;
  EXPECT_EQ(Decode(bytes), DecodeError::kBadMetric);
}

TEST_F(MalformedDatagram, ControlCharactersOrAnEmptyNameAreBadNodeNames) {
  std::vector<uint8_t> bytes = plain_;
  bytes[kNodeOffset + 2] = '\n';
  EXPECT_EQ(Decode(bytes), DecodeError::kBadNodeName);
  bytes[kNodeOffset + 2] = 0x80;
  EXPECT_EQ(Decode(bytes), DecodeError::kBadNodeName);
}

TEST_F(MalformedDatagram, AuthenticationClasses) {
  PeerKey other = KeyOf(0x5B);
  EXPECT_EQ(Decode(signed_, &other), DecodeError::kBadAuthentication);  // wrong key
  EXPECT_EQ(Decode(plain_, &key_), DecodeError::kUnauthenticated);      // no tag, key configured

  DecodeResult unverified = DecodeSummary(signed_, nullptr);  // tag, no key: decoded, flagged
  ASSERT_TRUE(unverified.ok());
  EXPECT_EQ(unverified.decoded.authentication, Authentication::kUnverified);
  EXPECT_TRUE(SameSummary(unverified.decoded.summary, DecodeSummary(plain_, nullptr).decoded.summary));

  std::vector<uint8_t> bytes = signed_;
  bytes[7] = 2;  // a tag kind this reader does not know
  EXPECT_EQ(Decode(bytes, &key_), DecodeError::kBadAuthentication);
  EXPECT_EQ(Decode(bytes, nullptr), DecodeError::kBadAuthentication);

  // Downgrade: the tag stripped and the datagram relabelled as untagged.
  bytes = signed_;
  bytes.resize(bytes.size() - kPeerWireTagBytes);
  bytes[7] = 0;
  Put16(&bytes, 10, static_cast<uint16_t>(bytes.size()));
  EXPECT_EQ(Decode(bytes, &key_), DecodeError::kUnauthenticated);
  EXPECT_EQ(Decode(bytes, nullptr), DecodeError::kNone);

  // A tag kind with no room for its tag.
  bytes.assign(signed_.begin(), signed_.begin() + kPeerWireHeaderBytes + 4);
  Put16(&bytes, 10, static_cast<uint16_t>(bytes.size()));
  EXPECT_EQ(Decode(bytes, &key_), DecodeError::kBadLength);
}

TEST(DecodeErrorText, EveryClassHasANameAndAOneLineMessage) {
  std::set<std::string> names;
  for (size_t i = 0; i < kDecodeErrorCount; ++i) {
    auto error = static_cast<DecodeError>(i);
    std::string name = DecodeErrorName(error);
    std::string message = DecodeErrorMessage(error);
    EXPECT_NE(name, "unknown_error") << i;
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_FALSE(message.empty());
    EXPECT_EQ(message.find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace limpwatch::analyzer
