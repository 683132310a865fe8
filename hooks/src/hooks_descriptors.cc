// Calls that create, duplicate and close file descriptors. They keep the fd
// table current whoever calls them (the runtime's own threads too), and are
// counted like any other call for recording threads.
//
// open() and friends are counted under kFile: a path was opened, and the fd
// is marked as an unchecked file until its first transfer asks the kernel
// (a FIFO or device opened by path then counts its reads under its real kind).
#include <fcntl.h>
#include <linux/close_range.h>

#include <cerrno>
#include <climits>
#include <cstdarg>

#include "fd_endpoints.h"
#include "hook_export.h"
#include "io_accounting.h"
#include "real_calls.h"

namespace limpwatch::hooks {
namespace {

using shm::FdKind;
using shm::IoOperation;

bool TakesMode(int flags) { return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE; }

template <typename Open>
int CountedOpen(Open open) {
  CountedCall call;
  call.StartSampled(FdKind::kFile, IoOperation::kOpen);
  int fd = open();
  call.Stop();
  if (fd >= 0) {
    FdInfo info;
    info.known = true;
    info.kind = FdKind::kFile;  // unchecked until first used
    NoteFdOpened(fd, info);
    ClearEndpoints(fd);
  }
  call.Count(FdKind::kFile, IoOperation::kOpen, fd < 0);
  return fd;
}

// The kind of an fd as far as the table knows, without asking the kernel
// (for calls that are about to make the fd go away).
FdKind TableKind(uint64_t entry) { return (entry & fd_bits::kKindMask) != 0 ? EntryKind(entry) : FdKind::kOther; }

// dup, dup2, dup3 and fcntl(F_DUPFD*): `target` is closed first when it is
// a specific, different fd (dup2/dup3), and copies `source` on success.
template <typename Duplicate>
int CountedDuplicate(int source, int target, Duplicate duplicate) {
  if (target >= 0 && target != source) NoteFdClosing(target);
  CountedCall call;
  call.Start();
  int fd = duplicate();
  call.Stop();
  if (fd >= 0 && fd != source) {
    NoteFdDuplicated(source, fd);
    CopyEndpoints(source, fd);
  }
  if (call.counting()) call.Count(KnownKind(source, LoadFdEntry(source)), IoOperation::kOther, fd < 0);
  return fd;
}

template <typename Pipe>
int CountedPipe(int fds[2], Pipe pipe) {
  CountedCall call;
  call.Start();
  int result = pipe();
  call.Stop();
  if (result == 0) {
    FdInfo info;
    info.known = true;
    info.checked = true;
    info.kind = FdKind::kPipe;
    NoteFdOpened(fds[0], info);
    NoteFdOpened(fds[1], info);
  }
  call.Count(FdKind::kPipe, IoOperation::kOpen, result != 0);
  return result;
}

mode_t ModeArgument(int flags, va_list arguments) {
  return TakesMode(flags) ? static_cast<mode_t>(va_arg(arguments, unsigned int)) : 0;
}

}  // namespace
}  // namespace limpwatch::hooks

using limpwatch::hooks::CountedCall;
using limpwatch::hooks::CountedOpen;
using limpwatch::hooks::g_real;
using limpwatch::hooks::RealOf;
using limpwatch::hooks::RawSyscall;
using limpwatch::shm::IoOperation;

LW_INTERPOSED int open(const char* path, int flags, ...) {
  va_list arguments;
  va_start(arguments, flags);
  mode_t mode = limpwatch::hooks::ModeArgument(flags, arguments);
  va_end(arguments);
  return CountedOpen([&] {
    if (auto real = RealOf(g_real.open)) return real(path, flags, mode);
    return static_cast<int>(RawSyscall(SYS_openat, AT_FDCWD, path, flags, mode));
  });
}

LW_INTERPOSED int open64(const char* path, int flags, ...) {
  va_list arguments;
  va_start(arguments, flags);
  mode_t mode = limpwatch::hooks::ModeArgument(flags, arguments);
  va_end(arguments);
  return CountedOpen([&] {
    if (auto real = RealOf(g_real.open64)) return real(path, flags, mode);
    return static_cast<int>(RawSyscall(SYS_openat, AT_FDCWD, path, flags | O_LARGEFILE, mode));
  });
}

