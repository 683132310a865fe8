// disk-hog: a dd-like O_DIRECT reader of the raw disk (seed 000: dd reading
// 256 MB blocks with direct I/O). Read-only; random offsets so neither the
// page cache nor read-ahead helps the disk.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>

#include "common/json_line.h"
#include "hog/hog.h"

namespace limpwatch::testbed::hog {

int RunDiskReader(const std::string& device, uint64_t block_bytes) {
  int fd = open(device.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) {
    EmitJsonLine(JsonLine().Add("event", "error").Add("error", "open " + device + ": " + strerror(errno)));
    return 1;
  }
  uint64_t size = 0;
  struct stat status {};
  fstat(fd, &status);
  if (S_ISBLK(status.st_mode)) {
    ioctl(fd, BLKGETSIZE64, &size);
  } else {
    size = static_cast<uint64_t>(status.st_size);
  }
  if (size < block_bytes) {
    EmitJsonLine(JsonLine().Add("event", "error").Add("error", device + " is smaller than one block"));
    return 1;
  }
  void* buffer = nullptr;
  if (posix_memalign(&buffer, 4096, block_bytes) != 0) return 1;
  EmitJsonLine(JsonLine()
                   .Add("event", "disk-hog")
                   .Add("device", device)
                   .Add("device_bytes", size)
                   .Add("block_bytes", block_bytes));
  std::mt19937_64 random(static_cast<uint64_t>(getpid()));
  std::uniform_int_distribution<uint64_t> block(0, size / block_bytes - 1);
  while (!stop_requested.load()) {
    if (pread(fd, buffer, block_bytes, static_cast<off_t>(block(random) * block_bytes)) < 0 && errno != EINTR) {
      EmitJsonLine(JsonLine().Add("event", "error").Add("error", std::string("pread: ") + strerror(errno)));
      break;
    }
  }
  std::free(buffer);
  close(fd);
  return 0;
}

}  // namespace limpwatch::testbed::hog
