#include "file_appender.h"

#include <fcntl.h>
#include <liburing.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "limpwatch/analyzer/datagram_channel.h"
#include "limpwatch/analyzer/inherited_descriptors.h"

namespace limpwatch::analyzer {

struct FileAppender::Ring {
  io_uring ring;
};

std::unique_ptr<FileAppender> FileAppender::Open(const std::string& path, std::string* error, TornWrite torn) {
  std::unique_ptr<FileAppender> appender(new FileAppender());
  appender->torn_policy_ = torn;
  appender->fd_ = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (appender->fd_ < 0) {
    *error = "cannot open '" + path + "': " + std::strerror(errno);
    return nullptr;
  }
  RegisterAnalyzerDescriptor(appender->fd_);
  struct stat status{};
  fstat(appender->fd_, &status);
  appender->appended_end_ = S_ISREG(status.st_mode) ? static_cast<uint64_t>(status.st_size) : 0;
  appender->landed_end_ = appender->appended_end_;
  if (!IoUringForcedOff()) {
    auto ring = std::make_unique<Ring>();
    if (io_uring_queue_init(2, &ring->ring, 0) == 0) {
      RegisterAnalyzerDescriptor(ring->ring.ring_fd);
      appender->ring_ = std::move(ring);
    } else {
      appender->io_uring_refused_ = true;
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

ssize_t FileAppender::WriteNow(const std::vector<uint8_t>& bytes) {
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t result = write(fd_, bytes.data() + written, bytes.size() - written);
    if (result < 0 && errno == EINTR) continue;
    if (result <= 0) break;
    written += size_t(result);
  }
  return written == 0 && !bytes.empty() ? -1 : ssize_t(written);
}

void FileAppender::PrefixAfterTornWrite(std::vector<uint8_t>* bytes) {
  front_prefixed_ = ends_torn_ && torn_policy_ == TornWrite::kNewLine;
  if (front_prefixed_) bytes->insert(bytes->begin(), uint8_t('\n'));
}

bool FileAppender::Landed(ssize_t landed, size_t wanted) {
  if (landed >= 0 && size_t(landed) == wanted) {
    landed_end_ += wanted;
    ends_torn_ = false;
    return true;
  }
  ++failed_writes_;
  if (landed <= 0) return false;  // nothing of it is in the file
  if (torn_policy_ == TornWrite::kCutBack && ftruncate(fd_, off_t(landed_end_)) == 0) return false;
  landed_end_ += size_t(landed);
  // Only the newline that ends the earlier fragment landed: that one is whole now.
  ends_torn_ = !(front_prefixed_ && landed == 1);
  return false;
}

bool FileAppender::Append(std::vector<uint8_t> bytes) {
  if (!ring_) {
    appended_end_ += bytes.size();
    PrefixAfterTornWrite(&bytes);
    return Landed(WriteNow(bytes), bytes.size());
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
      Landed(completion->res < 0 ? -1 : ssize_t(completion->res), done.size());
      io_uring_cqe_seen(&ring_->ring, completion);
      queued_bytes_ -= std::min(queued_bytes_, done.size());
      queue_.pop_front();
      in_flight_ = false;
    }
    if (queue_.empty()) return;
    io_uring_sqe* entry = io_uring_get_sqe(&ring_->ring);
    if (entry == nullptr) return;  // the ring is ours alone: not expected; the next call retries
    std::vector<uint8_t>& next = queue_.front();
    PrefixAfterTornWrite(&next);
    if (front_prefixed_) ++queued_bytes_;
    // Offset -1: at the file position, which O_APPEND puts at the end.
    io_uring_prep_write(entry, fd_, next.data(), static_cast<unsigned>(next.size()), uint64_t(-1));
    if (io_uring_submit(&ring_->ring) != 1) {
      // Not submitted: write it here rather than lose it or reorder.
      Landed(WriteNow(next), next.size());
      queued_bytes_ -= std::min(queued_bytes_, next.size());
      queue_.pop_front();
      continue;
    }
    in_flight_ = true;
  }
}

void FileAppender::Collect() {
  if (ring_) Advance(false);
}

bool FileAppender::Flush() {
  while (ring_ && !queue_.empty()) Advance(true);
  bool clean = failed_writes_ == failed_at_last_flush_;
  failed_at_last_flush_ = failed_writes_;
  return clean;
}

}  // namespace limpwatch::analyzer
