#include "limpwatch/analyzer/tcp_socket_diag.h"

#include <dirent.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

namespace limpwatch::analyzer {
namespace {

// Linux 6.7 appended, after tcpi_snd_wnd (the last field these headers
// know): u32 tcpi_rcv_wnd, u32 tcpi_rehash, u16 tcpi_total_rto,
// u16 tcpi_total_rto_recoveries, u32 tcpi_total_rto_time.
constexpr size_t kTotalRtoTimeOffset = offsetof(tcp_info, tcpi_snd_wnd) + 16;

// States of the kernel's tcp_states.h, which linux/tcp.h does not export.
constexpr uint8_t kListenState = 10;
constexpr uint8_t kSynReceivedState = 3;
constexpr uint8_t kTimeWaitState = 6;

template <typename Field>
bool Holds(size_t length, size_t offset) {
  return length >= offset + sizeof(Field);
}

// Closes the netlink socket however the request ends.
class NetlinkSocket {
 public:
  NetlinkSocket() : fd_(socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)) {}
  ~NetlinkSocket() {
    if (fd_ >= 0) close(fd_);
  }
  NetlinkSocket(const NetlinkSocket&) = delete;
  NetlinkSocket& operator=(const NetlinkSocket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

bool SendDumpRequest(int fd, uint8_t family, uint32_t sequence) {
  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } message{};
  message.header.nlmsg_len = sizeof message;
  message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  message.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  message.header.nlmsg_seq = sequence;
  message.request.sdiag_family = family;
  message.request.sdiag_protocol = IPPROTO_TCP;
  // Every state a socket with a descriptor can be in, listening included:
  // not TIME_WAIT nor SYN_RECV, whose mini-sockets have no inode and can
  // outnumber the rest a hundred to one on a busy host.
  message.request.idiag_states = ~0u & ~(1u << kTimeWaitState) & ~(1u << kSynReceivedState);
  message.request.idiag_ext = 1u << (INET_DIAG_INFO - 1);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  ssize_t sent;
  do {
    sent = sendto(fd, &message, sizeof message, 0, reinterpret_cast<const sockaddr*>(&kernel), sizeof kernel);
  } while (sent < 0 && errno == EINTR);
  return sent == static_cast<ssize_t>(sizeof message);
}

// One reply: the socket's inode, port and, when the kernel attached it, its tcp_info.
void ReadReply(const nlmsghdr* header, const std::unordered_set<uint64_t>& wanted,
               std::unordered_map<uint64_t, DiagnosedTcpSocket>* sockets) {
  if (header->nlmsg_len < NLMSG_LENGTH(sizeof(inet_diag_msg))) return;
  const auto* message = static_cast<const inet_diag_msg*>(NLMSG_DATA(header));
  uint64_t inode = message->idiag_inode;
  if (inode == 0 || !wanted.contains(inode)) return;
  DiagnosedTcpSocket socket;
  socket.local_port = ntohs(message->id.idiag_sport);
  bool have_info = false;
  int remaining = static_cast<int>(header->nlmsg_len - NLMSG_LENGTH(sizeof(inet_diag_msg)));
  for (const rtattr* attribute = reinterpret_cast<const rtattr*>(message + 1); RTA_OK(attribute, remaining);
       attribute = RTA_NEXT(attribute, remaining)) {
    if (attribute->rta_type != INET_DIAG_INFO) continue;
    have_info = ParseTcpInfo(RTA_DATA(attribute), RTA_PAYLOAD(attribute), &socket.counts);
  }
  if (!have_info) return;
  socket.counts.listening = message->idiag_state == kListenState;
  (*sockets)[inode] = socket;
}

// Reads replies until the dump's end. False on an error reply or a failed receive.
bool ReadDump(int fd, uint32_t sequence, const std::unordered_set<uint64_t>& wanted,
              std::unordered_map<uint64_t, DiagnosedTcpSocket>* sockets, std::string* error) {
  std::vector<uint8_t> buffer(64 * 1024);
  while (true) {
    ssize_t received;
    do {
      received = recv(fd, buffer.data(), buffer.size(), 0);
    } while (received < 0 && errno == EINTR);
    if (received <= 0) {
      *error = std::string("receiving the socket diagnostics: ") + (received < 0 ? std::strerror(errno) : "closed");
      return false;
    }
    int remaining = static_cast<int>(received);
    for (const auto* header = reinterpret_cast<const nlmsghdr*>(buffer.data()); NLMSG_OK(header, remaining);
         header = NLMSG_NEXT(header, remaining)) {
      if (header->nlmsg_seq != sequence) continue;
      if (header->nlmsg_type == NLMSG_DONE) return true;
      if (header->nlmsg_type == NLMSG_ERROR) {
        const auto* failure = static_cast<const nlmsgerr*>(NLMSG_DATA(header));
        *error = std::string("the kernel refused the socket diagnostics: ") + std::strerror(-failure->error);
        return false;
      }
      if (header->nlmsg_type == SOCK_DIAG_BY_FAMILY) ReadReply(header, wanted, sockets);
    }
  }
}

}  // namespace

bool ParseTcpInfo(const void* data, size_t length, TcpSocketCounts* counts) {
  // Copied into a zeroed buffer as long as this build's tcp_info and the
  // newer fields: a shorter (older kernel's) structure leaves the rest 0.
  struct {
    tcp_info known;
    uint8_t newer[128];
  } info{};
  std::memcpy(&info, data, std::min(length, sizeof info));
  const tcp_info& known = info.known;
  if (!Holds<decltype(known.tcpi_total_retrans)>(length, offsetof(tcp_info, tcpi_total_retrans))) return false;
  counts->retransmitted = known.tcpi_total_retrans;
  counts->duplicates_reported =
      Holds<decltype(known.tcpi_dsack_dups)>(length, offsetof(tcp_info, tcpi_dsack_dups)) ? known.tcpi_dsack_dups : 0;
  counts->timeout_us = known.tcpi_rto;
  counts->out_of_order =
      Holds<decltype(known.tcpi_rcv_ooopack)>(length, offsetof(tcp_info, tcpi_rcv_ooopack)) ? known.tcpi_rcv_ooopack
                                                                                             : 0;
  counts->timeout_stall_ms = 0;
  if (Holds<uint32_t>(length, kTotalRtoTimeOffset)) {
    uint32_t stalled = 0;
    std::memcpy(&stalled, reinterpret_cast<const uint8_t*>(&info) + kTotalRtoTimeOffset, sizeof stalled);
    counts->timeout_stall_ms = stalled;
  }
  counts->round_trip_us = known.tcpi_rtt;
  counts->listening = known.tcpi_state == kListenState;
  counts->bytes_moved = 0;
  if (Holds<decltype(known.tcpi_bytes_received)>(length, offsetof(tcp_info, tcpi_bytes_received))) {
    counts->bytes_moved = known.tcpi_bytes_acked + known.tcpi_bytes_received;
  }
  return true;
}

bool SocketInodesOf(const std::string& fd_directory, std::unordered_set<uint64_t>* inodes) {
  DIR* descriptors = opendir(fd_directory.c_str());
  if (descriptors == nullptr) return false;
  int own = dirfd(descriptors);
  constexpr std::string_view kPrefix = "socket:[";
  char link[64];
  while (dirent* entry = readdir(descriptors)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    // Only the link is read: a number closed meanwhile fails or names
    // whatever now has it, never a wrong socket's counters.
    ssize_t length = readlinkat(own, entry->d_name, link, sizeof link - 1);
    if (length <= 0) continue;
    std::string_view target(link, static_cast<size_t>(length));
    if (!target.starts_with(kPrefix) || !target.ends_with(']')) continue;
    uint64_t inode = 0;
    bool digits = target.size() > kPrefix.size() + 1;
    for (char c : target.substr(kPrefix.size(), target.size() - kPrefix.size() - 1)) {
      digits = digits && c >= '0' && c <= '9';
      inode = inode * 10 + static_cast<uint64_t>(c - '0');
    }
    if (digits) inodes->insert(inode);
  }
  closedir(descriptors);
  return true;
}

bool DiagnoseTcpSockets(const std::unordered_set<uint64_t>& wanted,
                        std::unordered_map<uint64_t, DiagnosedTcpSocket>* sockets, std::string* error) {
  sockets->clear();
  if (wanted.empty()) return true;
  NetlinkSocket netlink;
  if (netlink.fd() < 0) {
    *error = std::string("no socket diagnostics (NETLINK_SOCK_DIAG): ") + std::strerror(errno);
    return false;
  }
  uint32_t sequence = 1;
  for (uint8_t family : {uint8_t{AF_INET}, uint8_t{AF_INET6}}) {
    if (!SendDumpRequest(netlink.fd(), family, sequence)) {
      *error = std::string("asking for the socket diagnostics: ") + std::strerror(errno);
      return false;
    }
    if (!ReadDump(netlink.fd(), sequence, wanted, sockets, error)) return false;
    ++sequence;
  }
  return true;
}

}  // namespace limpwatch::analyzer
