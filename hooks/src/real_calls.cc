#include "real_calls.h"

#include <dlfcn.h>

#include <atomic>

namespace limpwatch::hooks {

constinit RealCalls g_real{};

namespace {

template <typename Function>
void Resolve(Function* slot, const char* symbol) {
  void* address = dlsym(RTLD_NEXT, symbol);
  // A relaxed store per pointer: a hook racing with this sees either null
  // (and makes the raw system call) or the complete pointer.
  std::atomic_ref<Function>(*slot).store(reinterpret_cast<Function>(address), std::memory_order_relaxed);
}

}  // namespace

void ResolveRealCalls() {
  Resolve(&g_real.read, "read");
  Resolve(&g_real.write, "write");
  Resolve(&g_real.pread, "pread");
  Resolve(&g_real.pread64, "pread64");
  Resolve(&g_real.pwrite, "pwrite");
  Resolve(&g_real.pwrite64, "pwrite64");
  Resolve(&g_real.readv, "readv");
  Resolve(&g_real.writev, "writev");
  Resolve(&g_real.preadv, "preadv");
  Resolve(&g_real.preadv64, "preadv64");
  Resolve(&g_real.pwritev, "pwritev");
  Resolve(&g_real.pwritev64, "pwritev64");
  Resolve(&g_real.preadv2, "preadv2");
  Resolve(&g_real.preadv64v2, "preadv64v2");
  Resolve(&g_real.pwritev2, "pwritev2");
  Resolve(&g_real.pwritev64v2, "pwritev64v2");
  Resolve(&g_real.read_chk, "__read_chk");
  Resolve(&g_real.pread_chk, "__pread_chk");
  Resolve(&g_real.pread64_chk, "__pread64_chk");

  Resolve(&g_real.recv, "recv");
  Resolve(&g_real.recvfrom, "recvfrom");
  Resolve(&g_real.recvmsg, "recvmsg");
  Resolve(&g_real.send, "send");
  Resolve(&g_real.sendto, "sendto");
  Resolve(&g_real.sendmsg, "sendmsg");
  Resolve(&g_real.recv_chk, "__recv_chk");
  Resolve(&g_real.recvfrom_chk, "__recvfrom_chk");
  Resolve(&g_real.socket, "socket");
  Resolve(&g_real.socketpair, "socketpair");
  Resolve(&g_real.accept, "accept");
  Resolve(&g_real.accept4, "accept4");
  Resolve(&g_real.connect, "connect");

  Resolve(&g_real.fsync, "fsync");
  Resolve(&g_real.fdatasync, "fdatasync");
  Resolve(&g_real.sync_file_range, "sync_file_range");

  Resolve(&g_real.open, "open");
  Resolve(&g_real.open64, "open64");
  Resolve(&g_real.openat, "openat");
  Resolve(&g_real.openat64, "openat64");
  Resolve(&g_real.open_2, "__open_2");
  Resolve(&g_real.open64_2, "__open64_2");
  Resolve(&g_real.openat_2, "__openat_2");
  Resolve(&g_real.openat64_2, "__openat64_2");
  Resolve(&g_real.creat, "creat");
  Resolve(&g_real.creat64, "creat64");
  Resolve(&g_real.close, "close");
  Resolve(&g_real.close_range, "close_range");
  Resolve(&g_real.closefrom, "closefrom");
  Resolve(&g_real.fclose, "fclose");
  Resolve(&g_real.dup, "dup");
  Resolve(&g_real.dup2, "dup2");
  Resolve(&g_real.dup3, "dup3");
  Resolve(&g_real.fcntl, "fcntl");
  Resolve(&g_real.fcntl64, "fcntl64");
  Resolve(&g_real.pipe, "pipe");
  Resolve(&g_real.pipe2, "pipe2");

  Resolve(&g_real.aio_read, "aio_read");
  Resolve(&g_real.aio_read64, "aio_read64");
  Resolve(&g_real.aio_write, "aio_write");
  Resolve(&g_real.aio_write64, "aio_write64");
  Resolve(&g_real.aio_fsync, "aio_fsync");
  Resolve(&g_real.aio_fsync64, "aio_fsync64");
  Resolve(&g_real.lio_listio, "lio_listio");
  Resolve(&g_real.lio_listio64, "lio_listio64");
  Resolve(&g_real.aio_error, "aio_error");
  Resolve(&g_real.aio_error64, "aio_error64");
  Resolve(&g_real.aio_return, "aio_return");
  Resolve(&g_real.aio_return64, "aio_return64");

  Resolve(&g_real.execve, "execve");
  Resolve(&g_real.execv, "execv");
  Resolve(&g_real.execvp, "execvp");
  Resolve(&g_real.execvpe, "execvpe");
  Resolve(&g_real.fexecve, "fexecve");
}

void* ResolveRealCall(const char* name) { return dlsym(RTLD_NEXT, name); }

// Before the program's own constructors, so its first calls go to libc.
[[gnu::constructor(101)]] void ResolveRealCallsAtLoad() { ResolveRealCalls(); }

}  // namespace limpwatch::hooks
