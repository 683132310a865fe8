#include "aio_requests.h"

#include <atomic>

namespace limpwatch::hooks {
namespace {

constexpr uint32_t kProbeWindow = 16;
constexpr uint64_t kClaiming = 1;  // key of an entry being filled (no aiocb is at address 1)

struct AioEntry {
  std::atomic<uint64_t> key;  // aiocb address; 0 free
  std::atomic<uint64_t> submit_ticks;
  std::atomic<uint64_t> complete_ticks;
  std::atomic<uint32_t> kind;
  std::atomic<uint32_t> operation;
  std::atomic<uint32_t> counted;  // 1 once aio_error() counted its failure
};

constinit AioEntry g_requests[kAioTableSize] = {};

uint32_t HomeSlot(uint64_t key) {
  // aiocbs are 8-aligned and often neighbours in one array: mix the bits.
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdull;
  key ^= key >> 33;
  return static_cast<uint32_t>(key) & (kAioTableSize - 1);
}

AioEntry* Find(uint64_t key) {
  uint32_t home = HomeSlot(key);
  for (uint32_t probe = 0; probe < kProbeWindow; ++probe) {
    AioEntry& entry = g_requests[(home + probe) & (kAioTableSize - 1)];
    if (entry.key.load(std::memory_order_acquire) == key) return &entry;
  }
  return nullptr;
}

void Fill(AioEntry& entry, shm::FdKind kind, shm::IoOperation operation, uint64_t now) {
  entry.submit_ticks.store(now, std::memory_order_relaxed);
  entry.complete_ticks.store(0, std::memory_order_relaxed);
  entry.kind.store(static_cast<uint32_t>(kind), std::memory_order_relaxed);
  entry.operation.store(static_cast<uint32_t>(operation), std::memory_order_relaxed);
  entry.counted.store(0, std::memory_order_relaxed);
}

AioRequest Read(const AioEntry& entry) {
  AioRequest request;
  request.submit_ticks = entry.submit_ticks.load(std::memory_order_relaxed);
  request.complete_ticks = entry.complete_ticks.load(std::memory_order_relaxed);
  request.kind = static_cast<shm::FdKind>(entry.kind.load(std::memory_order_relaxed));
  request.operation = static_cast<shm::IoOperation>(entry.operation.load(std::memory_order_relaxed));
  request.counted = entry.counted.load(std::memory_order_relaxed) != 0;
  return request;
}

}  // namespace

bool TrackAioRequest(const void* control_block, shm::FdKind kind, shm::IoOperation operation, uint64_t now) {
  uint64_t key = reinterpret_cast<uint64_t>(control_block);
  if (key <= kClaiming) return false;
  // A control block resubmitted without being reaped keeps its entry.
  if (AioEntry* existing = Find(key)) {
    Fill(*existing, kind, operation, now);
    return true;
  }
  uint32_t home = HomeSlot(key);
  for (uint32_t probe = 0; probe < kProbeWindow; ++probe) {
    AioEntry& entry = g_requests[(home + probe) & (kAioTableSize - 1)];
    uint64_t expected = 0;
    if (!entry.key.compare_exchange_strong(expected, kClaiming, std::memory_order_acquire)) continue;
    Fill(entry, kind, operation, now);
    entry.key.store(key, std::memory_order_release);
    return true;
  }
  return false;
}

void NoteAioCompleted(const void* control_block, uint64_t now) {
  AioEntry* entry = Find(reinterpret_cast<uint64_t>(control_block));
  if (entry == nullptr) return;
  uint64_t unset = 0;
  entry->complete_ticks.compare_exchange_strong(unset, now, std::memory_order_relaxed);
}

bool ClaimAioFailure(const void* control_block, AioRequest* out) {
  AioEntry* entry = Find(reinterpret_cast<uint64_t>(control_block));
  if (entry == nullptr) return false;
  uint32_t not_counted = 0;
  if (!entry->counted.compare_exchange_strong(not_counted, 1, std::memory_order_acq_rel)) return false;
  *out = Read(*entry);
  return true;
}

bool TakeAioRequest(const void* control_block, AioRequest* out) {
  uint64_t key = reinterpret_cast<uint64_t>(control_block);
  AioEntry* entry = Find(key);
  if (entry == nullptr) return false;
  AioRequest request = Read(*entry);
  // Two threads reaping the same request: only one takes it.
  if (!entry->key.compare_exchange_strong(key, 0, std::memory_order_acq_rel)) return false;
  *out = request;
  return true;
}

}  // namespace limpwatch::hooks
