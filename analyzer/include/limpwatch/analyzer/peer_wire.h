// The wire form of a PeerSummary: one UDP datagram per server per window.
//
// Design. A summary travels in exactly one datagram of at most
// kMaxDatagramBytes (1452 = a 1500-byte Ethernet MTU minus the IPv6 and UDP
// headers), so it is never IP-fragmented and a lost packet loses one summary,
// never half of one. 200 features (the analyzer's cap, over all metrics)
// take 6 bytes each: 1,344 bytes with a 47-byte name, three metrics and a
// tag. A summary that does not fit is refused by the encoder
// (EncodeError::kTooLarge; MaxFeaturesThatFit says how many would) rather
// than split into fragments: fragments would need reassembly state per
// sender, timeouts, and would turn the loss of any one piece into the loss of
// the window, while the analyzer can always trim its reduced vector.
//
// Everything is little-endian, written field by field; no struct with padding
// is ever copied. Values: integers exact, I/O medians as IEEE binary32 bits
// (exact), feature values as bfloat16 (relative error <= 2^-8, see
// bfloat16.h). Non-finite values are refused on both sides.
//
// Versions. A datagram names its format version (major.minor) and the oldest
// major able to read it. A reader of major M accepts it when
// oldest_major <= M and major >= kOldestReadableMajor; anything else is
// DecodeError::kForeignVersion, an explicit status, never a guess. A minor
// version may only append fields to the fixed header (header_size grows and
// older readers skip the tail); anything else takes a new major.
//
// Authentication. With a shared key (peer_key.h) the datagram ends in a
// 16-byte tag: HMAC-SHA256 over every byte before it, truncated to 128 bits
// (RFC 2104 section 5 permits truncation to at least half the hash; 128 bits
// leaves 2^-128 forgery odds per attempt). The tag covers the header, so a
// tag-less downgrade of an authenticated stream is caught by a receiver that
// has a key. A receiver without a key still decodes tagged datagrams and says
// so (Authentication::kUnverified).
//
//   offset  size  field
//   ------  ----  -----------------------------------------------------------
//        0     4  magic "LWPS"
//        4     1  major version (1)
//        5     1  minor version (1; 0 had no verdict list)
//        6     1  oldest major version able to read this datagram (1)
//        7     1  tag kind: 0 none, 1 HMAC-SHA256/128
//        8     2  header_size: bytes from offset 0 to the node name
//                 (minor 0: 72; minor 1: 76 + 12 x verdict_count)
//       10     2  total_size: the whole datagram, tag included
//       12     1  node_length (1..47)
//       13     1  metric_count
//       14     2  feature_count, over all metrics
//       16     8  boot_id
//       24     8  window
//       32     8  window_end_unix_ms
//       40     2  window_ticks
//       42     2  tick_ms
//       44     4  invariant_bits
//       48     4  flags
//       52    20  io: dread_ms, dwrite_ms, nsread_ms, ncread_ms,
//                 request_bytes_per_s (binary32 bits each)
//   since minor 1, the sender's open verdicts (peer_summary.h OpenVerdict):
//       72     1  verdict_count (0..8)
//       73     3  reserved, 0
//       76  12*n  n x { server_hash uint64, resource uint8, kind uint8, 2 reserved }
//   header_size      node name: node_length bytes of printable ASCII
//     then, metric_count times:
//                 1  metric (Metric), each at most once
//                 2  count
//             6*count  count x { key uint32, value bfloat16 }, keys strictly rising
//   total_size-16 16  tag (only when tag kind is 1)
//
//   +------+--+--+--+--+----+----+--+--+----+---------- ... -----------+
//   | LWPS |Mj|Mn|Ol|Tg|hdr |tot |nl|mc|fcnt| boot, window, times, bits |
//   +------+--+--+--+--+----+----+--+--+----+---------- ... -----------+
//   | io medians (5 x f32)                  |vc|rsv | verdicts (12 x vc)|
//   +---------------------------------------+--+----+-------------------+
//   | node name (nl bytes)                                              |
//   +--+-----+-------+----+-------+----+----+---------------------------+
//   |m |cnt  | key   |val | key   |val | ...   (per metric)            |
//   +--+-----+-------+----+-------+----+----------------+---------------+
//   | ...                                               | tag (16)      |
//   +---------------------------------------------------+---------------+
#ifndef LIMPWATCH_ANALYZER_PEER_WIRE_H_
#define LIMPWATCH_ANALYZER_PEER_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "limpwatch/analyzer/peer_key.h"
#include "limpwatch/analyzer/peer_summary.h"

