#include "udp_fault_proxy.h"
#include "soak_clock.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>

namespace limpwatch::soak {
namespace {

constexpr size_t kHistoryPerPeer = 64;
constexpr uint64_t kReorderHoldMs = 2000;  // a held datagram goes by then even if nothing follows it
constexpr size_t kReceiveBytes = 65536;

sockaddr_in Loopback(uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

int BoundSocket(uint16_t* port, std::string* error) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in address = Loopback(0);
  socklen_t length = sizeof address;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    *error = std::string("proxy socket: ") + std::strerror(errno);
    if (fd >= 0) close(fd);
    return -1;
  }
  *port = ntohs(address.sin_port);
  return fd;
}

}  // namespace

struct UdpFaultProxy::Held {
  uint64_t due_ms;
  size_t peer;
  bool toward_host;
  bool reordered;  // goes right after the next datagram of its direction
  std::vector<uint8_t> bytes;
};

struct UdpFaultProxy::Impl {
  std::vector<int> host_side, peer_side;
  std::vector<uint16_t> host_side_ports, peer_side_ports;
  sockaddr_in host_address{};
  std::vector<sockaddr_in> peer_addresses;
  int wake[2] = {-1, -1};
  std::thread thread;
  std::atomic<bool> running{false};
  std::mt19937_64 random;

  mutable std::mutex mutex;  // guards the fields below
  ProxyFaults faults;
  size_t replays_requested = 0;
  struct Forged {
    size_t peer;
    std::vector<uint8_t> bytes;
    uint32_t refusal;
  };
  std::vector<Forged> forged;
  ProxyTally tally;

  // The proxy thread's own.
  ReplayOracle oracle;
  std::vector<std::deque<std::vector<uint8_t>>> history;
  std::vector<Held> held;

  ~Impl() {
    for (int fd : host_side) close(fd);
    for (int fd : peer_side) close(fd);
    if (wake[0] >= 0) close(wake[0]), close(wake[1]);
  }

  void Wake() {
    char byte = 1;
    ssize_t ignored = write(wake[1], &byte, 1);
    (void)ignored;
  }

  // Every datagram for the host leaves here, in the order the host gets it.
  // `refusal`: the class a forged datagram was made for; 0 for a genuine one.
  void SendToHost(size_t peer, const std::vector<uint8_t>& bytes, uint32_t refusal = 0) {
    ssize_t sent = sendto(host_side[peer], bytes.data(), bytes.size(), 0,
                          reinterpret_cast<const sockaddr*>(&host_address), sizeof host_address);
    std::lock_guard lock(mutex);
    if (sent != ssize_t(bytes.size())) {
      ++tally.send_failures;
      return;
    }
    ++tally.to_host_total;
    if (refusal != 0) {
      ++tally.forged;
      ++tally.forged_by_class[refusal % tally.forged_by_class.size()];
      return;
    }
    switch (oracle.Judge(bytes)) {
      case ReplayVerdict::kAccepted: ++tally.to_host_accepted; break;
      case ReplayVerdict::kReplayed: ++tally.to_host_replayed; break;
      case ReplayVerdict::kStaleBoot: ++tally.to_host_stale_boot; break;
      case ReplayVerdict::kNotASummary: break;  // a peer sends only summaries
    }
  }

  void SendNow(size_t peer, bool toward_host, const std::vector<uint8_t>& bytes) {
    if (toward_host) {
      SendToHost(peer, bytes);
      if (history[peer].size() == kHistoryPerPeer) history[peer].pop_front();
      history[peer].push_back(bytes);
      return;
    }
    ssize_t sent = sendto(peer_side[peer], bytes.data(), bytes.size(), 0,
                          reinterpret_cast<const sockaddr*>(&peer_addresses[peer]), sizeof peer_addresses[peer]);
    if (sent != ssize_t(bytes.size())) {
      std::lock_guard lock(mutex);
      ++tally.send_failures;
    }
  }

  // Sends, then lets a datagram held for reordering behind it go.
  void Send(size_t peer, bool toward_host, const std::vector<uint8_t>& bytes) {
    SendNow(peer, toward_host, bytes);
    for (auto it = held.begin(); it != held.end();) {
      if (it->reordered && it->peer == peer && it->toward_host == toward_host) {
        std::vector<uint8_t> late = std::move(it->bytes);
        it = held.erase(it);
        SendNow(peer, toward_host, late);
      } else {
        ++it;
      }
    }
  }

  void Route(size_t peer, bool toward_host, std::vector<uint8_t> bytes) {
    ProxyFaults now_faults;
    {
      std::lock_guard lock(mutex);
      now_faults = faults;
      ++(toward_host ? tally.from_peers : tally.from_host);
    }
    std::uniform_real_distribution<double> chance(0.0, 1.0);
    if (chance(random) < now_faults.drop) {
      std::lock_guard lock(mutex);
      ++tally.dropped;
      return;
    }
    bool duplicate = chance(random) < now_faults.duplicate;
    if (chance(random) < now_faults.delay) {
      uint64_t hold = 100 + random() % std::max<uint32_t>(now_faults.max_delay_ms, 101);
      held.push_back({NowMs() + hold, peer, toward_host, false, bytes});
      if (duplicate) Send(peer, toward_host, bytes);  // the copy overtakes the original
      std::lock_guard lock(mutex);
      ++tally.delayed;
      tally.duplicated += duplicate ? 1 : 0;
      return;
    }
    if (chance(random) < now_faults.reorder) {
      held.push_back({NowMs() + kReorderHoldMs, peer, toward_host, true, bytes});
      std::lock_guard lock(mutex);
      ++tally.reordered;
      return;
    }
    Send(peer, toward_host, bytes);
    if (duplicate) {
      Send(peer, toward_host, bytes);
      std::lock_guard lock(mutex);
      ++tally.duplicated;
    }
  }

