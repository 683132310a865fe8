// The HTTP server of `limpwatch serve`, run in this process on loopback
// with short deadlines, against clients that behave and clients that do not.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "serve/http_server.h"
#include "serve/listen_address.h"
#include "serve/loopback_client.h"

namespace limpwatch::testing {
namespace {

using cli::serve::HttpLimits;
using cli::serve::HttpResponse;
using cli::serve::HttpServer;
using cli::serve::Route;

constexpr int kClientTimeoutSeconds = 20;

// An HttpServer on a thread of its own, stopped (through a pipe) and joined
// when the test ends.
class RunningServer {
 public:
  RunningServer(std::vector<Route> routes, HttpLimits limits) {
    std::string error;
    int fd = cli::serve::OpenListeningSocket({"127.0.0.1", 0}, &error);
    EXPECT_GE(fd, 0) << error;
    std::string bound = cli::serve::BoundAddress(fd);
    port_ = static_cast<uint16_t>(std::stoi(bound.substr(bound.rfind(':') + 1)));
    EXPECT_EQ(pipe(stop_), 0);
    server_ = std::make_unique<HttpServer>(fd, std::move(routes), limits);
    thread_ = std::thread([this] { server_->Run(stop_[0]); });
  }
  ~RunningServer() {
    EXPECT_EQ(write(stop_[1], "x", 1), 1);
    thread_.join();
    close(stop_[0]);
    close(stop_[1]);
  }
  uint16_t port() const { return port_; }

 private:
  uint16_t port_ = 0;
  int stop_[2] = {-1, -1};
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

int Connect(uint16_t port) {
  int fd = ConnectLoopback(port, kClientTimeoutSeconds);
  EXPECT_GE(fd, 0) << "connect to port " << port << ": " << std::strerror(errno);
  return fd;
}

void SendAll(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t count = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (count <= 0) return;  // the server may close first (an oversized request): the response says why
    sent += static_cast<size_t>(count);
  }
}

struct Reply {
  int status = 0;
  std::string head;
  std::string body;
  bool complete = false;  // the whole body (Content-Length) arrived
};

// Reads one response from `fd` (blocking, up to the client timeout).
Reply ReadReply(int fd, std::string* leftover = nullptr) {
  std::string data = leftover ? *leftover : "";
  Reply reply;
  char buffer[65536];
  size_t head_end = std::string::npos;
  size_t length = 0;
  for (;;) {
    if (head_end == std::string::npos && (head_end = data.find("\r\n\r\n")) != std::string::npos) {
      reply.head = data.substr(0, head_end + 4);
      reply.status = std::stoi(reply.head.substr(9, 3));
      size_t field = reply.head.find("Content-Length: ");
      length = field == std::string::npos ? 0 : std::stoul(reply.head.substr(field + 16));
    }
    bool head_only = reply.head.find("X-Head-Request") != std::string::npos;
    if (head_end != std::string::npos && (head_only || data.size() >= head_end + 4 + length)) {
      size_t body_end = head_only ? head_end + 4 : head_end + 4 + length;
      reply.body = data.substr(head_end + 4, body_end - head_end - 4);
      reply.complete = true;
      if (leftover) *leftover = data.substr(body_end);
      return reply;
    }
    ssize_t count = recv(fd, buffer, sizeof buffer, 0);
    if (count <= 0) break;
    data.append(buffer, static_cast<size_t>(count));
  }
  if (head_end != std::string::npos) reply.body = data.substr(head_end + 4);
  return reply;
}

Reply Exchange(uint16_t port, const std::string& request) {
  int fd = Connect(port);
  SendAll(fd, request);
  Reply reply = ReadReply(fd);
  close(fd);
  return reply;
}

// True when the server has closed `fd` (EOF after any bytes), waiting up to `ms`.
bool ClosedByServer(int fd, int ms) {
  pollfd polled{fd, POLLIN, 0};
  char buffer[4096];
  while (poll(&polled, 1, ms) == 1) {
    ssize_t count = recv(fd, buffer, sizeof buffer, 0);
    if (count <= 0) return true;
  }
  return false;
}

// True while the connection is established: the server has neither closed
// nor reset it. Nothing is read, so a client not reading stays one.
bool StillOpen(int fd) {
  tcp_info info{};
  socklen_t length = sizeof info;
  return getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) == 0 && info.tcpi_state == TCP_ESTABLISHED;
}

bool HasBytesWaiting(int fd) {
  pollfd polled{fd, POLLIN, 0};
  return poll(&polled, 1, 0) == 1;
}

std::vector<Route> TestRoutes() {
  std::vector<Route> routes;
  routes.push_back({"/metrics", [](const cli::serve::HttpRequest& request) {
                      HttpResponse response;
                      response.body = "up 1\n";
                      if (request.method == "HEAD") response.headers.emplace_back("X-Head-Request", "1");
                      return response;
                    }});
  routes.push_back({"/big", [](const cli::serve::HttpRequest&) {
                      HttpResponse response;
                      response.body.assign(64 << 20, 'x');  // far more than the socket buffers hold
                      return response;
                    }});
  return routes;
}

HttpLimits ShortLimits() {
  HttpLimits limits;
  limits.max_request_head = 1024;
  limits.request_timeout_ms = 500;
  limits.idle_timeout_ms = 500;
  limits.write_timeout_ms = 500;
  return limits;
}

const std::string kGet = "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n";

TEST(serve_http, AnswersGetAndHeadAndKeepsTheConnectionForTheNext) {
  RunningServer server(TestRoutes(), ShortLimits());
  Reply reply = Exchange(server.port(), kGet);
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "up 1\n");
  EXPECT_TRUE(reply.complete);