LW_INTERPOSED int openat(int directory, const char* path, int flags, ...) {
  va_list arguments;
  va_start(arguments, flags);
  mode_t mode = limpwatch::hooks::ModeArgument(flags, arguments);
  va_end(arguments);
  return CountedOpen([&] {
    if (auto real = RealOf(g_real.openat)) return real(directory, path, flags, mode);
    return static_cast<int>(RawSyscall(SYS_openat, directory, path, flags, mode));
  });
}

LW_INTERPOSED int openat64(int directory, const char* path, int flags, ...) {
  va_list arguments;
  va_start(arguments, flags);
  mode_t mode = limpwatch::hooks::ModeArgument(flags, arguments);
  va_end(arguments);
  return CountedOpen([&] {
    if (auto real = RealOf(g_real.openat64)) return real(directory, path, flags, mode);
    return static_cast<int>(RawSyscall(SYS_openat, directory, path, flags | O_LARGEFILE, mode));
  });
}

LW_INTERPOSED int creat(const char* path, mode_t mode) {
  return CountedOpen([&] {
    if (auto real = RealOf(g_real.creat)) return real(path, mode);
    return static_cast<int>(RawSyscall(SYS_openat, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode));
  });
}

LW_INTERPOSED int creat64(const char* path, mode_t mode) {
  return CountedOpen([&] {
    if (auto real = RealOf(g_real.creat64)) return real(path, mode);
    return static_cast<int>(
        RawSyscall(SYS_openat, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC | O_LARGEFILE, mode));
  });
}

// The _FORTIFY_SOURCE forms of open (see hooks_fortify.cc): no mode argument.
LW_INTERPOSED int __open_2(const char* path, int flags) {
  return CountedOpen([&] {
    if (auto real = RealOf(g_real.open_2)) return real(path, flags);
    return static_cast<int>(RawSyscall(SYS_openat, AT_FDCWD, path, flags, 0));
  });
}

LW_INTERPOSED int __open64_2(const char* path, int flags) {
  return CountedOpen([&] {
    if (auto real = RealOf(g_real.open64_2)) return real(path, flags);
    return static_cast<int>(RawSyscall(SYS_openat, AT_FDCWD, path, flags | O_LARGEFILE, 0));
  });
}

LW_INTERPOSED int __openat_2(int directory, const char* path, int flags) {
  return CountedOpen([&] {
    if (auto real = RealOf(g_real.openat_2)) return real(directory, path, flags);
    return static_cast<int>(RawSyscall(SYS_openat, directory, path, flags, 0));
  });
}

LW_INTERPOSED int __openat64_2(int directory, const char* path, int flags) {
  return CountedOpen([&] {
    if (auto real = RealOf(g_real.openat64_2)) return real(directory, path, flags);
    return static_cast<int>(RawSyscall(SYS_openat, directory, path, flags | O_LARGEFILE, 0));
  });
}

LW_INTERPOSED int close(int fd) {
  uint64_t entry = limpwatch::hooks::LoadFdEntry(fd);
  // Before the real close: once it returns, the number may be handed out again.
  limpwatch::hooks::NoteFdClosing(fd);
  limpwatch::shm::FdKind kind = limpwatch::hooks::TableKind(entry);
  CountedCall call;
  call.StartSampled(kind, IoOperation::kClose);
  int result = RealOf(g_real.close) ? RealOf(g_real.close)(fd) : static_cast<int>(RawSyscall(SYS_close, fd));
  call.Stop();
  call.Count(kind, IoOperation::kClose, result != 0);
  return result;
}

// Not counted (not a close the program wrote), but the fds go away.
LW_INTERPOSED int close_range(unsigned int first, unsigned int last, int flags) noexcept {
  if ((flags & CLOSE_RANGE_CLOEXEC) == 0) limpwatch::hooks::NoteFdRangeClosing(first, last);
  if (auto real = RealOf(g_real.close_range)) return real(first, last, flags);
  return static_cast<int>(RawSyscall(SYS_close_range, first, last, flags));
}

