// job: the request scheduler. Runnable request state machines wait in one
// queue; a fixed set of worker threads takes them in order and advances each
// until it finishes or waits for a flow (PVFS's job_testcontext loop).
// Completions (a flow done on a storage or poll thread) put the state
// machine back in the queue rather than running it on the completing thread,
// so the network and storage threads never run request logic.
#ifndef LIMPWATCH_TOOLS_TESTBED_SERVER_JOB_QUEUE_H_
#define LIMPWATCH_TOOLS_TESTBED_SERVER_JOB_QUEUE_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace limpwatch::testbed::job {

class Job {
 public:
  virtual ~Job() = default;
  // Runs on a worker thread until the job finishes or waits for something
  // that will post it again.
  virtual void Advance() = 0;
};

class JobQueue {
 public:
  JobQueue() = default;
  ~JobQueue() { Shutdown(); }
  JobQueue(const JobQueue&) = delete;
  JobQueue& operator=(const JobQueue&) = delete;

  void StartWorkers(uint32_t count);
  // Any thread. Jobs posted after Shutdown are dropped.
  void Post(std::shared_ptr<Job> job);
  // Runs what is queued, then stops and joins the workers.
  void Shutdown();

  uint64_t posted() const { return posted_; }

 private:
  void RunWorker();
  std::shared_ptr<Job> WaitForJob();  // null once shut down and drained

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> runnable_;
  bool stopping_ = false;
  uint64_t posted_ = 0;
  std::vector<std::thread> workers_;
};

}  // namespace limpwatch::testbed::job

#endif  // LIMPWATCH_TOOLS_TESTBED_SERVER_JOB_QUEUE_H_
