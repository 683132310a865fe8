// Loopback helpers for transport tests and benchmarks: transports bound to
// ephemeral ports and wired to each other, and a raw UDP socket that sends
// whatever bytes a test crafts.
#ifndef LIMPWATCH_TESTS_PEER_LOOPBACK_H_
#define LIMPWATCH_TESTS_PEER_LOOPBACK_H_

#include <liburing.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "limpwatch/analyzer/peer_transport.h"

namespace limpwatch::analyzer::testing {

inline PeerAddress Address(const std::string& text) { return *PeerAddress::ParseNumeric(text); }

inline PeerEndpoint Endpoint(const std::string& name, const PeerAddress& address) {
  return {name, "", address.port(), address, "test peer " + name, "", true};
}

inline std::unique_ptr<PeerTransport> OpenTransport(IoPreference io, const std::string& bind = "127.0.0.1:0",
                                                    std::optional<PeerKey> key = std::nullopt,
                                                    std::string* error_out = nullptr) {
  PeerTransportOptions options;
  options.bind = Address(bind);
  options.io = io;
  options.key = std::move(key);
  std::string error;
  auto transport = PeerTransport::Create(std::move(options), &error);
  if (error_out != nullptr) *error_out = error;
  return transport;
}

// Makes every transport a peer of every other, reached at its local address.
inline bool ConnectAll(const std::vector<PeerTransport*>& transports) {
  for (PeerTransport* transport : transports) {
    std::vector<PeerEndpoint> peers;
    for (PeerTransport* other : transports) {
      if (other != transport) peers.push_back(Endpoint(other->local_address().ToString(), other->local_address()));
    }
    std::string error;
    if (!transport->SetPeers(peers, &error)) return false;
  }
  return true;
}

// Polls until `count` summaries arrived or `limit` passed.
inline std::vector<ReceivedSummary> PollUntil(PeerTransport& transport, size_t count,
                                              std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  std::vector<ReceivedSummary> received;
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (received.size() < count && std::chrono::steady_clock::now() < deadline) {
    for (auto& summary : transport.Poll(std::chrono::milliseconds(50))) received.push_back(std::move(summary));
  }
  return received;
}

// A plain UDP socket on an ephemeral loopback port.
class RawSocket {
 public:
  explicit RawSocket(const std::string& bind = "127.0.0.1:0") {
    PeerAddress address = Address(bind);
    family_ = address.is_ipv6() ? AF_INET6 : AF_INET;
    fd_ = ::socket(family_, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_storage storage;
    socklen_t length = address.ToSockaddr(family_, &storage);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&storage), length);
    socklen_t bound_length = sizeof(storage);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&storage), &bound_length);
    address_ = *PeerAddress::FromSockaddr(reinterpret_cast<sockaddr*>(&storage), bound_length);
  }
  ~RawSocket() { ::close(fd_); }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  const PeerAddress& address() const { return address_; }

  bool SendTo(const PeerAddress& destination, const std::vector<uint8_t>& bytes) const {
    sockaddr_storage storage;
    socklen_t length = destination.ToSockaddr(family_, &storage);
    return ::sendto(fd_, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&storage), length) ==
           static_cast<ssize_t>(bytes.size());
  }

 private:
  int fd_ = -1;
  int family_ = AF_INET;
  PeerAddress address_;
};

// Whether this host has an IPv6 loopback to bind to.
inline bool Ipv6LoopbackAvailable() {
  int fd = ::socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_loopback;
  bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  ::close(fd);
  return bound;
}

// Whether this kernel lets this process use io_uring at all.
inline bool IoUringAvailable() {
  io_uring ring;
  if (io_uring_queue_init(4, &ring, 0) != 0) return false;
  io_uring_queue_exit(&ring);
  return true;
}

}  // namespace limpwatch::analyzer::testing

#endif  // LIMPWATCH_TESTS_PEER_LOOPBACK_H_
