#include "serve/http_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <exception>

namespace limpwatch::cli::serve {
namespace {

// After an error response the connection is shut for writing and what the
// client still sends is read and dropped for this long, so that closing
// with unread bytes does not reset the connection before the client has
// read the response.
constexpr int kLingerMs = 2000;
// accept() failing for want of descriptors would wake poll at once, forever.
constexpr int kAcceptPauseMs = 100;
constexpr size_t kReceiveChunk = 16384;
constexpr int kMaxPollMs = 1000;

int64_t NowMs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
}

}  // namespace

struct HttpServer::Connection {
  explicit Connection(int socket) : fd(socket) {}
  ~Connection() { close(fd); }

  int fd;
  std::string in;
  std::string out;
  size_t out_sent = 0;
  bool writing = false;          // a response is on its way: nothing is read meanwhile
  bool close_after_write = false;
  bool draining = false;         // shut for writing, dropping what still arrives
  bool request_started = false;  // bytes of a request are in: the deadline is the request's
  bool closed = false;
  int64_t deadline_ms = 0;
};

HttpServer::HttpServer(int listen_fd, std::vector<Route> routes, HttpLimits limits)
    : listen_fd_(listen_fd), routes_(std::move(routes)), limits_(limits) {}

HttpServer::~HttpServer() {
  connections_.clear();
  close(listen_fd_);
}

void HttpServer::SetPeriodicTask(int period_ms, std::function<void()> task) {
  task_period_ms_ = period_ms;
  task_ = std::move(task);
}

void HttpServer::Run(int stop_fd) {
  int64_t accept_paused_until = 0;
  int64_t next_task = task_ ? NowMs() : INT64_MAX;
  std::vector<pollfd> polled;
  std::vector<Connection*> polled_connections;
  for (;;) {
    int64_t now = NowMs();
    polled.clear();
    polled_connections.clear();
    polled.push_back({stop_fd, POLLIN, 0});
    polled.push_back({now >= accept_paused_until ? listen_fd_ : -1, POLLIN, 0});
    int64_t next_deadline = now + kMaxPollMs;
    for (auto& connection : connections_) {
      polled.push_back({connection->fd, static_cast<short>(connection->writing ? POLLOUT : POLLIN), 0});
      polled_connections.push_back(connection.get());
      next_deadline = std::min(next_deadline, connection->deadline_ms);
    }
    if (accept_paused_until > now) next_deadline = std::min(next_deadline, accept_paused_until);
    next_deadline = std::min(next_deadline, next_task);
    int timeout = static_cast<int>(std::clamp<int64_t>(next_deadline - now, 0, kMaxPollMs));
    int ready = poll(polled.data(), polled.size(), timeout);
    if (ready < 0 && errno != EINTR) return;
    if (polled[0].revents != 0) return;
    now = NowMs();
    if ((polled[1].revents & POLLIN) && !Accept(now)) accept_paused_until = now + kAcceptPauseMs;
    for (size_t index = 0; index < polled_connections.size(); ++index) {
      Connection& connection = *polled_connections[index];
      short events = polled[index + 2].revents;
      if (events == 0 || connection.closed) continue;
      if (connection.writing && (events & (POLLOUT | POLLERR | POLLHUP))) {
        Send(connection, now);
      } else if (!connection.writing && (events & (POLLIN | POLLERR | POLLHUP))) {
        Receive(connection, now);
      }
    }
    now = NowMs();
    for (auto& connection : connections_) {
      if (!connection->closed && now >= connection->deadline_ms) Expire(*connection, now);
    }
    connections_.remove_if([](const std::unique_ptr<Connection>& connection) { return connection->closed; });
    if (now >= next_task) {
      task_();
      next_task = NowMs() + task_period_ms_;
    }
  }
}

bool HttpServer::Accept(int64_t now_ms) {
  for (int accepted = 0; accepted < 64; ++accepted) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK;
    }
    if (connections_.size() >= limits_.max_connections) {
      static const std::string kBusy = SerializeResponse(TextResponse(503, "too many connections"), false, false);
      // One try, never waited for: this client is turned away, not served.
      [[maybe_unused]] ssize_t sent = send(fd, kBusy.data(), kBusy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      close(fd);
      continue;
    }
    auto connection = std::make_unique<Connection>(fd);
    connection->deadline_ms = now_ms + limits_.idle_timeout_ms;
    connections_.push_back(std::move(connection));
  }
  return true;
}

