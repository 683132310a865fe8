#include "relay/delay_relay.h"

#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/socket_util.h"

namespace limpwatch::testbed::relay {
namespace {

constexpr size_t kReadChunk = 64 * 1024;

// A non-blocking connection to 127.0.0.1:port carrying `mark`; -1 on failure.
int ConnectUpstream(uint16_t port, uint32_t mark) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (mark != 0) setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof mark);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 && errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  SetNoDelay(fd);
  return fd;
}

}  // namespace

DelayRelay::~DelayRelay() {
  std::vector<int> keys;
  for (auto& [key, pair] : pairs_) keys.push_back(key);
  for (int key : keys) ClosePair(key);
  if (listen_fd_ >= 0) close(listen_fd_);
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

bool DelayRelay::Open(std::string* error) {
  listen_fd_ = ListenTcp("127.0.0.1", settings_.listen_port, error);
  if (listen_fd_ < 0) return false;
  SetNonBlocking(listen_fd_);
  port_ = LocalPort(listen_fd_);
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  epoll_event event{EPOLLIN, {.fd = listen_fd_}};
  if (epoll_fd_ < 0 || epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &event) != 0) {
    *error = std::string("epoll: ") + strerror(errno);
    return false;
  }
  return true;
}

uint64_t DelayRelay::ReleaseTime(uint64_t now) const {
  uint64_t release = now + uint64_t(settings_.delay_ms) * 1000000;
  if (settings_.stall_ms > 0 && settings_.stall_every_ms > 0) {
    // Stall windows: [k * every, k * every + stall) on the monotonic clock.
    uint64_t every = uint64_t(settings_.stall_every_ms) * 1000000;
    uint64_t stall = uint64_t(settings_.stall_ms) * 1000000;
    uint64_t into = release % every;
    if (into < stall) release += stall - into;
  }
  return release;
}

void DelayRelay::AcceptClients() {
  for (;;) {
    int client = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (client < 0) return;
    SetNoDelay(client);
    int upstream = ConnectUpstream(settings_.upstream_port, settings_.mark);
    if (upstream < 0) {
      close(client);
      continue;
    }
    auto pair = std::make_unique<Pair>();
    pair->client = client;
    pair->upstream = upstream;
    pair->to_server.from = client;
    pair->to_server.to = upstream;
    pair->to_client.from = upstream;
    pair->to_client.to = client;
    epoll_event client_event{EPOLLIN, {.fd = client}};
    epoll_event upstream_event{EPOLLIN | EPOLLOUT, {.fd = upstream}};
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, client, &client_event);
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, upstream, &upstream_event);
    owner_[client] = client;
    owner_[upstream] = client;
    pairs_[client] = std::move(pair);
  }
}

bool DelayRelay::ReadInto(Direction* direction) {
  while (!direction->from_closed && direction->queued_bytes < kMaxQueuedBytes) {
    Chunk chunk;
    chunk.bytes.resize(kReadChunk);
    ssize_t count = recv(direction->from, chunk.bytes.data(), chunk.bytes.size(), MSG_DONTWAIT);
    if (count == 0) {
      direction->from_closed = true;
      break;
    }
    if (count < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    chunk.bytes.resize(static_cast<size_t>(count));
    chunk.release_ns = ReleaseTime(MonotonicNs());
    direction->queued_bytes += chunk.bytes.size();
    direction->queue.push_back(std::move(chunk));
  }
  return true;
}

bool DelayRelay::Flush(Direction* direction, uint64_t now) {
  while (!direction->queue.empty() && direction->queue.front().release_ns <= now) {
    Chunk& chunk = direction->queue.front();
    ssize_t sent = send(direction->to, chunk.bytes.data() + chunk.sent, chunk.bytes.size() - chunk.sent,
                        MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    chunk.sent += static_cast<size_t>(sent);
    if (chunk.sent < chunk.bytes.size()) return true;
    direction->queued_bytes -= chunk.bytes.size();
    direction->queue.pop_front();
  }
  if (direction->queue.empty() && direction->from_closed && !direction->to_shut) {
    shutdown(direction->to, SHUT_WR);  // pass the sender's close on, after its last byte
    direction->to_shut = true;
  }
  return true;
}

void DelayRelay::UpdateEvents(Pair* pair) {
  auto events_for = [&](const Direction& reading, const Direction& writing) {
    uint32_t events = 0;
    if (!reading.from_closed && reading.queued_bytes < kMaxQueuedBytes) events |= EPOLLIN;
    if (!writing.queue.empty() && writing.queue.front().release_ns <= MonotonicNs()) events |= EPOLLOUT;
    return events;
  };
  epoll_event client_event{events_for(pair->to_server, pair->to_client), {.fd = pair->client}};
  epoll_event upstream_event{events_for(pair->to_client, pair->to_server) | (pair->upstream_connected ? 0u : EPOLLOUT),
                             {.fd = pair->upstream}};
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, pair->client, &client_event);
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, pair->upstream, &upstream_event);
}

