// fsync, fdatasync and sync_file_range: the time a file takes to reach its
// device, counted as kSync under the fd's kind.
#include <fcntl.h>

#include "hook_export.h"
#include "io_accounting.h"
#include "real_calls.h"

namespace limpwatch::hooks {
namespace {

template <typename Sync>
int CountedSync(int fd, Sync sync) {
  CountedCall call;
  if (!call.counting()) return sync();
  uint64_t entry = LoadFdEntry(fd);
  call.Start();
  int result = sync();
  call.Stop();
  call.Count(KnownKind(fd, entry), shm::IoOperation::kSync, result != 0);
  return result;
}

}  // namespace
}  // namespace limpwatch::hooks

using limpwatch::hooks::g_real;
using limpwatch::hooks::RealOf;
using limpwatch::hooks::RawSyscall;

LW_INTERPOSED int fsync(int fd) {
  return limpwatch::hooks::CountedSync(fd, [&] {
    if (auto real = RealOf(g_real.fsync)) return real(fd);
    return static_cast<int>(RawSyscall(SYS_fsync, fd));
  });
}

LW_INTERPOSED int fdatasync(int fd) {
  return limpwatch::hooks::CountedSync(fd, [&] {
    if (auto real = RealOf(g_real.fdatasync)) return real(fd);
    return static_cast<int>(RawSyscall(SYS_fdatasync, fd));
  });
}

LW_INTERPOSED int sync_file_range(int fd, off64_t offset, off64_t count, unsigned int flags) {
  return limpwatch::hooks::CountedSync(fd, [&] {
    if (auto real = RealOf(g_real.sync_file_range)) return real(fd, offset, count, flags);
    return static_cast<int>(RawSyscall(SYS_sync_file_range, fd, offset, count, flags));
  });
}
