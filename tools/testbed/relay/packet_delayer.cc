#include "relay/packet_delayer.h"

#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace limpwatch::testbed::relay {
namespace {

constexpr uint32_t kQueueCapacity = 16384;        // packets held at once
constexpr int kReceiveBufferBytes = 16 << 20;     // bursts of queued-packet messages
constexpr size_t kReadBufferBytes = 256 << 10;

uint64_t NowNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return uint64_t(now.tv_sec) * 1000000000ull + uint64_t(now.tv_nsec);
}

// One nfnetlink message to the queue subsystem: header, nfgenmsg, attributes.
class QueueMessage {
 public:
  QueueMessage(uint8_t type, uint16_t flags, uint32_t sequence, uint16_t queue)
      : bytes_(NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(nfgenmsg)), 0) {
    nlmsghdr header{};
    header.nlmsg_type = static_cast<uint16_t>((NFNL_SUBSYS_QUEUE << 8) | type);
    header.nlmsg_flags = static_cast<uint16_t>(NLM_F_REQUEST | flags);
    header.nlmsg_seq = sequence;
    std::memcpy(bytes_.data(), &header, sizeof header);
    nfgenmsg generic{};
    generic.nfgen_family = AF_UNSPEC;
    generic.version = NFNETLINK_V0;
    generic.res_id = htons(queue);
    std::memcpy(bytes_.data() + NLMSG_HDRLEN, &generic, sizeof generic);
  }

  void Add(uint16_t type, const void* data, size_t size) {
    size_t at = bytes_.size();
    bytes_.resize(at + NLA_ALIGN(NLA_HDRLEN + size), 0);
    nlattr attribute{};
    attribute.nla_len = static_cast<uint16_t>(NLA_HDRLEN + size);
    attribute.nla_type = type;
    std::memcpy(bytes_.data() + at, &attribute, sizeof attribute);
    std::memcpy(bytes_.data() + at + NLA_HDRLEN, data, size);
  }

  template <typename Value>
  void Add(uint16_t type, const Value& value) {
    Add(type, &value, sizeof value);
  }

  bool Send(int socket, std::string* error) {
    uint32_t length = static_cast<uint32_t>(bytes_.size());
    std::memcpy(bytes_.data() + offsetof(nlmsghdr, nlmsg_len), &length, sizeof length);
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    ssize_t sent = sendto(socket, bytes_.data(), bytes_.size(), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel);
    if (sent == static_cast<ssize_t>(bytes_.size())) return true;
    *error = std::string("netlink send: ") + std::strerror(errno);
    return false;
  }

 private:
  std::vector<unsigned char> bytes_;
};

}  // namespace

PacketDelayer::~PacketDelayer() {
  if (socket_ >= 0) close(socket_);
}

