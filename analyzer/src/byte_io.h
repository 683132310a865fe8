// Explicit little-endian field-by-field encoding, bounds-checked decoding.
#ifndef LIMPWATCH_ANALYZER_SRC_BYTE_IO_H_
#define LIMPWATCH_ANALYZER_SRC_BYTE_IO_H_

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "limpwatch/analyzer/tick_record.h"

namespace limpwatch::analyzer {

class ByteWriter {
 public:
  void U8(uint8_t value) { bytes_.push_back(value); }
  void U16(uint16_t value) { Little(value, 2); }
  void U32(uint32_t value) { Little(value, 4); }
  void U64(uint64_t value) { Little(value, 8); }
  void F64(double value) { U64(std::bit_cast<uint64_t>(value)); }
  void Bytes(const uint8_t* data, size_t size) { bytes_.insert(bytes_.end(), data, data + size); }
  // A 32-bit length, then the bytes.
  void String(const std::string& text) {
    U32(static_cast<uint32_t>(text.size()));
    Bytes(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  }
  // Exactly `size` bytes, NUL-padded (and truncated to size - 1).
  void FixedString(const std::string& text, size_t size) {
    size_t length = std::min(text.size(), size - 1);
    Bytes(reinterpret_cast<const uint8_t*>(text.data()), length);
    for (size_t pad = length; pad < size; ++pad) U8(0);
  }
  size_t size() const { return bytes_.size(); }
  std::vector<uint8_t> Take() { return std::move(bytes_); }

 private:
  void Little(uint64_t value, int width) {
    for (int index = 0; index < width; ++index) bytes_.push_back(static_cast<uint8_t>(value >> (8 * index)));
  }
  std::vector<uint8_t> bytes_;
};

// Reads fields; every read fails (returns false) rather than pass the end.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  size_t remaining() const { return size_ - position_; }
  bool U8(uint8_t* out) { return Little(out, 1); }
  bool U16(uint16_t* out) { return Little(out, 2); }
  bool U32(uint32_t* out) { return Little(out, 4); }
  bool U64(uint64_t* out) { return Little(out, 8); }
  bool F64(double* out) {
    uint64_t bits = 0;
    if (!U64(&bits)) return false;
    *out = std::bit_cast<double>(bits);
    return true;
  }
  bool Bytes(uint8_t* out, size_t size) {
    if (size > remaining()) return false;
    std::memcpy(out, data_ + position_, size);
    position_ += size;
    return true;
  }
  bool String(std::string* out, uint32_t max_length = 1u << 20) {
    uint32_t length = 0;
    if (!U32(&length) || length > max_length || length > remaining()) return false;
    out->assign(reinterpret_cast<const char*>(data_ + position_), length);
    position_ += length;
    return true;
  }
  bool FixedString(std::string* out, size_t size) {
    if (size > remaining()) return false;
    const char* text = reinterpret_cast<const char*>(data_ + position_);
    out->assign(text, strnlen(text, size));
    position_ += size;
    return true;
  }

 private:
  template <typename T>
  bool Little(T* out, int width) {
    if (size_t(width) > remaining()) return false;
    uint64_t value = 0;
    for (int index = 0; index < width; ++index) value |= uint64_t(data_[position_ + index]) << (8 * index);
    position_ += width;
    *out = static_cast<T>(value);
    return true;
  }
  const uint8_t* data_;
  size_t size_;
  size_t position_ = 0;
};

bool DecodeTickRecord(ByteReader in, TickRecord* tick);
bool DecodeNamesRecord(ByteReader in, std::vector<FunctionName>* names);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_SRC_BYTE_IO_H_