void DelayRelay::Service(Pair* pair, uint64_t now) {
  if (!pair->upstream_connected) {
    int error = 0;
    socklen_t length = sizeof error;
    getsockopt(pair->upstream, SOL_SOCKET, SO_ERROR, &error, &length);
    if (error != 0) {
      ClosePair(pair->client);
      return;
    }
    sockaddr_in peer{};
    socklen_t peer_length = sizeof peer;
    if (getpeername(pair->upstream, reinterpret_cast<sockaddr*>(&peer), &peer_length) == 0) {
      pair->upstream_connected = true;
    }
  }
  bool ok = ReadInto(&pair->to_server) && ReadInto(&pair->to_client);
  if (ok && pair->upstream_connected) ok = Flush(&pair->to_server, now);
  if (ok) ok = Flush(&pair->to_client, now);
  bool finished = pair->to_server.to_shut && pair->to_client.to_shut;
  if (!ok || finished) {
    ClosePair(pair->client);
    return;
  }
  UpdateEvents(pair);
}

void DelayRelay::ClosePair(int key) {
  auto found = pairs_.find(key);
  if (found == pairs_.end()) return;
  Pair* pair = found->second.get();
  for (int fd : {pair->client, pair->upstream}) {
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    owner_.erase(fd);
    close(fd);
  }
  pairs_.erase(found);
}

uint64_t DelayRelay::NextDeadline() const {
  uint64_t next = UINT64_MAX;
  for (const auto& [key, pair] : pairs_) {
    for (const Direction* direction : {&pair->to_server, &pair->to_client}) {
      if (!direction->queue.empty()) next = std::min(next, direction->queue.front().release_ns);
    }
  }
  return next;
}

void DelayRelay::Run(const std::atomic<bool>* stop) {
  epoll_event events[64];
  while (!stop->load()) {
    uint64_t now = MonotonicNs();
    uint64_t next = NextDeadline();
    int timeout_ms = 200;  // also how soon a stop request is seen
    if (next != UINT64_MAX)
      timeout_ms = next <= now ? 0 : static_cast<int>(std::min<uint64_t>((next - now) / 1000000 + 1, 200));
    int count = epoll_wait(epoll_fd_, events, 64, timeout_ms);
    for (int i = 0; i < count; ++i) {
      int fd = events[i].data.fd;
      if (fd == listen_fd_) {
        AcceptClients();
        continue;
      }
      auto owner = owner_.find(fd);
      if (owner == owner_.end()) continue;
      auto pair = pairs_.find(owner->second);
      if (pair != pairs_.end()) Service(pair->second.get(), MonotonicNs());
    }
    // Chunks whose time came: release them on every pair that has some.
    now = MonotonicNs();
    std::vector<int> due;
    for (const auto& [key, pair] : pairs_) {
      for (const Direction* direction : {&pair->to_server, &pair->to_client}) {
        if (!direction->queue.empty() && direction->queue.front().release_ns <= now) {
          due.push_back(key);
          break;
        }
      }
    }
    for (int key : due) {
      auto pair = pairs_.find(key);
      if (pair != pairs_.end()) Service(pair->second.get(), now);
    }
  }
}

}  // namespace limpwatch::testbed::relay
