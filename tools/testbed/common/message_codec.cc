#include "common/message_codec.h"

#include <algorithm>
#include <cstring>

namespace limpwatch::testbed {

PayloadWriter& PayloadWriter::PutBytes(const void* data, size_t length) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  bytes_.insert(bytes_.end(), bytes, bytes + length);
  return *this;
}

PayloadWriter& PayloadWriter::PutU32(uint32_t value) { return PutBytes(&value, sizeof value); }
PayloadWriter& PayloadWriter::PutI32(int32_t value) { return PutBytes(&value, sizeof value); }
PayloadWriter& PayloadWriter::PutU64(uint64_t value) { return PutBytes(&value, sizeof value); }

PayloadWriter& PayloadWriter::PutString(std::string_view value) {
  auto length = static_cast<uint16_t>(std::min<size_t>(value.size(), 0xFFFF));
  PutBytes(&length, sizeof length);
  return PutBytes(value.data(), length);
}

bool PayloadReader::Take(void* out, size_t length) {
  if (!ok_ || length > length_ - position_) {
    ok_ = false;
    std::memset(out, 0, length);
    return false;
  }
  std::memcpy(out, data_ + position_, length);
  position_ += length;
  return true;
}

uint32_t PayloadReader::GetU32() {
  uint32_t value;
  Take(&value, sizeof value);
  return value;
}

int32_t PayloadReader::GetI32() {
  int32_t value;
  Take(&value, sizeof value);
  return value;
}

uint64_t PayloadReader::GetU64() {
  uint64_t value;
  Take(&value, sizeof value);
  return value;
}

std::string PayloadReader::GetString() {
  uint16_t length;
  if (!Take(&length, sizeof length)) return {};
  if (length > length_ - position_) {
    ok_ = false;
    return {};
  }
  std::string value(reinterpret_cast<const char*>(data_ + position_), length);
  position_ += length;
  return value;
}

}  // namespace limpwatch::testbed
