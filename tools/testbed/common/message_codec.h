// Encoding of request and response payloads: little-endian integers and
// length-prefixed strings, read back with bounds checks (a peer's bytes are
// never trusted).
#ifndef LIMPWATCH_TOOLS_TESTBED_COMMON_MESSAGE_CODEC_H_
#define LIMPWATCH_TOOLS_TESTBED_COMMON_MESSAGE_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace limpwatch::testbed {

class PayloadWriter {
 public:
  PayloadWriter& PutU32(uint32_t value);
  PayloadWriter& PutI32(int32_t value);
  PayloadWriter& PutU64(uint64_t value);
  // u16 length, then the bytes; strings longer than 65535 bytes are cut.
  PayloadWriter& PutString(std::string_view value);
  PayloadWriter& PutBytes(const void* data, size_t length);

  const std::vector<uint8_t>& bytes() const { return bytes_; }
  std::vector<uint8_t> Take() { return std::move(bytes_); }

 private:
  std::vector<uint8_t> bytes_;
};

// Reads fields in the order they were written. A read past the end sets
// ok() to false and returns zero / empty; check ok() once at the end.
class PayloadReader {
 public:
  PayloadReader() = default;
  PayloadReader(const uint8_t* data, size_t length) : data_(data), length_(length) {}
  explicit PayloadReader(const std::vector<uint8_t>& bytes) : PayloadReader(bytes.data(), bytes.size()) {}

  uint32_t GetU32();
  int32_t GetI32();
  uint64_t GetU64();
  std::string GetString();

  bool ok() const { return ok_; }
  size_t remaining() const { return length_ - position_; }

 private:
  bool Take(void* out, size_t length);

  const uint8_t* data_ = nullptr;
  size_t length_ = 0;
  size_t position_ = 0;
  bool ok_ = true;
};

}  // namespace limpwatch::testbed

#endif  // LIMPWATCH_TOOLS_TESTBED_COMMON_MESSAGE_CODEC_H_
