#include "sampler/perf_ring.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace limpwatch::runtime {

std::unique_ptr<PerfRing> PerfRing::Map(int fd, size_t data_pages, int* error_number) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (size_t pages = data_pages; pages >= 1; pages /= 2) {
    size_t size = (pages + 1) * page;
    void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base != MAP_FAILED) {
      auto ring = std::unique_ptr<PerfRing>(new PerfRing());
      ring->base_ = static_cast<uint8_t*>(base);
      ring->mapped_size_ = size;
      ring->data_size_ = pages * page;
      return ring;
    }
    *error_number = errno;
    // EPERM: over perf_event_mlock_kb / RLIMIT_MEMLOCK; a smaller ring may fit.
    if (errno != EPERM && errno != ENOMEM) break;
  }
  return nullptr;
}

PerfRing::~PerfRing() {
  if (base_ != nullptr) munmap(base_, mapped_size_);
}

size_t PerfRing::Drain(const std::function<void(const perf_event_header&)>& visit) {
  if (base_ == nullptr) return 0;
  auto* control = reinterpret_cast<perf_event_mmap_page*>(base_);
  const uint8_t* data = base_ + (mapped_size_ - data_size_);
  uint64_t head = __atomic_load_n(&control->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = control->data_tail;
  uint64_t mask = data_size_ - 1;
  std::vector<uint8_t> wrapped;
  size_t records = 0;
  while (tail < head) {
    // Records are 8-byte aligned and the ring a multiple of 8, so a header
    // never wraps; its body may.
    const auto* header = reinterpret_cast<const perf_event_header*>(data + (tail & mask));
    size_t size = header->size;
    if (size < sizeof(perf_event_header) || size > head - tail) break;  // torn: give up on this batch
    size_t offset = tail & mask;
    if (offset + size <= data_size_) {
      visit(*header);
    } else {
      wrapped.resize(size);
      size_t first = data_size_ - offset;
      std::memcpy(wrapped.data(), data + offset, first);
      std::memcpy(wrapped.data() + first, data, size - first);
      visit(*reinterpret_cast<const perf_event_header*>(wrapped.data()));
    }
    tail += size;
    ++records;
  }
  // Everything up to head is consumed, including a torn batch we skipped.
  __atomic_store_n(&control->data_tail, head, __ATOMIC_RELEASE);
  return records;
}

}  // namespace limpwatch::runtime
