// The local and peer addresses of sockets, per fd, beside the fd table.
//
// accept() leaves the peer's address (the kernel's answer, taken even when
// the caller passed no buffer), connect() the address it was given; the rest
// is filled in on request by lw_fd_describe() with getsockname/getpeername,
// never on the I/O path. Only fds below kEndpointTableSize are kept; beyond,
// lw_fd_describe() asks the kernel each time.
//
// A record is written under a per-fd sequence word taken by compare-and-swap;
// a writer that finds it taken gives up (addresses are a diagnostic, and a
// hook must never wait), and a reader retries a few times before reporting
// the address as unknown.
#ifndef LIMPWATCH_HOOKS_SRC_FD_ENDPOINTS_H_
#define LIMPWATCH_HOOKS_SRC_FD_ENDPOINTS_H_

#include <sys/socket.h>

#include <cstdint>
#include <string>

namespace limpwatch::hooks {

inline constexpr uint32_t kEndpointTableSize = 16384;

enum class EndpointSide : uint32_t { kLocal = 0, kPeer = 1 };

struct Endpoint {
  uint16_t family = AF_UNSPEC;  // AF_UNSPEC: unknown
  uint16_t port = 0;            // host order
  uint8_t address[16] = {};     // IPv4 in the first 4 bytes, IPv6, or the start of a Unix path
};

// Records `address` (of `length` bytes) as one side of `fd`.
void NoteEndpoint(int fd, EndpointSide side, const sockaddr* address, socklen_t length);

// Forgets both sides (a new object lives at `fd`).
void ClearEndpoints(int fd);

// `target` refers to the same socket as `source` now (dup family).
void CopyEndpoints(int source, int target);

// The recorded side, or false when none is recorded.
bool LoadEndpoint(int fd, EndpointSide side, Endpoint* out);

Endpoint EndpointFromSockaddr(const sockaddr* address, socklen_t length);

// "127.0.0.1:5000", "[::1]:5000", "unix:/run/x.sock", "unix:(unnamed)", "?".
std::string FormatEndpoint(const Endpoint& endpoint);

}  // namespace limpwatch::hooks

#endif  // LIMPWATCH_HOOKS_SRC_FD_ENDPOINTS_H_
