#include "server/bmi_connection.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "server/bmi_poll_loop.h"
#include "server/server_log.h"

namespace limpwatch::testbed::bmi {

Connection::Connection(int fd, uint64_t id, PollLoop* loop) : fd_(fd), id_(id), loop_(loop) {}

Connection::~Connection() { close(fd_); }

void Connection::Send(OutgoingMessage message) {
  {
    std::lock_guard lock(send_mutex_);
    if (!closed()) {
      QueuedMessage& queued = send_queue_.emplace_back();
      queued.message = std::move(message);
      queued.message.header.payload_length =
          static_cast<uint32_t>(queued.message.borrowed_payload != nullptr ? queued.message.borrowed_length
                                                                           : queued.message.owned_payload.size());
      EncodeFrameHeader(queued.message.header, queued.header_wire);
      loop_->RequestService(shared_from_this());
      return;
    }
  }
  if (message.on_sent) message.on_sent(false);
}

void Connection::PostReceive(uint32_t tag, std::shared_ptr<BulkReceiver> receiver) {
  {
    std::lock_guard lock(receive_mutex_);
    if (!closed()) {
      posted_receives_[tag] = std::move(receiver);
      loop_->RequestService(shared_from_this());  // the poll thread may be waiting for this tag
      return;
    }
  }
  receiver->ConnectionLost();
}

void Connection::RemoveReceive(uint32_t tag) {
  std::lock_guard lock(receive_mutex_);
  posted_receives_.erase(tag);
}

void Connection::ResumeReceive() {
  if (!closed()) loop_->RequestService(shared_from_this());
}

std::shared_ptr<BulkReceiver> Connection::FindReceiver(uint32_t tag) {
  std::lock_guard lock(receive_mutex_);
  auto posted = posted_receives_.find(tag);
  return posted == posted_receives_.end() ? nullptr : posted->second;
}

uint32_t Connection::WantedEvents() {
  uint32_t events = reading_paused_ ? 0u : uint32_t{EPOLLIN};
  std::lock_guard lock(send_mutex_);
  if (!send_queue_.empty()) events |= uint32_t{EPOLLOUT};
  return events;
}

Connection::Progress Connection::OnReadable() {
  reading_paused_ = false;
  for (;;) {
    Progress progress;
    size_t before = header_filled_ + control_filled_ + bulk_remaining_;
    ReadState state_before = read_state_;
    switch (read_state_) {
      case ReadState::kHeader:
        progress = ReadFrameHeader();
        break;
      case ReadState::kControlPayload:
        progress = ReadControlPayload();
        break;
      case ReadState::kBulkPayload:
        progress = ReadBulkPayload();
        break;
    }
    if (progress == Progress::kClose) return progress;
    if (reading_paused_) return Progress::kOpen;
    // Stop when a pass neither changed state nor consumed bytes: the socket is drained.
    if (read_state_ == state_before && header_filled_ + control_filled_ + bulk_remaining_ == before) {
      return Progress::kOpen;
    }
  }
}

Connection::Progress Connection::ReadFrameHeader() {
  ssize_t count = recv(fd_, header_bytes_ + header_filled_, kFrameHeaderSize - header_filled_, MSG_DONTWAIT);
  if (count == 0) return Progress::kClose;
  if (count < 0)
    return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? Progress::kOpen : Progress::kClose;
  header_filled_ += static_cast<size_t>(count);
  if (header_filled_ < kFrameHeaderSize) return Progress::kOpen;
  header_filled_ = 0;
  std::string error;
  auto header = DecodeFrameHeader(header_bytes_, &error);
  if (!header) {
    LogLineRateLimited(1, "bmi: connection " + std::to_string(id_) + ": " + error + "; closing it");
    return Progress::kClose;
  }
  header_ = *header;
  switch (header_.kind) {
    case FrameKind::kUnexpectedRequest:
      control_payload_.assign(header_.payload_length, 0);
      control_filled_ = 0;
      read_state_ = ReadState::kControlPayload;
      if (header_.payload_length == 0) return ReadControlPayload();
      return Progress::kOpen;
    case FrameKind::kBulkData:
      bulk_offset_ = header_.offset;
      bulk_remaining_ = header_.payload_length;
      read_state_ = bulk_remaining_ == 0 ? ReadState::kHeader : ReadState::kBulkPayload;
      return Progress::kOpen;
    case FrameKind::kExpectedResponse:
      break;
  }
  LogLineRateLimited(1, "bmi: connection " + std::to_string(id_) + " sent a response frame; closing it");
  return Progress::kClose;
}

Connection::Progress Connection::ReadControlPayload() {
  if (control_filled_ < control_payload_.size()) {
    ssize_t count =
        recv(fd_, control_payload_.data() + control_filled_, control_payload_.size() - control_filled_, MSG_DONTWAIT);
    if (count == 0) return Progress::kClose;
    if (count < 0) {
      return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? Progress::kOpen : Progress::kClose;
    }
    control_filled_ += static_cast<size_t>(count);
    if (control_filled_ < control_payload_.size()) return Progress::kOpen;
  }
  read_state_ = ReadState::kHeader;
  control_filled_ = 0;
  loop_->DeliverRequest(shared_from_this(), header_, std::move(control_payload_));
  control_payload_ = {};
  return Progress::kOpen;
}

Connection::Progress Connection::ReadBulkPayload() {
  std::shared_ptr<BulkReceiver> receiver = FindReceiver(header_.tag);
  if (!receiver) {
    // Data for a transfer nobody posted yet: wait for the flow (PostReceive wakes us).
    reading_paused_ = true;
    return Progress::kOpen;
  }
  std::span<uint8_t> span = receiver->ReceiveSpan(bulk_offset_);
  if (span.empty()) {
    reading_paused_ = true;  // every flow buffer is busy; ResumeReceive wakes us
    return Progress::kOpen;
  }
  size_t wanted = std::min(span.size(), bulk_remaining_);
  ssize_t count = recv(fd_, span.data(), wanted, MSG_DONTWAIT);
  if (count == 0) return Progress::kClose;
  if (count < 0) {
    return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? Progress::kOpen : Progress::kClose;
  }
  bulk_offset_ += static_cast<uint64_t>(count);
  bulk_remaining_ -= static_cast<size_t>(count);
  if (bulk_remaining_ == 0) read_state_ = ReadState::kHeader;
  receiver->Received(static_cast<size_t>(count));
  return Progress::kOpen;
}

Connection::Progress Connection::OnWritable() {
  for (;;) {
    QueuedMessage* front;
    {
      std::lock_guard lock(send_mutex_);
      if (send_queue_.empty()) return Progress::kOpen;
      front = &send_queue_.front();  // stable: others only push at the back
    }
    OutgoingMessage& message = front->message;
    const uint8_t* payload =
        message.borrowed_payload != nullptr ? message.borrowed_payload : message.owned_payload.data();
    size_t payload_length = message.header.payload_length;
    iovec iov[2];
    int count = 0;
    if (front->sent < kFrameHeaderSize) {
      iov[count++] = {front->header_wire + front->sent, kFrameHeaderSize - front->sent};
      iov[count++] = {const_cast<uint8_t*>(payload), payload_length};
    } else {
      size_t done = front->sent - kFrameHeaderSize;
      iov[count++] = {const_cast<uint8_t*>(payload) + done, payload_length - done};
    }
    msghdr header{};
    header.msg_iov = iov;
    header.msg_iovlen = static_cast<size_t>(count);
    ssize_t sent = sendmsg(fd_, &header, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return Progress::kOpen;
      return Progress::kClose;
    }
    front->sent += static_cast<size_t>(sent);
    if (front->sent < kFrameHeaderSize + payload_length) return Progress::kOpen;
    std::function<void(bool)> on_sent = std::move(message.on_sent);
    {
      std::lock_guard lock(send_mutex_);
      send_queue_.pop_front();
    }
    if (on_sent) on_sent(true);
  }
}

void Connection::Close() {
  closed_.store(true, std::memory_order_release);
  shutdown(fd_, SHUT_RDWR);
  std::deque<QueuedMessage> unsent;
  {
    std::lock_guard lock(send_mutex_);
    unsent.swap(send_queue_);
  }
  std::unordered_map<uint32_t, std::shared_ptr<BulkReceiver>> receivers;
  {
    std::lock_guard lock(receive_mutex_);
    receivers.swap(posted_receives_);
  }
  for (auto& queued : unsent) {
    if (queued.message.on_sent) queued.message.on_sent(false);
  }
  for (auto& [tag, receiver] : receivers) receiver->ConnectionLost();
}

}  // namespace limpwatch::testbed::bmi
