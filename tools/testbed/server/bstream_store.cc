#include "server/bstream_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "server/aligned_buffer.h"
#include "server/server_log.h"

namespace limpwatch::testbed::trove {
namespace {

// Whether the file system under `directory` accepts O_DIRECT reads and writes.
bool ProbeDirectIo(const std::string& directory) {
  std::string path = directory + "/.direct-io-probe";
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  bool works = false;
  try {
    AlignedBuffer block(kDirectIoAlignment);
    std::memset(block.data(), 0, block.capacity());
    works = pwrite(fd, block.data(), block.capacity(), 0) == static_cast<ssize_t>(block.capacity()) &&
            pread(fd, block.data(), block.capacity(), 0) == static_cast<ssize_t>(block.capacity());
  } catch (const std::bad_alloc&) {
  }
  close(fd);
  unlink(path.c_str());
  return works;
}

}  // namespace

BstreamStore::OpenFiles::~OpenFiles() {
  if (direct_fd >= 0) close(direct_fd);
  if (buffered_fd >= 0) close(buffered_fd);
}

bool BstreamStore::Open(const std::string& storage_space, bool want_direct_io, std::string* error) {
  directory_ = storage_space + "/bstreams";
  if (mkdir(directory_.c_str(), 0755) != 0 && errno != EEXIST) {
    *error = "mkdir " + directory_ + ": " + strerror(errno);
    return false;
  }
  direct_io_ = want_direct_io && ProbeDirectIo(directory_);
  if (want_direct_io && !direct_io_) {
    LogLine("trove: O_DIRECT is refused under " + directory_ + "; bstream I/O is buffered");
  }
  return true;
}

std::string BstreamStore::BstreamPath(uint64_t handle) const {
  char name[40];
  std::snprintf(name, sizeof name, "/%016" PRIx64 ".bstream", handle);
  return directory_ + name;
}

int BstreamStore::AcquireOpenFiles(uint64_t handle, bool create, std::shared_ptr<OpenFiles>* files) {
  std::lock_guard lock(mutex_);
  auto cached = open_cache_.find(handle);
  if (cached != open_cache_.end()) {
    cached->second->last_use = ++use_clock_;
    *files = cached->second;
    return 0;
  }
  auto opened = std::make_shared<OpenFiles>();
  std::string path = BstreamPath(handle);
  int flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0);
  opened->buffered_fd = open(path.c_str(), flags, 0644);
  if (opened->buffered_fd < 0) return errno;
  if (direct_io_) {
    opened->direct_fd = open(path.c_str(), O_RDWR | O_CLOEXEC | O_DIRECT);
    if (opened->direct_fd < 0) return errno;
  }
  if (open_cache_.size() >= kMaxOpenBstreams) EvictLeastRecentlyUsed();
  opened->last_use = ++use_clock_;
  open_cache_[handle] = opened;
  *files = std::move(opened);
  return 0;
}

void BstreamStore::EvictLeastRecentlyUsed() {
  auto oldest = open_cache_.begin();
  for (auto entry = open_cache_.begin(); entry != open_cache_.end(); ++entry) {
    if (entry->second->last_use < oldest->second->last_use) oldest = entry;
  }
  if (oldest != open_cache_.end()) open_cache_.erase(oldest);  // closed once no request uses it
}

void BstreamStore::ForgetOpenFiles(uint64_t handle) {
  std::lock_guard lock(mutex_);
  open_cache_.erase(handle);
}

bool BstreamStore::IsDirectIoAligned(const void* data, size_t length, uint64_t offset) {
  return reinterpret_cast<uintptr_t>(data) % kDirectIoAlignment == 0 && length % kDirectIoAlignment == 0 &&
         offset % kDirectIoAlignment == 0;
}

