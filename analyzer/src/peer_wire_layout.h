// The fixed header of a version-1 peer summary datagram, pinned byte for
// byte (the diagram is in limpwatch/analyzer/peer_wire.h). Built only from
// byte arrays, so it has no padding and alignment 1: copying the first
// kPeerWireHeaderBytes of a datagram into it is exact on every compiler.
//
// When a later major changes this layout, this struct stays as
// PeerWireHeaderV1 for as long as major 1 is still read.
#ifndef LIMPWATCH_ANALYZER_SRC_PEER_WIRE_LAYOUT_H_
#define LIMPWATCH_ANALYZER_SRC_PEER_WIRE_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "limpwatch/analyzer/peer_wire.h"
#include "wire_bytes.h"

namespace limpwatch::analyzer::wire {

inline constexpr uint8_t kPeerWireMagic[4] = {'L', 'W', 'P', 'S'};

enum class TagKind : uint8_t {
  kNone = 0,
  kHmacSha256Truncated128 = 1,
};

// The bytes every version starts with: enough to tell whose datagram it is
// and whether this reader can read it.
inline constexpr size_t kVersionPrefixBytes = 8;

struct PeerWireHeaderV1 {
  uint8_t magic[4];
  uint8_t major;
  uint8_t minor;
  uint8_t oldest_major;
  uint8_t tag_kind;
  Le16 header_size;
  Le16 total_size;
  uint8_t node_length;
  uint8_t metric_count;
  Le16 feature_count;
  Le64 boot_id;
  Le64 window;
  Le64 window_end_unix_ms;
  Le16 window_ticks;
  Le16 tick_ms;
  Le32 invariant_bits;
  Le32 flags;
  Le32 io_dread_ms;
  Le32 io_dwrite_ms;
  Le32 io_nsread_ms;
  Le32 io_ncread_ms;
  Le32 io_request_bytes_per_s;
};

static_assert(sizeof(PeerWireHeaderV1) == kPeerWireHeaderBytes);
static_assert(alignof(PeerWireHeaderV1) == 1);
static_assert(std::is_trivially_copyable_v<PeerWireHeaderV1>);
static_assert(std::is_standard_layout_v<PeerWireHeaderV1>);
static_assert(offsetof(PeerWireHeaderV1, major) == 4);
static_assert(offsetof(PeerWireHeaderV1, oldest_major) == 6);
static_assert(offsetof(PeerWireHeaderV1, tag_kind) == 7);
static_assert(offsetof(PeerWireHeaderV1, header_size) == 8);
static_assert(offsetof(PeerWireHeaderV1, total_size) == 10);
static_assert(offsetof(PeerWireHeaderV1, node_length) == 12);
static_assert(offsetof(PeerWireHeaderV1, metric_count) == 13);
static_assert(offsetof(PeerWireHeaderV1, feature_count) == 14);
static_assert(offsetof(PeerWireHeaderV1, boot_id) == 16);
static_assert(offsetof(PeerWireHeaderV1, window) == 24);
static_assert(offsetof(PeerWireHeaderV1, window_end_unix_ms) == 32);
static_assert(offsetof(PeerWireHeaderV1, window_ticks) == 40);
static_assert(offsetof(PeerWireHeaderV1, tick_ms) == 42);
static_assert(offsetof(PeerWireHeaderV1, invariant_bits) == 44);
static_assert(offsetof(PeerWireHeaderV1, flags) == 48);
static_assert(offsetof(PeerWireHeaderV1, io_dread_ms) == 52);
static_assert(offsetof(PeerWireHeaderV1, io_request_bytes_per_s) == 68);
static_assert(kMaxDatagramBytes <= UINT16_MAX, "total_size is 16 bits");
static_assert(kMaxNodeNameBytes <= UINT8_MAX, "node_length is 8 bits");

}  // namespace limpwatch::analyzer::wire

#endif  // LIMPWATCH_ANALYZER_SRC_PEER_WIRE_LAYOUT_H_