LW_INTERPOSED void closefrom(int lowest) noexcept {
  if (lowest >= 0) limpwatch::hooks::NoteFdRangeClosing(static_cast<unsigned>(lowest), UINT_MAX);
  auto real = RealOf(g_real.closefrom);
  if (real == nullptr) real = reinterpret_cast<void (*)(int)>(limpwatch::hooks::ResolveRealCall("closefrom"));
  if (real != nullptr) {
    real(lowest);
  } else {
    RawSyscall(SYS_close_range, lowest, ~0u, 0);
  }
}

// stdio closes its fd inside the C library, out of the hooks' sight; a FILE
// made by fdopen() on an fd the table knows would otherwise leave that fd's
// old kind behind for the next object to get the number.
LW_INTERPOSED int fclose(FILE* stream) {
  int fd = stream != nullptr ? fileno(stream) : -1;
  if (fd >= 0) limpwatch::hooks::NoteFdClosing(fd);
  auto real = RealOf(g_real.fclose);
  if (real == nullptr) real = reinterpret_cast<int (*)(FILE*)>(limpwatch::hooks::ResolveRealCall("fclose"));
  if (real == nullptr) {
    errno = ENOSYS;
    return EOF;
  }
  return real(stream);
}

LW_INTERPOSED int dup(int source) noexcept {
  return limpwatch::hooks::CountedDuplicate(source, -1, [&] {
    if (auto real = RealOf(g_real.dup)) return real(source);
    return static_cast<int>(RawSyscall(SYS_dup, source));
  });
}

LW_INTERPOSED int dup2(int source, int target) noexcept {
  return limpwatch::hooks::CountedDuplicate(source, target, [&] {
    if (auto real = RealOf(g_real.dup2)) return real(source, target);
    return static_cast<int>(RawSyscall(SYS_dup2, source, target));
  });
}

LW_INTERPOSED int dup3(int source, int target, int flags) noexcept {
  return limpwatch::hooks::CountedDuplicate(source, target, [&] {
    if (auto real = RealOf(g_real.dup3)) return real(source, target, flags);
    return static_cast<int>(RawSyscall(SYS_dup3, source, target, flags));
  });
}

namespace {

// fcntl and fcntl64 take one optional argument, an int or a pointer; like
// the C library, it is read as a pointer-sized value and passed on as such.
int Fcntl(int (*real)(int, int, ...), int fd, int command, void* argument) {
  auto call = [&] {
    if (real != nullptr) return real(fd, command, argument);
    return static_cast<int>(RawSyscall(SYS_fcntl, fd, command, argument));
  };
  if (command != F_DUPFD && command != F_DUPFD_CLOEXEC) return call();
  return limpwatch::hooks::CountedDuplicate(fd, -1, call);
}

}  // namespace

LW_INTERPOSED int fcntl(int fd, int command, ...) {
  va_list arguments;
  va_start(arguments, command);
  void* argument = va_arg(arguments, void*);
  va_end(arguments);
  return Fcntl(RealOf(g_real.fcntl), fd, command, argument);
}

LW_INTERPOSED int fcntl64(int fd, int command, ...) {
  va_list arguments;
  va_start(arguments, command);
  void* argument = va_arg(arguments, void*);
  va_end(arguments);
  return Fcntl(RealOf(g_real.fcntl64), fd, command, argument);
}

LW_INTERPOSED int pipe(int fds[2]) noexcept {
  return limpwatch::hooks::CountedPipe(fds, [&] {
    if (auto real = RealOf(g_real.pipe)) return real(fds);
    return static_cast<int>(RawSyscall(SYS_pipe2, fds, 0));
  });
}

LW_INTERPOSED int pipe2(int fds[2], int flags) noexcept {
  return limpwatch::hooks::CountedPipe(fds, [&] {
    if (auto real = RealOf(g_real.pipe2)) return real(fds, flags);
    return static_cast<int>(RawSyscall(SYS_pipe2, fds, flags));
  });
}
