// A heap buffer aligned for O_DIRECT (4 KiB), owned and freed by this object.
#ifndef LIMPWATCH_TOOLS_TESTBED_SERVER_ALIGNED_BUFFER_H_
#define LIMPWATCH_TOOLS_TESTBED_SERVER_ALIGNED_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace limpwatch::testbed {

inline constexpr size_t kDirectIoAlignment = 4096;

inline size_t RoundUpToAlignment(size_t value) {
  return (value + kDirectIoAlignment - 1) / kDirectIoAlignment * kDirectIoAlignment;
}

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // Capacity is rounded up to the alignment. Throws std::bad_alloc.
  explicit AlignedBuffer(size_t capacity) : capacity_(RoundUpToAlignment(capacity)) {
    void* memory = nullptr;
    if (posix_memalign(&memory, kDirectIoAlignment, capacity_ == 0 ? kDirectIoAlignment : capacity_) != 0) {
      throw std::bad_alloc();
    }
    data_ = static_cast<uint8_t*>(memory);
  }
  ~AlignedBuffer() { std::free(data_); }
  AlignedBuffer(AlignedBuffer&& other) noexcept : data_(other.data_), capacity_(other.capacity_) {
    other.data_ = nullptr;
    other.capacity_ = 0;
  }
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept {
    if (this != &other) {
      std::free(data_);
      data_ = other.data_;
      capacity_ = other.capacity_;
      other.data_ = nullptr;
      other.capacity_ = 0;
    }
    return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  uint8_t* data() const { return data_; }
  size_t capacity() const { return capacity_; }

 private:
  uint8_t* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace limpwatch::testbed

#endif  // LIMPWATCH_TOOLS_TESTBED_SERVER_ALIGNED_BUFFER_H_
