#include "limpwatch/analyzer/peer_wire.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "limpwatch/analyzer/bfloat16.h"
#include "peer_wire_layout.h"
#include "wire_bytes.h"

namespace limpwatch::analyzer {

namespace {

using wire::PeerWireHeaderV1;
using wire::TagKind;

// Node names end up in alarm and log lines: printable ASCII only, so a peer
// cannot inject control characters or split a line.
bool IsNodeNameByte(uint8_t byte) { return byte >= 0x21 && byte <= 0x7E; }

bool IsKnownMetric(uint8_t metric) { return metric < kVectorMetricCount; }

size_t NodeNameBytesOnWire(const PeerSummary& summary) { return std::min(summary.node.size(), kMaxNodeNameBytes); }

// A summary without a verdict list (it came from a minor-0 sender) is
// written as minor 0 again, so that it travels, and compares, as it came.
size_t HeaderBytes(const PeerSummary& summary) {
  if (!summary.carries_verdicts) return kPeerWireHeaderBytes;
  return kPeerWireHeaderBytes + kPeerWireVerdictListBytes + summary.verdicts.size() * kPeerWireBytesPerVerdict;
}

size_t FullHeaderBytes() {
  return kPeerWireHeaderBytes + kPeerWireVerdictListBytes + kMaxOpenVerdicts * kPeerWireBytesPerVerdict;
}

size_t BodyAndHeaderBytes(size_t header_bytes, size_t node_bytes, size_t metric_count, size_t feature_count) {
  return header_bytes + node_bytes + metric_count * kPeerWireBytesPerMetric + feature_count * kPeerWireBytesPerFeature;
}

// Whether a readable datagram of this version carries the verdict list after
// the fixed header: minor 1 of major 1 added it, a later major that major 1
// can read keeps it.
bool HasVerdictList(uint8_t major, uint8_t minor) { return major > 1 || minor >= 1; }

EncodeError ValidateForEncoding(const PeerSummary& summary, size_t node_bytes) {
  if (node_bytes == 0) return EncodeError::kBadNodeName;
  if (summary.verdicts.size() > (summary.carries_verdicts ? kMaxOpenVerdicts : 0)) {
    return EncodeError::kTooManyVerdicts;
  }
  for (size_t i = 0; i < node_bytes; ++i) {
    if (!IsNodeNameByte(static_cast<uint8_t>(summary.node[i]))) return EncodeError::kBadNodeName;
  }
  uint32_t metrics_seen = 0;
  for (const auto& metric : summary.metrics) {
    auto id = static_cast<uint8_t>(metric.metric);
    if (!IsKnownMetric(id) || (metrics_seen & (1u << id)) != 0) return EncodeError::kBadMetric;
    metrics_seen |= 1u << id;
    for (size_t i = 0; i < metric.features.size(); ++i) {
      if (i > 0 && metric.features[i].key <= metric.features[i - 1].key) return EncodeError::kUnsortedKeys;
      if (!std::isfinite(metric.features[i].value)) return EncodeError::kNonFiniteValue;
    }
  }
  const IoMedians& io = summary.io;
  for (float value : {io.dread_ms, io.dwrite_ms, io.nsread_ms, io.ncread_ms, io.request_bytes_per_s}) {
    if (!std::isfinite(value)) return EncodeError::kNonFiniteValue;
  }
  return EncodeError::kNone;
}

void FillHeader(const PeerSummary& summary, size_t node_bytes, size_t total_size, TagKind tag_kind,
                PeerWireHeaderV1* header) {
  size_t header_bytes = HeaderBytes(summary);
  std::memcpy(header->magic, wire::kPeerWireMagic, sizeof(header->magic));
  header->major = kPeerWireMajor;
  header->minor = summary.carries_verdicts ? kPeerWireMinor : 0;
  header->oldest_major = kPeerWireOldestReadableMajor;
  header->tag_kind = static_cast<uint8_t>(tag_kind);
  header->header_size.Set(static_cast<uint16_t>(header_bytes));
  header->total_size.Set(static_cast<uint16_t>(total_size));
  header->node_length = static_cast<uint8_t>(node_bytes);
  header->metric_count = static_cast<uint8_t>(summary.metrics.size());
  header->feature_count.Set(static_cast<uint16_t>(summary.FeatureCount()));
  header->boot_id.Set(summary.boot_id);
  header->window.Set(summary.window);
  header->window_end_unix_ms.Set(summary.window_end_unix_ms);
  header->window_ticks.Set(summary.window_ticks);
  header->tick_ms.Set(summary.tick_ms);
  header->invariant_bits.Set(summary.invariant_bits);
  header->flags.Set(summary.flags);
  header->io_dread_ms.Set(wire::BitsFromFloat(summary.io.dread_ms));
  header->io_dwrite_ms.Set(wire::BitsFromFloat(summary.io.dwrite_ms));
  header->io_nsread_ms.Set(wire::BitsFromFloat(summary.io.nsread_ms));
  header->io_ncread_ms.Set(wire::BitsFromFloat(summary.io.ncread_ms));
  header->io_request_bytes_per_s.Set(wire::BitsFromFloat(summary.io.request_bytes_per_s));
}

void ReadHeaderFields(const PeerWireHeaderV1& header, PeerSummary* summary) {
  summary->boot_id = header.boot_id.Get();
  summary->window = header.window.Get();
  summary->window_end_unix_ms = header.window_end_unix_ms.Get();
  summary->window_ticks = header.window_ticks.Get();
  summary->tick_ms = header.tick_ms.Get();
  summary->invariant_bits = header.invariant_bits.Get();
  summary->flags = header.flags.Get();
  summary->io.dread_ms = wire::FloatFromBits(header.io_dread_ms.Get());
  summary->io.dwrite_ms = wire::FloatFromBits(header.io_dwrite_ms.Get());
  summary->io.nsread_ms = wire::FloatFromBits(header.io_nsread_ms.Get());
  summary->io.ncread_ms = wire::FloatFromBits(header.io_ncread_ms.Get());
  summary->io.request_bytes_per_s = wire::FloatFromBits(header.io_request_bytes_per_s.Get());
}

bool IoMediansFinite(const IoMedians& io) {
  return std::isfinite(io.dread_ms) && std::isfinite(io.dwrite_ms) && std::isfinite(io.nsread_ms) &&
         std::isfinite(io.ncread_ms) && std::isfinite(io.request_bytes_per_s);
}

// Checks what can be checked from the first bytes alone, in the order that
// gives each damaged datagram its most telling class.
DecodeError CheckEnvelope(std::span<const uint8_t> datagram, PeerWireHeaderV1* header) {
  if (datagram.size() > kMaxDatagramBytes) return DecodeError::kOversized;
  if (datagram.empty()) return DecodeError::kTruncated;
  // What is there of the magic must match: a short datagram of someone
  // else's is foreign, a short one of ours is truncated.
  size_t magic_bytes = std::min(datagram.size(), sizeof(wire::kPeerWireMagic));
  if (std::memcmp(datagram.data(), wire::kPeerWireMagic, magic_bytes) != 0) return DecodeError::kBadMagic;
  if (datagram.size() < wire::kVersionPrefixBytes) return DecodeError::kTruncated;
  uint8_t major = datagram[4];
  uint8_t oldest_major = datagram[6];
  if (oldest_major > kPeerWireMajor || major < kPeerWireOldestReadableMajor || oldest_major > major) {
    return DecodeError::kForeignVersion;
  }
  if (datagram.size() < kPeerWireHeaderBytes) return DecodeError::kTruncated;
  std::memcpy(header, datagram.data(), sizeof(*header));
  size_t header_size_untrusted = header->header_size.Get();
  size_t total_size_untrusted = header->total_size.Get();
  if (total_size_untrusted > datagram.size()) return DecodeError::kTruncated;
  if (total_size_untrusted < datagram.size()) return DecodeError::kBadLength;
  if (header_size_untrusted < kPeerWireHeaderBytes || header_size_untrusted > total_size_untrusted) {
    return DecodeError::kBadLength;
  }
  return DecodeError::kNone;
}

// Verifies or flags the tag. *body_end is where the tag starts (or the end).
DecodeError CheckAuthentication(std::span<const uint8_t> datagram, const PeerWireHeaderV1& header,
                                const PeerKey* key, size_t* body_end, Authentication* authentication) {
  size_t header_size = header.header_size.Get();
  switch (static_cast<TagKind>(header.tag_kind)) {
    case TagKind::kNone:
      if (key != nullptr) return DecodeError::kUnauthenticated;
      *body_end = datagram.size();
      *authentication = Authentication::kNone;
      return DecodeError::kNone;
    case TagKind::kHmacSha256Truncated128: {
      if (datagram.size() < header_size + kPeerWireTagBytes) return DecodeError::kBadLength;
      *body_end = datagram.size() - kPeerWireTagBytes;
      if (key == nullptr) {
        *authentication = Authentication::kUnverified;
        return DecodeError::kNone;
      }
      Sha256::Digest expected = key->hmac().Compute(datagram.first(*body_end));
      if (!EqualInConstantTime(std::span(expected).first(kPeerWireTagBytes), datagram.subspan(*body_end))) {
        return DecodeError::kBadAuthentication;
      }
      *authentication = Authentication::kVerified;
      return DecodeError::kNone;
    }
  }
  return DecodeError::kBadAuthentication;
}

// The verdict list of a minor-1 header, from the bytes between the fixed
// header and header_size. Bytes after the list belong to a later minor and
// are skipped. A resource or kind this reader does not know is kept as it
// is: the board (verdict_board.h) matches them by value.
DecodeError ReadVerdicts(std::span<const uint8_t> header_tail, std::vector<OpenVerdict>* verdicts) {
  wire::Reader reader(header_tail);
  auto count = reader.Read<uint8_t>();
  reader.Take(kPeerWireVerdictListBytes - 1);
  if (reader.failed() || count > kMaxOpenVerdicts) return DecodeError::kBadCount;
  auto entries = reader.Take(size_t{count} * kPeerWireBytesPerVerdict);
  if (reader.failed()) return DecodeError::kBadCount;
  wire::Reader entry_reader(entries);
  verdicts->reserve(count);
  for (size_t i = 0; i < count; ++i) {
    OpenVerdict& verdict = verdicts->emplace_back();
    verdict.server_hash = entry_reader.Read<uint64_t>();
    verdict.resource = entry_reader.Read<uint8_t>();
    verdict.kind = entry_reader.Read<uint8_t>();
    entry_reader.Take(2);
    if (verdict.server_hash == 0) return DecodeError::kBadCount;  // no name hashes to 0
  }
  return DecodeError::kNone;
}

DecodeError ReadMetrics(wire::Reader* reader, size_t metric_count, size_t feature_count,
                        std::vector<MetricFeatures>* metrics) {
  metrics->reserve(metric_count);
  uint32_t metrics_seen = 0;
  size_t features_read = 0;
  for (size_t m = 0; m < metric_count; ++m) {
    auto id = reader->Read<uint8_t>();
    auto count = reader->Read<uint16_t>();
    if (reader->failed()) return DecodeError::kBadCount;
    if (!IsKnownMetric(id) || (metrics_seen & (1u << id)) != 0) return DecodeError::kBadMetric;
    metrics_seen |= 1u << id;
    if (count > feature_count - features_read) return DecodeError::kBadCount;
    auto entries = reader->Take(size_t{count} * kPeerWireBytesPerFeature);
    if (reader->failed()) return DecodeError::kBadCount;
    features_read += count;

    MetricFeatures& metric = metrics->emplace_back();
    metric.metric = static_cast<Metric>(id);
    metric.features.reserve(count);
    wire::Reader entry_reader(entries);
    for (size_t i = 0; i < count; ++i) {
      auto key = entry_reader.Read<uint32_t>();
      auto value_bits = entry_reader.Read<uint16_t>();
      if (i > 0 && key <= metric.features.back().key) return DecodeError::kUnsortedKeys;
      if (!IsFiniteBfloat16(value_bits)) return DecodeError::kNonFiniteValue;
      metric.features.push_back({key, DecodeBfloat16(value_bits)});
    }
  }
  if (features_read != feature_count) return DecodeError::kBadCount;
  return DecodeError::kNone;
}

}  // namespace

const char* DecodeErrorName(DecodeError error) {
  switch (error) {
    case DecodeError::kNone: return "ok";
    case DecodeError::kTruncated: return "truncated";
    case DecodeError::kOversized: return "oversized";
    case DecodeError::kBadMagic: return "bad_magic";
    case DecodeError::kForeignVersion: return "foreign_version";
    case DecodeError::kBadLength: return "bad_length";
    case DecodeError::kBadCount: return "bad_count";
    case DecodeError::kBadNodeName: return "bad_node_name";
    case DecodeError::kBadMetric: return "bad_metric";
    case DecodeError::kUnsortedKeys: return "unsorted_keys";
    case DecodeError::kNonFiniteValue: return "non_finite_value";
    case DecodeError::kUnauthenticated: return "unauthenticated";
    case DecodeError::kBadAuthentication: return "bad_authentication";
    case DecodeError::kReplayed: return "replayed";
    case DecodeError::kStaleBoot: return "stale_boot";
    case DecodeError::kUnknownSender: return "unknown_sender";
  }
  return "unknown_error";
}

const char* DecodeErrorMessage(DecodeError error) {
  switch (error) {
    case DecodeError::kNone: return "accepted";
    case DecodeError::kTruncated: return "truncated: the datagram is shorter than its header or its stated size";
    case DecodeError::kOversized: return "oversized: the datagram is longer than any peer summary can be";
    case DecodeError::kBadMagic: return "bad magic: not a limpwatch peer summary";
    case DecodeError::kForeignVersion: return "foreign version: the sender's format version is not readable here";
    case DecodeError::kBadLength: return "bad length: header or total size inconsistent with the datagram";
    case DecodeError::kBadCount: return "bad count: node, metric, feature or verdict counts overrun or disagree";
    case DecodeError::kBadNodeName: return "bad node name: empty or not printable ASCII";
    case DecodeError::kBadMetric: return "bad metric: unknown or repeated metric";
    case DecodeError::kUnsortedKeys: return "unsorted keys: feature keys not strictly rising";
    case DecodeError::kNonFiniteValue: return "non-finite value: NaN or infinity in a value";
    case DecodeError::kUnauthenticated: return "unauthenticated: a key is configured and the datagram has no tag";
    case DecodeError::kBadAuthentication: return "bad authentication: the tag does not verify with our key";
    case DecodeError::kReplayed: return "replayed: this window of this sender's boot was already accepted";
    case DecodeError::kStaleBoot: return "stale boot: this boot of the node was already replaced by a newer one";
    case DecodeError::kUnknownSender: return "unknown sender: the source address is not a configured peer";
  }
  return "unknown error";
}

const char* EncodeErrorMessage(EncodeError error) {
  switch (error) {
    case EncodeError::kNone: return "encoded";
    case EncodeError::kTooLarge: return "summary too large for one datagram: trim its features";
    case EncodeError::kBadNodeName: return "node name empty or not printable ASCII";
    case EncodeError::kBadMetric: return "unknown or repeated metric";
    case EncodeError::kUnsortedKeys: return "feature keys not strictly rising";
    case EncodeError::kNonFiniteValue: return "NaN or infinity in a feature value or I/O median";
    case EncodeError::kTooManyVerdicts: return "more open verdicts than a datagram carries";
  }
  return "unknown error";
}

bool IsMalformed(DecodeError error) {
  return error >= DecodeError::kBadLength && error <= DecodeError::kNonFiniteValue;
}

size_t EncodedSize(const PeerSummary& summary, bool authenticated) {
  return BodyAndHeaderBytes(HeaderBytes(summary), NodeNameBytesOnWire(summary),
                            summary.metrics.size(), summary.FeatureCount()) +
         (authenticated ? kPeerWireTagBytes : 0);
}

size_t MaxFeaturesThatFit(size_t node_name_bytes, size_t metric_count, bool authenticated) {
  // Room is kept for a full verdict list, so that the features an analyzer
  // trims its summary to fit whatever verdicts it holds.
  size_t fixed = BodyAndHeaderBytes(FullHeaderBytes(), std::min(node_name_bytes, kMaxNodeNameBytes),
                                    metric_count, 0) +
                 (authenticated ? kPeerWireTagBytes : 0);
  return fixed >= kMaxDatagramBytes ? 0 : (kMaxDatagramBytes - fixed) / kPeerWireBytesPerFeature;
}

EncodeError EncodeSummary(const PeerSummary& summary, const PeerKey* key, std::vector<uint8_t>* out) {
  out->clear();
  size_t node_bytes = NodeNameBytesOnWire(summary);
  if (EncodeError invalid = ValidateForEncoding(summary, node_bytes); invalid != EncodeError::kNone) return invalid;
  size_t total_size = EncodedSize(summary, key != nullptr);
  if (total_size > kMaxDatagramBytes) return EncodeError::kTooLarge;

  PeerWireHeaderV1 header;
  FillHeader(summary, node_bytes, total_size,
             key != nullptr ? TagKind::kHmacSha256Truncated128 : TagKind::kNone, &header);
  out->resize(total_size);
  wire::Writer writer(*out);
  writer.WriteBytes(&header, sizeof(header));
  if (summary.carries_verdicts) {
    writer.Write(static_cast<uint8_t>(summary.verdicts.size()));
    for (size_t i = 1; i < kPeerWireVerdictListBytes; ++i) writer.Write(uint8_t{0});
  }
  for (const OpenVerdict& verdict : summary.verdicts) {
    writer.Write(verdict.server_hash);
    writer.Write(verdict.resource);
    writer.Write(verdict.kind);
    writer.Write(uint16_t{0});
  }
  writer.WriteBytes(summary.node.data(), node_bytes);
  for (const auto& metric : summary.metrics) {
    writer.Write(static_cast<uint8_t>(metric.metric));
    writer.Write(static_cast<uint16_t>(metric.features.size()));
    for (const auto& feature : metric.features) {
      writer.Write(feature.key);
      writer.Write(EncodeBfloat16(feature.value));
    }
  }
  if (key != nullptr) {
    Sha256::Digest tag = key->hmac().Compute(std::span(*out).first(writer.position()));
    writer.WriteBytes(tag.data(), kPeerWireTagBytes);
  }
  return EncodeError::kNone;
}

DecodeResult DecodeSummary(std::span<const uint8_t> datagram, const PeerKey* key) {
  DecodeResult result;
  PeerWireHeaderV1 header;
  result.error = CheckEnvelope(datagram, &header);
  if (!result.ok()) return result;
  size_t body_end = 0;
  result.error = CheckAuthentication(datagram, header, key, &body_end, &result.decoded.authentication);
  if (!result.ok()) return result;

  // Counts are checked against the exact size they imply before anything is
  // allocated or read.
  size_t header_size = header.header_size.Get();
  size_t node_length = header.node_length;
  size_t metric_count = header.metric_count;
  size_t feature_count = header.feature_count.Get();
  size_t implied = BodyAndHeaderBytes(header_size, node_length, metric_count, feature_count);
  if (implied != body_end) {
    result.error = DecodeError::kBadCount;
    return result;
  }
  if (node_length == 0 || node_length > kMaxNodeNameBytes) {
    result.error = DecodeError::kBadNodeName;
    return result;
  }

  PeerSummary& summary = result.decoded.summary;
  summary.carries_verdicts = HasVerdictList(header.major, header.minor);
  if (summary.carries_verdicts) {
    result.error = ReadVerdicts(datagram.subspan(kPeerWireHeaderBytes, header_size - kPeerWireHeaderBytes),
                                &summary.verdicts);
    if (!result.ok()) return result;
  }
  wire::Reader reader(datagram.first(body_end));
  reader.Take(header_size);  // a newer minor's header tail is skipped
  auto node = reader.Take(node_length);
  if (!std::all_of(node.begin(), node.end(), IsNodeNameByte)) {
    result.error = DecodeError::kBadNodeName;
    return result;
  }
  ReadHeaderFields(header, &summary);
  if (!IoMediansFinite(summary.io)) {
    result.error = DecodeError::kNonFiniteValue;
    return result;
  }
  summary.node.assign(node.begin(), node.end());
  result.error = ReadMetrics(&reader, metric_count, feature_count, &summary.metrics);
  if (result.ok() && reader.remaining() != 0) result.error = DecodeError::kBadCount;
  return result;
}

bool SameSummary(const PeerSummary& a, const PeerSummary& b) {
  auto same_float = [](float x, float y) { return wire::BitsFromFloat(x) == wire::BitsFromFloat(y); };
  if (a.node != b.node || a.boot_id != b.boot_id || a.window != b.window ||
      a.window_end_unix_ms != b.window_end_unix_ms || a.window_ticks != b.window_ticks || a.tick_ms != b.tick_ms ||
      a.invariant_bits != b.invariant_bits || a.flags != b.flags || a.metrics.size() != b.metrics.size() ||
      a.verdicts != b.verdicts || a.carries_verdicts != b.carries_verdicts) {
    return false;
  }
  if (!same_float(a.io.dread_ms, b.io.dread_ms) || !same_float(a.io.dwrite_ms, b.io.dwrite_ms) ||
      !same_float(a.io.nsread_ms, b.io.nsread_ms) || !same_float(a.io.ncread_ms, b.io.ncread_ms) ||
      !same_float(a.io.request_bytes_per_s, b.io.request_bytes_per_s)) {
    return false;
  }
  for (size_t m = 0; m < a.metrics.size(); ++m) {
    const auto& fa = a.metrics[m].features;
    const auto& fb = b.metrics[m].features;
    if (a.metrics[m].metric != b.metrics[m].metric || fa.size() != fb.size()) return false;
    for (size_t i = 0; i < fa.size(); ++i) {
      if (fa[i].key != fb[i].key || !same_float(fa[i].value, fb[i].value)) return false;
    }
  }
  return true;
}

}  // namespace limpwatch::analyzer
