#include "launcher/disk_image.h"

#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "launcher/command_runner.h"

namespace limpwatch::testbed::launcher {
namespace {

constexpr int kMkfsTimeoutMs = 60000;
constexpr int kAttachAttempts = 8;  // LOOP_CTL_GET_FREE races with other users of loop devices

std::string Errno(const std::string& what) { return what + ": " + strerror(errno); }

// Attaches `image` to a free loop device with autoclear; returns its fd or -1.
int AttachLoopDevice(const std::string& image, std::string* loop_device, std::string* error) {
  int control = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
  if (control < 0) {
    *error = Errno("open /dev/loop-control");
    return -1;
  }
  int backing = open(image.c_str(), O_RDWR | O_CLOEXEC);
  if (backing < 0) {
    *error = Errno("open " + image);
    close(control);
    return -1;
  }
  int device = -1;
  for (int attempt = 0; attempt < kAttachAttempts && device < 0; ++attempt) {
    int number = ioctl(control, LOOP_CTL_GET_FREE);
    if (number < 0) {
      *error = Errno("LOOP_CTL_GET_FREE");
      break;
    }
    std::string path = "/dev/loop" + std::to_string(number);
    int candidate = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (candidate < 0) {
      *error = Errno("open " + path);
      continue;
    }
    loop_config config{};
    config.fd = static_cast<uint32_t>(backing);
    config.info.lo_flags = LO_FLAGS_AUTOCLEAR;
    std::strncpy(reinterpret_cast<char*>(config.info.lo_file_name), image.c_str(), LO_NAME_SIZE - 1);
    bool attached = ioctl(candidate, LOOP_CONFIGURE, &config) == 0;
    if (!attached && (errno == EINVAL || errno == ENOTTY)) {  // a kernel before 5.8: the two-step attach
      attached = ioctl(candidate, LOOP_SET_FD, backing) == 0;
      if (attached && ioctl(candidate, LOOP_SET_STATUS64, &config.info) != 0) {
        int saved = errno;
        ioctl(candidate, LOOP_CLR_FD, 0);
        errno = saved;
        attached = false;
      }
    }
    if (attached) {
      device = candidate;
      *loop_device = path;
    } else {
      *error = Errno("attach " + image + " to " + path);
      close(candidate);
      if (errno != EBUSY) break;  // taken between GET_FREE and CONFIGURE: try the next one
    }
  }
  close(backing);
  close(control);
  return device;
}

}  // namespace

bool DiskImagesAvailable(std::string* why) {
  if (access("/dev/loop-control", R_OK | W_OK) != 0) {
    *why = Errno("/dev/loop-control");
    return false;
  }
  if (FindProgram("mkfs.ext4").empty()) {
    *why = "mkfs.ext4 is not installed (Debian package e2fsprogs)";
    return false;
  }
  return true;
}

bool MountDiskImage(const std::string& image, uint64_t mib, const std::string& mount_point,
                    std::string* loop_device, std::string* error) {
  int file = open(image.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (file < 0 || ftruncate(file, static_cast<off_t>(mib << 20)) != 0) {
    *error = Errno("create " + image);
    if (file >= 0) close(file);
    unlink(image.c_str());
    return false;
  }
  close(file);
  // Inode tables and journal written now: lazy initialisation would write
  // them from a kernel thread during the first minutes, on one server only.
  CommandResult made = RunCommand({"mkfs.ext4", "-q", "-F", "-m", "0", "-E", "lazy_itable_init=0,lazy_journal_init=0",
                                   image},
                                  "", kMkfsTimeoutMs);
  if (made.exit_status != 0) {
    *error = "mkfs.ext4 " + image + " failed: " + made.output;
    while (!error->empty() && error->back() == '\n') error->pop_back();
    unlink(image.c_str());
    return false;
  }
  int device = AttachLoopDevice(image, loop_device, error);
  if (device < 0) {
    unlink(image.c_str());
    return false;
  }
  bool mounted = mount(loop_device->c_str(), mount_point.c_str(), "ext4", MS_NOSUID | MS_NODEV, "") == 0;
  if (!mounted) *error = Errno("mount " + *loop_device + " on " + mount_point);
  // Autoclear releases the device at the last close once nothing mounts it:
  // after a failed mount, now; otherwise at the unmount.
  close(device);
  if (!mounted) unlink(image.c_str());
  return mounted;
}

}  // namespace limpwatch::testbed::launcher
