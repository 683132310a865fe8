// Runs one task per server at the same time, each on that server's own
// thread, and waits for all of them: how a striped request reaches every
// server in parallel. A server's connection is used only by its thread
// during a parallel step and only by the caller between steps.
#ifndef LIMPWATCH_TOOLS_TESTBED_CLIENT_SERVER_EXECUTOR_H_
#define LIMPWATCH_TOOLS_TESTBED_CLIENT_SERVER_EXECUTOR_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace limpwatch::testbed::client {

class ServerExecutor {
 public:
  explicit ServerExecutor(size_t servers);
  ~ServerExecutor();
  ServerExecutor(const ServerExecutor&) = delete;
  ServerExecutor& operator=(const ServerExecutor&) = delete;

  // Runs task(server) for every listed server in parallel; returns the first
  // non-zero result (in server order), or 0.
  int RunOnServers(const std::vector<uint32_t>& servers, const std::function<int(uint32_t)>& task);

 private:
  struct Lane {
    const std::function<int(uint32_t)>* task = nullptr;
    int result = 0;
  };
  void RunLane(uint32_t server);

  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  std::vector<Lane> lanes_;
  uint64_t generation_ = 0;
  size_t pending_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace limpwatch::testbed::client

#endif  // LIMPWATCH_TOOLS_TESTBED_CLIENT_SERVER_EXECUTOR_H_
