// A small HTTP/1.1 server for `limpwatch serve`: one thread, poll(2) over
// non-blocking sockets, so a client that sends or reads slowly holds only
// its own connection. Every connection has a deadline; a request head has a
// size limit; only GET and HEAD of the routes given are answered:
//
//   unknown path 404, other method 405, head over the limit 431, malformed
//   400, a version other than HTTP/1.0 or 1.1 505, a body 413, a request not
//   complete in time 408, more connections than the limit 503.
//
// An error response closes its connection; a good one keeps it for the next
// request unless the client asked otherwise. Handlers run on the server's
// thread, one at a time, and must not block.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_SERVE_HTTP_SERVER_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_SERVE_HTTP_SERVER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "serve/http_request.h"
#include "serve/http_response.h"

namespace limpwatch::cli::serve {

struct HttpLimits {
  size_t max_request_head = 8192;
  int request_timeout_ms = 10000;  // from a request's first byte to its last
  int idle_timeout_ms = 60000;     // a kept connection waiting for its next request
  int write_timeout_ms = 30000;    // a response the client does not take
  size_t max_connections = 512;
};

struct Route {
  std::string path;  // exact match, query ignored
  std::function<HttpResponse(const HttpRequest&)> handler;
};

class HttpServer {
 public:
  // Takes a listening non-blocking socket (listen_address.h).
  HttpServer(int listen_fd, std::vector<Route> routes, HttpLimits limits = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Runs `task` on the server's thread every `period_ms` while it serves
  // (between requests: like a handler, it must not block).
  void SetPeriodicTask(int period_ms, std::function<void()> task);

  // Serves until `stop_fd` (a signalfd, a pipe; -1 for none) becomes readable.
  void Run(int stop_fd);

 private:
  struct Connection;

  // False when accept() failed for want of descriptors (EMFILE, ENFILE, ...).
  bool Accept(int64_t now_ms);
  void Receive(Connection& connection, int64_t now_ms);
  void Send(Connection& connection, int64_t now_ms);
  void HandleBuffered(Connection& connection, int64_t now_ms);
  void Respond(Connection& connection, const HttpResponse& response, bool head_only, bool keep_alive, int64_t now_ms);
  void Expire(Connection& connection, int64_t now_ms);
  HttpResponse Dispatch(const HttpRequest& request) const;

  int listen_fd_;
  std::vector<Route> routes_;
  HttpLimits limits_;
  std::list<std::unique_ptr<Connection>> connections_;
  int task_period_ms_ = 0;
  std::function<void()> task_;
};

}  // namespace limpwatch::cli::serve

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_SERVE_HTTP_SERVER_H_
