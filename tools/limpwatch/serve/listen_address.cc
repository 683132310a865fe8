#include "serve/listen_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace limpwatch::cli::serve {

bool ParseListenAddress(std::string_view text, ListenAddress* out, std::string* error) {
  std::string_view host;
  std::string_view port;
  if (text.starts_with("[")) {
    size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      *error = "listen address '" + std::string(text) + "' is not [IPV6]:PORT";
      return false;
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || text.find(':') != colon) {
      *error = "listen address '" + std::string(text) + "' is not ADDR:PORT (an IPv6 address goes in brackets)";
      return false;
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  unsigned value = 0;
  auto [end, problem] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (host.empty() || port.empty() || problem != std::errc() || end != port.data() + port.size() || value > 65535) {
    *error = "listen address '" + std::string(text) + "' needs a host and a port from 0 to 65535";
    return false;
  }
  out->host = host;
  out->port = static_cast<uint16_t>(value);
  return true;
}

int OpenListeningSocket(const ListenAddress& address, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  std::string port = std::to_string(address.port);
  int status = getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found);
  if (status != 0) {
    *error = "cannot listen on " + address.host + ": " + gai_strerror(status);
    return -1;
  }
  std::string last_problem = "no address";
  for (addrinfo* candidate = found; candidate != nullptr; candidate = candidate->ai_next) {
    int fd =
        socket(candidate->ai_family, candidate->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, candidate->ai_protocol);
    if (fd < 0) {
      last_problem = std::strerror(errno);
      continue;
    }
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (bind(fd, candidate->ai_addr, candidate->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) {
      freeaddrinfo(found);
      return fd;
    }
    last_problem = std::strerror(errno);
    close(fd);
  }
  freeaddrinfo(found);
  *error = "cannot listen on " + address.host + ":" + port + ": " + last_problem;
  return -1;
}

std::string BoundAddress(int fd) {
  sockaddr_storage storage{};
  socklen_t length = sizeof storage;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &length) != 0) return "?";
  char text[INET6_ADDRSTRLEN] = "";
  if (storage.ss_family == AF_INET6) {
    auto* address = reinterpret_cast<sockaddr_in6*>(&storage);
    inet_ntop(AF_INET6, &address->sin6_addr, text, sizeof text);
    return "[" + std::string(text) + "]:" + std::to_string(ntohs(address->sin6_port));
  }
  auto* address = reinterpret_cast<sockaddr_in*>(&storage);
  inet_ntop(AF_INET, &address->sin_addr, text, sizeof text);
  return std::string(text) + ":" + std::to_string(ntohs(address->sin_port));
}

}  // namespace limpwatch::cli::serve
