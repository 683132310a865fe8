// The _FORTIFY_SOURCE entry points. A program built with -D_FORTIFY_SOURCE
// calls __read_chk instead of read when the buffer size is known, and
// __open_2 instead of open for some flag combinations; inside the C library
// they call the system call directly, so without these hooks such a
// program's I/O would not be seen at all. (__open_2 and friends live with
// the other opens, in hooks_descriptors.cc.)
#include <fcntl.h>

#include "hook_export.h"
#include "io_accounting.h"
#include "real_calls.h"

extern "C" [[noreturn]] void __chk_fail(void);

using limpwatch::hooks::CountedTransfer;
using limpwatch::hooks::g_real;
using limpwatch::hooks::RealOf;
using limpwatch::hooks::RawSyscall;
using limpwatch::shm::IoOperation;

LW_INTERPOSED ssize_t __read_chk(int fd, void* buffer, size_t count, size_t buffer_size) {
  return CountedTransfer(fd, IoOperation::kRead, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.read_chk)) return real(fd, buffer, count, buffer_size);
    if (count > buffer_size) __chk_fail();
    return RawSyscall(SYS_read, fd, buffer, count);
  });
}

LW_INTERPOSED ssize_t __pread_chk(int fd, void* buffer, size_t count, off_t offset, size_t buffer_size) {
  return CountedTransfer(fd, IoOperation::kRead, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.pread_chk)) return real(fd, buffer, count, offset, buffer_size);
    if (count > buffer_size) __chk_fail();
    return RawSyscall(SYS_pread64, fd, buffer, count, offset);
  });
}

LW_INTERPOSED ssize_t __pread64_chk(int fd, void* buffer, size_t count, off64_t offset, size_t buffer_size) {
  return CountedTransfer(fd, IoOperation::kRead, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.pread64_chk)) return real(fd, buffer, count, offset, buffer_size);
    if (count > buffer_size) __chk_fail();
    return RawSyscall(SYS_pread64, fd, buffer, count, offset);
  });
}

// A peek takes the peek path of recv / recvfrom (hooks_socket.cc), after the
// same check the C library makes.
LW_INTERPOSED ssize_t __recv_chk(int fd, void* buffer, size_t count, size_t buffer_size, int flags) {
  if (__builtin_expect((flags & MSG_PEEK) != 0, 0)) {
    if (count > buffer_size) __chk_fail();
    return recv(fd, buffer, count, flags);
  }
  return CountedTransfer(fd, IoOperation::kRead, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.recv_chk)) return real(fd, buffer, count, buffer_size, flags);
    if (count > buffer_size) __chk_fail();
    return RawSyscall(SYS_recvfrom, fd, buffer, count, flags, nullptr, nullptr);
  });
}

LW_INTERPOSED ssize_t __recvfrom_chk(int fd, void* buffer, size_t count, size_t buffer_size, int flags,
                                     sockaddr* address, socklen_t* length) {
  if (__builtin_expect((flags & MSG_PEEK) != 0, 0)) {
    if (count > buffer_size) __chk_fail();
    return recvfrom(fd, buffer, count, flags, address, length);
  }
  return CountedTransfer(fd, IoOperation::kRead, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.recvfrom_chk)) return real(fd, buffer, count, buffer_size, flags, address, length);
    if (count > buffer_size) __chk_fail();
    return RawSyscall(SYS_recvfrom, fd, buffer, count, flags, address, length);
  });
}

