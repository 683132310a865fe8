// One bound UDP socket that sends datagrams and receives them without ever
// blocking its caller beyond the timeout it gives.
//
// Two implementations behind one interface, chosen when the channel opens:
//
//   io_uring (liburing): a recvmsg request stays armed in the kernel, so a
//     datagram is already in our buffer when Poll looks; the sends of one
//     summary to every peer are queued as sendmsg requests and submitted
//     with one system call. Poll re-arms and waits in one call
//     (io_uring_submit_and_wait_timeout). The socket stays blocking:
//     io_uring never blocks the submitter, it parks the request.
//   plain sockets: a non-blocking socket, sendto / recvfrom with
//     MSG_DONTWAIT, ppoll for the wait. Used when io_uring_queue_init is
//     refused (kernel without it, io_uring_disabled, a seccomp filter, no
//     sendmsg/recvmsg support), or when LIMPWATCH_IO_URING=0 forces it.
//
// Both receive with MSG_TRUNC, so a datagram longer than the buffer is
// reported with its true size (and then refused as oversized) instead of
// being silently cut to look valid.
//
// Not thread-safe: one thread (the analyzer's) sends and polls.
#ifndef LIMPWATCH_ANALYZER_DATAGRAM_CHANNEL_H_
#define LIMPWATCH_ANALYZER_DATAGRAM_CHANNEL_H_

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "limpwatch/analyzer/peer_address.h"

namespace limpwatch::analyzer {

inline constexpr char kIoUringVariable[] = "LIMPWATCH_IO_URING";

enum class IoPath : uint8_t { kIoUring, kPlainSockets };
enum class IoPreference : uint8_t {
  kAuto,          // io_uring unless LIMPWATCH_IO_URING=0 or it is refused
  kPlainSockets,  // never io_uring
};

const char* IoPathName(IoPath path);

// LIMPWATCH_IO_URING is 0, off, no or false: plain system calls everywhere
// (the peer exchange, the recording, the alarms file).
bool IoUringForcedOff();

struct ReceivedDatagram {
  PeerAddress source;
  std::vector<uint8_t> bytes;  // at most kReceiveBufferBytes of it
  size_t wire_size = 0;        // its true size; > bytes.size() when it did not fit
};

// A destination prepared once for the channel's socket family.
struct DatagramDestination {
  sockaddr_storage address;
  socklen_t length = 0;
};

// Cumulative; read by the transport after each call.
struct ChannelCounters {
  uint64_t sent = 0;          // datagrams the kernel took
  uint64_t send_errors = 0;   // refused, or no room to queue them
  int last_send_errno = 0;
  uint64_t receive_errors = 0;
  int last_receive_errno = 0;
};

class DatagramChannel {
 public:
  static constexpr size_t kReceiveBufferBytes = 2048;

  virtual ~DatagramChannel() = default;

  // Sends `datagram` to every destination. Never blocks: a destination that
  // cannot be queued right now counts as a send error. The bytes are copied
  // before it returns.
  virtual void SendToAll(std::span<const uint8_t> datagram, std::span<const DatagramDestination> destinations) = 0;

  // Appends up to `max_datagrams` received datagrams to *out. Returns as soon
  // as at least one is there, or when `timeout_ns` has passed (0: only what
  // is already there). Returns how many it appended.
  virtual size_t Poll(int64_t timeout_ns, size_t max_datagrams, std::vector<ReceivedDatagram>* out) = 0;

  virtual IoPath path() const = 0;

  const ChannelCounters& counters() const { return counters_; }
  const PeerAddress& local_address() const { return local_address_; }
  int socket_family() const { return socket_family_; }

  // Where to send `address` from this channel's socket; length 0 when its
  // family cannot reach it (IPv6 from an IPv4 socket).
  DatagramDestination DestinationFor(const PeerAddress& address) const;

 protected:
  ChannelCounters counters_;
  PeerAddress local_address_;
  int socket_family_ = AF_INET;
};

struct ChannelOptions {
  PeerAddress bind;  // port 0: an ephemeral port (tests)
  IoPreference preference = IoPreference::kAuto;
};

// Opens and binds the channel. Returns null with a one-line *error when the
// socket cannot be made or bound. When io_uring was wanted but refused,
// *fallback_reason says why (and the plain-socket channel is returned).
std::unique_ptr<DatagramChannel> OpenDatagramChannel(const ChannelOptions& options, std::string* fallback_reason,
                                                     std::string* error);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_DATAGRAM_CHANNEL_H_
