// The peer summary wire format: round trips, value precision, size, the
// encoder's refusals and version compatibility.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <random>

#include "limpwatch/analyzer/bfloat16.h"
#include "limpwatch/analyzer/peer_wire.h"
#include "peer/summary_builder.h"

namespace limpwatch::analyzer {
namespace {

using testing::MakeSummary;
using testing::SummaryShape;

PeerKey TestKey() {
  std::string error;
  std::vector<uint8_t> bytes(32, 0x42);
  return *PeerKey::FromBytes(bytes, &error);
}

// Every field exact, except feature values: within the documented bfloat16
// precision of the original.
void ExpectSameWithinWirePrecision(const PeerSummary& original, const PeerSummary& decoded) {
  EXPECT_EQ(decoded.node, original.node.substr(0, kMaxNodeNameBytes));
  EXPECT_EQ(decoded.boot_id, original.boot_id);
  EXPECT_EQ(decoded.window, original.window);
  EXPECT_EQ(decoded.window_end_unix_ms, original.window_end_unix_ms);
  EXPECT_EQ(decoded.window_ticks, original.window_ticks);
  EXPECT_EQ(decoded.tick_ms, original.tick_ms);
  EXPECT_EQ(decoded.invariant_bits, original.invariant_bits);
  EXPECT_EQ(decoded.flags, original.flags);
  EXPECT_EQ(decoded.io.dread_ms, original.io.dread_ms);
  EXPECT_EQ(decoded.io.dwrite_ms, original.io.dwrite_ms);
  EXPECT_EQ(decoded.io.nsread_ms, original.io.nsread_ms);
  EXPECT_EQ(decoded.io.ncread_ms, original.io.ncread_ms);
  EXPECT_EQ(decoded.io.request_bytes_per_s, original.io.request_bytes_per_s);
  ASSERT_EQ(decoded.metrics.size(), original.metrics.size());
  for (size_t m = 0; m < original.metrics.size(); ++m) {
    EXPECT_EQ(decoded.metrics[m].metric, original.metrics[m].metric);
    ASSERT_EQ(decoded.metrics[m].features.size(), original.metrics[m].features.size());
    for (size_t i = 0; i < original.metrics[m].features.size(); ++i) {
      const Feature& want = original.metrics[m].features[i];
      const Feature& got = decoded.metrics[m].features[i];
      EXPECT_EQ(got.key, want.key);
      EXPECT_LE(std::fabs(double{got.value} - double{want.value}), kBfloat16RelativeError * std::fabs(want.value))
          << "metric " << m << " feature " << i << ": " << want.value << " became " << got.value;
    }
  }
}

DecodedSummary RoundTrip(const PeerSummary& summary, const PeerKey* key) {
  std::vector<uint8_t> bytes;
  EXPECT_EQ(EncodeSummary(summary, key, &bytes), EncodeError::kNone);
  EXPECT_EQ(bytes.size(), EncodedSize(summary, key != nullptr));
  DecodeResult result = DecodeSummary(bytes, key);
  EXPECT_EQ(result.error, DecodeError::kNone) << DecodeErrorMessage(result.error);
  return result.decoded;
}

struct RoundTripCase {
  const char* label;
  SummaryShape shape;
};

class PeerWireRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(PeerWireRoundTrip, WithoutKey) {
  PeerSummary summary = MakeSummary(GetParam().shape);
  DecodedSummary decoded = RoundTrip(summary, nullptr);
  EXPECT_EQ(decoded.authentication, Authentication::kNone);
  ExpectSameWithinWirePrecision(summary, decoded.summary);
}

TEST_P(PeerWireRoundTrip, WithKey) {
  PeerKey key = TestKey();
  PeerSummary summary = MakeSummary(GetParam().shape);
  DecodedSummary decoded = RoundTrip(summary, &key);
  EXPECT_EQ(decoded.authentication, Authentication::kVerified);
  ExpectSameWithinWirePrecision(summary, decoded.summary);
}

TEST_P(PeerWireRoundTrip, DecodedSummaryReencodesToTheSameBytes) {
  PeerSummary summary = MakeSummary(GetParam().shape);
  std::vector<uint8_t> first;
  std::vector<uint8_t> second;
  ASSERT_EQ(EncodeSummary(summary, nullptr, &first), EncodeError::kNone);
  DecodeResult decoded = DecodeSummary(first, nullptr);
  ASSERT_TRUE(decoded.ok());
  ASSERT_EQ(EncodeSummary(decoded.decoded.summary, nullptr, &second), EncodeError::kNone);
  EXPECT_EQ(first, second);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, PeerWireRoundTrip,
    ::testing::Values(RoundTripCase{"no_metrics", {.features = 0, .metrics = 0}},
                      RoundTripCase{"empty_metrics", {.features = 0, .metrics = 3}},
                      RoundTripCase{"one_feature", {.features = 1, .metrics = 1}},
                      RoundTripCase{"ten_features_two_metrics", {.features = 10, .metrics = 2, .seed = 2}},
                      RoundTripCase{"two_hundred_features", {.features = 200, .metrics = 3, .seed = 3}},
                      RoundTripCase{"long_name_truncated",
                                    {.node = "pvfs-server-with-a-very-long-host-name.rack-17.example.org",
                                     .features = 200,
                                     .metrics = 3,
                                     .seed = 4}},
                      RoundTripCase{"largest_numbers", {.boot_id = ~0ull, .window = ~0ull, .seed = 5}}),
    [](const auto& info) { return std::string(info.param.label); });

TEST(PeerWire, LongNameIsCutToTheWireLimit) {
  PeerSummary summary = MakeSummary({.node = std::string(100, 'n'), .features = 3});
  DecodedSummary decoded = RoundTrip(summary, nullptr);
  EXPECT_EQ(decoded.summary.node, std::string(kMaxNodeNameBytes, 'n'));
}

TEST(PeerWire, TwoHundredFeaturesFitOneDatagramOf1400Bytes) {
  PeerKey key = TestKey();
  // The worst case: the longest name, all three metrics, a tag.
  PeerSummary summary = MakeSummary({.node = std::string(kMaxNodeNameBytes, 'x'), .features = 200, .metrics = 3});
  std::vector<uint8_t> bytes;
  ASSERT_EQ(EncodeSummary(summary, &key, &bytes), EncodeError::kNone);
  std::printf("200-feature summary: %zu bytes with a %zu-byte name, 3 metrics and a tag (target <= 1400)\n",
              bytes.size(), kMaxNodeNameBytes);
  EXPECT_LE(bytes.size(), 1400u);
  EXPECT_EQ(bytes.size(), kPeerWireHeaderBytes + kPeerWireVerdictListBytes + kMaxNodeNameBytes +
                              3 * kPeerWireBytesPerMetric + 200 * kPeerWireBytesPerFeature + kPeerWireTagBytes);
  // And with a full verdict list, they still fit one datagram.
  summary.verdicts.assign(kMaxOpenVerdicts, OpenVerdict{.server_hash = 7, .resource = 1, .kind = 0});
  ASSERT_EQ(EncodeSummary(summary, &key, &bytes), EncodeError::kNone);
  EXPECT_LE(bytes.size(), kMaxDatagramBytes);
}

TEST(PeerWire, TheLargestSummaryThatFitsIsEncodedAndOneMoreFeatureIsRefused) {
  PeerKey key = TestKey();
  std::string node(kMaxNodeNameBytes, 'x');
  size_t most = MaxFeaturesThatFit(node.size(), 3, true);
  EXPECT_GE(most, 200u);
  std::vector<uint8_t> bytes;
  // The room is counted with a full verdict list, whatever the analyzer holds.
  std::vector<OpenVerdict> full(kMaxOpenVerdicts, OpenVerdict{.server_hash = 7, .resource = 1, .kind = 0});
  PeerSummary fits = MakeSummary({.node = node, .features = most, .metrics = 3});
  fits.verdicts = full;
  ASSERT_EQ(EncodeSummary(fits, &key, &bytes), EncodeError::kNone);
  EXPECT_LE(bytes.size(), kMaxDatagramBytes);
  EXPECT_TRUE(DecodeSummary(bytes, &key).ok());
  PeerSummary too_big = MakeSummary({.node = node, .features = most + 1, .metrics = 3});
  too_big.verdicts = full;
  EXPECT_EQ(EncodeSummary(too_big, &key, &bytes), EncodeError::kTooLarge);
  EXPECT_TRUE(bytes.empty());
}

TEST(PeerWire, EncoderRefusesWhatCannotBeDecoded) {
  std::vector<uint8_t> bytes;
  PeerSummary base = MakeSummary({.features = 12, .metrics = 3});

  PeerSummary summary = base;
  summary.node = "";
  EXPECT_EQ(EncodeSummary(summary, nullptr, &bytes), EncodeError::kBadNodeName);
  summary.node = "bad\nname";
  EXPECT_EQ(EncodeSummary(summary, nullptr, &bytes), EncodeError::kBadNodeName);
  summary.node = "with space";
  EXPECT_EQ(EncodeSummary(summary, nullptr, &bytes), EncodeError::kBadNodeName);

  summary = base;
  summary.metrics[2].metric = summary.metrics[0].metric;
  EXPECT_EQ(EncodeSummary(summary, nullptr, &bytes), EncodeError::kBadMetric);
  summary.metrics[2].metric = static_cast<Metric>(kVectorMetricCount);
  EXPECT_EQ(EncodeSummary(summary, nullptr, &bytes), EncodeError::kBadMetric);

  summary = base;
  std::swap(summary.metrics[1].features[0], summary.metrics[1].features[1]);
  EXPECT_EQ(EncodeSummary(summary, nullptr, &bytes), EncodeError::kUnsortedKeys);
  summary = base;
  summary.metrics[1].features[1].key = summary.metrics[1].features[0].key;
  EXPECT_EQ(EncodeSummary(summary, nullptr, &bytes), EncodeError::kUnsortedKeys);

  summary = base;
  summary.metrics[0].features[3].value = std::nanf("");
  EXPECT_EQ(EncodeSummary(summary, nullptr, &bytes), EncodeError::kNonFiniteValue);
  summary = base;
  summary.io.dwrite_ms = INFINITY;
  EXPECT_EQ(EncodeSummary(summary, nullptr, &bytes), EncodeError::kNonFiniteValue);
  EXPECT_TRUE(bytes.empty());
}

TEST(PeerWire, MetricsKeepTheirOrder) {
  PeerSummary summary = MakeSummary({.features = 9, .metrics = 3});
  std::swap(summary.metrics[0], summary.metrics[2]);
  DecodedSummary decoded = RoundTrip(summary, nullptr);
  EXPECT_EQ(decoded.summary.metrics[0].metric, Metric::kTime);
  EXPECT_EQ(decoded.summary.metrics[2].metric, Metric::kSamples);
}

TEST(Bfloat16, RelativeErrorIsWithinTheDocumentedBoundAcrossTheRange) {
  std::mt19937 random(11);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(-126, 127);
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    float value = static_cast<float>(std::ldexp(mantissa(random), exponent(random)));
    if (!std::isfinite(value)) continue;
    if (i % 2) value = -value;
    float decoded = DecodeBfloat16(EncodeBfloat16(value));
    double error = std::fabs(double{decoded} - double{value}) / std::fabs(double{value});
    worst = std::max(worst, error);
    ASSERT_LE(error, kBfloat16RelativeError) << value << " became " << decoded;
  }
  // The bound is tight: values near the middle of a step come close to it.
  EXPECT_GT(worst, kBfloat16RelativeError * 0.9);
}

TEST(Bfloat16, ExactValuesRoundingAndClamping) {
  for (int i = -256; i <= 256; ++i) EXPECT_EQ(DecodeBfloat16(EncodeBfloat16(float(i))), float(i)) << i;
  EXPECT_EQ(EncodeBfloat16(0.0f), 0x0000);
  EXPECT_EQ(EncodeBfloat16(-0.0f), 0x8000);
  // 257 lies halfway between 256 and 258: ties go to the even mantissa (256).
  EXPECT_EQ(DecodeBfloat16(EncodeBfloat16(257.0f)), 256.0f);
  EXPECT_EQ(DecodeBfloat16(EncodeBfloat16(259.0f)), 260.0f);
  EXPECT_EQ(DecodeBfloat16(EncodeBfloat16(257.5f)), 258.0f);
  // The largest floats clamp to the largest finite bfloat16, never infinity.
  EXPECT_EQ(EncodeBfloat16(FLT_MAX), 0x7F7F);
  EXPECT_EQ(EncodeBfloat16(-FLT_MAX), 0xFF7F);
  EXPECT_TRUE(std::isfinite(DecodeBfloat16(EncodeBfloat16(FLT_MAX))));
  EXPECT_FALSE(IsFiniteBfloat16(0x7F80));
  EXPECT_FALSE(IsFiniteBfloat16(0xFFC0));
  EXPECT_TRUE(IsFiniteBfloat16(0x7F7F));
}

// Version compatibility: the bytes of a datagram from a newer sender.
class PeerWireVersions : public ::testing::Test {
 protected:
  void SetUp() override {
    summary_ = MakeSummary({.features = 20, .metrics = 2});
    ASSERT_EQ(EncodeSummary(summary_, nullptr, &bytes_), EncodeError::kNone);
  }
  void SetTotalSize(size_t size) {
    bytes_[10] = static_cast<uint8_t>(size);
    bytes_[11] = static_cast<uint8_t>(size >> 8);
  }
  PeerSummary summary_;
  std::vector<uint8_t> bytes_;
};

TEST_F(PeerWireVersions, NewerMinorWithALongerHeaderIsRead) {
  bytes_[5] = 7;  // minor 7
  size_t header_size = bytes_[8];  // minor 1's: the fixed header and its verdict list
  bytes_.insert(bytes_.begin() + header_size, 8, 0xEE);  // 8 bytes of new header fields
  bytes_[8] = header_size + 8;
  SetTotalSize(bytes_.size());
  DecodeResult result = DecodeSummary(bytes_, nullptr);
  ASSERT_TRUE(result.ok()) << DecodeErrorMessage(result.error);
  ExpectSameWithinWirePrecision(summary_, result.decoded.summary);
}

TEST_F(PeerWireVersions, NextMajorThatStillSupportsMajorOneIsRead) {
  bytes_[4] = kPeerWireMajor + 1;
  bytes_[6] = kPeerWireMajor;  // oldest readable major: ours
  EXPECT_TRUE(DecodeSummary(bytes_, nullptr).ok());
}

TEST_F(PeerWireVersions, NextMajorThatDropsMajorOneIsForeign) {
  bytes_[4] = kPeerWireMajor + 1;
  bytes_[6] = kPeerWireMajor + 1;
  EXPECT_EQ(DecodeSummary(bytes_, nullptr).error, DecodeError::kForeignVersion);
}

TEST_F(PeerWireVersions, OlderMajorAndNonsenseVersionsAreForeign) {
  bytes_[4] = 0;
  bytes_[6] = 0;
  EXPECT_EQ(DecodeSummary(bytes_, nullptr).error, DecodeError::kForeignVersion);
  bytes_[4] = 1;
  bytes_[6] = 2;  // claims to need a reader newer than itself
  EXPECT_EQ(DecodeSummary(bytes_, nullptr).error, DecodeError::kForeignVersion);
}

}  // namespace
}  // namespace limpwatch::analyzer
