// Socket calls: transfers are counted per socket kind; socket, accept and
// connect keep the fd table (kind, and the role that tells nsread from
// ncread) and the endpoint table current.
#include <cerrno>

#include "fd_endpoints.h"
#include "hook_export.h"
#include "io_accounting.h"
#include "real_calls.h"

namespace limpwatch::hooks {
namespace {

using shm::FdKind;
using shm::IoOperation;

FdInfo SocketInfo(FdKind kind) {
  FdInfo info;
  info.known = true;
  info.checked = true;
  info.kind = kind;
  return info;
}

// A connection accepted on `listener` now lives at `fd`: same kind as the
// listener when that is known, and the peer the kernel reported (if known).
void NoteAccepted(int listener, int fd, const sockaddr* peer, socklen_t peer_length) {
  uint64_t listener_entry = LoadFdEntry(listener);
  FdInfo info;
  if (IsCheckedEntry(listener_entry)) info = SocketInfo(EntryKind(listener_entry));
  info.has_role = true;
  info.role = shm::SocketRole::kAccepted;
  NoteFdOpened(fd, info);
  ClearEndpoints(fd);
  if (peer != nullptr) NoteEndpoint(fd, EndpointSide::kPeer, peer, peer_length);
}

template <typename Accept>
int CountedAccept(int listener, sockaddr* address, socklen_t* length, Accept accept) {
  // With no buffer from the caller the kernel's answer goes to ours, so the
  // peer is known without asking again. The caller's own buffer is not read:
  // its size is unknown once the kernel has written the length, and reading
  // it before the call could fault where the kernel would return EFAULT
  // (lw_fd_describe() asks getpeername() instead).
  sockaddr_storage own{};
  socklen_t own_length = sizeof own;
  bool own_buffer = address == nullptr;
  CountedCall call;
  call.Start();
  int fd = own_buffer ? accept(reinterpret_cast<sockaddr*>(&own), &own_length) : accept(address, length);
  call.Stop();
  if (fd >= 0) {
    NoteAccepted(listener, fd, own_buffer ? reinterpret_cast<sockaddr*>(&own) : nullptr,
                 std::min<socklen_t>(own_length, sizeof own));
  }
  if (call.counting()) call.Count(KnownKind(listener, LoadFdEntry(listener)), IoOperation::kAccept, fd < 0);
  return fd;
}

// A receive with MSG_PEEK (BMI peeks at every message header before reading
// it): a read call with its time, but no bytes (they are read again) and
// not a request read of the socket's role.
template <typename Peek>
[[gnu::noinline, gnu::no_instrument_function]] ssize_t CountedPeek(int fd, Peek peek) {
  CountedCall call;
  call.Start();
  ssize_t result = peek();
  call.Stop();
  if (call.counting()) {
    uint64_t entry = LoadFdEntry(fd);
    FdKind kind = IsCheckedEntry(entry) ? EntryKind(entry) : ClassifyFd(fd, entry, &entry);
    call.Count(kind, IoOperation::kRead, result < 0);
  }
  return result;
}

}  // namespace
}  // namespace limpwatch::hooks

using limpwatch::hooks::CountedCall;
using limpwatch::hooks::CountedTransfer;
using limpwatch::hooks::EndpointSide;
using limpwatch::hooks::g_real;
using limpwatch::hooks::RealOf;
using limpwatch::hooks::RawSyscall;
using limpwatch::shm::IoOperation;

LW_INTERPOSED ssize_t recv(int fd, void* buffer, size_t count, int flags) {
  auto receive = [=]() -> ssize_t {
    if (auto real = RealOf(g_real.recv)) return real(fd, buffer, count, flags);
    return RawSyscall(SYS_recvfrom, fd, buffer, count, flags, nullptr, nullptr);
  };
  if (__builtin_expect((flags & MSG_PEEK) != 0, 0)) return limpwatch::hooks::CountedPeek(fd, receive);
  return CountedTransfer(fd, IoOperation::kRead, receive);
}

LW_INTERPOSED ssize_t recvfrom(int fd, void* buffer, size_t count, int flags, sockaddr* address,
                               socklen_t* length) {
  auto receive = [=]() -> ssize_t {
    if (auto real = RealOf(g_real.recvfrom)) return real(fd, buffer, count, flags, address, length);
    return RawSyscall(SYS_recvfrom, fd, buffer, count, flags, address, length);
  };
  if (__builtin_expect((flags & MSG_PEEK) != 0, 0)) return limpwatch::hooks::CountedPeek(fd, receive);
  return CountedTransfer(fd, IoOperation::kRead, receive);
}

