#include "serve/textfile.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace limpwatch::cli::serve {

bool WriteTextfile(const std::string& directory, const std::string& content, std::string* error) {
  std::string final_path = directory + "/" + kTextfileName;
  std::string temporary = directory + "/." + kTextfileName + "." + std::to_string(getpid()) + ".tmp";
  int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = "cannot create " + temporary + ": " + std::strerror(errno);
    return false;
  }
  size_t written = 0;
  while (written < content.size()) {
    ssize_t count = write(fd, content.data() + written, content.size() - written);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) break;
    written += static_cast<size_t>(count);
  }
  int saved = errno;
  bool complete = written == content.size() && fsync(fd) == 0;
  if (!complete && written == content.size()) saved = errno;
  close(fd);
  if (!complete) {
    unlink(temporary.c_str());
    *error = "cannot write " + temporary + ": " + std::strerror(saved);
    return false;
  }
  if (rename(temporary.c_str(), final_path.c_str()) != 0) {
    saved = errno;
    unlink(temporary.c_str());
    *error = "cannot rename " + temporary + " to " + final_path + ": " + std::strerror(saved);
    return false;
  }
  return true;
}

}  // namespace limpwatch::cli::serve
