// The C library's own versions of the calls limpwatch interposes.
//
// liblimpwatch.so exports read, write, open, ... so that the program's calls
// (and those of every library loaded after it) reach the hooks first; the
// hooks then call the next definition in the lookup order, found once with
// dlsym(RTLD_NEXT) by a constructor. A hook that runs before that constructor
// (another library's constructor doing I/O) makes the raw system call
// instead, so nothing is ever called through a null pointer.
//
// Every function here may be called from any thread at any time, including
// from a hook with the recursion guard set.
#ifndef LIMPWATCH_HOOKS_SRC_REAL_CALLS_H_
#define LIMPWATCH_HOOKS_SRC_REAL_CALLS_H_

#if defined(_FILE_OFFSET_BITS) && _FILE_OFFSET_BITS == 64
#error "the hooks define both foo and foo64: build them without _FILE_OFFSET_BITS=64"
#endif

#include <aio.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "thread_state.h"

namespace limpwatch::hooks {

// One pointer per interposed function, null until resolved.
struct RealCalls {
  ssize_t (*read)(int, void*, size_t);
  ssize_t (*write)(int, const void*, size_t);
  ssize_t (*pread)(int, void*, size_t, off_t);
  ssize_t (*pread64)(int, void*, size_t, off64_t);
  ssize_t (*pwrite)(int, const void*, size_t, off_t);
  ssize_t (*pwrite64)(int, const void*, size_t, off64_t);
  ssize_t (*readv)(int, const iovec*, int);
  ssize_t (*writev)(int, const iovec*, int);
  ssize_t (*preadv)(int, const iovec*, int, off_t);
  ssize_t (*preadv64)(int, const iovec*, int, off64_t);
  ssize_t (*pwritev)(int, const iovec*, int, off_t);
  ssize_t (*pwritev64)(int, const iovec*, int, off64_t);
  ssize_t (*preadv2)(int, const iovec*, int, off_t, int);
  ssize_t (*preadv64v2)(int, const iovec*, int, off64_t, int);
  ssize_t (*pwritev2)(int, const iovec*, int, off_t, int);
  ssize_t (*pwritev64v2)(int, const iovec*, int, off64_t, int);
  ssize_t (*read_chk)(int, void*, size_t, size_t);
  ssize_t (*pread_chk)(int, void*, size_t, off_t, size_t);
  ssize_t (*pread64_chk)(int, void*, size_t, off64_t, size_t);

  ssize_t (*recv)(int, void*, size_t, int);
  ssize_t (*recvfrom)(int, void*, size_t, int, sockaddr*, socklen_t*);
  ssize_t (*recvmsg)(int, msghdr*, int);
  ssize_t (*send)(int, const void*, size_t, int);
  ssize_t (*sendto)(int, const void*, size_t, int, const sockaddr*, socklen_t);
  ssize_t (*sendmsg)(int, const msghdr*, int);
  ssize_t (*recv_chk)(int, void*, size_t, size_t, int);
  ssize_t (*recvfrom_chk)(int, void*, size_t, size_t, int, sockaddr*, socklen_t*);
  int (*socket)(int, int, int);
  int (*socketpair)(int, int, int, int*);
  int (*accept)(int, sockaddr*, socklen_t*);
  int (*accept4)(int, sockaddr*, socklen_t*, int);
  int (*connect)(int, const sockaddr*, socklen_t);

  int (*fsync)(int);
  int (*fdatasync)(int);
  int (*sync_file_range)(int, off64_t, off64_t, unsigned int);

  int (*open)(const char*, int, ...);
  int (*open64)(const char*, int, ...);
  int (*openat)(int, const char*, int, ...);
  int (*openat64)(int, const char*, int, ...);
  int (*open_2)(const char*, int);
  int (*open64_2)(const char*, int);
  int (*openat_2)(int, const char*, int);
  int (*openat64_2)(int, const char*, int);
  int (*creat)(const char*, mode_t);
  int (*creat64)(const char*, mode_t);
  int (*close)(int);
  int (*close_range)(unsigned int, unsigned int, int);
  void (*closefrom)(int);
  int (*fclose)(FILE*);
  int (*dup)(int);
  int (*dup2)(int, int);
  int (*dup3)(int, int, int);
  int (*fcntl)(int, int, ...);
  int (*fcntl64)(int, int, ...);
  int (*pipe)(int*);
  int (*pipe2)(int*, int);

  int (*aio_read)(aiocb*);
  int (*aio_read64)(aiocb64*);
  int (*aio_write)(aiocb*);
  int (*aio_write64)(aiocb64*);
  int (*aio_fsync)(int, aiocb*);
  int (*aio_fsync64)(int, aiocb64*);
  int (*lio_listio)(int, aiocb* const[], int, sigevent*);
  int (*lio_listio64)(int, aiocb64* const[], int, sigevent*);
  int (*aio_error)(const aiocb*);
  int (*aio_error64)(const aiocb64*);
  ssize_t (*aio_return)(aiocb*);
  ssize_t (*aio_return64)(aiocb64*);

  int (*execve)(const char*, char* const[], char* const[]);
  int (*execv)(const char*, char* const[]);
  int (*execvp)(const char*, char* const[]);
  int (*execvpe)(const char*, char* const[], char* const[]);
  int (*fexecve)(int, char* const[], char* const[]);
};

extern RealCalls g_real;

// A slot of g_real as the hooks read it: a relaxed atomic load (a plain load
// on x86), since the constructor may fill the slots while the runtime's own
// thread, started by an earlier constructor, already makes calls.
template <typename Function>
inline Function RealOf(Function& slot) {
  return std::atomic_ref<Function>(slot).load(std::memory_order_relaxed);
}

// Resolves every pointer of g_real (idempotent; run by a constructor).
void ResolveRealCalls();

// For calls with no system call of their own (stdio, POSIX AIO): resolves
// just `name` now if the constructor has not run yet. Returns null if the C
// library has no such function.
[[gnu::cold]] void* ResolveRealCall(const char* name);

// The raw system call behind a hook, for the time before g_real is filled.
// Returns like the libc wrapper: the result, or -1 with errno set.
// Every argument is widened to a full register: syscall() reads longs, and a
// negative int passed through varargs would arrive with garbage high bits.
template <typename T>
LW_HOT long SyscallArgument(T value) {
  if constexpr (std::is_null_pointer_v<T>) {
    return 0;
  } else if constexpr (std::is_pointer_v<T>) {
    return static_cast<long>(reinterpret_cast<uintptr_t>(value));
  } else {
    return static_cast<long>(value);
  }
}

template <typename... Args>
LW_HOT long RawSyscall(long number, Args... args) {
  return syscall(number, SyscallArgument(args)...);
}

}  // namespace limpwatch::hooks

#endif  // LIMPWATCH_HOOKS_SRC_REAL_CALLS_H_