LW_INTERPOSED ssize_t recvmsg(int fd, msghdr* message, int flags) {
  auto receive = [=]() -> ssize_t {
    if (auto real = RealOf(g_real.recvmsg)) return real(fd, message, flags);
    return RawSyscall(SYS_recvmsg, fd, message, flags);
  };
  if (__builtin_expect((flags & MSG_PEEK) != 0, 0)) return limpwatch::hooks::CountedPeek(fd, receive);
  return CountedTransfer(fd, IoOperation::kRead, receive);
}

LW_INTERPOSED ssize_t send(int fd, const void* buffer, size_t count, int flags) {
  return CountedTransfer(fd, IoOperation::kWrite, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.send)) return real(fd, buffer, count, flags);
    return RawSyscall(SYS_sendto, fd, buffer, count, flags, nullptr, 0);
  });
}

LW_INTERPOSED ssize_t sendto(int fd, const void* buffer, size_t count, int flags, const sockaddr* address,
                             socklen_t length) {
  return CountedTransfer(fd, IoOperation::kWrite, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.sendto)) return real(fd, buffer, count, flags, address, length);
    return RawSyscall(SYS_sendto, fd, buffer, count, flags, address, length);
  });
}

LW_INTERPOSED ssize_t sendmsg(int fd, const msghdr* message, int flags) {
  return CountedTransfer(fd, IoOperation::kWrite, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.sendmsg)) return real(fd, message, flags);
    return RawSyscall(SYS_sendmsg, fd, message, flags);
  });
}

LW_INTERPOSED int socket(int domain, int type, int protocol) noexcept {
  limpwatch::shm::FdKind kind = limpwatch::hooks::SocketKind(domain, type, protocol);
  CountedCall call;
  call.Start();
  int fd = RealOf(g_real.socket) ? RealOf(g_real.socket)(domain, type, protocol)
                         : static_cast<int>(RawSyscall(SYS_socket, domain, type, protocol));
  call.Stop();
  if (fd >= 0) {
    limpwatch::hooks::NoteFdOpened(fd, limpwatch::hooks::SocketInfo(kind));
    limpwatch::hooks::ClearEndpoints(fd);
  }
  call.Count(kind, IoOperation::kOpen, fd < 0);
  return fd;
}

LW_INTERPOSED int socketpair(int domain, int type, int protocol, int fds[2]) noexcept {
  limpwatch::shm::FdKind kind = limpwatch::hooks::SocketKind(domain, type, protocol);
  CountedCall call;
  call.Start();
  int result = RealOf(g_real.socketpair) ? RealOf(g_real.socketpair)(domain, type, protocol, fds)
                                 : static_cast<int>(RawSyscall(SYS_socketpair, domain, type, protocol, fds));
  call.Stop();
  if (result == 0) {
    for (int side = 0; side < 2; ++side) {
      limpwatch::hooks::NoteFdOpened(fds[side], limpwatch::hooks::SocketInfo(kind));
      limpwatch::hooks::ClearEndpoints(fds[side]);
    }
  }
  call.Count(kind, IoOperation::kOpen, result != 0);
  return result;
}

LW_INTERPOSED int accept(int listener, sockaddr* address, socklen_t* length) {
  return limpwatch::hooks::CountedAccept(listener, address, length, [&](sockaddr* peer, socklen_t* peer_length) {
    if (auto real = RealOf(g_real.accept)) return real(listener, peer, peer_length);
    return static_cast<int>(RawSyscall(SYS_accept4, listener, peer, peer_length, 0));
  });
}

LW_INTERPOSED int accept4(int listener, sockaddr* address, socklen_t* length, int flags) {
  return limpwatch::hooks::CountedAccept(listener, address, length, [&](sockaddr* peer, socklen_t* peer_length) {
    if (auto real = RealOf(g_real.accept4)) return real(listener, peer, peer_length, flags);
    return static_cast<int>(RawSyscall(SYS_accept4, listener, peer, peer_length, flags));
  });
}

// A socket that connect() was called on is a client's, also while a
// non-blocking connect is still in progress.
LW_INTERPOSED int connect(int fd, const sockaddr* address, socklen_t length) {
  CountedCall call;
  call.Start();
  int result = RealOf(g_real.connect) ? RealOf(g_real.connect)(fd, address, length)
                              : static_cast<int>(RawSyscall(SYS_connect, fd, address, length));
  call.Stop();
  int error = call.counting() ? call.error() : errno;
  if (result == 0 || error == EINPROGRESS || error == EINTR || error == EALREADY) {
    limpwatch::hooks::NoteFdRole(fd, limpwatch::shm::SocketRole::kConnected);
    limpwatch::hooks::NoteEndpoint(fd, EndpointSide::kPeer, address, length);
  }
  if (call.counting()) {
    call.Count(limpwatch::hooks::KnownKind(fd, limpwatch::hooks::LoadFdEntry(fd)), IoOperation::kConnect, result != 0);
  }
  return result;
}
