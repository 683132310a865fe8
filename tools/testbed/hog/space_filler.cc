// The enospc fault's filler: keeps a file system full by growing a ballast
// file into whatever space appears. A one-time fill is not enough: a workload
// that truncates and writes its file again (dd does, IOzone's write test
// does) gets back the blocks it freed and never sees ENOSPC, while a disk
// that another writer keeps full fails it. The filler takes the space within
// a poll period of its release, so most of the workload's new blocks fail.
#include <fcntl.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/json_line.h"
#include "hog/hog.h"

namespace limpwatch::testbed::hog {
namespace {

// Appends to `fd` until the file system refuses: fallocate for the bulk,
// then zeros down to single bytes for the last partial blocks. A full file
// system costs one statvfs: the filler polls every few milliseconds, and 17
// failing writes each time would compete with the server for the CPU.
uint64_t FillUp(int fd, const std::string& mount, const std::vector<char>& zeros) {
  off_t start = lseek(fd, 0, SEEK_END);
  off_t offset = start;
  struct statvfs space {};
  if (statvfs(mount.c_str(), &space) == 0) {
    off_t free_bytes = static_cast<off_t>(space.f_bavail * space.f_frsize);
    if (free_bytes == 0) return 0;
    if (fallocate(fd, 0, offset, free_bytes) == 0) offset += free_bytes;
  }
  for (size_t size = zeros.size(); size > 0; size /= 2) {
    while (pwrite(fd, zeros.data(), size, offset) == static_cast<ssize_t>(size)) offset += static_cast<off_t>(size);
  }
  return static_cast<uint64_t>(offset - start);
}

}  // namespace

int RunSpaceFiller(const std::string& ballast, uint64_t poll_ms) {
  int fd = open(ballast.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    EmitJsonLine(JsonLine().Add("event", "error").Add("error", "open " + ballast + ": " + strerror(errno)));
    return 1;
  }
  size_t slash = ballast.rfind('/');
  const std::string mount = slash == std::string::npos ? std::string(".") : ballast.substr(0, slash == 0 ? 1 : slash);
  std::vector<char> zeros(64 * 1024, 0);
  uint64_t taken = FillUp(fd, mount, zeros);
  EmitJsonLine(JsonLine().Add("event", "space-filler").Add("ballast", ballast).Add("bytes_taken", taken));
  const timespec pause{static_cast<time_t>(poll_ms / 1000), static_cast<long>(poll_ms % 1000) * 1000000L};
  uint64_t released_and_retaken = 0;
  while (!stop_requested.load()) {
    nanosleep(&pause, nullptr);
    released_and_retaken += FillUp(fd, mount, zeros);
  }
  close(fd);
  EmitJsonLine(JsonLine().Add("event", "stopped").Add("bytes_retaken", released_and_retaken));
  return 0;
}

}  // namespace limpwatch::testbed::hog