int BstreamStore::WriteDirect(int fd, const uint8_t* data, size_t length, uint64_t offset, size_t* written) {
  *written = 0;
  while (*written < length) {
    ssize_t count = pwrite(fd, data + *written, length - *written, static_cast<off_t>(offset + *written));
    if (count < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (count == 0) return EIO;
    *written += static_cast<size_t>(count);
  }
  return 0;
}

int BstreamStore::WriteBuffered(int fd, const uint8_t* data, size_t length, uint64_t offset, size_t* written) {
  *written = 0;
  while (*written < length) {
    ssize_t count = pwrite(fd, data + *written, length - *written, static_cast<off_t>(offset + *written));
    if (count < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (count == 0) return EIO;
    *written += static_cast<size_t>(count);
  }
  return 0;
}

int BstreamStore::ReadDirect(int fd, uint8_t* data, size_t length, uint64_t offset, size_t* bytes_read) {
  *bytes_read = 0;
  while (*bytes_read < length) {
    ssize_t count = pread(fd, data + *bytes_read, length - *bytes_read, static_cast<off_t>(offset + *bytes_read));
    if (count < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (count == 0) break;  // end of the bstream
    *bytes_read += static_cast<size_t>(count);
    // A short direct read that is not block aligned is the end of the file.
    if (*bytes_read % kDirectIoAlignment != 0) break;
  }
  return 0;
}

int BstreamStore::ReadBuffered(int fd, uint8_t* data, size_t length, uint64_t offset, size_t* bytes_read) {
  *bytes_read = 0;
  while (*bytes_read < length) {
    ssize_t count = pread(fd, data + *bytes_read, length - *bytes_read, static_cast<off_t>(offset + *bytes_read));
    if (count < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (count == 0) break;
    *bytes_read += static_cast<size_t>(count);
  }
  return 0;
}

int BstreamStore::Write(uint64_t handle, const uint8_t* data, size_t length, uint64_t offset, size_t* written) {
  std::shared_ptr<OpenFiles> files;
  int error = AcquireOpenFiles(handle, true, &files);
  if (error != 0) return error;
  if (files->direct_fd >= 0 && IsDirectIoAligned(data, length, offset)) {
    return WriteDirect(files->direct_fd, data, length, offset, written);
  }
  return WriteBuffered(files->buffered_fd, data, length, offset, written);
}

int BstreamStore::Read(uint64_t handle, uint8_t* data, size_t length, uint64_t offset, size_t* bytes_read) {
  *bytes_read = 0;
  std::shared_ptr<OpenFiles> files;
  int error = AcquireOpenFiles(handle, false, &files);
  if (error == ENOENT) return 0;
  if (error != 0) return error;
  if (files->direct_fd >= 0 && IsDirectIoAligned(data, length, offset)) {
    return ReadDirect(files->direct_fd, data, length, offset, bytes_read);
  }
  return ReadBuffered(files->buffered_fd, data, length, offset, bytes_read);
}

int BstreamStore::Sync(uint64_t handle) {
  std::shared_ptr<OpenFiles> files;
  int error = AcquireOpenFiles(handle, false, &files);
  if (error == ENOENT) return 0;
  if (error != 0) return error;
  return fsync(files->buffered_fd) == 0 ? 0 : errno;
}

int BstreamStore::GetSize(uint64_t handle, uint64_t* size) {
  struct stat status {};
  *size = 0;
  if (stat(BstreamPath(handle).c_str(), &status) != 0) return errno == ENOENT ? 0 : errno;
  *size = static_cast<uint64_t>(status.st_size);
  return 0;
}

int BstreamStore::Truncate(uint64_t handle, uint64_t size) {
  std::shared_ptr<OpenFiles> files;
  int error = AcquireOpenFiles(handle, true, &files);
  if (error != 0) return error;
  return ftruncate(files->buffered_fd, static_cast<off_t>(size)) == 0 ? 0 : errno;
}

int BstreamStore::Remove(uint64_t handle) {
  ForgetOpenFiles(handle);
  if (unlink(BstreamPath(handle).c_str()) != 0 && errno != ENOENT) return errno;
  return 0;
}

}  // namespace limpwatch::testbed::trove
