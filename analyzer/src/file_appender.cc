#include "file_appender.h"

#include <fcntl.h>
#include <liburing.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "limpwatch/analyzer/inherited_descriptors.h"

namespace limpwatch::analyzer {
namespace {

bool IoUringAllowed() {
  const char* setting = std::getenv("LIMPWATCH_IO_URING");
  return setting == nullptr || std::strcmp(setting, "0") != 0;
}

}  // namespace

struct FileAppender::Ring {
  io_uring ring;
};

std::unique_ptr<FileAppender> FileAppender::Open(const std::string& path, std::string* error) {
  std::unique_ptr<FileAppender> appender(new FileAppender());
  appender->fd_ = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (appender->fd_ < 0) {
    *error = "cannot open '" + path + "': " + std::strerror(errno);
    return nullptr;
  }
  RegisterAnalyzerDescriptor(appender->fd_);
  struct stat status{};
  fstat(appender->fd_, &status);
  appender->appended_end_ = S_ISREG(status.st_mode) ? static_cast<uint64_t>(status.st_size) : 0;
  if (IoUringAllowed()) {
    auto ring = std::make_unique<Ring>();
    if (io_uring_queue_init(2, &ring->ring, 0) == 0) {
      RegisterAnalyzerDescriptor(ring->ring.ring_fd);
      appender->ring_ = std::move(ring);
    }
  }
  return appender;
}

FileAppender::~FileAppender() {
  Flush();
  if (ring_) {
    UnregisterAnalyzerDescriptor(ring_->ring.ring_fd);
    io_uring_queue_exit(&ring_->ring);
  }
  UnregisterAnalyzerDescriptor(fd_);
  if (fd_ >= 0) close(fd_);
}

bool FileAppender::uses_io_uring() const { return ring_ != nullptr; }

bool FileAppender::WriteNow(const std::vector<uint8_t>& bytes) {
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t result = write(fd_, bytes.data() + written, bytes.size() - written);
    if (result < 0 && errno == EINTR) continue;
    if (result <= 0) break;
    written += size_t(result);
  }
  return written == bytes.size();
}

bool FileAppender::Append(std::vector<uint8_t> bytes) {
  if (!ring_) {
    appended_end_ += bytes.size();
    if (WriteNow(bytes)) return true;
    ++failed_writes_;
    return false;
  }
  Advance(false);
  if (queued_bytes_ + bytes.size() > kMaxQueuedBytes) {
    ++failed_writes_;
    return false;
  }
  appended_end_ += bytes.size();
  queued_bytes_ += bytes.size();
  queue_.push_back(std::move(bytes));
  Advance(false);
  return true;
}

void FileAppender::Advance(bool wait) {
  for (;;) {
    if (in_flight_) {
      io_uring_cqe* completion = nullptr;
      int result = wait ? io_uring_wait_cqe(&ring_->ring, &completion) : io_uring_peek_cqe(&ring_->ring, &completion);
      if (result == -EINTR) continue;
      if (result != 0 || completion == nullptr) return;
      const std::vector<uint8_t>& done = queue_.front();
      // A short or failed write is counted, never retried: what follows
      // must not land before it.
      if (completion->res < 0 || size_t(completion->res) != done.size()) ++failed_writes_;
      io_uring_cqe_seen(&ring_->ring, completion);
      queued_bytes_ -= done.size();
      queue_.pop_front();
      in_flight_ = false;
    }
    if (queue_.empty()) return;
    io_uring_sqe* entry = io_uring_get_sqe(&ring_->ring);
    if (entry == nullptr) return;  // the ring is ours alone: not expected; the next call retries
    const std::vector<uint8_t>& next = queue_.front();
    // Offset -1: at the file position, which O_APPEND puts at the end.
    io_uring_prep_write(entry, fd_, next.data(), static_cast<unsigned>(next.size()), uint64_t(-1));
    if (io_uring_submit(&ring_->ring) != 1) {
      // Not submitted: write it here rather than lose it or reorder.
      if (!WriteNow(next)) ++failed_writes_;
      queued_bytes_ -= next.size();
      queue_.pop_front();
      continue;
    }
    in_flight_ = true;
  }
}

bool FileAppender::Flush() {
  while (ring_ && !queue_.empty()) Advance(true);
  bool clean = failed_writes_ == failed_at_last_flush_;
  failed_at_last_flush_ = failed_writes_;
  return clean;
}

}  // namespace limpwatch::analyzer
