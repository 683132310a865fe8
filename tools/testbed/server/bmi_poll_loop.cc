#include "server/bmi_poll_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/socket_util.h"
#include "server/server_log.h"

namespace limpwatch::testbed::bmi {
namespace {

constexpr uint64_t kListenerId = 0;
constexpr uint64_t kWakeId = 1;
constexpr uint64_t kAcceptPauseNs = 100 * 1000000ull;

}  // namespace

PollLoop::~PollLoop() {
  if (epoll_fd_ >= 0) close(epoll_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
  if (listen_fd_ >= 0) close(listen_fd_);
}

bool PollLoop::Open(int listen_fd, RequestHandler handler, std::string* error) {
  listen_fd_ = listen_fd;
  handler_ = std::move(handler);
  SetNonBlocking(listen_fd_);
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) {
    *error = std::string("epoll / eventfd: ") + strerror(errno);
    return false;
  }
  epoll_event listener{EPOLLIN, {.u64 = kListenerId}};
  epoll_event wake{EPOLLIN, {.u64 = kWakeId}};
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &listener) != 0 ||
      epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &wake) != 0) {
    *error = std::string("epoll_ctl: ") + strerror(errno);
    return false;
  }
  return true;
}

void PollLoop::Stop() {
  stopping_.store(true);
  uint64_t one = 1;
  if (write(wake_fd_, &one, sizeof one) < 0) {
    // The eventfd counter cannot overflow here; nothing else to do.
  }
}

void PollLoop::RequestService(const std::shared_ptr<Connection>& connection) {
  {
    std::lock_guard lock(service_mutex_);
    service_requests_.push_back(connection);
  }
  uint64_t one = 1;
  if (write(wake_fd_, &one, sizeof one) < 0) {
    // Already readable: the loop will drain the requests anyway.
  }
}

void PollLoop::DeliverRequest(const std::shared_ptr<Connection>& connection, const FrameHeader& header,
                              std::vector<uint8_t> payload) {
  handler_(connection, header, std::move(payload));
}

void PollLoop::Run() {
  epoll_event events[64];
  while (!stopping_.load()) {
    int timeout_ms = -1;
    if (accept_paused_) {
      uint64_t now = MonotonicNs();
      timeout_ms = now >= accept_resume_ns_ ? 0 : static_cast<int>((accept_resume_ns_ - now) / 1000000 + 1);
    }
    int count = epoll_wait(epoll_fd_, events, 64, timeout_ms);
    if (count < 0 && errno != EINTR) {
      LogLine(std::string("bmi: epoll_wait: ") + strerror(errno));
      break;
    }
    for (int i = 0; i < count; ++i) {
      uint64_t id = events[i].data.u64;
      if (id == kListenerId) {
        AcceptConnections();
      } else if (id == kWakeId) {
        uint64_t value;
        while (read(wake_fd_, &value, sizeof value) > 0) {
        }
      } else {
        auto found = connections_.find(id);
        if (found != connections_.end()) ServiceConnection(found->second, events[i].events);
      }
    }
    DrainServiceRequests();
    ResumeAcceptingIfDue();
  }
  for (auto& [id, connection] : connections_) connection->Close();
  connections_.clear();
}

void PollLoop::AcceptConnections() {
  for (;;) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        LogLineRateLimited(2, std::string("bmi: accept: ") + strerror(errno) + "; not accepting for 100 ms");
        PauseAccepting();
        return;
      }
      if (errno == ECONNABORTED) continue;
      LogLineRateLimited(3, std::string("bmi: accept: ") + strerror(errno));
      return;
    }
    SetNoDelay(fd);
    auto connection = std::make_shared<Connection>(fd, next_connection_id_++, this);
    connection->registered_events = EPOLLIN;
    epoll_event event{EPOLLIN, {.u64 = connection->id()}};
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
      LogLine(std::string("bmi: epoll_ctl add: ") + strerror(errno));
      continue;  // the connection's destructor closes fd
    }
    connections_[connection->id()] = connection;
  }
}

void PollLoop::PauseAccepting() {
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
  accept_paused_ = true;
  accept_resume_ns_ = MonotonicNs() + kAcceptPauseNs;
}

void PollLoop::ResumeAcceptingIfDue() {
  if (!accept_paused_ || MonotonicNs() < accept_resume_ns_) return;
  epoll_event listener{EPOLLIN, {.u64 = kListenerId}};
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &listener);
  accept_paused_ = false;
}

void PollLoop::ServiceConnection(const std::shared_ptr<Connection>& connection, uint32_t events) {
  if (connection->closed()) return;
  bool broken = (events & (EPOLLERR | EPOLLHUP)) != 0 && (events & EPOLLIN) == 0;
  if (!broken && (events & EPOLLOUT) != 0 && connection->OnWritable() == Connection::Progress::kClose) broken = true;
  if (!broken && (events & EPOLLIN) != 0 && connection->OnReadable() == Connection::Progress::kClose) broken = true;
  if (broken) {
    CloseConnection(connection);
    return;
  }
  UpdateInterest(*connection);
}

void PollLoop::DrainServiceRequests() {
  std::vector<std::weak_ptr<Connection>> requests;
  {
    std::lock_guard lock(service_mutex_);
    requests.swap(service_requests_);
  }
  for (auto& weak : requests) {
    std::shared_ptr<Connection> connection = weak.lock();
    if (!connection || connection->closed() || !connections_.count(connection->id())) continue;
    // Try both directions now: a resumed receive may have data waiting, and
    // a fresh message usually fits in the socket without waiting for EPOLLOUT.
    ServiceConnection(connection, EPOLLIN | EPOLLOUT);
  }
}

void PollLoop::UpdateInterest(Connection& connection) {
  uint32_t wanted = connection.WantedEvents();
  if (wanted == connection.registered_events) return;
  epoll_event event{wanted, {.u64 = connection.id()}};
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, connection.fd(), &event) == 0) connection.registered_events = wanted;
}

void PollLoop::CloseConnection(const std::shared_ptr<Connection>& connection) {
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, connection->fd(), nullptr);
  connection->Close();
  connections_.erase(connection->id());
}

}  // namespace limpwatch::testbed::bmi
