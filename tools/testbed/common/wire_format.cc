#include "common/wire_format.h"

#include <cstring>

namespace limpwatch::testbed {
namespace {

// The packed wire image of a header; the struct above is the in-memory form.
struct [[gnu::packed]] WireHeader {
  uint32_t magic;
  uint16_t version;
  uint8_t kind;
  uint8_t operation;
  uint32_t tag;
  uint32_t payload_length;
  uint64_t handle;
  uint64_t offset;
};
static_assert(sizeof(WireHeader) == kFrameHeaderSize);

}  // namespace

const char* OperationName(Operation operation) {
  switch (operation) {
    case Operation::kNone:
      return "none";
    case Operation::kPing:
      return "ping";
    case Operation::kCreateDatafile:
      return "create_datafile";
    case Operation::kCreateMetafile:
      return "create_metafile";
    case Operation::kLookup:
      return "lookup";
    case Operation::kGetattr:
      return "getattr";
    case Operation::kRemoveMetafile:
      return "remove_metafile";
    case Operation::kRemoveDatafile:
      return "remove_datafile";
    case Operation::kWrite:
      return "write";
    case Operation::kRead:
      return "read";
    case Operation::kFsync:
      return "fsync";
    case Operation::kGetSize:
      return "getsize";
    case Operation::kTruncate:
      return "truncate";
  }
  return "unknown";
}

void EncodeFrameHeader(const FrameHeader& header, uint8_t out[kFrameHeaderSize]) {
  WireHeader wire{kFrameMagic,
                  kWireVersion,
                  static_cast<uint8_t>(header.kind),
                  static_cast<uint8_t>(header.operation),
                  header.tag,
                  header.payload_length,
                  header.handle,
                  header.offset};
  std::memcpy(out, &wire, sizeof wire);
}

std::optional<FrameHeader> DecodeFrameHeader(const uint8_t in[kFrameHeaderSize], std::string* error) {
  WireHeader wire;
  std::memcpy(&wire, in, sizeof wire);
  if (wire.magic != kFrameMagic) {
    *error = "bad magic";
    return std::nullopt;
  }
  if (wire.version != kWireVersion) {
    *error = "unsupported wire version " + std::to_string(wire.version);
    return std::nullopt;
  }
  if (wire.kind < static_cast<uint8_t>(FrameKind::kUnexpectedRequest) ||
      wire.kind > static_cast<uint8_t>(FrameKind::kBulkData)) {
    *error = "bad frame kind " + std::to_string(wire.kind);
    return std::nullopt;
  }
  if (wire.operation > kLastOperation) {
    *error = "bad operation " + std::to_string(wire.operation);
    return std::nullopt;
  }
  FrameHeader header;
  header.kind = static_cast<FrameKind>(wire.kind);
  header.operation = static_cast<Operation>(wire.operation);
  header.tag = wire.tag;
  header.payload_length = wire.payload_length;
  header.handle = wire.handle;
  header.offset = wire.offset;
  uint32_t limit = header.kind == FrameKind::kBulkData ? kMaxBulkPayload : kMaxControlPayload;
  if (header.payload_length > limit) {
    *error = "payload of " + std::to_string(header.payload_length) + " bytes exceeds " + std::to_string(limit);
    return std::nullopt;
  }
  return header;
}

}  // namespace limpwatch::testbed
