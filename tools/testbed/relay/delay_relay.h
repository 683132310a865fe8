// A loopback TCP relay that delays traffic: the network-delay fault (this
// kernel has no tc netem).
//
// For each accepted connection the relay opens one to 127.0.0.1:<upstream>
// (with a socket mark, so the nftables rule that redirects clients here does
// not redirect the relay itself) and forwards both directions. Every chunk
// it reads is released `delay` later; with stalls configured, nothing is
// released during a stall window (stall_ms out of every stall_every_ms).
// At most kMaxQueuedBytes wait per direction: beyond that it stops reading,
// and TCP pushes back on the sender, like a link with a bounded buffer.
//
// One thread, one epoll set, timeouts from the earliest pending release.
#ifndef LIMPWATCH_TOOLS_TESTBED_RELAY_DELAY_RELAY_H_
#define LIMPWATCH_TOOLS_TESTBED_RELAY_DELAY_RELAY_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace limpwatch::testbed::relay {

struct RelaySettings {
  uint16_t listen_port = 0;  // 0: any free port
  uint16_t upstream_port = 0;
  uint32_t delay_ms = 20;
  uint32_t stall_ms = 0;
  uint32_t stall_every_ms = 0;
  uint32_t mark = 0;
};

inline constexpr size_t kMaxQueuedBytes = 4 * 1024 * 1024;

class DelayRelay {
 public:
  explicit DelayRelay(RelaySettings settings) : settings_(settings) {}
  ~DelayRelay();

  // Binds the listening socket; the port is then port().
  bool Open(std::string* error);
  uint16_t port() const { return port_; }
  // Relays until *stop becomes true.
  void Run(const std::atomic<bool>* stop);

 private:
  struct Chunk {
    uint64_t release_ns;
    std::vector<char> bytes;
    size_t sent = 0;
  };
  // One direction of a relayed connection.
  struct Direction {
    int from = -1;
    int to = -1;
    std::deque<Chunk> queue;
    size_t queued_bytes = 0;
    bool from_closed = false;
    bool to_shut = false;
  };
  struct Pair {
    int client = -1;
    int upstream = -1;
    bool upstream_connected = false;
    Direction to_server;  // client -> upstream
    Direction to_client;  // upstream -> client
  };

  void AcceptClients();
  uint64_t ReleaseTime(uint64_t now) const;
  bool ReadInto(Direction* direction);             // false: broken
  bool Flush(Direction* direction, uint64_t now);  // false: broken
  void Service(Pair* pair, uint64_t now);
  void UpdateEvents(Pair* pair);
  void ClosePair(int key);
  uint64_t NextDeadline() const;

  RelaySettings settings_;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  uint16_t port_ = 0;
  std::map<int, std::unique_ptr<Pair>> pairs_;  // keyed by the client fd
  std::map<int, int> owner_;                    // any fd -> its pair's key
};

}  // namespace limpwatch::testbed::relay

#endif  // LIMPWATCH_TOOLS_TESTBED_RELAY_DELAY_RELAY_H_
