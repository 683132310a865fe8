#include "client/server_connection.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/message_codec.h"
#include "common/socket_util.h"

namespace limpwatch::testbed::client {
namespace {

// Bulk frames the client sends: large enough to keep the socket full, small
// enough that a slow server is noticed within the timeout.
constexpr size_t kBulkFrameSize = 1024 * 1024;

bool IsBrokenConnection(int error) {
  return error == ECONNRESET || error == EPIPE || error == ECONNREFUSED || error == ECONNABORTED || error == ENOTCONN;
}

// After these the stream's state is unknown (a reply may still be on its
// way, or half a frame was sent): the connection is dropped and reopened.
bool LeavesStreamUnknown(int error) {
  return error == EPROTO || error == ETIMEDOUT || error == EINTR || IsBrokenConnection(error);
}

uint64_t TotalLength(std::span<const IoPiece> pieces) {
  uint64_t length = 0;
  for (const IoPiece& piece : pieces) length += piece.length;
  return length;
}

}  // namespace

ServerConnection::ServerConnection(ServerAlias alias, int timeout_ms, const std::atomic<bool>* interrupted)
    : alias_(std::move(alias)), timeout_ms_(timeout_ms), interrupted_(interrupted) {}

ServerConnection::~ServerConnection() { Disconnect(); }

void ServerConnection::Disconnect() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

uint64_t ServerConnection::Deadline() const { return MonotonicNs() + uint64_t(timeout_ms_) * 1000000; }

int ServerConnection::EnsureConnected() {
  if (fd_ >= 0) return 0;
  int error = 0;
  std::string message;
  fd_ = ConnectTcp(alias_.host, alias_.port, timeout_ms_, 0, &error, &message);
  return fd_ >= 0 ? 0 : error;
}

template <typename Attempt>
int ServerConnection::WithRetry(bool idempotent, Attempt attempt) {
  // A broken connection (server restarted, relay removed, reset by a fault
  // rule) is retried after growing pauses; a timeout is not (the server is
  // there but does not answer: retrying would only double the wait).
  static constexpr int kPausesMs[] = {0, 50, 200};
  int error = attempt();
  for (int pause_ms : kPausesMs) {
    if (error == 0 || fd_ >= 0 || !idempotent || !IsBrokenConnection(error)) break;
    if (interrupted_ != nullptr && interrupted_->load()) break;
    if (pause_ms > 0) usleep(static_cast<useconds_t>(pause_ms) * 1000);
    error = attempt();
  }
  return error;
}

int ServerConnection::SendRequest(Operation operation, uint64_t handle, uint64_t offset,
                                  const std::vector<uint8_t>& payload, uint32_t* tag) {
  int error = EnsureConnected();
  if (error != 0) return error;
  FrameHeader header;
  header.kind = FrameKind::kUnexpectedRequest;
  header.operation = operation;
  header.tag = *tag = next_tag_++;
  header.payload_length = static_cast<uint32_t>(payload.size());
  header.handle = handle;
  header.offset = offset;
  uint8_t wire[kFrameHeaderSize];
  EncodeFrameHeader(header, wire);
  iovec iov[2] = {{wire, sizeof wire}, {const_cast<uint8_t*>(payload.data()), payload.size()}};
  return SendVectorUntil(fd_, iov, 2, Deadline(), interrupted_);
}

int ServerConnection::SendBulk(uint32_t tag, uint64_t handle, uint64_t offset, std::span<const IoPiece> pieces) {
  uint64_t position = offset;
  for (const IoPiece& piece : pieces) {
    for (size_t done = 0; done < piece.length;) {
      size_t length = std::min(kBulkFrameSize, piece.length - done);
      FrameHeader header;
      header.kind = FrameKind::kBulkData;
      header.operation = Operation::kWrite;
      header.tag = tag;
      header.payload_length = static_cast<uint32_t>(length);
      header.handle = handle;
      header.offset = position;
      uint8_t wire[kFrameHeaderSize];
      EncodeFrameHeader(header, wire);
      iovec iov[2] = {{wire, sizeof wire}, {piece.data + done, length}};
      // The timeout counts from the last progress: a slow but moving server is not a dead one.
      int error = SendVectorUntil(fd_, iov, 2, Deadline(), interrupted_);
      if (error != 0) return error;
      done += length;
      position += length;
    }
  }
  return 0;
}

int ServerConnection::ReceiveBulkPayload(const FrameHeader& header, uint64_t offset, std::span<const IoPiece> pieces) {
  uint64_t total = 0;
  for (const IoPiece& piece : pieces) total += piece.length;
  if (header.offset < offset || header.offset - offset + header.payload_length > total) return EPROTO;
  uint64_t skip = header.offset - offset;
  size_t remaining = header.payload_length;
  for (const IoPiece& piece : pieces) {
    if (remaining == 0) break;
    if (skip >= piece.length) {
      skip -= piece.length;
      continue;
    }
    size_t length = std::min<size_t>(piece.length - skip, remaining);
    int error = ReceiveExactlyUntil(fd_, piece.data + skip, length, Deadline(), interrupted_);
    if (error != 0) return error;
    remaining -= length;
    skip = 0;
  }
  return 0;
}

int ServerConnection::AwaitResponse(uint32_t tag, uint64_t offset, std::span<const IoPiece> pieces,
                                    std::vector<uint8_t>* reply) {
  for (;;) {
    uint8_t wire[kFrameHeaderSize];
    int error = ReceiveExactlyUntil(fd_, wire, sizeof wire, Deadline(), interrupted_);
    if (error != 0) return error;
    std::string problem;
    auto header = DecodeFrameHeader(wire, &problem);
    if (!header || header->tag != tag) return EPROTO;
    if (header->kind == FrameKind::kBulkData) {
      error = ReceiveBulkPayload(*header, offset, pieces);
      if (error != 0) return error;
      continue;
    }
    if (header->kind != FrameKind::kExpectedResponse || header->payload_length < sizeof(int32_t)) return EPROTO;
    std::vector<uint8_t> payload(header->payload_length);
    error = ReceiveExactlyUntil(fd_, payload.data(), payload.size(), Deadline(), interrupted_);
    if (error != 0) return error;
    PayloadReader reader(payload);
    int32_t status = reader.GetI32();
    reply->assign(payload.begin() + sizeof(int32_t), payload.end());
    return status;
  }
}

int ServerConnection::Call(Operation operation, uint64_t handle, const std::vector<uint8_t>& request,
                           std::vector<uint8_t>* reply) {
  bool idempotent = operation != Operation::kCreateDatafile && operation != Operation::kCreateMetafile &&
                    operation != Operation::kRemoveDatafile && operation != Operation::kRemoveMetafile;
  return WithRetry(idempotent, [&] {
    uint32_t tag = 0;
    int error = SendRequest(operation, handle, 0, request, &tag);
    if (error == 0) error = AwaitResponse(tag, 0, {}, reply);
    if (LeavesStreamUnknown(error)) {
      Disconnect();  // the stream's state is unknown now
    }
    return error;
  });
}

int ServerConnection::Write(uint64_t handle, uint64_t offset, std::span<const IoPiece> pieces, uint64_t* written) {
  *written = 0;
  uint64_t length = TotalLength(pieces);
  return WithRetry(true, [&] {
    PayloadWriter request;
    request.PutU64(length);
    uint32_t tag = 0;
    std::vector<uint8_t> reply;
    int error = SendRequest(Operation::kWrite, handle, offset, request.bytes(), &tag);
    if (error == 0) error = SendBulk(tag, handle, offset, pieces);
    if (error == 0) error = AwaitResponse(tag, offset, {}, &reply);
    if (LeavesStreamUnknown(error)) {
      Disconnect();
      return error;
    }
    PayloadReader reader(reply);
    *written = reader.GetU64();
    return error;
  });
}

int ServerConnection::Read(uint64_t handle, uint64_t offset, std::span<const IoPiece> pieces, uint64_t* bytes_read) {
  *bytes_read = 0;
  uint64_t length = TotalLength(pieces);
  return WithRetry(true, [&] {
    PayloadWriter request;
    request.PutU64(length);
    uint32_t tag = 0;
    std::vector<uint8_t> reply;
    int error = SendRequest(Operation::kRead, handle, offset, request.bytes(), &tag);
    if (error == 0) error = AwaitResponse(tag, offset, pieces, &reply);
    if (LeavesStreamUnknown(error)) {
      Disconnect();
      return error;
    }
    PayloadReader reader(reply);
    *bytes_read = std::min(reader.GetU64(), length);
    return error;
  });
}

}  // namespace limpwatch::testbed::client