  Reply head = Exchange(server.port(), "HEAD /metrics?x=1 HTTP/1.1\r\nHost: l\r\n\r\n");
  EXPECT_EQ(head.status, 200);
  EXPECT_NE(head.head.find("Content-Length: 5\r\n"), std::string::npos) << head.head;
  EXPECT_EQ(head.body, "");

  // Two requests at once on one connection (pipelined), then a third.
  int fd = Connect(server.port());
  SendAll(fd, kGet + kGet);
  std::string leftover;
  EXPECT_EQ(ReadReply(fd, &leftover).status, 200);
  EXPECT_EQ(ReadReply(fd, &leftover).status, 200);
  SendAll(fd, "GET /metrics HTTP/1.0\r\n\r\n");
  Reply last = ReadReply(fd, &leftover);
  EXPECT_EQ(last.status, 200);
  EXPECT_NE(last.head.find("Connection: close"), std::string::npos) << "HTTP/1.0 without keep-alive";
  EXPECT_TRUE(ClosedByServer(fd, 5000));
  close(fd);
}

TEST(serve_http, RequestsOutsideTheApiGetTheirErrorAndTheConnectionCloses) {
  RunningServer server(TestRoutes(), ShortLimits());
  EXPECT_EQ(Exchange(server.port(), "GET /nothing HTTP/1.1\r\nHost: l\r\n\r\n").status, 404);
  Reply post = Exchange(server.port(), "POST /metrics HTTP/1.1\r\nHost: l\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(post.status, 405);
  EXPECT_NE(post.head.find("Allow: GET, HEAD"), std::string::npos) << post.head;
  EXPECT_EQ(Exchange(server.port(), "GET /metrics HTTP/1.1\r\nHost: l\r\nContent-Length: 5\r\n\r\nhello").status, 413);
  EXPECT_EQ(Exchange(server.port(), "GET /metrics HTTP/1.1\r\nHost: l\r\nTransfer-Encoding: chunked\r\n\r\n").status,
            413);
  EXPECT_EQ(Exchange(server.port(), "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").status, 505);
  EXPECT_EQ(Exchange(server.port(), "GET metrics HTTP/1.1\r\nHost: l\r\n\r\n").status, 400);
  EXPECT_EQ(Exchange(server.port(), "GET /metrics HTTP/1.1\r\n\r\n").status, 400) << "1.1 without Host";
  EXPECT_EQ(Exchange(server.port(), "GET /metrics HTTP/1.1\r\nHost: l\r\n folded\r\n\r\n").status, 400);
  EXPECT_EQ(Exchange(server.port(), "GET /metrics HTTP/1.1\r\nno colon\r\n\r\n").status, 400);
  EXPECT_EQ(Exchange(server.port(), "GET  /metrics HTTP/1.1\r\nHost: l\r\n\r\n").status, 400);

  // A head over the limit, all at once or a header at a time.
  Reply oversized = Exchange(server.port(), "GET /metrics HTTP/1.1\r\nHost: l\r\nX: " + std::string(4000, 'a') +
                                                "\r\n\r\n");
  EXPECT_EQ(oversized.status, 431);
  std::string many = "GET /metrics HTTP/1.1\r\nHost: l\r\n";
  for (int field = 0; field < 200; ++field) many += "A" + std::to_string(field) + ": b\r\n";
  EXPECT_EQ(Exchange(server.port(), many + "\r\n").status, 431);
  EXPECT_EQ(Exchange(server.port(), kGet).status, 200) << "the server still serves";
}

// A client that sends half a request and stops holds its own connection
// only: others are served meanwhile, and it gets 408.
TEST(serve_http, ASlowSenderDoesNotStallOthersAndGetsATimeout) {
  HttpLimits limits = ShortLimits();
  limits.request_timeout_ms = 3000;
  RunningServer server(TestRoutes(), limits);
  int slow = Connect(server.port());
  SendAll(slow, "GET /metrics HTTP/1.1\r\nHo");
  for (int other = 0; other < 5; ++other) {
    EXPECT_EQ(Exchange(server.port(), kGet).status, 200);
  }
  EXPECT_FALSE(HasBytesWaiting(slow)) << "the slow request was answered before it was complete";
  Reply timed_out = ReadReply(slow);
  EXPECT_EQ(timed_out.status, 408);
  close(slow);
}

// A client that asks for a large response and does not read it holds its
// own connection only, and is dropped when its write deadline passes.
TEST(serve_http, AClientThatDoesNotReadDoesNotStallOthersAndIsDropped) {
  HttpLimits limits = ShortLimits();
  limits.write_timeout_ms = 3000;
  RunningServer server(TestRoutes(), limits);
  int stalled = Connect(server.port());
  SendAll(stalled, "GET /big HTTP/1.1\r\nHost: l\r\n\r\n");
  for (int other = 0; other < 5; ++other) EXPECT_EQ(Exchange(server.port(), kGet).status, 200);
  EXPECT_TRUE(StillOpen(stalled)) << "the others were served only after the stalled client was dropped";
  // Once the deadline has passed, what it reads ends before the body does.
  std::this_thread::sleep_for(std::chrono::milliseconds(3500));
  Reply cut = ReadReply(stalled);
  EXPECT_FALSE(cut.complete) << "64 MiB arrived through a client that did not read";
  close(stalled);
}

TEST(serve_http, IdleConnectionsAreClosedAndExtraConnectionsTurnedAway) {
  HttpLimits limits = ShortLimits();
  limits.max_connections = 4;
  RunningServer server(TestRoutes(), limits);
  int idle = Connect(server.port());
  EXPECT_TRUE(ClosedByServer(idle, 5000)) << "an idle connection outlived its deadline";
  close(idle);

  std::vector<int> held;
  for (int index = 0; index < 4; ++index) held.push_back(Connect(server.port()));
  // The server has accepted the four (each is answered) before the fifth comes.
  for (int fd : held) SendAll(fd, kGet);
  for (int fd : held) EXPECT_EQ(ReadReply(fd).status, 200);
  // Turned away at once, before it says anything.
  EXPECT_EQ(Exchange(server.port(), "").status, 503);
  for (int fd : held) close(fd);
}

TEST(serve_http, AHundredConcurrentClientsAreAllServed) {
  HttpLimits limits;  // the defaults
  RunningServer server(TestRoutes(), limits);
  std::atomic<int> served{0};
  std::vector<std::thread> clients;
  for (int client = 0; client < 100; ++client) {
    clients.emplace_back([&] {
      for (int request = 0; request < 5; ++request) {
        if (Exchange(server.port(), kGet).status == 200) ++served;
      }
    });
  }
  for (auto& client : clients) client.join();
  EXPECT_EQ(served.load(), 500);
}

}  // namespace
}  // namespace limpwatch::testing
