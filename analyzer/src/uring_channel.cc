// The io_uring channel (liburing 2.3).
//
// Requests carry their slot in user_data: the upper 32 bits say receive or
// send, the lower the slot index. The receive slot stays armed: each
// completion is copied out and its recvmsg re-queued. Send slots hold a
// private copy of the datagram and its destination until the kernel
// completes them, so a caller's buffer is free as soon as SendToAll returns.
//
// The kernel writes into the slots until each request completes, so the
// channel counts requests in flight and, when it closes, cancels them and
// waits (boundedly) for their completions before the slots are freed.
#include <liburing.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "channel_internal.h"
#include "limpwatch/analyzer/inherited_descriptors.h"
#include "limpwatch/analyzer/peer_wire.h"

namespace limpwatch::analyzer {

namespace {

constexpr unsigned kQueueEntries = 128;
// One armed receive, not several: every datagram wakes every recvmsg armed
// on the socket, the losers find it empty, and a request that finds its
// socket empty after its poll fired is handed to an io-wq worker thread that
// blocks in recvmsg (measured: the round trip cost doubled with 16 armed).
// The socket's own buffer queues bursts; Poll drains it by re-arming, and a
// re-armed receive completes inline while datagrams are queued.
constexpr size_t kReceiveSlots = 1;
constexpr size_t kSendSlots = 96;  // receives + sends in flight stay below the CQ size (2 x 128)
constexpr size_t kMaxPending = 1024;
constexpr uint64_t kReceiveKind = 1;
constexpr uint64_t kSendKind = 2;
constexpr uint64_t kCancelKind = 3;
constexpr int64_t kCloseWaitNs = 1'000'000'000;

uint64_t UserData(uint64_t kind, size_t index) { return (kind << 32) | index; }

struct ReceiveSlot {
  msghdr message;
  iovec vector;
  sockaddr_storage source;
  uint8_t buffer[DatagramChannel::kReceiveBufferBytes];
};

struct SendSlot {
  msghdr message;
  iovec vector;
  sockaddr_storage destination;
  uint8_t buffer[kMaxDatagramBytes];
};

class UringChannel final : public DatagramChannel {
 public:
  UringChannel() : receive_slots_(new ReceiveSlot[kReceiveSlots]), send_slots_(new SendSlot[kSendSlots]) {
    free_send_slots_.reserve(kSendSlots);
    for (size_t i = kSendSlots; i > 0; --i) free_send_slots_.push_back(i - 1);
  }

  ~UringChannel() override {
    if (ring_ready_) {
      if (in_flight_ > 0) CancelInFlight();
      UnregisterAnalyzerDescriptor(ring_.ring_fd);
      io_uring_queue_exit(&ring_);
    }
    if (in_flight_ > 0) {
      // Never completed: the kernel may still write into them. A small leak
      // beats a use after free.
      receive_slots_.release();
      send_slots_.release();
    }
    UnregisterAnalyzerDescriptor(fd_);
    if (fd_ >= 0) ::close(fd_);
  }

  // Sets up the ring and arms the receives on `socket`, which it takes on
  // success. On failure *refusal says why and `socket` is left to the caller.
  bool Start(BoundSocket* socket, std::string* refusal) {
    pending_.reserve(kReceiveSlots);
    // Completions run when this thread enters the kernel anyway (it polls
    // for them) instead of interrupting it; kernels before 5.19 refuse the
    // flags and get the classic behaviour.
    int status = io_uring_queue_init(kQueueEntries, &ring_, IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG);
    if (status == -EINVAL) status = io_uring_queue_init(kQueueEntries, &ring_, 0);
    if (status < 0) {
      *refusal = std::string("io_uring_queue_init refused: ") + strerror(-status);
      return false;
    }
    ring_ready_ = true;
    RegisterAnalyzerDescriptor(ring_.ring_fd);
    // A forked child (a daemonizing server) must not inherit the rings'
    // mappings: closing the ring's descriptor there is not enough, a mapping
    // keeps the ring alive, its armed receives keep the socket, and the
    // child's own analyzer then finds its peer port taken for good.
    if (int refused = io_uring_ring_dontfork(&ring_); refused < 0) {
      *refusal = std::string("io_uring_ring_dontfork refused: ") + strerror(-refused);
      return false;
    }
    if (!(ring_.features & IORING_FEAT_EXT_ARG)) {
      // Without it a timed wait would consume a submission slot per call.
      *refusal = "this kernel's io_uring lacks timed waits (IORING_FEAT_EXT_ARG)";
      return false;
    }
    if (!OperationsSupported(refusal)) return false;
    fd_ = socket->fd;
    if (!ArmReceives(refusal)) {
      fd_ = -1;  // nothing reached the kernel; the socket stays the caller's
      in_flight_ = 0;
      return false;
    }
    socket->fd = -1;
    socket_family_ = socket->family;
    local_address_ = socket->local;
    return true;
  }

