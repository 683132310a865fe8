// The byte sequences a patchable function entry goes through.
//
//   as compiled      90 90 90 90 90      five 1-byte NOPs (GCC 12)
//   prepared         0F 1F 44 00 00      one 5-byte NOP: a thread is never inside it
//   patched          E9 <rel32>          jmp to the function's entry stub
//   while changing   CC ...              int3: a thread arriving here skips the sled
//
// Only "as compiled" -> "prepared" needs a process with no other thread of
// the program (a thread may be between two of the five NOPs); "prepared" <->
// "patched" is one instruction either way and goes through the int3
// protocol (code_writer.h).
#ifndef LIMPWATCH_RUNTIME_SRC_PATCHING_SLED_BYTES_H_
#define LIMPWATCH_RUNTIME_SRC_PATCHING_SLED_BYTES_H_

#include <array>
#include <cstdint>
#include <cstring>

namespace limpwatch::runtime::patching {

inline constexpr uint64_t kSledSize = 5;
using SledBytes = std::array<uint8_t, kSledSize>;

inline constexpr uint8_t kFreshSled[kSledSize] = {0x90, 0x90, 0x90, 0x90, 0x90};
inline constexpr SledBytes kPreparedSled = {0x0F, 0x1F, 0x44, 0x00, 0x00};
inline constexpr uint8_t kCallOpcode = 0xE8;
inline constexpr uint8_t kJumpOpcode = 0xE9;
inline constexpr uint8_t kTrapOpcode = 0xCC;

// `jmp target` placed at `sled`; the caller checked that target is within
// +-2 GiB of sled + 5.
inline SledBytes JumpBytes(uint64_t sled, uint64_t target) {
  SledBytes bytes{};
  bytes[0] = kJumpOpcode;
  int32_t displacement = static_cast<int32_t>(static_cast<int64_t>(target - (sled + kSledSize)));
  std::memcpy(&bytes[1], &displacement, sizeof displacement);
  return bytes;
}

// Whether a rel32 `call` or `jmp` to target fits at every sled in [low, high).
inline bool CallReaches(uint64_t low, uint64_t high, uint64_t target) {
  constexpr int64_t kReach = (int64_t{1} << 31) - 1;
  auto fits = [target](uint64_t sled) {
    int64_t displacement = static_cast<int64_t>(target - (sled + kSledSize));
    return displacement >= -kReach && displacement <= kReach;
  };
  return fits(low) && fits(high);
}

}  // namespace limpwatch::runtime::patching

#endif  // LIMPWATCH_RUNTIME_SRC_PATCHING_SLED_BYTES_H_