  void ReleaseDue() {
    uint64_t now = NowMs();
    std::vector<Held> due;
    for (auto it = held.begin(); it != held.end();) {
      if (it->due_ms <= now) {
        due.push_back(std::move(*it));
        it = held.erase(it);
      } else {
        ++it;
      }
    }
    for (Held& late : due) SendNow(late.peer, late.toward_host, late.bytes);
  }

  void ServeRequests() {
    size_t replays;
    std::vector<Forged> to_forge;
    {
      std::lock_guard lock(mutex);
      replays = replays_requested;
      replays_requested = 0;
      to_forge.swap(forged);
    }
    for (const Forged& datagram : to_forge) SendToHost(datagram.peer, datagram.bytes, datagram.refusal);
    for (size_t count = 0; count < replays; ++count) {
      std::vector<size_t> with_history;
      for (size_t peer = 0; peer < history.size(); ++peer) {
        if (!history[peer].empty()) with_history.push_back(peer);
      }
      if (with_history.empty()) break;
      size_t peer = with_history[random() % with_history.size()];
      std::vector<uint8_t> old = history[peer][random() % history[peer].size()];
      SendToHost(peer, old);
      std::lock_guard lock(mutex);
      ++tally.replayed;
    }
  }

  void Run() {
    std::vector<uint8_t> buffer(kReceiveBytes);
    size_t peers = host_side.size();
    std::vector<pollfd> watched;
    for (int fd : peer_side) watched.push_back({fd, POLLIN, 0});
    for (int fd : host_side) watched.push_back({fd, POLLIN, 0});
    watched.push_back({wake[0], POLLIN, 0});
    while (running.load(std::memory_order_acquire)) {
      uint64_t now = NowMs();
      int timeout = 100;
      for (const Held& late : held) timeout = std::min<int>(timeout, late.due_ms > now ? int(late.due_ms - now) : 0);
      poll(watched.data(), watched.size(), timeout);
      for (size_t index = 0; index < 2 * peers; ++index) {
        if (!(watched[index].revents & POLLIN)) continue;
        bool toward_host = index < peers;
        size_t peer = toward_host ? index : index - peers;
        for (;;) {
          ssize_t got = recv(watched[index].fd, buffer.data(), buffer.size(), 0);
          if (got < 0) break;
          Route(peer, toward_host, std::vector<uint8_t>(buffer.begin(), buffer.begin() + got));
        }
      }
      if (watched.back().revents & POLLIN) {
        char drain[64];
        while (read(wake[0], drain, sizeof drain) > 0) {
        }
      }
      ServeRequests();
      ReleaseDue();
    }
    std::lock_guard lock(mutex);
    tally.dropped += held.size();
    held.clear();
  }
};

UdpFaultProxy::UdpFaultProxy(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

UdpFaultProxy::~UdpFaultProxy() { Stop(); }

std::unique_ptr<UdpFaultProxy> UdpFaultProxy::Create(size_t peers, uint64_t seed, std::string* error) {
  auto impl = std::make_unique<Impl>();
  impl->random.seed(seed);
  for (size_t peer = 0; peer < peers; ++peer) {
    uint16_t host_side_port = 0, peer_side_port = 0;
    int host_side = BoundSocket(&host_side_port, error);
    if (host_side < 0) return nullptr;
    impl->host_side.push_back(host_side);
    impl->host_side_ports.push_back(host_side_port);
    int peer_side = BoundSocket(&peer_side_port, error);
    if (peer_side < 0) return nullptr;
    impl->peer_side.push_back(peer_side);
    impl->peer_side_ports.push_back(peer_side_port);
  }
  if (pipe2(impl->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
    *error = std::string("pipe2: ") + std::strerror(errno);
    return nullptr;
  }
  impl->history.resize(peers);
  return std::unique_ptr<UdpFaultProxy>(new UdpFaultProxy(std::move(impl)));
}

uint16_t UdpFaultProxy::host_side_port(size_t peer) const { return impl_->host_side_ports.at(peer); }
uint16_t UdpFaultProxy::peer_side_port(size_t peer) const { return impl_->peer_side_ports.at(peer); }

void UdpFaultProxy::SetAddresses(uint16_t host_port, const std::vector<uint16_t>& peer_ports) {
  impl_->host_address = Loopback(host_port);
  impl_->peer_addresses.clear();
  for (uint16_t port : peer_ports) impl_->peer_addresses.push_back(Loopback(port));
}

void UdpFaultProxy::Start() {
  if (impl_->running.exchange(true)) return;
  impl_->thread = std::thread([this] { impl_->Run(); });
}

void UdpFaultProxy::Stop() {
  if (!impl_->running.exchange(false)) return;
  impl_->Wake();
  impl_->thread.join();
}

void UdpFaultProxy::SetFaults(const ProxyFaults& faults) {
  std::lock_guard lock(impl_->mutex);
  impl_->faults = faults;
}

void UdpFaultProxy::RequestReplay(size_t count) {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->replays_requested += count;
  }
  impl_->Wake();
}

void UdpFaultProxy::SendForged(size_t peer, std::vector<uint8_t> datagram, uint32_t refusal) {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->forged.push_back({peer % impl_->host_side.size(), std::move(datagram), refusal});
  }
  impl_->Wake();
}

ProxyTally UdpFaultProxy::tally() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->tally;
}

}  // namespace limpwatch::soak
