#include "limpwatch/analyzer/peer_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cstring>

#include "host_port.h"

namespace limpwatch::analyzer {

namespace {

constexpr uint8_t kMappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

}  // namespace

std::optional<PeerAddress> PeerAddress::FromSockaddr(const sockaddr* address, socklen_t length) {
  PeerAddress result;
  if (address->sa_family == AF_INET && length >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    sockaddr_in v4;
    std::memcpy(&v4, address, sizeof(v4));
    result.family_ = AF_INET;
    result.port_ = ntohs(v4.sin_port);
    std::memcpy(result.bytes_.data(), &v4.sin_addr, 4);
    return result;
  }
  if (address->sa_family == AF_INET6 && length >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    sockaddr_in6 v6;
    std::memcpy(&v6, address, sizeof(v6));
    result.port_ = ntohs(v6.sin6_port);
    if (std::memcmp(&v6.sin6_addr, kMappedPrefix, sizeof(kMappedPrefix)) == 0) {
      result.family_ = AF_INET;
      std::memcpy(result.bytes_.data(), reinterpret_cast<const uint8_t*>(&v6.sin6_addr) + 12, 4);
      return result;
    }
    result.family_ = AF_INET6;
    std::memcpy(result.bytes_.data(), &v6.sin6_addr, 16);
    result.scope_id_ = v6.sin6_scope_id;
    return result;
  }
  return std::nullopt;
}

std::optional<PeerAddress> PeerAddress::FromNumericHost(const std::string& host, uint16_t port) {
  sockaddr_in v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4.sin_addr) == 1) {
    v4.sin_family = AF_INET;
    v4.sin_port = htons(port);
    return FromSockaddr(reinterpret_cast<const sockaddr*>(&v4), sizeof(v4));
  }
  sockaddr_in6 v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6.sin6_addr) == 1) {
    v6.sin6_family = AF_INET6;
    v6.sin6_port = htons(port);
    return FromSockaddr(reinterpret_cast<const sockaddr*>(&v6), sizeof(v6));
  }
  return std::nullopt;
}

std::optional<PeerAddress> PeerAddress::ParseNumeric(std::string_view text) {
  std::string ignored;
  auto split = SplitHostPort(text, &ignored);
  if (!split) return std::nullopt;
  return FromNumericHost(split->host, split->port);
}

bool PeerAddress::is_unspecified() const {
  size_t length = family_ == AF_INET ? 4 : 16;
  for (size_t i = 0; i < length; ++i) {
    if (bytes_[i] != 0) return false;
  }
  return true;
}

PeerAddress PeerAddress::WithPort(uint16_t port) const {
  PeerAddress copy = *this;
  copy.port_ = port;
  return copy;
}

socklen_t PeerAddress::ToSockaddr(int socket_family, sockaddr_storage* out) const {
  std::memset(out, 0, sizeof(*out));
  if (socket_family == AF_INET) {
    if (family_ != AF_INET) return 0;
    auto* v4 = reinterpret_cast<sockaddr_in*>(out);
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port_);
    std::memcpy(&v4->sin_addr, bytes_.data(), 4);
    return sizeof(sockaddr_in);
  }
  if (socket_family == AF_INET6) {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(out);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port_);
    if (family_ == AF_INET) {
      auto* bytes = reinterpret_cast<uint8_t*>(&v6->sin6_addr);
      std::memcpy(bytes, kMappedPrefix, sizeof(kMappedPrefix));
      std::memcpy(bytes + 12, bytes_.data(), 4);
    } else {
      std::memcpy(&v6->sin6_addr, bytes_.data(), 16);
      v6->sin6_scope_id = scope_id_;
    }
    return sizeof(sockaddr_in6);
  }
  return 0;
}

std::string PeerAddress::ToString() const {
  char host[INET6_ADDRSTRLEN] = {};
  inet_ntop(family_, bytes_.data(), host, sizeof(host));
  if (family_ == AF_INET6) return "[" + std::string(host) + "]:" + std::to_string(port_);
  return std::string(host) + ":" + std::to_string(port_);
}

std::optional<PeerAddress> ResolvePeerHost(const std::string& host, uint16_t port, std::string* error) {
  if (auto numeric = PeerAddress::FromNumericHost(host, port)) return numeric;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  // No AI_ADDRCONFIG: on a host with only loopback configured it would make
  // "localhost" unresolvable.
  addrinfo* results = nullptr;
  int status = getaddrinfo(host.c_str(), nullptr, &hints, &results);
  if (status != 0 || results == nullptr) {
    *error = "cannot resolve host '" + host + "': " + gai_strerror(status);
    return std::nullopt;
  }
  std::optional<PeerAddress> resolved;
  for (addrinfo* entry = results; entry != nullptr && !resolved; entry = entry->ai_next) {
    if (auto address = PeerAddress::FromSockaddr(entry->ai_addr, entry->ai_addrlen)) resolved = address->WithPort(port);
  }
  freeaddrinfo(results);
  if (!resolved) *error = "host '" + host + "' has no IPv4 or IPv6 address";
  return resolved;
}

}  // namespace limpwatch::analyzer
