#include "launcher/swap_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "launcher/command_runner.h"

namespace limpwatch::testbed::launcher {

bool AddSwapFile(const std::string& path, uint64_t mib, std::string* error) {
  if (FindProgram("mkswap").empty()) {
    *error = "mkswap is not installed (Debian package util-linux)";
    return false;
  }
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    *error = "create " + path + ": " + strerror(errno);
    return false;
  }
  // Allocated, not sparse: the kernel refuses a swap file with holes.
  int allocated = posix_fallocate(fd, 0, static_cast<off_t>(mib << 20));
  close(fd);
  if (allocated != 0) {
    *error = "allocate " + std::to_string(mib) + " MiB for " + path + ": " + strerror(allocated);
    unlink(path.c_str());
    return false;
  }
  CommandResult made = RunCommand({"mkswap", path}, "", 30000);
  if (made.exit_status != 0) {
    *error = "mkswap " + path + " failed: " + made.output;
    unlink(path.c_str());
    return false;
  }
  if (swapon(path.c_str(), 0) != 0) {
    *error = "swapon " + path + ": " + strerror(errno);
    unlink(path.c_str());
    return false;
  }
  return true;
}

int64_t SwapFileUsedKib(const std::string& path) {
  std::ifstream swaps("/proc/swaps");
  std::string line;
  std::getline(swaps, line);  // the header
  while (std::getline(swaps, line)) {
    std::istringstream fields(line);
    std::string name, type;
    int64_t size = 0, used = 0;
    if (fields >> name >> type >> size >> used && name == path) return used;
  }
  return -1;
}

bool RemoveSwapFile(const std::string& path, std::string* error) {
  if (SwapFileUsedKib(path) >= 0 && swapoff(path.c_str()) != 0) {
    *error = "swapoff " + path + ": " + strerror(errno);
    return false;
  }
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    *error = "unlink " + path + ": " + strerror(errno);
    return false;
  }
  return true;
}

}  // namespace limpwatch::testbed::launcher
