#include "common/socket_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace limpwatch::testbed {
namespace {

bool FillAddress(const std::string& host, uint16_t port, sockaddr_in* address) {
  std::memset(address, 0, sizeof *address);
  address->sin_family = AF_INET;
  address->sin_port = htons(port);
  return inet_pton(AF_INET, host.c_str(), &address->sin_addr) == 1;
}

// Waits for `events` on fd until the deadline, in 100 ms slices so an
// interruption is seen. Returns 0 when ready, else an errno.
int WaitReady(int fd, short events, uint64_t deadline_ns, const std::atomic<bool>* interrupted) {
  for (;;) {
    if (interrupted != nullptr && interrupted->load(std::memory_order_relaxed)) return EINTR;
    uint64_t now = MonotonicNs();
    if (now >= deadline_ns) return ETIMEDOUT;
    int slice_ms = static_cast<int>(std::min<uint64_t>((deadline_ns - now) / 1000000 + 1, 100));
    pollfd poll_fd{fd, events, 0};
    int ready = poll(&poll_fd, 1, slice_ms);
    if (ready > 0) return 0;
    if (ready < 0 && errno != EINTR) return errno;
  }
}

}  // namespace

uint64_t MonotonicNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return uint64_t(now.tv_sec) * 1000000000u + uint64_t(now.tv_nsec);
}

int ListenTcp(const std::string& host, uint16_t port, std::string* error) {
  sockaddr_in address;
  if (!FillAddress(host, port, &address)) {
    *error = "bad IPv4 address " + host;
    return -1;
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + strerror(errno);
    return -1;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || listen(fd, 128) != 0) {
    *error = "listen on " + host + ":" + std::to_string(port) + ": " + strerror(errno);
    close(fd);
    return -1;
  }
  return fd;
}

uint16_t LocalPort(int fd) {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  return ntohs(address.sin_port);
}

int ConnectTcp(const std::string& host, uint16_t port, int timeout_ms, uint32_t mark, int* err, std::string* error) {
  sockaddr_in address;
  *err = 0;
  if (!FillAddress(host, port, &address)) {
    *err = EINVAL;
    *error = "bad IPv4 address " + host;
    return -1;
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    *err = errno;
    *error = std::string("socket: ") + strerror(errno);
    return -1;
  }
  if (mark != 0 && setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof mark) != 0) {
    *err = errno;
    *error = std::string("SO_MARK: ") + strerror(errno);
    close(fd);
    return -1;
  }
  int result = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  if (result != 0 && errno == EINPROGRESS) {
    int wait = WaitReady(fd, POLLOUT, MonotonicNs() + uint64_t(timeout_ms) * 1000000, nullptr);
    int socket_error = wait;
    if (wait == 0) {
      socklen_t length = sizeof socket_error;
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &socket_error, &length);
    }
    result = socket_error == 0 ? 0 : -1;
    errno = socket_error;
  }
  if (result != 0) {
    *err = errno;
    *error = "connect to " + host + ":" + std::to_string(port) + ": " + strerror(errno);
    close(fd);
    return -1;
  }
  int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  SetNoDelay(fd);
  return fd;
}

bool SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

void SetNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int SendVectorUntil(int fd, iovec* iov, int count, uint64_t deadline_ns, const std::atomic<bool>* interrupted) {
  while (count > 0) {
    if (iov->iov_len == 0) {
      ++iov;
      --count;
      continue;
    }
    msghdr message{};
    message.msg_iov = iov;
    message.msg_iovlen = static_cast<size_t>(std::min(count, IOV_MAX));
    ssize_t sent = sendmsg(fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return errno == EPIPE ? ECONNRESET : errno;
      int wait = WaitReady(fd, POLLOUT, deadline_ns, interrupted);
      if (wait != 0) return wait;
      continue;
    }
    auto remaining = static_cast<size_t>(sent);
    while (count > 0 && remaining >= iov->iov_len) {
      remaining -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + remaining;
      iov->iov_len -= remaining;
    }
  }
  return 0;
}

int ReceiveExactlyUntil(int fd, void* data, size_t length, uint64_t deadline_ns, const std::atomic<bool>* interrupted) {
  auto* cursor = static_cast<char*>(data);
  while (length > 0) {
    ssize_t got = recv(fd, cursor, length, MSG_DONTWAIT);
    if (got > 0) {
      cursor += got;
      length -= static_cast<size_t>(got);
      continue;
    }
    if (got == 0) return ECONNRESET;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return errno;
    int wait = WaitReady(fd, POLLIN, deadline_ns, interrupted);
    if (wait != 0) return wait;
  }
  return 0;
}

}  // namespace limpwatch::testbed
