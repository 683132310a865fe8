#include "limpwatch/analyzer/bfloat16.h"

#include <bit>

namespace limpwatch::analyzer {

namespace {
constexpr uint16_t kLargestFiniteMagnitude = 0x7F7F;
constexpr uint16_t kSignBit = 0x8000;
}  // namespace

uint16_t EncodeBfloat16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  // Adding 0x7FFF plus the lowest kept bit rounds to nearest, ties to even;
  // a carry out of the mantissa correctly bumps the exponent. The sum cannot
  // wrap: the largest finite pattern plus 0x8000 stays below 2^32.
  uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u);
  auto rounded = static_cast<uint16_t>((bits + rounding) >> 16);
  if (!IsFiniteBfloat16(rounded)) rounded = static_cast<uint16_t>((rounded & kSignBit) | kLargestFiniteMagnitude);
  return rounded;
}

float DecodeBfloat16(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

}  // namespace limpwatch::analyzer
