#include "server/storage_pool.h"

#include <cerrno>

namespace limpwatch::testbed::trove {

void StoragePool::Start(uint32_t threads) {
  for (uint32_t i = 0; i < threads; ++i) threads_.emplace_back([this] { ServiceQueue(); });
}

void StoragePool::Submit(StorageOperation operation) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      queue_.push_back(std::move(operation));
      wake_.notify_one();
      return;
    }
  }
  operation.done(ECANCELED, 0);
}

void StoragePool::Shutdown() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    wake_.notify_all();
  }
  for (auto& thread : threads_) thread.join();
  threads_.clear();
}

void StoragePool::ServiceQueue() {
  for (;;) {
    StorageOperation operation;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued is done
      operation = std::move(queue_.front());
      queue_.pop_front();
    }
    ExecuteOperation(operation);
  }
}

void StoragePool::ExecuteOperation(StorageOperation& operation) {
  size_t bytes = 0;
  int error = operation.kind == StorageOperation::Kind::kWrite
                  ? store_->Write(operation.handle, operation.buffer, operation.length, operation.offset, &bytes)
                  : store_->Read(operation.handle, operation.buffer, operation.length, operation.offset, &bytes);
  operation.done(error, bytes);
}

}  // namespace limpwatch::testbed::trove
