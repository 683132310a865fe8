#include "limpwatch/analyzer/trace_file.h"

#include <fcntl.h>
#include <liburing.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <fstream>
#include <iterator>

#include "byte_io.h"
#include "limpwatch/analyzer/inherited_descriptors.h"

namespace limpwatch::analyzer {
namespace {

constexpr unsigned kRingEntries = 32;

bool IoUringAllowed() {
  const char* setting = std::getenv("LIMPWATCH_IO_URING");
  return setting == nullptr || std::strcmp(setting, "0") != 0;
}

}  // namespace

// io_uring state; absent when the kernel refused it.
struct TraceWriter::Ring {
  io_uring ring;
  // Buffers stay alive until their own completion; completions may arrive
  // in any order, so each write carries its buffer's id.
  std::map<uint64_t, std::vector<uint8_t>> in_flight;
  uint64_t next_id = 1;
};

std::string ExpandRecordPath(const std::string& pattern, const std::string& node, int pid) {
  std::string path;
  for (size_t index = 0; index < pattern.size(); ++index) {
    if (pattern[index] == '%' && index + 1 < pattern.size()) {
      char code = pattern[index + 1];
      if (code == 'n') {
        path += node;
        ++index;
        continue;
      }
      if (code == 'p') {
        path += std::to_string(pid);
        ++index;
        continue;
      }
    }
    path += pattern[index];
  }
  return path;
}

std::unique_ptr<TraceWriter> TraceWriter::Open(const std::string& path, const std::string& node, uint32_t tick_ms,
                                               std::string* error) {
  std::unique_ptr<TraceWriter> writer(new TraceWriter());
  writer->fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (writer->fd_ < 0) {
    *error = "recording '" + path + "': cannot open: " + std::strerror(errno);
    return nullptr;
  }
  RegisterAnalyzerDescriptor(writer->fd_);
  struct stat status{};
  fstat(writer->fd_, &status);
  writer->offset_ = static_cast<uint64_t>(status.st_size);
  if (IoUringAllowed()) {
    auto ring = std::make_unique<Ring>();
    if (io_uring_queue_init(kRingEntries, &ring->ring, 0) == 0) {
      RegisterAnalyzerDescriptor(ring->ring.ring_fd);
      writer->ring_ = std::move(ring);
    }
  }
  if (writer->offset_ == 0 && !writer->Submit(EncodeTraceHeader(node, tick_ms))) {
    *error = "recording '" + path + "': cannot write its header";
    return nullptr;
  }
  return writer;
}

TraceWriter::~TraceWriter() {
  Flush();
  if (ring_) {
    UnregisterAnalyzerDescriptor(ring_->ring.ring_fd);
    io_uring_queue_exit(&ring_->ring);
  }
  UnregisterAnalyzerDescriptor(fd_);
  if (fd_ >= 0) close(fd_);
}

bool TraceWriter::uses_io_uring() const { return ring_ != nullptr; }

bool TraceWriter::Append(TraceRecordType type, const std::vector<uint8_t>& payload) {
  if (payload.size() > kTraceMaxPayload) return false;
  ByteWriter record;
  record.U32(static_cast<uint32_t>(type));
  record.U32(static_cast<uint32_t>(payload.size()));
  uint8_t type_bytes[4];
  for (int index = 0; index < 4; ++index) type_bytes[index] = static_cast<uint8_t>(uint32_t(type) >> (8 * index));
  uint32_t crc = Crc32(type_bytes, 4);
  crc = Crc32(payload.data(), payload.size(), crc);
  record.U32(crc);
  record.Bytes(payload.data(), payload.size());
  return Submit(record.Take());
}

bool TraceWriter::Submit(std::vector<uint8_t> bytes) {
  uint64_t offset = offset_;
  offset_ += bytes.size();
  if (!ring_) {
    size_t written = 0;
    while (written < bytes.size()) {
      ssize_t result = pwrite(fd_, bytes.data() + written, bytes.size() - written, off_t(offset + written));
      if (result < 0 && errno == EINTR) continue;
      if (result <= 0) {
        ++failed_writes_;
        return false;
      }
      written += size_t(result);
    }
    return true;
  }
  if (ring_->in_flight.size() >= kRingEntries) Reap(true);
  io_uring_sqe* entry = io_uring_get_sqe(&ring_->ring);
  if (entry == nullptr) {
    Reap(true);
    entry = io_uring_get_sqe(&ring_->ring);
    if (entry == nullptr) {
      ++failed_writes_;
      return false;
    }
  }
  uint64_t id = ring_->next_id++;
  const std::vector<uint8_t>& buffer = ring_->in_flight.emplace(id, std::move(bytes)).first->second;
  io_uring_prep_write(entry, fd_, buffer.data(), static_cast<unsigned>(buffer.size()), offset);
  io_uring_sqe_set_data64(entry, id);
  io_uring_submit(&ring_->ring);
  Reap(false);
  return true;
}

void TraceWriter::Reap(bool wait) {
  if (!ring_) return;
  while (!ring_->in_flight.empty()) {
    io_uring_cqe* completion = nullptr;
    int result = wait ? io_uring_wait_cqe(&ring_->ring, &completion) : io_uring_peek_cqe(&ring_->ring, &completion);
    if (result != 0 || completion == nullptr) return;
    auto written = ring_->in_flight.find(io_uring_cqe_get_data64(completion));
    if (written != ring_->in_flight.end()) {
      // A short or failed write is counted, never retried out of order.
      if (completion->res < 0 || size_t(completion->res) != written->second.size()) ++failed_writes_;
      ring_->in_flight.erase(written);
    }
    io_uring_cqe_seen(&ring_->ring, completion);
    wait = false;
  }
}

bool TraceWriter::Flush() {
  uint64_t failed_before = failed_writes_;
  while (ring_ && !ring_->in_flight.empty()) Reap(true);
  return failed_writes_ == failed_before;
}

bool ReadTrace(const std::string& path, Trace* trace, std::string* error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    *error = "recording '" + path + "': cannot open: " + std::strerror(errno);
    return false;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  *trace = Trace{};
  trace->path = path;
  ByteReader header(bytes.data(), bytes.size());
  uint8_t magic[8];
  uint16_t major = 0, minor = 0;
  uint32_t header_size = 0, reserved = 0;
  if (!header.Bytes(magic, sizeof magic) || std::memcmp(magic, kTraceMagic, sizeof magic) != 0) {
    *error = "recording '" + path + "': not a limpwatch recording (bad magic)";
    return false;
  }
  if (!header.U16(&major) || !header.U16(&minor) || !header.U32(&header_size) || !header.U32(&trace->tick_ms) ||
      !header.U32(&reserved) || !header.FixedString(&trace->node, 64)) {
    *error = "recording '" + path + "': truncated header";
    return false;
  }
  if (major != kTraceVersionMajor) {
    *error = "recording '" + path + "': version " + std::to_string(major) + "." + std::to_string(minor) +
             ", this reader reads " + std::to_string(kTraceVersionMajor) + ".x";
    return false;
  }
  if (header_size < kTraceHeaderSize || header_size > bytes.size()) {
    *error = "recording '" + path + "': bad header size " + std::to_string(header_size);
    return false;
  }
  size_t position = header_size;
  for (size_t record = 1; position < bytes.size(); ++record) {
    std::string where = path + ": record " + std::to_string(record) + " at offset " + std::to_string(position);
    ByteReader head(bytes.data() + position, bytes.size() - position);
    uint32_t type = 0, length = 0, crc = 0;
    if (!head.U32(&type) || !head.U32(&length) || !head.U32(&crc)) {
      trace->problems.push_back(where + ": truncated record header (the writer stopped here)");
      break;
    }
    if (length > kTraceMaxPayload) {
      trace->problems.push_back(where + ": length " + std::to_string(length) + " is impossible; the rest is unreadable");
      break;
    }
    if (length > head.remaining()) {
      trace->problems.push_back(where + ": truncated payload (the writer stopped here)");
      break;
    }
    const uint8_t* payload = bytes.data() + position + kTraceRecordHeaderSize;
    position += kTraceRecordHeaderSize + length;
    uint8_t type_bytes[4];
    for (int index = 0; index < 4; ++index) type_bytes[index] = static_cast<uint8_t>(type >> (8 * index));
    if (Crc32(payload, length, Crc32(type_bytes, 4)) != crc) {
      trace->problems.push_back(where + ": CRC mismatch, record skipped");
      continue;
    }
    if (type == static_cast<uint32_t>(TraceRecordType::kTick)) {
      TickRecord tick;
      if (DecodeTickRecord(ByteReader(payload, length), &tick)) {
        trace->ticks.push_back(std::move(tick));
      } else {
        trace->problems.push_back(where + ": malformed tick record, skipped");
      }
    } else if (type == static_cast<uint32_t>(TraceRecordType::kNames)) {
      if (!DecodeNamesRecord(ByteReader(payload, length), &trace->names)) {
        trace->problems.push_back(where + ": malformed names record, skipped");
      }
    } else {
      trace->problems.push_back(where + ": unknown record type " + std::to_string(type) + ", skipped");
    }
  }
  return true;
}

}  // namespace limpwatch::analyzer