namespace limpwatch::analyzer {

inline constexpr uint8_t kPeerWireMajor = 1;
inline constexpr uint8_t kPeerWireMinor = 1;
inline constexpr uint8_t kPeerWireOldestReadableMajor = 1;  // the oldest major this reader decodes
inline constexpr size_t kPeerWireHeaderBytes = 72;        // the fixed header of minor 0
inline constexpr size_t kPeerWireVerdictListBytes = 4;    // minor 1: count and reserved bytes
inline constexpr size_t kPeerWireBytesPerVerdict = 12;
inline constexpr size_t kPeerWireTagBytes = 16;
inline constexpr size_t kPeerWireBytesPerFeature = 6;
inline constexpr size_t kPeerWireBytesPerMetric = 3;
inline constexpr size_t kMaxNodeNameBytes = 47;
inline constexpr size_t kMaxDatagramBytes = 1452;

enum class EncodeError : uint8_t {
  kNone = 0,
  kTooLarge,        // the summary does not fit kMaxDatagramBytes
  kBadNodeName,     // empty, or a byte outside printable ASCII
  kBadMetric,       // an unknown Metric value, or one metric listed twice
  kUnsortedKeys,    // a metric's keys are not strictly rising
  kNonFiniteValue,  // NaN or infinity in a feature or an I/O median
  kTooManyVerdicts, // more than kMaxOpenVerdicts, or any without carries_verdicts
};

// Why a datagram was not accepted. The decoder returns kTruncated ..
// kBadAuthentication; the receiving transport adds kReplayed, kStaleBoot and
// kUnknownSender. Every value is a rejection class with its own counter.
enum class DecodeError : uint8_t {
  kNone = 0,
  kTruncated,          // shorter than its header or its own total_size
  kOversized,          // longer than kMaxDatagramBytes
  kBadMagic,           // not a limpwatch peer summary
  kForeignVersion,     // a format version this reader cannot read
  kBadLength,          // header_size / total_size inconsistent, or trailing bytes
  kBadCount,           // node, metric, feature or verdict counts that overrun the datagram or disagree
  kBadNodeName,        // empty or non-printable node name
  kBadMetric,          // unknown or repeated metric
  kUnsortedKeys,       // feature keys not strictly rising (unsorted or duplicated)
  kNonFiniteValue,     // NaN or infinity
  kUnauthenticated,    // a key is configured and the datagram carries no tag
  kBadAuthentication,  // the tag does not verify, or an unknown tag kind
  kReplayed,           // a window already accepted from this sender and boot
  kStaleBoot,          // a boot of this node that was already replaced by a newer one
  kUnknownSender,      // the source address is not a configured peer
};
inline constexpr size_t kDecodeErrorCount = static_cast<size_t>(DecodeError::kUnknownSender) + 1;

// A short name ("truncated") for counters and a one-line explanation.
const char* DecodeErrorName(DecodeError error);
const char* DecodeErrorMessage(DecodeError error);
const char* EncodeErrorMessage(EncodeError error);

// The malformed classes (bad length .. non-finite): one "malformed" figure.
bool IsMalformed(DecodeError error);

enum class Authentication : uint8_t {
  kNone,        // no tag (and no key configured, or it would have been refused)
  kVerified,    // tag checked against the configured key
  kUnverified,  // tagged, but this receiver has no key to check it with
};

struct DecodedSummary {
  PeerSummary summary;
  Authentication authentication = Authentication::kNone;
};

struct DecodeResult {
  DecodeError error = DecodeError::kNone;
  DecodedSummary decoded;  // meaningful only when ok()
  bool ok() const { return error == DecodeError::kNone; }
};

// The wire size of a summary (after name truncation), tag included when
// `authenticated`. May exceed kMaxDatagramBytes: that is what kTooLarge means.
size_t EncodedSize(const PeerSummary& summary, bool authenticated);

// The most features a datagram holds for this node-name length and metric count.
size_t MaxFeaturesThatFit(size_t node_name_bytes, size_t metric_count, bool authenticated);

// Encodes `summary` into *out, as minor 1, or as minor 0 when it carries no
// verdict list (carries_verdicts false: it came from a minor-0 sender) (replacing its contents; the capacity is reused,
// so a caller that keeps the vector does not allocate per window). A node
// name longer than kMaxNodeNameBytes is truncated to it. With a key the
// datagram carries its tag. On error *out is left empty. Thread-safe.
EncodeError EncodeSummary(const PeerSummary& summary, const PeerKey* key, std::vector<uint8_t>* out);

// Decodes one datagram. Trusts nothing in it: every length is checked against
// the bytes actually present before anything is read or allocated. With a
// key, an untagged or wrongly tagged datagram is refused; without one, a
// tagged datagram decodes as kUnverified. Replay is not checked here (that
// needs per-sender state: see ReplayGuard). Thread-safe.
DecodeResult DecodeSummary(std::span<const uint8_t> datagram, const PeerKey* key);

// Field-by-field equality (floats compared by bits), for tests and fuzzing.
bool SameSummary(const PeerSummary& a, const PeerSummary& b);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_PEER_WIRE_H_
