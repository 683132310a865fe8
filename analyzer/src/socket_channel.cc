// The fallback channel: a non-blocking socket, sendto / recvfrom, ppoll.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "channel_internal.h"
#include "limpwatch/analyzer/inherited_descriptors.h"

namespace limpwatch::analyzer {

namespace {

class SocketChannel final : public DatagramChannel {
 public:
  explicit SocketChannel(BoundSocket* socket) : fd_(socket->fd) {
    socket->fd = -1;
    socket_family_ = socket->family;
    local_address_ = socket->local;
    int flags = ::fcntl(fd_, F_GETFL);
    if (flags >= 0) ::fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
  }
  ~SocketChannel() override {
    UnregisterAnalyzerDescriptor(fd_);
    ::close(fd_);
  }

  void SendToAll(std::span<const uint8_t> datagram, std::span<const DatagramDestination> destinations) override {
    for (const auto& destination : destinations) {
      ssize_t sent;
      do {
        sent = ::sendto(fd_, datagram.data(), datagram.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                        reinterpret_cast<const sockaddr*>(&destination.address), destination.length);
      } while (sent < 0 && errno == EINTR);
      if (sent == static_cast<ssize_t>(datagram.size())) {
        ++counters_.sent;
      } else {
        ++counters_.send_errors;
        counters_.last_send_errno = sent < 0 ? errno : EMSGSIZE;
      }
    }
  }

  size_t Poll(int64_t timeout_ns, size_t max_datagrams, std::vector<ReceivedDatagram>* out) override {
    int64_t deadline = ChannelNowNs() + std::max<int64_t>(timeout_ns, 0);
    size_t got = Drain(max_datagrams, out);
    while (got == 0) {
      int64_t remaining = deadline - ChannelNowNs();
      if (remaining <= 0) break;
      pollfd wanted{fd_, POLLIN, 0};
      timespec wait{static_cast<time_t>(remaining / 1'000'000'000), static_cast<long>(remaining % 1'000'000'000)};
      int ready = ::ppoll(&wanted, 1, &wait, nullptr);
      if (ready < 0 && errno != EINTR) {
        ++counters_.receive_errors;
        counters_.last_receive_errno = errno;
        break;
      }
      if (ready > 0) got += Drain(max_datagrams, out);
    }
    return got;
  }

  IoPath path() const override { return IoPath::kPlainSockets; }

 private:
  // Reads what is already queued, without waiting.
  size_t Drain(size_t max_datagrams, std::vector<ReceivedDatagram>* out) {
    size_t got = 0;
    while (got < max_datagrams) {
      sockaddr_storage source;
      socklen_t source_length = sizeof(source);
      // MSG_TRUNC: the return value is the datagram's true size.
      ssize_t size = ::recvfrom(fd_, buffer_, sizeof(buffer_), MSG_DONTWAIT | MSG_TRUNC,
                                reinterpret_cast<sockaddr*>(&source), &source_length);
      if (size < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
          ++counters_.receive_errors;
          counters_.last_receive_errno = errno;
        }
        break;
      }
      auto address = PeerAddress::FromSockaddr(reinterpret_cast<sockaddr*>(&source), source_length);
      if (!address) continue;
      ReceivedDatagram& datagram = out->emplace_back();
      datagram.source = *address;
      datagram.wire_size = static_cast<size_t>(size);
      datagram.bytes.assign(buffer_, buffer_ + std::min(datagram.wire_size, sizeof(buffer_)));
      ++got;
    }
    return got;
  }

  int fd_;
  uint8_t buffer_[kReceiveBufferBytes];
};

}  // namespace

std::unique_ptr<DatagramChannel> OpenSocketChannel(BoundSocket* socket) {
  return std::make_unique<SocketChannel>(socket);
}

}  // namespace limpwatch::analyzer
