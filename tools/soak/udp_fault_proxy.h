// A forwarding UDP proxy between the host server and each of its peers,
// which drops, duplicates, reorders, delays and replays their summaries.
//
// For peer i the proxy holds two sockets on 127.0.0.1: "host side" H_i,
// which the host server has in its peer list as peer i, and "peer side"
// P_i, which peer i has as the host. A datagram peer i sends to P_i leaves
// through H_i for the host; one the host sends to H_i leaves through P_i
// for peer i. So every datagram reaches its receiver from the address the
// receiver has configured, and whatever the proxy sends again (a copy, a
// replay) is genuine and authenticated: only the replay guard can refuse it.
//
// Every datagram sent to the host goes through one function, on the
// proxy's thread, in the order the host receives them (one socket per
// peer): there the replay oracle (replay_oracle.h) says what the host will
// make of it, and the proxy counts it.
#ifndef LIMPWATCH_TOOLS_SOAK_UDP_FAULT_PROXY_H_
#define LIMPWATCH_TOOLS_SOAK_UDP_FAULT_PROXY_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "replay_oracle.h"

namespace limpwatch::soak {

// Probabilities per datagram, in both directions.
struct ProxyFaults {
  double drop = 0;
  double duplicate = 0;
  double reorder = 0;  // held until the next datagram of its direction has gone
  double delay = 0;    // held 0.1 to max_delay_ms
  uint32_t max_delay_ms = 3000;
};

struct ProxyTally {
  uint64_t from_peers = 0;      // datagrams the peers sent toward the host
  uint64_t from_host = 0;       // datagrams the host sent toward the peers
  uint64_t dropped = 0;         // both directions
  uint64_t duplicated = 0;
  uint64_t reordered = 0;
  uint64_t delayed = 0;
  uint64_t replayed = 0;        // old datagrams sent to the host again on request
  uint64_t forged = 0;          // the forger's datagrams sent from a host-side socket
  std::array<uint64_t, 16> forged_by_class{};  // by the refusal they were made for (peer_wire.h's DecodeError)
  uint64_t send_failures = 0;   // sendto refused (counted, not sent)
  // Every genuine datagram sent to the host, by what the host must make of it.
  uint64_t to_host_accepted = 0;
  uint64_t to_host_replayed = 0;
  uint64_t to_host_stale_boot = 0;
  uint64_t to_host_total = 0;   // these three, and the forged ones
};

class UdpFaultProxy {
 public:
  // Binds 2 x `peers` sockets on ephemeral loopback ports.
  static std::unique_ptr<UdpFaultProxy> Create(size_t peers, uint64_t seed, std::string* error);
  ~UdpFaultProxy();
  UdpFaultProxy(const UdpFaultProxy&) = delete;
  UdpFaultProxy& operator=(const UdpFaultProxy&) = delete;

  uint16_t host_side_port(size_t peer) const;  // what the host has as peer `peer`
  uint16_t peer_side_port(size_t peer) const;  // what peer `peer` has as the host

  // Where the real servers listen; set before Start.
  void SetAddresses(uint16_t host_port, const std::vector<uint16_t>& peer_ports);
  void Start();
  void Stop();  // joins the thread; held datagrams are dropped (and counted)

  void SetFaults(const ProxyFaults& faults);
  // Sends `count` earlier datagrams of random peers to the host again.
  void RequestReplay(size_t count);
  // Sends `datagram`, made to be refused as `refusal` (a DecodeError), to
  // the host from peer `peer`'s host-side socket.
  void SendForged(size_t peer, std::vector<uint8_t> datagram, uint32_t refusal);

  ProxyTally tally() const;

 private:
  struct Held;
  struct Impl;
  explicit UdpFaultProxy(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace limpwatch::soak

#endif  // LIMPWATCH_TOOLS_SOAK_UDP_FAULT_PROXY_H_
