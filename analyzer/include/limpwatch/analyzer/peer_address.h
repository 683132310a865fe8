// A peer's UDP address (IPv4 or IPv6, with port) as a plain value.
//
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d, what a dual-stack IPv6 socket
// reports for an IPv4 sender) are stored as the IPv4 address, so a peer
// configured as 127.0.0.1:4334 is recognised whichever socket family
// received its datagram.
#ifndef LIMPWATCH_ANALYZER_PEER_ADDRESS_H_
#define LIMPWATCH_ANALYZER_PEER_ADDRESS_H_

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace limpwatch::analyzer {

class PeerAddress {
 public:
  PeerAddress() = default;

  // From a socket address of family AF_INET or AF_INET6; nullopt otherwise.
  static std::optional<PeerAddress> FromSockaddr(const sockaddr* address, socklen_t length);

  // A numeric literal with port: "127.0.0.1:4334" or "[::1]:4334". No name
  // resolution (see peer_config.h for names).
  static std::optional<PeerAddress> ParseNumeric(std::string_view text);

  // A numeric host without port ("127.0.0.1", "::1") and a port.
  static std::optional<PeerAddress> FromNumericHost(const std::string& host, uint16_t port);

  bool is_ipv6() const { return family_ == AF_INET6; }
  bool is_unspecified() const;  // 0.0.0.0 or ::
  uint16_t port() const { return port_; }
  PeerAddress WithPort(uint16_t port) const;

  // Writes the address for a socket of `socket_family`: an IPv4 address for
  // an AF_INET6 socket becomes IPv4-mapped. Returns 0 when the address cannot
  // be reached from that family (IPv6 from an AF_INET socket).
  socklen_t ToSockaddr(int socket_family, sockaddr_storage* out) const;

  // "127.0.0.1:4334", "[::1]:4334".
  std::string ToString() const;

  bool operator==(const PeerAddress& other) const = default;

 private:
  int family_ = AF_INET;
  uint16_t port_ = 0;
  std::array<uint8_t, 16> bytes_{};  // IPv4 in the first 4
  uint32_t scope_id_ = 0;
};

// A host name or numeric address resolved once with getaddrinfo (the first
// address it returns). Blocks for as long as the resolver does: call it when
// loading the configuration, never per window. nullopt and a one-line
// *error when the name does not resolve.
std::optional<PeerAddress> ResolvePeerHost(const std::string& host, uint16_t port, std::string* error);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_PEER_ADDRESS_H_
