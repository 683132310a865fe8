// One memory-mapped perf_event ring buffer, read off the hot path.
//
// The kernel writes records at data_head and the reader frees them by
// advancing data_tail; neither side ever waits for the other. When the ring
// is full the kernel drops samples and later writes a PERF_RECORD_LOST
// record saying how many, so a slow reader loses samples, never the program.
#ifndef LIMPWATCH_RUNTIME_SRC_SAMPLER_PERF_RING_H_
#define LIMPWATCH_RUNTIME_SRC_SAMPLER_PERF_RING_H_

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace limpwatch::runtime {

class PerfRing {
 public:
  // Maps `data_pages` (a power of two) data pages of the event `fd`, halving
  // the count down to one page when the locked-memory limit refuses more.
  // Returns null and sets *error_number on failure. Does not own `fd`.
  static std::unique_ptr<PerfRing> Map(int fd, size_t data_pages, int* error_number);

  ~PerfRing();  // unmaps, unless Forget() was called
  PerfRing(const PerfRing&) = delete;
  PerfRing& operator=(const PerfRing&) = delete;

  // Passes every complete record to `visit`, oldest first, then frees them.
  // A record that wraps around the end of the ring is passed as a copy.
  // Returns the number of records read. Callers serialise Drain per ring.
  size_t Drain(const std::function<void(const perf_event_header&)>& visit);

  // After fork() the child has no such mapping (perf maps are VM_DONTCOPY)
  // and may already have mapped something else at its address: forget it
  // without unmapping.
  void Forget() { base_ = nullptr; }

  size_t data_bytes() const { return data_size_; }

 private:
  PerfRing() = default;
  uint8_t* base_ = nullptr;
  size_t mapped_size_ = 0;
  size_t data_size_ = 0;
};

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_SAMPLER_PERF_RING_H_
