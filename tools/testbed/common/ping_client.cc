#include "common/ping_client.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/message_codec.h"
#include "common/socket_util.h"
#include "common/wire_format.h"

namespace limpwatch::testbed {

PingResult PingServer(const std::string& host, uint16_t port, int count, int timeout_ms) {
  PingResult result;
  uint64_t start = MonotonicNs();
  int fd = ConnectTcp(host, port, timeout_ms, 0, &result.error, &result.message);
  if (fd < 0) return result;
  result.connect_us = double(MonotonicNs() - start) / 1e3;
  std::vector<double> rtts;
  for (int i = 0; i < count; ++i) {
    FrameHeader request;
    request.kind = FrameKind::kUnexpectedRequest;
    request.operation = Operation::kPing;
    request.tag = static_cast<uint32_t>(i + 1);
    uint8_t wire[kFrameHeaderSize];
    EncodeFrameHeader(request, wire);
    iovec iov{wire, sizeof wire};
    uint64_t sent_at = MonotonicNs();
    uint64_t deadline = sent_at + uint64_t(timeout_ms) * 1000000;
    int error = SendVectorUntil(fd, &iov, 1, deadline, nullptr);
    uint8_t reply_wire[kFrameHeaderSize];
    if (error == 0) error = ReceiveExactlyUntil(fd, reply_wire, sizeof reply_wire, deadline, nullptr);
    std::optional<FrameHeader> reply;
    std::vector<uint8_t> payload;
    if (error == 0) {
      reply = DecodeFrameHeader(reply_wire, &result.message);
      if (!reply || reply->kind != FrameKind::kExpectedResponse || reply->tag != request.tag) {
        error = EPROTO;
      } else {
        payload.resize(reply->payload_length);
        error = ReceiveExactlyUntil(fd, payload.data(), payload.size(), deadline, nullptr);
      }
    }
    if (error != 0) {
      result.error = error;
      if (result.message.empty()) result.message = std::string("ping: ") + strerror(error);
      close(fd);
      return result;
    }
    rtts.push_back(double(MonotonicNs() - sent_at) / 1e3);
    PayloadReader reader(payload);
    int32_t status = reader.GetI32();
    result.server_index = reader.GetU32();
    result.server_count = reader.GetU32();
    if (!reader.ok() || status != 0) {
      result.error = status != 0 ? status : EPROTO;
      result.message = "ping: bad reply";
      close(fd);
      return result;
    }
  }
  close(fd);
  if (!rtts.empty()) {
    std::sort(rtts.begin(), rtts.end());
    result.median_rtt_us = rtts[rtts.size() / 2];
  }
  result.ok = true;
  return result;
}

}  // namespace limpwatch::testbed
