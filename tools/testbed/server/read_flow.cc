#include "server/read_flow.h"

#include <cerrno>

namespace limpwatch::testbed::flow {

ReadFlow::ReadFlow(FlowRequest request)
    : request_(std::move(request)), end_(request_.offset + request_.length), next_offset_(request_.offset) {}

int ReadFlow::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

uint64_t ReadFlow::bytes_read() const {
  std::lock_guard lock(mutex_);
  return error_ != 0 ? 0 : end_ - request_.offset;
}

void ReadFlow::Start() {
  struct Chunk {
    size_t slot;
    uint64_t offset;
    size_t length;
  };
  std::vector<Chunk> first_reads;
  {
    std::lock_guard lock(mutex_);
    try {
      for (size_t i = 0; i < FlowBufferCount(request_); ++i) buffers_.emplace_back(FlowBufferCapacity(request_));
    } catch (const std::bad_alloc&) {
      error_ = ENOMEM;
    }
    for (size_t slot = 0; error_ == 0 && slot < buffers_.size(); ++slot) {
      Chunk chunk{slot, 0, 0};
      if (!AssignNextChunkLocked(slot, &chunk.offset, &chunk.length)) break;
      first_reads.push_back(chunk);
    }
  }
  if (first_reads.empty()) {
    Complete();
    return;
  }
  for (const Chunk& chunk : first_reads) IssueRead(chunk.slot, chunk.offset, chunk.length);
}

bool ReadFlow::AssignNextChunkLocked(size_t slot, uint64_t* file_offset, size_t* length) {
  if (error_ != 0 || next_offset_ >= end_) return false;
  *file_offset = next_offset_;
  *length = static_cast<size_t>(std::min<uint64_t>(buffers_[slot].capacity(), end_ - next_offset_));
  *length = std::min(*length, FlowBufferCapacity(request_));
  next_offset_ += *length;
  ++reads_in_flight_;
  return true;
}

void ReadFlow::IssueRead(size_t slot, uint64_t file_offset, size_t length) {
  trove::StorageOperation operation;
  operation.kind = trove::StorageOperation::Kind::kRead;
  operation.handle = request_.handle;
  operation.buffer = buffers_[slot].data();
  operation.length = length;
  operation.offset = file_offset;
  operation.done = [self = shared_from_this(), slot, file_offset, length](int error, size_t bytes) {
    self->OnStorageDone(slot, file_offset, length, error, bytes);
  };
  request_.storage->Submit(std::move(operation));
}

void ReadFlow::OnStorageDone(size_t slot, uint64_t file_offset, size_t requested, int error, size_t bytes) {
  bool send = false;
  bool finished = false;
  {
    std::lock_guard lock(mutex_);
    --reads_in_flight_;
    if (error != 0 && error_ == 0) error_ = error;
    if (error == 0 && bytes < requested) end_ = std::min(end_, file_offset + bytes);
    // Bytes past an earlier short read belong to nobody (the bstream grew meanwhile): not sent.
    if (error_ == 0 && bytes > 0 && file_offset < end_) {
      bytes = static_cast<size_t>(std::min<uint64_t>(bytes, end_ - file_offset));
      ++sends_in_flight_;
      send = true;
    }
    finished = FinishedLocked();
  }
  if (send) {
    bmi::OutgoingMessage message;
    message.header.kind = FrameKind::kBulkData;
    message.header.operation = Operation::kRead;
    message.header.tag = request_.tag;
    message.header.handle = request_.handle;
    message.header.offset = file_offset;
    message.borrowed_payload = buffers_[slot].data();
    message.borrowed_length = bytes;
    message.on_sent = [self = shared_from_this(), slot](bool sent) { self->OnSent(slot, sent); };
    request_.connection->Send(std::move(message));
  } else if (finished) {
    Complete();
  }
}

void ReadFlow::OnSent(size_t slot, bool sent) {
  uint64_t file_offset = 0;
  size_t length = 0;
  bool next = false;
  bool finished = false;
  {
    std::lock_guard lock(mutex_);
    --sends_in_flight_;
    if (!sent && error_ == 0) error_ = ECONNRESET;
    next = AssignNextChunkLocked(slot, &file_offset, &length);
    finished = FinishedLocked();
  }
  if (next) {
    IssueRead(slot, file_offset, length);
  } else if (finished) {
    Complete();
  }
}

bool ReadFlow::FinishedLocked() const {
  return !completed_ && reads_in_flight_ == 0 && sends_in_flight_ == 0 && (error_ != 0 || next_offset_ >= end_);
}

void ReadFlow::Complete() {
  {
    std::lock_guard lock(mutex_);
    if (completed_) return;
    completed_ = true;
  }
  if (request_.on_complete) request_.on_complete();
}

}  // namespace limpwatch::testbed::flow
