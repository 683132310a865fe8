#include "small_disk.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace limpwatch::soak {

SmallDisk::SmallDisk(const std::string& directory, uint64_t size_bytes, bool read_only)
    : directory_(directory), size_option_("size=" + std::to_string(size_bytes)) {
  if (mkdir(directory_.c_str(), 0700) != 0 && errno != EEXIST) {
    problem_ = "cannot create " + directory_ + ": " + std::strerror(errno);
    return;
  }
  unsigned long flags = MS_NOSUID | MS_NODEV | MS_NOEXEC | (read_only ? MS_RDONLY : 0);
  if (mount("tmpfs", directory_.c_str(), "tmpfs", flags, size_option_.c_str()) != 0) {
    problem_ = std::string("mount -t tmpfs refused: ") + std::strerror(errno) +
               (errno == EPERM ? " (needs root)" : "");
    return;
  }
  mounted_ = true;
  read_only_ = read_only;
}

SmallDisk::~SmallDisk() {
  Free();
  if (mounted_) umount2(directory_.c_str(), MNT_DETACH);
  rmdir(directory_.c_str());
}

bool SmallDisk::Fill(std::string* error) {
  if (!filler_.empty()) return true;
  std::string path = directory_ + "/filler";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    *error = "cannot create " + path + ": " + std::strerror(errno);
    return false;
  }
  filler_ = path;
  std::vector<char> block(64 * 1024, 'f');
  // Down to single bytes, so that not even a short write fits afterwards.
  for (size_t size = block.size(); size > 0;) {
    ssize_t wrote = write(fd, block.data(), size);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) size /= 2;
  }
  close(fd);
  return true;
}

void SmallDisk::Free() {
  if (filler_.empty()) return;
  unlink(filler_.c_str());
  filler_.clear();
}

bool SmallDisk::SetReadOnly(bool read_only, std::string* error) {
  if (!mounted_) {
    *error = "not mounted: " + problem_;
    return false;
  }
  unsigned long flags = MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_NOEXEC | (read_only ? MS_RDONLY : 0);
  if (mount("tmpfs", directory_.c_str(), "tmpfs", flags, size_option_.c_str()) != 0) {
    *error = std::string("remount ") + (read_only ? "read-only" : "read-write") + " refused: " + std::strerror(errno);
    return false;
  }
  read_only_ = read_only;
  return true;
}

}  // namespace limpwatch::soak
