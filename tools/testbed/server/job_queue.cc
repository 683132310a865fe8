#include "server/job_queue.h"

namespace limpwatch::testbed::job {

void JobQueue::StartWorkers(uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) workers_.emplace_back([this] { RunWorker(); });
}

void JobQueue::Post(std::shared_ptr<Job> job) {
  std::lock_guard lock(mutex_);
  if (stopping_) return;
  runnable_.push_back(std::move(job));
  ++posted_;
  wake_.notify_one();
}

void JobQueue::Shutdown() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    wake_.notify_all();
  }
  for (auto& worker : workers_) worker.join();
  workers_.clear();
}

std::shared_ptr<Job> JobQueue::WaitForJob() {
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [this] { return stopping_ || !runnable_.empty(); });
  if (runnable_.empty()) return nullptr;
  std::shared_ptr<Job> job = std::move(runnable_.front());
  runnable_.pop_front();
  return job;
}

void JobQueue::RunWorker() {
  while (std::shared_ptr<Job> job = WaitForJob()) job->Advance();
}

}  // namespace limpwatch::testbed::job
