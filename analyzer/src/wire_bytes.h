// Explicit little-endian fields and bounds-checked byte cursors for wire
// formats. Internal to the analyzer.
//
// A wire struct is built only from uint8_t arrays (LittleEndian<T>), so it
// has alignment 1 and no padding on any compiler: copying bytes in and out of
// it is exact, and its layout is pinned by static_asserts where it is
// declared. Values are converted explicitly, whatever the host's byte order.
#ifndef LIMPWATCH_ANALYZER_SRC_WIRE_BYTES_H_
#define LIMPWATCH_ANALYZER_SRC_WIRE_BYTES_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

namespace limpwatch::analyzer::wire {

template <typename T>
struct LittleEndian {
  static_assert(std::is_unsigned_v<T>, "wire integers are unsigned; floats travel as their bits");
  uint8_t bytes[sizeof(T)];

  T Get() const {
    T value = 0;
    for (size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(static_cast<T>(bytes[i]) << (8 * i));
    return value;
  }
  void Set(T value) {
    for (size_t i = 0; i < sizeof(T); ++i) bytes[i] = static_cast<uint8_t>(value >> (8 * i));
  }
};

using Le16 = LittleEndian<uint16_t>;
using Le32 = LittleEndian<uint32_t>;
using Le64 = LittleEndian<uint64_t>;

inline float FloatFromBits(uint32_t bits) { return std::bit_cast<float>(bits); }
inline uint32_t BitsFromFloat(float value) { return std::bit_cast<uint32_t>(value); }

// Reads from untrusted bytes. Every Take checks the remaining length first;
// after a failed Take the reader stays failed and every later read fails, so
// a parser can check once at the end of a group of reads.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  size_t remaining() const { return failed_ ? 0 : bytes_.size() - position_; }
  bool failed() const { return failed_; }

  // The next n bytes, or an empty span (and the reader failed) when fewer remain.
  std::span<const uint8_t> Take(size_t n) {
    if (failed_ || n > bytes_.size() - position_) {
      failed_ = true;
      return {};
    }
    auto taken = bytes_.subspan(position_, n);
    position_ += n;
    return taken;
  }

  template <typename T>
  T Read() {
    auto taken = Take(sizeof(T));
    if (taken.empty()) return 0;
    LittleEndian<T> field;
    std::memcpy(field.bytes, taken.data(), sizeof(T));
    return field.Get();
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t position_ = 0;
  bool failed_ = false;
};

// Writes little-endian values into a buffer sized in advance. A write that
// would pass its end is dropped (and recorded), never performed.
class Writer {
 public:
  explicit Writer(std::span<uint8_t> out) : out_(out) {}

  template <typename T>
  void Write(T value) {
    LittleEndian<T> field;
    field.Set(value);
    WriteBytes(field.bytes, sizeof(T));
  }
  void WriteBytes(const void* data, size_t size) {
    if (size > out_.size() - position_) {
      overflowed_ = true;
      return;
    }
    if (size > 0) std::memcpy(out_.data() + position_, data, size);
    position_ += size;
  }
  size_t position() const { return position_; }
  bool overflowed() const { return overflowed_; }

 private:
  std::span<uint8_t> out_;
  size_t position_ = 0;
  bool overflowed_ = false;
};

}  // namespace limpwatch::analyzer::wire

#endif  // LIMPWATCH_ANALYZER_SRC_WIRE_BYTES_H_
