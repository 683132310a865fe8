#include "client/server_executor.h"

namespace limpwatch::testbed::client {

ServerExecutor::ServerExecutor(size_t servers) : lanes_(servers) {
  for (uint32_t server = 0; server < servers; ++server) threads_.emplace_back([this, server] { RunLane(server); });
}

ServerExecutor::~ServerExecutor() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    work_ready_.notify_all();
  }
  for (auto& thread : threads_) thread.join();
}

int ServerExecutor::RunOnServers(const std::vector<uint32_t>& servers, const std::function<int(uint32_t)>& task) {
  std::unique_lock lock(mutex_);
  for (uint32_t server : servers) {
    lanes_[server].task = &task;
    lanes_[server].result = 0;
  }
  pending_ = servers.size();
  ++generation_;
  work_ready_.notify_all();
  work_done_.wait(lock, [this] { return pending_ == 0; });
  for (uint32_t server : servers) {
    if (lanes_[server].result != 0) return lanes_[server].result;
  }
  return 0;
}

void ServerExecutor::RunLane(uint32_t server) {
  uint64_t seen = 0;
  std::unique_lock lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [&] { return stopping_ || (generation_ != seen && lanes_[server].task != nullptr); });
    if (stopping_) return;
    seen = generation_;
    const std::function<int(uint32_t)>* task = lanes_[server].task;
    lanes_[server].task = nullptr;
    lock.unlock();
    int result = (*task)(server);
    lock.lock();
    lanes_[server].result = result;
    if (--pending_ == 0) work_done_.notify_all();
  }
}

}  // namespace limpwatch::testbed::client
