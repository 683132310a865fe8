// Holds packets in the kernel for a fixed time: a netfilter queue (NFQUEUE)
// reader that gives each queued packet its ACCEPT verdict --delay-ms after it
// was queued. Unlike the relay, the TCP connection stays end to end, so both
// ends' kernels see the longer round trip (their RTT estimates, their
// retransmission timers), as with a slow link.
//
// Spoken over a raw NETLINK_NETFILTER socket (no library): bind the queue,
// ask for packet metadata only, read NFQNL_MSG_PACKET messages, answer with
// NFQNL_MSG_VERDICT_BATCH. Every packet waits the same time, so packets are
// released in the order they came, and one batch verdict accepts every
// packet up to the newest one that is due.
#ifndef LIMPWATCH_TOOLS_TESTBED_RELAY_PACKET_DELAYER_H_
#define LIMPWATCH_TOOLS_TESTBED_RELAY_PACKET_DELAYER_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <string>

namespace limpwatch::testbed::relay {

class PacketDelayer {
 public:
  PacketDelayer(uint16_t queue, uint32_t delay_ms) : queue_(queue), delay_ns_(uint64_t{delay_ms} * 1000000) {}
  ~PacketDelayer();
  PacketDelayer(const PacketDelayer&) = delete;
  PacketDelayer& operator=(const PacketDelayer&) = delete;

  // Binds the queue; false with a message when the kernel refuses (no
  // nfnetlink_queue, not root, the queue taken by another reader).
  bool Open(std::string* error);

  // Delays packets until *stop, then accepts those still held. False with a
  // message on a socket error.
  bool Run(const std::atomic<bool>* stop, std::string* error);

  uint64_t delayed() const { return delayed_; }

 private:
  struct Held {
    uint32_t id;
    uint64_t due_ns;
  };
  bool Configure(std::string* error);
  bool AwaitAcknowledgement(std::string* error);
  bool ReadPackets(std::string* error);
  bool Release(uint64_t now_ns, bool everything, std::string* error);

  uint16_t queue_;
  uint64_t delay_ns_;
  int socket_ = -1;
  uint32_t sequence_ = 0;
  std::deque<Held> held_;
  uint64_t delayed_ = 0;
};

}  // namespace limpwatch::testbed::relay

#endif  // LIMPWATCH_TOOLS_TESTBED_RELAY_PACKET_DELAYER_H_
