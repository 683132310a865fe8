#include "server/counted_io.h"

#include <unistd.h>

#include <cerrno>

#include "server/server_tally.h"

namespace limpwatch::soak {
namespace {

ssize_t Counted(CountedKind kind, CountedOp op, ssize_t result) {
  ServerTally& tally = Tally();
  uint32_t k = static_cast<uint32_t>(kind);
  uint32_t o = static_cast<uint32_t>(op);
  tally.io_calls[k][o].fetch_add(1, std::memory_order_relaxed);
  if (result > 0) tally.io_bytes[k][o].fetch_add(uint64_t(result), std::memory_order_relaxed);
  return result;
}

}  // namespace

ssize_t CountedRead(CountedKind kind, int fd, void* buffer, size_t size) {
  return Counted(kind, CountedOp::kRead, read(fd, buffer, size));
}

ssize_t CountedWrite(CountedKind kind, int fd, const void* buffer, size_t size) {
  return Counted(kind, CountedOp::kWrite, write(fd, buffer, size));
}

ssize_t CountedWritev(CountedKind kind, int fd, const iovec* vectors, int count) {
  return Counted(kind, CountedOp::kWrite, writev(fd, vectors, count));
}

ssize_t CountedPread(int fd, void* buffer, size_t size, off_t offset) {
  return Counted(CountedKind::kFile, CountedOp::kRead, pread(fd, buffer, size, offset));
}

ssize_t CountedPwrite(int fd, const void* buffer, size_t size, off_t offset) {
  return Counted(CountedKind::kFile, CountedOp::kWrite, pwrite(fd, buffer, size, offset));
}

bool ReadFull(CountedKind kind, int fd, void* buffer, size_t size) {
  auto* bytes = static_cast<uint8_t*>(buffer);
  size_t done = 0;
  while (done < size) {
    ssize_t got = CountedRead(kind, fd, bytes + done, size - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += size_t(got);
  }
  return true;
}

bool WriteReply(CountedKind kind, int fd, const void* header, size_t header_size, const void* payload,
                size_t payload_size) {
  iovec vectors[2] = {{const_cast<void*>(header), header_size}, {const_cast<void*>(payload), payload_size}};
  int first = 0;
  while (first < 2) {
    ssize_t wrote = CountedWritev(kind, fd, vectors + first, 2 - first);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return false;
    size_t left = size_t(wrote);
    while (first < 2 && left >= vectors[first].iov_len) {
      left -= vectors[first].iov_len;
      ++first;
    }
    if (first < 2) {
      vectors[first].iov_base = static_cast<uint8_t*>(vectors[first].iov_base) + left;
      vectors[first].iov_len -= left;
    }
  }
  return true;
}

}  // namespace limpwatch::soak
