#include "server/write_flow.h"

#include <cerrno>

namespace limpwatch::testbed::flow {
namespace {

constexpr size_t kDiscardChunk = 64 * 1024;

}  // namespace

WriteFlow::WriteFlow(FlowRequest request) : request_(std::move(request)), slots_(FlowBufferCount(request_)) {}

int WriteFlow::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

uint64_t WriteFlow::bytes_written() const {
  std::lock_guard lock(mutex_);
  return written_;
}

void WriteFlow::Start() {
  if (request_.length == 0) {
    Complete();
    return;
  }
  request_.connection->PostReceive(request_.tag, shared_from_this());
}

void WriteFlow::StartDiscarding(int error) {
  {
    std::lock_guard lock(mutex_);
    error_ = error;
  }
  Start();
}

std::span<uint8_t> WriteFlow::ReceiveSpan(uint64_t offset) {
  std::lock_guard lock(mutex_);
  // Bulk data must arrive in order and no more than the request announced.
  if (error_ == 0 && (offset != request_.offset + received_ || received_ >= request_.length)) error_ = EPROTO;
  if (error_ != 0 || received_ >= request_.length) {
    if (discard_.empty()) discard_.resize(kDiscardChunk);
    return {discard_.data(), discard_.size()};
  }
  if (filling_ < 0) {
    size_t free_slot = slots_.size();
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (!slots_[i].busy) {
        free_slot = i;
        break;
      }
    }
    if (free_slot == slots_.size()) {
      receiver_waiting_ = true;
      return {};
    }
    Slot& slot = slots_[free_slot];
    if (slot.buffer.data() == nullptr) {
      try {
        slot.buffer = AlignedBuffer(FlowBufferCapacity(request_));
      } catch (const std::bad_alloc&) {
        error_ = ENOMEM;
        if (discard_.empty()) discard_.resize(kDiscardChunk);
        return {discard_.data(), discard_.size()};
      }
    }
    slot.busy = true;
    filling_ = static_cast<int>(free_slot);
    fill_ = 0;
    fill_target_ = static_cast<size_t>(std::min<uint64_t>(FlowBufferCapacity(request_), request_.length - received_));
  }
  return {slots_[static_cast<size_t>(filling_)].buffer.data() + fill_, fill_target_ - fill_};
}

void WriteFlow::Received(size_t bytes) {
  size_t submit_slot = 0;
  size_t submit_length = 0;
  uint64_t submit_offset = 0;
  bool finished = false;
  {
    std::lock_guard lock(mutex_);
    received_ += bytes;
    if (error_ != 0 || filling_ < 0) {
      if (filling_ >= 0) {  // an error arrived while this buffer was filling: drop it
        slots_[static_cast<size_t>(filling_)].busy = false;
        filling_ = -1;
      }
      finished = FinishedLocked();
    } else {
      fill_ += bytes;
      if (fill_ < fill_target_) return;
      submit_slot = static_cast<size_t>(filling_);
      submit_length = fill_;
      submit_offset = request_.offset + received_ - fill_;
      filling_ = -1;
      ++in_flight_;
    }
  }
  if (submit_length > 0) {
    SubmitBuffer(submit_slot, submit_length, submit_offset);
  } else if (finished) {
    Complete();
  }
}

void WriteFlow::SubmitBuffer(size_t slot, size_t length, uint64_t file_offset) {
  trove::StorageOperation operation;
  operation.kind = trove::StorageOperation::Kind::kWrite;
  operation.handle = request_.handle;
  operation.buffer = slots_[slot].buffer.data();
  operation.length = length;
  operation.offset = file_offset;
  operation.done = [self = shared_from_this(), slot](int error, size_t bytes) {
    self->OnStorageDone(slot, error, bytes);
  };
  request_.storage->Submit(std::move(operation));
}

void WriteFlow::OnStorageDone(size_t slot, int error, size_t bytes) {
  bool resume = false;
  bool finished = false;
  {
    std::lock_guard lock(mutex_);
    --in_flight_;
    slots_[slot].busy = false;
    if (error != 0 && error_ == 0) error_ = error;
    if (error == 0) written_ += bytes;
    resume = receiver_waiting_;
    receiver_waiting_ = false;
    finished = FinishedLocked();
  }
  if (resume) request_.connection->ResumeReceive();
  if (finished) Complete();
}

void WriteFlow::ConnectionLost() {
  bool finished;
  {
    std::lock_guard lock(mutex_);
    connection_lost_ = true;
    if (error_ == 0) error_ = ECONNRESET;
    if (filling_ >= 0) {
      slots_[static_cast<size_t>(filling_)].busy = false;
      filling_ = -1;
    }
    finished = FinishedLocked();
  }
  if (finished) Complete();
}

bool WriteFlow::FinishedLocked() const {
  return !completed_ && in_flight_ == 0 && filling_ < 0 && (received_ >= request_.length || connection_lost_);
}

void WriteFlow::Complete() {
  {
    std::lock_guard lock(mutex_);
    if (completed_) return;
    completed_ = true;
  }
  request_.connection->RemoveReceive(request_.tag);
  if (request_.on_complete) request_.on_complete();
}

}  // namespace limpwatch::testbed::flow
