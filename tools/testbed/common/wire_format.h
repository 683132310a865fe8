// The test-bed's wire format: BMI-like framed messages over TCP.
//
// Every message on a connection is one frame: a fixed 32-byte header, then
// `payload_length` bytes. Like PVFS's BMI, there are three kinds:
//
//   client                                   server
//     | -- unexpected request (op, tag) -----> |   a new request: the server
//     |                                        |   did not post a receive for it
//     | -- bulk data (tag, offset) ---------> |   WRITE data, received only into
//     |                                        |   buffers the server's flow posted
//     | <-- bulk data (tag, offset) --------- |   READ data
//     | <-- expected response (op, tag) ----- |   the answer the client waits for
//
//   +--------+---------+------+----+-----+----------------+--------+--------+
//   | magic  | version | kind | op | tag | payload_length | handle | offset |
//   |  u32   |   u16   |  u8  | u8 | u32 |      u32       |  u64   |  u64   |
//   +--------+---------+------+----+-----+----------------+--------+--------+
//
// All integers are little-endian. A frame with a bad magic, version, kind or
// length is a protocol error: the server closes that connection (as BMI does
// with "bad magic") and keeps serving the others.
//
// Payloads of requests and responses are encoded with PayloadWriter
// (message_codec.h); the layout of each operation is listed below. Every
// response payload starts with an i32 status: 0 or an errno value from the
// server (ENOSPC, EMFILE, ENOENT, ...), propagated to the client unchanged.
#ifndef LIMPWATCH_TOOLS_TESTBED_COMMON_WIRE_FORMAT_H_
#define LIMPWATCH_TOOLS_TESTBED_COMMON_WIRE_FORMAT_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace limpwatch::testbed {

static_assert(std::endian::native == std::endian::little, "the wire format is little-endian; add byte swaps");

inline constexpr uint32_t kFrameMagic = 0x4254574C;  // "LWTB" in memory order
inline constexpr uint16_t kWireVersion = 1;
inline constexpr size_t kFrameHeaderSize = 32;
// Requests and responses are small; bulk data frames carry at most one flow
// buffer (the largest flow buffer the test-bed allows).
inline constexpr uint32_t kMaxControlPayload = 64 * 1024;
inline constexpr uint32_t kMaxBulkPayload = 4 * 1024 * 1024;

enum class FrameKind : uint8_t {
  kUnexpectedRequest = 1,
  kExpectedResponse = 2,
  kBulkData = 3,
};

// Request payloads (after the header's handle / offset):
//   kPing            -                          -> u32 server_index, u32 server_count
//   kCreateDatafile  -                          -> u64 handle
//   kCreateMetafile  str name, attributes       -> u64 handle      (dirent + attributes)
//   kLookup          str name                   -> u64 handle
//   kGetattr         (handle)                   -> attributes
//   kRemoveMetafile  str name                   -> -               (dirent + attributes)
//   kRemoveDatafile  (handle)                   -> -
//   kWrite           (handle, offset) u64 length, then bulk frames -> u64 bytes_written
//   kRead            (handle, offset) u64 length -> bulk frames, then u64 bytes_read
//   kFsync           (handle)                   -> -
//   kGetSize         (handle)                   -> u64 size
//   kTruncate        (handle) u64 size          -> -
enum class Operation : uint8_t {
  kNone = 0,
  kPing = 1,
  kCreateDatafile = 2,
  kCreateMetafile = 3,
  kLookup = 4,
  kGetattr = 5,
  kRemoveMetafile = 6,
  kRemoveDatafile = 7,
  kWrite = 8,
  kRead = 9,
  kFsync = 10,
  kGetSize = 11,
  kTruncate = 12,
};
inline constexpr uint8_t kLastOperation = static_cast<uint8_t>(Operation::kTruncate);

const char* OperationName(Operation operation);

struct FrameHeader {
  FrameKind kind = FrameKind::kUnexpectedRequest;
  Operation operation = Operation::kNone;
  uint32_t tag = 0;
  uint32_t payload_length = 0;
  uint64_t handle = 0;
  uint64_t offset = 0;
};

// Writes the 32 wire bytes of `header` to `out`.
void EncodeFrameHeader(const FrameHeader& header, uint8_t out[kFrameHeaderSize]);

// Parses 32 wire bytes. Returns nullopt and a reason in *error for a bad
// magic, version, kind, operation or payload length.
std::optional<FrameHeader> DecodeFrameHeader(const uint8_t in[kFrameHeaderSize], std::string* error);

}  // namespace limpwatch::testbed

#endif  // LIMPWATCH_TOOLS_TESTBED_COMMON_WIRE_FORMAT_H_