  void SendToAll(std::span<const uint8_t> datagram, std::span<const DatagramDestination> destinations) override {
    if (datagram.size() > kMaxDatagramBytes) {
      counters_.send_errors += destinations.size();
      counters_.last_send_errno = EMSGSIZE;
      return;
    }
    for (const auto& destination : destinations) {
      if (free_send_slots_.empty()) {
        // Completions of loopback and LAN sends are usually there already.
        Submit();
        Reap(0, nullptr);
      }
      io_uring_sqe* sqe = free_send_slots_.empty() ? nullptr : GetSqe();
      if (sqe == nullptr) {
        ++counters_.send_errors;
        counters_.last_send_errno = EAGAIN;
        continue;
      }
      size_t index = free_send_slots_.back();
      free_send_slots_.pop_back();
      SendSlot& slot = send_slots_[index];
      std::memcpy(slot.buffer, datagram.data(), datagram.size());
      slot.destination = destination.address;
      slot.vector = {slot.buffer, datagram.size()};
      std::memset(&slot.message, 0, sizeof(slot.message));
      slot.message.msg_name = &slot.destination;
      slot.message.msg_namelen = destination.length;
      slot.message.msg_iov = &slot.vector;
      slot.message.msg_iovlen = 1;
      io_uring_prep_sendmsg(sqe, fd_, &slot.message, MSG_NOSIGNAL);
      io_uring_sqe_set_data64(sqe, UserData(kSendKind, index));
      ++in_flight_;
    }
    Submit();
    Reap(0, nullptr);
    Submit();  // a receive that completed meanwhile is re-armed at once
  }

  size_t Poll(int64_t timeout_ns, size_t max_datagrams, std::vector<ReceivedDatagram>* out) override {
    int64_t deadline = ChannelNowNs() + std::max<int64_t>(timeout_ns, 0);
    RearmFailedReceives();
    Submit();  // receives re-armed since the last call (while sending): they may complete at once
    size_t got = TakePending(max_datagrams, out);
    while (got < max_datagrams) {
      size_t reaped = Reap(max_datagrams - got, out);
      got += reaped;
      if (reaped > 0) {
        // The re-armed receives complete at once when more datagrams are
        // queued on the socket: drain them in this call, as recvfrom would.
        Submit();
        continue;
      }
      int64_t remaining = deadline - ChannelNowNs();
      if (got > 0 || remaining <= 0) break;
      // Re-arms and waits in one system call.
      __kernel_timespec wait{remaining / 1'000'000'000, remaining % 1'000'000'000};
      io_uring_cqe* cqe = nullptr;
      int waited = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &wait, nullptr);
      if (waited < 0 && waited != -ETIME && waited != -EINTR) {
        ++counters_.receive_errors;
        counters_.last_receive_errno = -waited;
        break;
      }
    }
    Submit();  // receives re-armed just before a full return must not wait for the next call
    return got;
  }

  IoPath path() const override { return IoPath::kIoUring; }

 private:
  // Stops the armed receive (shutdown wakes a receive parked in an io-wq
  // worker; the cancel removes one parked on the socket's poll) and waits
  // for every request in flight to complete.
  void CancelInFlight() {
    closing_ = true;
    if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
    for (size_t i = 0; i < kReceiveSlots; ++i) {
      io_uring_sqe* sqe = GetSqe();
      if (sqe == nullptr) break;
      io_uring_prep_cancel64(sqe, UserData(kReceiveKind, i), 0);
      io_uring_sqe_set_data64(sqe, UserData(kCancelKind, i));
    }
    int64_t deadline = ChannelNowNs() + kCloseWaitNs;
    while (in_flight_ > 0) {
      Reap(0, nullptr);
      int64_t remaining = deadline - ChannelNowNs();
      if (in_flight_ == 0 || remaining <= 0) break;
      __kernel_timespec wait{remaining / 1'000'000'000, remaining % 1'000'000'000};
      io_uring_cqe* cqe = nullptr;
      int waited = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &wait, nullptr);
      if (waited < 0 && waited != -ETIME && waited != -EINTR) break;
    }
  }

  bool OperationsSupported(std::string* refusal) {
    io_uring_probe* probe = io_uring_get_probe_ring(&ring_);
    if (probe == nullptr) {
      *refusal = "io_uring cannot be probed for sendmsg/recvmsg";
      return false;
    }
    bool supported = io_uring_opcode_supported(probe, IORING_OP_SENDMSG) &&
                     io_uring_opcode_supported(probe, IORING_OP_RECVMSG);
    io_uring_free_probe(probe);
    if (!supported) *refusal = "this kernel's io_uring lacks sendmsg/recvmsg";
    return supported;
  }

  // Arms every receive; false with *refusal if the kernel will not take them.
  bool ArmReceives(std::string* refusal) {
    for (size_t i = 0; i < kReceiveSlots; ++i) {
      if (!QueueReceive(i)) {
        *refusal = "io_uring submission queue full while arming receives";
        return false;
      }
    }
    int submitted = io_uring_submit(&ring_);
    if (submitted < 0) {
      *refusal = std::string("io_uring_submit refused the receives: ") + strerror(-submitted);
      return false;
    }
    return true;
  }

