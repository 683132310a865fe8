// read, write and their positioned and vectored forms: counted per fd kind,
// with the bytes each call transferred.
#include "hook_export.h"
#include "io_accounting.h"
#include "real_calls.h"

using limpwatch::hooks::CountedTransfer;
using limpwatch::hooks::g_real;
using limpwatch::hooks::RealOf;
using limpwatch::hooks::RawSyscall;
using limpwatch::shm::IoOperation;

LW_INTERPOSED ssize_t read(int fd, void* buffer, size_t count) {
  return CountedTransfer(fd, IoOperation::kRead, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.read)) return real(fd, buffer, count);
    return RawSyscall(SYS_read, fd, buffer, count);
  });
}

LW_INTERPOSED ssize_t write(int fd, const void* buffer, size_t count) {
  return CountedTransfer(fd, IoOperation::kWrite, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.write)) return real(fd, buffer, count);
    return RawSyscall(SYS_write, fd, buffer, count);
  });
}

LW_INTERPOSED ssize_t pread(int fd, void* buffer, size_t count, off_t offset) {
  return CountedTransfer(fd, IoOperation::kRead, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.pread)) return real(fd, buffer, count, offset);
    return RawSyscall(SYS_pread64, fd, buffer, count, offset);
  });
}

LW_INTERPOSED ssize_t pread64(int fd, void* buffer, size_t count, off64_t offset) {
  return CountedTransfer(fd, IoOperation::kRead, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.pread64)) return real(fd, buffer, count, offset);
    return RawSyscall(SYS_pread64, fd, buffer, count, offset);
  });
}

LW_INTERPOSED ssize_t pwrite(int fd, const void* buffer, size_t count, off_t offset) {
  return CountedTransfer(fd, IoOperation::kWrite, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.pwrite)) return real(fd, buffer, count, offset);
    return RawSyscall(SYS_pwrite64, fd, buffer, count, offset);
  });
}

LW_INTERPOSED ssize_t pwrite64(int fd, const void* buffer, size_t count, off64_t offset) {
  return CountedTransfer(fd, IoOperation::kWrite, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.pwrite64)) return real(fd, buffer, count, offset);
    return RawSyscall(SYS_pwrite64, fd, buffer, count, offset);
  });
}

LW_INTERPOSED ssize_t readv(int fd, const iovec* vector, int count) {
  return CountedTransfer(fd, IoOperation::kRead, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.readv)) return real(fd, vector, count);
    return RawSyscall(SYS_readv, fd, vector, count);
  });
}

LW_INTERPOSED ssize_t writev(int fd, const iovec* vector, int count) {
  return CountedTransfer(fd, IoOperation::kWrite, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.writev)) return real(fd, vector, count);
    return RawSyscall(SYS_writev, fd, vector, count);
  });
}

// The kernel takes the offset as two halves; on x86-64 the high one is unused.
LW_INTERPOSED ssize_t preadv(int fd, const iovec* vector, int count, off_t offset) {
  return CountedTransfer(fd, IoOperation::kRead, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.preadv)) return real(fd, vector, count, offset);
    return RawSyscall(SYS_preadv, fd, vector, count, offset, 0);
  });
}

LW_INTERPOSED ssize_t preadv64(int fd, const iovec* vector, int count, off64_t offset) {
  return CountedTransfer(fd, IoOperation::kRead, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.preadv64)) return real(fd, vector, count, offset);
    return RawSyscall(SYS_preadv, fd, vector, count, offset, 0);
  });
}

LW_INTERPOSED ssize_t pwritev(int fd, const iovec* vector, int count, off_t offset) {
  return CountedTransfer(fd, IoOperation::kWrite, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.pwritev)) return real(fd, vector, count, offset);
    return RawSyscall(SYS_pwritev, fd, vector, count, offset, 0);
  });
}

LW_INTERPOSED ssize_t pwritev64(int fd, const iovec* vector, int count, off64_t offset) {
  return CountedTransfer(fd, IoOperation::kWrite, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.pwritev64)) return real(fd, vector, count, offset);
    return RawSyscall(SYS_pwritev, fd, vector, count, offset, 0);
  });
}

LW_INTERPOSED ssize_t preadv2(int fd, const iovec* vector, int count, off_t offset, int flags) {
  return CountedTransfer(fd, IoOperation::kRead, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.preadv2)) return real(fd, vector, count, offset, flags);
    return RawSyscall(SYS_preadv2, fd, vector, count, offset, 0, flags);
  });
}

LW_INTERPOSED ssize_t preadv64v2(int fd, const iovec* vector, int count, off64_t offset, int flags) {
  return CountedTransfer(fd, IoOperation::kRead, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.preadv64v2)) return real(fd, vector, count, offset, flags);
    return RawSyscall(SYS_preadv2, fd, vector, count, offset, 0, flags);
  });
}

LW_INTERPOSED ssize_t pwritev2(int fd, const iovec* vector, int count, off_t offset, int flags) {
  return CountedTransfer(fd, IoOperation::kWrite, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.pwritev2)) return real(fd, vector, count, offset, flags);
    return RawSyscall(SYS_pwritev2, fd, vector, count, offset, 0, flags);
  });
}

LW_INTERPOSED ssize_t pwritev64v2(int fd, const iovec* vector, int count, off64_t offset, int flags) {
  return CountedTransfer(fd, IoOperation::kWrite, [=]() -> ssize_t {
    if (auto real = RealOf(g_real.pwritev64v2)) return real(fd, vector, count, offset, flags);
    return RawSyscall(SYS_pwritev2, fd, vector, count, offset, 0, flags);
  });
}
