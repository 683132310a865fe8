// The storage thread pool (dbpf's I/O threads): flows hand it bstream reads
// and writes, its threads block in pread / pwrite, and each operation's
// completion callback runs on the storage thread that finished it.
//
// Blocking I/O happens only here, so when the disk is slow for this server
// the time piles up in the trove functions these threads call.
#ifndef LIMPWATCH_TOOLS_TESTBED_SERVER_STORAGE_POOL_H_
#define LIMPWATCH_TOOLS_TESTBED_SERVER_STORAGE_POOL_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "server/bstream_store.h"

namespace limpwatch::testbed::trove {

struct StorageOperation {
  enum class Kind { kRead, kWrite };
  Kind kind = Kind::kRead;
  uint64_t handle = 0;
  uint8_t* buffer = nullptr;  // owned by the caller until `done` runs
  size_t length = 0;
  uint64_t offset = 0;
  // error (0 or errno), bytes transferred. Runs on a storage thread.
  std::function<void(int, size_t)> done;
};

class StoragePool {
 public:
  explicit StoragePool(BstreamStore* store) : store_(store) {}
  ~StoragePool() { Shutdown(); }
  StoragePool(const StoragePool&) = delete;
  StoragePool& operator=(const StoragePool&) = delete;

  void Start(uint32_t threads);
  // Any thread. After Shutdown, operations complete at once with ECANCELED.
  void Submit(StorageOperation operation);
  // Finishes the queued operations, then joins the threads.
  void Shutdown();

 private:
  void ServiceQueue();
  void ExecuteOperation(StorageOperation& operation);

  BstreamStore* store_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<StorageOperation> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace limpwatch::testbed::trove

#endif  // LIMPWATCH_TOOLS_TESTBED_SERVER_STORAGE_POOL_H_