  io_uring_sqe* GetSqe() {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) {
      Submit();
      sqe = io_uring_get_sqe(&ring_);
    }
    return sqe;
  }

  void Submit() {
    if (io_uring_sq_ready(&ring_) == 0) return;  // nothing queued: spare the system call
    int submitted = io_uring_submit(&ring_);
    if (submitted < 0 && submitted != -EAGAIN && submitted != -EBUSY && submitted != -EINTR) {
      ++counters_.receive_errors;
      counters_.last_receive_errno = -submitted;
    }
  }

  void RearmFailedReceives() {
    while (!unarmed_receives_.empty() && QueueReceive(unarmed_receives_.back())) unarmed_receives_.pop_back();
  }

  bool QueueReceive(size_t index) {
    if (closing_) return true;
    io_uring_sqe* sqe = GetSqe();
    if (sqe == nullptr) return false;
    ReceiveSlot& slot = receive_slots_[index];
    slot.vector = {slot.buffer, sizeof(slot.buffer)};
    std::memset(&slot.message, 0, sizeof(slot.message));
    slot.message.msg_name = &slot.source;
    slot.message.msg_namelen = sizeof(slot.source);
    slot.message.msg_iov = &slot.vector;
    slot.message.msg_iovlen = 1;
    // MSG_TRUNC: the result is the datagram's true size.
    io_uring_prep_recvmsg(sqe, fd_, &slot.message, MSG_TRUNC);
    io_uring_sqe_set_data64(sqe, UserData(kReceiveKind, index));
    ++in_flight_;
    return true;
  }

  // Handles every ready completion without waiting. Appends at most `room`
  // datagrams to *out (none when out is null); the others wait in pending_
  // for the next Poll, so send completions behind them are never stuck.
  size_t Reap(size_t room, std::vector<ReceivedDatagram>* out) {
    size_t got = 0;
    io_uring_cqe* cqe = nullptr;
    while (io_uring_peek_cqe(&ring_, &cqe) == 0 && cqe != nullptr) {
      uint64_t data = io_uring_cqe_get_data64(cqe);
      uint64_t kind = data >> 32;
      size_t index = static_cast<size_t>(data & 0xFFFFFFFFu);
      int result = cqe->res;
      io_uring_cqe_seen(&ring_, cqe);
      if ((kind == kSendKind && index < kSendSlots) || (kind == kReceiveKind && index < kReceiveSlots)) {
        --in_flight_;
      }
      if (kind == kSendKind && index < kSendSlots) {
        if (result >= 0) {
          ++counters_.sent;
        } else {
          ++counters_.send_errors;
          counters_.last_send_errno = -result;
        }
        free_send_slots_.push_back(index);
      } else if (kind == kReceiveKind && index < kReceiveSlots) {
        if (closing_) continue;
        if (result >= 0) {
          bool to_caller = out != nullptr && got < room;
          if (TakeReceived(index, static_cast<size_t>(result), to_caller ? out : &pending_) && to_caller) ++got;
        } else {
          ++counters_.receive_errors;
          counters_.last_receive_errno = -result;
        }
        if (!QueueReceive(index)) {
          ++counters_.receive_errors;
          unarmed_receives_.push_back(index);  // retried by the next Poll
        }
      }
    }
    return got;
  }

  size_t TakePending(size_t room, std::vector<ReceivedDatagram>* out) {
    size_t taken = std::min(room, pending_.size());
    for (size_t i = 0; i < taken; ++i) out->push_back(std::move(pending_[i]));
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(taken));
    return taken;
  }

  bool TakeReceived(size_t index, size_t wire_size, std::vector<ReceivedDatagram>* out) {
    ReceiveSlot& slot = receive_slots_[index];
    auto address = PeerAddress::FromSockaddr(reinterpret_cast<sockaddr*>(&slot.source), slot.message.msg_namelen);
    if (!address) return false;
    if (out == &pending_ && pending_.size() >= kMaxPending) {
      ++counters_.receive_errors;
      counters_.last_receive_errno = ENOBUFS;
      return false;
    }
    ReceivedDatagram& datagram = out->emplace_back();
    datagram.source = *address;
    datagram.wire_size = wire_size;
    datagram.bytes.assign(slot.buffer, slot.buffer + std::min(wire_size, sizeof(slot.buffer)));
    return true;
  }

  io_uring ring_{};
  bool ring_ready_ = false;
  bool closing_ = false;
  size_t in_flight_ = 0;  // receives and sends the kernel has not completed
  int fd_ = -1;
  std::unique_ptr<ReceiveSlot[]> receive_slots_;
  std::unique_ptr<SendSlot[]> send_slots_;
  std::vector<size_t> free_send_slots_;
  std::vector<ReceivedDatagram> pending_;  // received while sending, or beyond a Poll's max
  std::vector<size_t> unarmed_receives_;   // receive slots the submission queue had no room to re-arm
};

}  // namespace

std::unique_ptr<DatagramChannel> OpenUringChannel(BoundSocket* socket, std::string* refusal) {
  auto channel = std::make_unique<UringChannel>();
  if (!channel->Start(socket, refusal)) return nullptr;
  return channel;
}

}  // namespace limpwatch::analyzer
