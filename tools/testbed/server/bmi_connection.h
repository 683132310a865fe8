// bmi: one client connection of the server's network layer.
//
// The poll thread (bmi_poll_loop.h) is the only one that reads or writes the
// socket. It reads frames (wire_format.h):
//   - an unexpected request is read whole and handed to the job queue;
//   - bulk data is "expected": it is read straight into the buffers of the
//     flow that posted a receive for its tag, and only when that flow has a
//     free buffer. While no receive is posted for the tag, or the flow has no
//     free buffer (its buffers wait on the disk), the connection stops
//     reading: TCP then pushes back on the client, as BMI does.
// Other threads queue outgoing messages with Send(); the poll thread writes
// them in order and calls each message's on_sent once its bytes are in the
// socket (or the connection is gone).
//
// Ownership: connections are shared_ptrs held by the poll loop while open
// and by the state machines and flows that use them; the socket is closed
// when the last owner lets go, so a descriptor is never reused under a user.
#ifndef LIMPWATCH_TOOLS_TESTBED_SERVER_BMI_CONNECTION_H_
#define LIMPWATCH_TOOLS_TESTBED_SERVER_BMI_CONNECTION_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/wire_format.h"

namespace limpwatch::testbed::bmi {

class PollLoop;

// Consumes the bulk data of one posted receive. Called on the poll thread.
class BulkReceiver {
 public:
  virtual ~BulkReceiver() = default;
  // Memory for the next bytes, which sit at `offset` of the object; an empty
  // span when no buffer is free now (the connection pauses until the
  // receiver calls Connection::ResumeReceive).
  virtual std::span<uint8_t> ReceiveSpan(uint64_t offset) = 0;
  // `bytes` of the last span were filled.
  virtual void Received(size_t bytes) = 0;
  // The connection broke before the transfer completed.
  virtual void ConnectionLost() = 0;
};

struct OutgoingMessage {
  FrameHeader header;
  std::vector<uint8_t> owned_payload;         // responses: the message owns its bytes
  const uint8_t* borrowed_payload = nullptr;  // bulk data: a flow buffer, untouched until on_sent
  size_t borrowed_length = 0;
  std::function<void(bool sent)> on_sent;  // may be empty
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(int fd, uint64_t id, PollLoop* loop);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  uint64_t id() const { return id_; }
  int fd() const { return fd_; }
  bool closed() const { return closed_.load(std::memory_order_acquire); }

  // --- any thread ---
  // Queues a message. On a closed connection on_sent(false) runs at once.
  void Send(OutgoingMessage message);
  // Expects the bulk data of `tag`; on a closed connection the receiver's
  // ConnectionLost runs at once. Must not be called with the receiver's lock held.
  void PostReceive(uint32_t tag, std::shared_ptr<BulkReceiver> receiver);
  void RemoveReceive(uint32_t tag);
  // A paused receiver has a buffer again.
  void ResumeReceive();

  // --- poll thread only ---
  enum class Progress { kOpen, kClose };
  Progress OnReadable();
  Progress OnWritable();
  // EPOLLIN unless reading is paused, EPOLLOUT while messages wait.
  uint32_t WantedEvents();
  // Marks closed, fails queued messages (on_sent(false)) and posted receives.
  void Close();
  uint32_t registered_events = 0;  // what the poll loop registered last

 private:
  enum class ReadState { kHeader, kControlPayload, kBulkPayload };

  Progress ReadFrameHeader();
  Progress ReadControlPayload();
  Progress ReadBulkPayload();
  std::shared_ptr<BulkReceiver> FindReceiver(uint32_t tag);

  const int fd_;
  const uint64_t id_;
  PollLoop* const loop_;
  std::atomic<bool> closed_{false};

  // Receive side (poll thread).
  ReadState read_state_ = ReadState::kHeader;
  uint8_t header_bytes_[kFrameHeaderSize];
  size_t header_filled_ = 0;
  FrameHeader header_;
  std::vector<uint8_t> control_payload_;
  size_t control_filled_ = 0;
  uint64_t bulk_offset_ = 0;
  size_t bulk_remaining_ = 0;
  bool reading_paused_ = false;

  // Send side: others push at the back, the poll thread pops the front.
  struct QueuedMessage {
    OutgoingMessage message;
    uint8_t header_wire[kFrameHeaderSize];
    size_t sent = 0;  // bytes of header + payload already written
  };
  std::mutex send_mutex_;
  std::deque<QueuedMessage> send_queue_;

  std::mutex receive_mutex_;
  std::unordered_map<uint32_t, std::shared_ptr<BulkReceiver>> posted_receives_;
};

}  // namespace limpwatch::testbed::bmi

#endif  // LIMPWATCH_TOOLS_TESTBED_SERVER_BMI_CONNECTION_H_
