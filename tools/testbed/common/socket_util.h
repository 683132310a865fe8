// TCP on 127.0.0.1: listening, connecting, and blocking transfers with a
// deadline for the client side. The test-bed never binds anything but
// loopback.
#ifndef LIMPWATCH_TOOLS_TESTBED_COMMON_SOCKET_UTIL_H_
#define LIMPWATCH_TOOLS_TESTBED_COMMON_SOCKET_UTIL_H_

#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace limpwatch::testbed {

// A listening socket on host:port (port 0 picks a free one). Returns the fd
// or -1 with *error.
int ListenTcp(const std::string& host, uint16_t port, std::string* error);

// The port a bound socket listens on.
uint16_t LocalPort(int fd);

// Connects within timeout_ms; mark != 0 sets SO_MARK on the socket first (so
// a netfilter rule can tell this connection apart; needs CAP_NET_ADMIN).
// Returns a blocking fd with TCP_NODELAY, or -1 with *error (errno in *err).
int ConnectTcp(const std::string& host, uint16_t port, int timeout_ms, uint32_t mark, int* err, std::string* error);

bool SetNonBlocking(int fd);
void SetNoDelay(int fd);

// Monotonic clock in nanoseconds.
uint64_t MonotonicNs();

// Blocking transfers that give up at deadline_ns (MonotonicNs() based) or
// when *interrupted becomes true (checked every 100 ms). They return 0 or an
// errno: ETIMEDOUT, EINTR (interrupted), ECONNRESET (peer closed), or the
// socket's own error.
int SendVectorUntil(int fd, iovec* iov, int count, uint64_t deadline_ns, const std::atomic<bool>* interrupted);
int ReceiveExactlyUntil(int fd, void* data, size_t length, uint64_t deadline_ns, const std::atomic<bool>* interrupted);

}  // namespace limpwatch::testbed

#endif  // LIMPWATCH_TOOLS_TESTBED_COMMON_SOCKET_UTIL_H_
