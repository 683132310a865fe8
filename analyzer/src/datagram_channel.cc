#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string_view>

#include "channel_internal.h"
#include "limpwatch/analyzer/inherited_descriptors.h"
#include "limpwatch/analyzer/datagram_channel.h"

namespace limpwatch::analyzer {

namespace {

// Room for a burst of summaries from every peer while the analyzer is busy
// (the kernel caps it at net.core.rmem_max).
constexpr int kReceiveSocketBufferBytes = 1 << 20;

constexpr int kBindAttempts = 50;
constexpr long kBindRetryPauseNs = 100'000'000;

bool OpenBoundSocket(const PeerAddress& bind, BoundSocket* out, std::string* error) {
  int family = bind.is_ipv6() ? AF_INET6 : AF_INET;
  int fd = ::socket(family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
  if (fd < 0) {
    *error = std::string("cannot create a UDP socket: ") + strerror(errno);
    return false;
  }
  if (family == AF_INET6 && bind.is_unspecified()) {
    // [::] reaches IPv4 peers too, through IPv4-mapped addresses.
    int off = 0;
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
  }
  int buffer = kReceiveSocketBufferBytes;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));

  sockaddr_storage address;
  socklen_t length = bind.ToSockaddr(family, &address);
  // The parent of a daemonizing fork holds the port until it exits, and a
  // restarted server's predecessor until it is gone: wait for them a while.
  int bound = -1;
  for (int attempt = 0; attempt < kBindAttempts; ++attempt) {
    bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), length);
    if (bound == 0 || errno != EADDRINUSE) break;
    timespec pause{0, kBindRetryPauseNs};
    nanosleep(&pause, nullptr);
  }
  if (bound != 0) {
    int bind_errno = errno;
    *error = "cannot bind UDP " + bind.ToString() + ": " + strerror(bind_errno) +
             (bind_errno == EADDRINUSE ? " (waited 5 s for its holder to exit)" : "");
    ::close(fd);
    return false;
  }
  sockaddr_storage local;
  socklen_t local_length = sizeof(local);
  auto resolved = ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_length) == 0
                      ? PeerAddress::FromSockaddr(reinterpret_cast<sockaddr*>(&local), local_length)
                      : std::nullopt;
  RegisterAnalyzerDescriptor(fd);
  out->fd = fd;
  out->family = family;
  out->local = resolved.value_or(bind);
  return true;
}

}  // namespace

BoundSocket::~BoundSocket() {
  UnregisterAnalyzerDescriptor(fd);
  if (fd >= 0) ::close(fd);
}

const char* IoPathName(IoPath path) { return path == IoPath::kIoUring ? "io_uring" : "plain sockets"; }

int64_t ChannelNowNs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

DatagramDestination DatagramChannel::DestinationFor(const PeerAddress& address) const {
  DatagramDestination destination{};
  destination.length = address.ToSockaddr(socket_family_, &destination.address);
  return destination;
}

bool IoUringForcedOff() {
  const char* value = std::getenv(kIoUringVariable);
  if (value == nullptr) return false;
  std::string_view text(value);
  return text == "0" || text == "off" || text == "no" || text == "false";
}

std::unique_ptr<DatagramChannel> OpenDatagramChannel(const ChannelOptions& options, std::string* fallback_reason,
                                                     std::string* error) {
  fallback_reason->clear();
  error->clear();
  BoundSocket socket;
  if (!OpenBoundSocket(options.bind, &socket, error)) return nullptr;
  if (options.preference == IoPreference::kAuto) {
    if (IoUringForcedOff()) {
      *fallback_reason = std::string(kIoUringVariable) + "=" + std::getenv(kIoUringVariable) + " forces plain sockets";
    } else if (auto channel = OpenUringChannel(&socket, fallback_reason)) {
      return channel;
    }
  }
  return OpenSocketChannel(&socket);
}

}  // namespace limpwatch::analyzer
