// bmi: the server's network poll loop (BMI's tcp method: one thread polling
// every socket, non-blocking reads as soon as data arrives, writes when the
// socket has room).
//
// One epoll set holds the listening socket, an eventfd other threads use to
// wake the loop, and every connection. Other threads never touch epoll or a
// socket: they ask for a connection to be serviced (RequestService) and the
// loop re-arms its events, resumes its reading or writes its queue.
//
// Accepting stops for a moment when accept() fails with EMFILE / ENFILE (a
// low RLIMIT_NOFILE): the error is logged (once a second) and the server
// keeps serving the connections it has.
#ifndef LIMPWATCH_TOOLS_TESTBED_SERVER_BMI_POLL_LOOP_H_
#define LIMPWATCH_TOOLS_TESTBED_SERVER_BMI_POLL_LOOP_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/bmi_connection.h"

namespace limpwatch::testbed::bmi {

class PollLoop {
 public:
  // Receives each complete unexpected request (on the poll thread).
  using RequestHandler =
      std::function<void(const std::shared_ptr<Connection>&, const FrameHeader&, std::vector<uint8_t> payload)>;

  PollLoop() = default;
  ~PollLoop();
  PollLoop(const PollLoop&) = delete;
  PollLoop& operator=(const PollLoop&) = delete;

  // Takes ownership of listen_fd.
  bool Open(int listen_fd, RequestHandler handler, std::string* error);
  // Runs on the calling thread until Stop(); then closes every connection.
  void Run();
  // Any thread.
  void Stop();
  void RequestService(const std::shared_ptr<Connection>& connection);

  // Poll thread: a connection read a whole unexpected request.
  void DeliverRequest(const std::shared_ptr<Connection>& connection, const FrameHeader& header,
                      std::vector<uint8_t> payload);

 private:
  void AcceptConnections();
  void PauseAccepting();
  void ResumeAcceptingIfDue();
  void ServiceConnection(const std::shared_ptr<Connection>& connection, uint32_t events);
  void DrainServiceRequests();
  void UpdateInterest(Connection& connection);
  void CloseConnection(const std::shared_ptr<Connection>& connection);

  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  int listen_fd_ = -1;
  RequestHandler handler_;
  std::atomic<bool> stopping_{false};
  uint64_t next_connection_id_ = 16;  // 0 and 1 tag the listener and the eventfd
  std::unordered_map<uint64_t, std::shared_ptr<Connection>> connections_;
  bool accept_paused_ = false;
  uint64_t accept_resume_ns_ = 0;

  std::mutex service_mutex_;
  std::vector<std::weak_ptr<Connection>> service_requests_;
};

}  // namespace limpwatch::testbed::bmi

#endif  // LIMPWATCH_TOOLS_TESTBED_SERVER_BMI_POLL_LOOP_H_