void HttpServer::Receive(Connection& connection, int64_t now_ms) {
  char chunk[kReceiveChunk];
  for (;;) {
    ssize_t received = recv(connection.fd, chunk, sizeof chunk, 0);
    if (received > 0) {
      if (connection.draining) continue;
      if (!connection.request_started) {
        connection.request_started = true;
        connection.deadline_ms = now_ms + limits_.request_timeout_ms;
      }
      connection.in.append(chunk, static_cast<size_t>(received));
      // Enough to tell a head over the limit; the rest waits in the socket.
      if (connection.in.size() > limits_.max_request_head) break;
      continue;
    }
    if (received < 0 && errno == EINTR) continue;
    if (received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    connection.closed = true;  // the client closed (or reset) its side: nothing is owed to it
    return;
  }
  if (!connection.draining) HandleBuffered(connection, now_ms);
}

void HttpServer::HandleBuffered(Connection& connection, int64_t now_ms) {
  while (!connection.writing && !connection.closed && !connection.draining) {
    if (connection.in.empty()) {
      connection.request_started = false;
      connection.deadline_ms = now_ms + limits_.idle_timeout_ms;
      return;
    }
    if (!connection.request_started) {
      connection.request_started = true;
      connection.deadline_ms = now_ms + limits_.request_timeout_ms;
    }
    HttpRequest request;
    ParseResult parsed = ParseRequestHead(connection.in, limits_.max_request_head, &request);
    switch (parsed.outcome) {
      case ParseOutcome::kIncomplete:
        return;
      case ParseOutcome::kComplete: {
        connection.in.erase(0, parsed.consumed);
        connection.request_started = false;
        HttpResponse response = Dispatch(request);
        Respond(connection, response, request.method == "HEAD", request.keep_alive && response.status < 400, now_ms);
        break;
      }
      case ParseOutcome::kTooLarge:
        Respond(connection, TextResponse(431, parsed.problem), false, false, now_ms);
        break;
      case ParseOutcome::kMalformed:
        Respond(connection, TextResponse(400, parsed.problem), false, false, now_ms);
        break;
      case ParseOutcome::kBadVersion:
        Respond(connection, TextResponse(505, parsed.problem), false, false, now_ms);
        break;
      case ParseOutcome::kHasBody:
        Respond(connection, TextResponse(413, parsed.problem), false, false, now_ms);
        break;
    }
  }
}

HttpResponse HttpServer::Dispatch(const HttpRequest& request) const {
  auto route = std::find_if(routes_.begin(), routes_.end(), [&](const Route& r) { return r.path == request.path; });
  if (route == routes_.end()) return TextResponse(404, "no such path (see /)");
  if (request.method != "GET" && request.method != "HEAD") {
    HttpResponse response = TextResponse(405, "only GET and HEAD");
    response.headers.emplace_back("Allow", "GET, HEAD");
    return response;
  }
  try {
    return route->handler(request);
  } catch (const std::exception& e) {
    return TextResponse(500, e.what());
  }
}

void HttpServer::Respond(Connection& connection, const HttpResponse& response, bool head_only, bool keep_alive,
                         int64_t now_ms) {
  connection.out = SerializeResponse(response, head_only, keep_alive);
  connection.out_sent = 0;
  connection.writing = true;
  connection.close_after_write = !keep_alive;
  connection.deadline_ms = now_ms + limits_.write_timeout_ms;
  Send(connection, now_ms);
}

void HttpServer::Send(Connection& connection, int64_t now_ms) {
  while (connection.out_sent < connection.out.size()) {
    ssize_t sent = send(connection.fd, connection.out.data() + connection.out_sent,
                        connection.out.size() - connection.out_sent, MSG_NOSIGNAL);
    if (sent > 0) {
      connection.out_sent += static_cast<size_t>(sent);
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    connection.closed = true;
    return;
  }
  connection.out.clear();
  connection.out.shrink_to_fit();
  connection.out_sent = 0;
  connection.writing = false;
  if (connection.close_after_write) {
    shutdown(connection.fd, SHUT_WR);
    connection.draining = true;
    connection.in.clear();
    connection.deadline_ms = now_ms + kLingerMs;
    return;
  }
  HandleBuffered(connection, now_ms);  // a pipelined request may be waiting already
}

void HttpServer::Expire(Connection& connection, int64_t now_ms) {
  if (!connection.writing && !connection.draining && connection.request_started) {
    Respond(connection, TextResponse(408, "the request did not arrive in time"), false, false, now_ms);
    // A client this slow gets one try at the 408 and no more time.
    if (connection.writing) connection.closed = true;
    return;
  }
  connection.closed = true;
}

}  // namespace limpwatch::cli::serve
