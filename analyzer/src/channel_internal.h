// The two DatagramChannel implementations and what they share. Internal.
#ifndef LIMPWATCH_ANALYZER_SRC_CHANNEL_INTERNAL_H_
#define LIMPWATCH_ANALYZER_SRC_CHANNEL_INTERNAL_H_

#include <memory>
#include <string>

#include "limpwatch/analyzer/datagram_channel.h"

namespace limpwatch::analyzer {

// A bound socket on its way to a channel: closed on destruction unless a
// channel took it (and set fd to -1).
struct BoundSocket {
  BoundSocket() = default;
  BoundSocket(const BoundSocket&) = delete;
  BoundSocket& operator=(const BoundSocket&) = delete;
  ~BoundSocket();

  int fd = -1;
  int family = AF_INET;
  PeerAddress local;
};

// io_uring over `socket`; null with *refusal when io_uring cannot be used,
// in which case `socket` is left open for the fallback.
std::unique_ptr<DatagramChannel> OpenUringChannel(BoundSocket* socket, std::string* refusal);

// Plain non-blocking sockets over `socket` (takes it).
std::unique_ptr<DatagramChannel> OpenSocketChannel(BoundSocket* socket);

// CLOCK_MONOTONIC in nanoseconds, for deadlines.
int64_t ChannelNowNs();

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_SRC_CHANNEL_INTERNAL_H_