bool PacketDelayer::Open(std::string* error) {
  socket_ = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
  if (socket_ < 0) {
    *error = std::string("netlink socket: ") + std::strerror(errno);
    return false;
  }
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  if (bind(socket_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
    *error = std::string("netlink bind: ") + std::strerror(errno);
    return false;
  }
  int size = kReceiveBufferBytes;
  if (setsockopt(socket_, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0) {
    setsockopt(socket_, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  }
  // A burst the buffer cannot hold must not end the reading with ENOBUFS:
  // the kernel keeps those packets queued, and the next batch verdict
  // accepts them with the rest.
  int on = 1;
  setsockopt(socket_, SOL_NETLINK, NETLINK_NO_ENOBUFS, &on, sizeof on);
  return Configure(error);
}

bool PacketDelayer::Configure(std::string* error) {
  nfqnl_msg_config_cmd bind_command{};
  bind_command.command = NFQNL_CFG_CMD_BIND;
  bind_command.pf = htons(AF_INET);
  QueueMessage bind_message(NFQNL_MSG_CONFIG, NLM_F_ACK, ++sequence_, queue_);
  bind_message.Add(NFQA_CFG_CMD, bind_command);
  if (!bind_message.Send(socket_, error) || !AwaitAcknowledgement(error)) {
    *error = "binding netfilter queue " + std::to_string(queue_) + ": " + *error;
    return false;
  }
  // Metadata only (the packet id is all a verdict needs); whole GSO packets,
  // so loopback's 64 KiB segments are not split for the queue; and accepted
  // undelayed, rather than dropped, if the queue ever overflows.
  nfqnl_msg_config_params params{};
  params.copy_range = htonl(0);
  params.copy_mode = NFQNL_COPY_META;
  uint32_t capacity = htonl(kQueueCapacity);
  uint32_t flags = htonl(NFQA_CFG_F_FAIL_OPEN | NFQA_CFG_F_GSO);
  QueueMessage params_message(NFQNL_MSG_CONFIG, NLM_F_ACK, ++sequence_, queue_);
  params_message.Add(NFQA_CFG_PARAMS, &params, sizeof params);
  params_message.Add(NFQA_CFG_QUEUE_MAXLEN, capacity);
  params_message.Add(NFQA_CFG_FLAGS, flags);
  params_message.Add(NFQA_CFG_MASK, flags);
  if (!params_message.Send(socket_, error) || !AwaitAcknowledgement(error)) {
    *error = "configuring netfilter queue " + std::to_string(queue_) + ": " + *error;
    return false;
  }
  return true;
}

// Waits for the kernel's answer to the last configuration message.
bool PacketDelayer::AwaitAcknowledgement(std::string* error) {
  std::vector<unsigned char> buffer(8192);
  for (int attempt = 0; attempt < 100; ++attempt) {
    pollfd ready{socket_, POLLIN, 0};
    if (poll(&ready, 1, 2000) <= 0) {
      *error = "no answer from the kernel";
      return false;
    }
    ssize_t got = recv(socket_, buffer.data(), buffer.size(), 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      *error = std::string("netlink receive: ") + std::strerror(errno);
      return false;
    }
    size_t left = static_cast<size_t>(got);
    for (auto* header = reinterpret_cast<nlmsghdr*>(buffer.data()); NLMSG_OK(header, left);
         header = NLMSG_NEXT(header, left)) {
      if (header->nlmsg_type != NLMSG_ERROR || header->nlmsg_seq != sequence_) continue;
      nlmsgerr answer{};
      std::memcpy(&answer, NLMSG_DATA(header), sizeof answer);
      if (answer.error == 0) return true;
      *error = std::strerror(-answer.error);
      return false;
    }
  }
  *error = "no acknowledgement from the kernel";
  return false;
}

bool PacketDelayer::ReadPackets(std::string* error) {
  static thread_local std::vector<unsigned char> buffer(kReadBufferBytes);
  for (;;) {
    ssize_t got = recv(socket_, buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (got < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ENOBUFS) return true;
      *error = std::string("netlink receive: ") + std::strerror(errno);
      return false;
    }
    uint64_t due = NowNs() + delay_ns_;
    size_t left = static_cast<size_t>(got);
    for (auto* header = reinterpret_cast<nlmsghdr*>(buffer.data()); NLMSG_OK(header, left);
         header = NLMSG_NEXT(header, left)) {
      if (header->nlmsg_type != ((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET)) continue;
      auto* attributes = static_cast<unsigned char*>(NLMSG_DATA(header)) + NLMSG_ALIGN(sizeof(nfgenmsg));
      size_t attributes_size = header->nlmsg_len - (attributes - reinterpret_cast<unsigned char*>(header));
      for (size_t at = 0; at + NLA_HDRLEN <= attributes_size;) {
        nlattr attribute{};
        std::memcpy(&attribute, attributes + at, sizeof attribute);
        if (attribute.nla_len < NLA_HDRLEN || at + attribute.nla_len > attributes_size) break;
        if ((attribute.nla_type & NLA_TYPE_MASK) == NFQA_PACKET_HDR &&
            attribute.nla_len >= NLA_HDRLEN + sizeof(nfqnl_msg_packet_hdr)) {
          nfqnl_msg_packet_hdr packet{};
          std::memcpy(&packet, attributes + at + NLA_HDRLEN, sizeof packet);
          held_.push_back(Held{ntohl(packet.packet_id), due});
          break;
        }
        at += NLA_ALIGN(attribute.nla_len);
      }
    }
  }
}

bool PacketDelayer::Release(uint64_t now_ns, bool everything, std::string* error) {
  size_t due = 0;
  while (due < held_.size() && (everything || held_[due].due_ns <= now_ns)) ++due;
  if (due == 0) return true;
  nfqnl_msg_verdict_hdr verdict{};
  verdict.verdict = htonl(NF_ACCEPT);
  verdict.id = htonl(held_[due - 1].id);
  QueueMessage message(NFQNL_MSG_VERDICT_BATCH, 0, ++sequence_, queue_);
  message.Add(NFQA_VERDICT_HDR, verdict);
  if (!message.Send(socket_, error)) return false;
  held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(due));
  delayed_ += due;
  return true;
}

bool PacketDelayer::Run(const std::atomic<bool>* stop, std::string* error) {
  while (!stop->load(std::memory_order_relaxed)) {
    uint64_t now = NowNs();
    if (!Release(now, false, error)) return false;
    uint64_t wait_ns = held_.empty() ? 200'000'000 : (held_.front().due_ns > now ? held_.front().due_ns - now : 0);
    timespec timeout{static_cast<time_t>(wait_ns / 1000000000), static_cast<long>(wait_ns % 1000000000)};
    pollfd ready{socket_, POLLIN, 0};
    int result = ppoll(&ready, 1, &timeout, nullptr);
    if (result < 0 && errno != EINTR) {
      *error = std::string("poll: ") + std::strerror(errno);
      return false;
    }
    if (result > 0 && !ReadPackets(error)) return false;
  }
  // Whatever is still held goes on now: nothing is dropped on the way out.
  return ReadPackets(error) && Release(NowNs(), true, error);
}

}  // namespace limpwatch::testbed::relay
