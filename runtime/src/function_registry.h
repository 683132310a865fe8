// Address -> dense function id, shared by all threads of the process.
//
// The index is an open-addressing table in the segment; each entry packs the
// address and id into one 64-bit word, so a lookup is one load and a compare,
// and an insertion is one CAS: no lock, no allocation. A function that finds
// the table full is inserted with the "untracked" id, so its later calls are
// rejected just as fast and are counted as untracked.
#ifndef LIMPWATCH_RUNTIME_SRC_FUNCTION_REGISTRY_H_
#define LIMPWATCH_RUNTIME_SRC_FUNCTION_REGISTRY_H_

#include <cstdint>

#include "thread_state.h"

namespace limpwatch::runtime {

inline constexpr uint64_t kIdFieldMask = (uint64_t{1} << shm::kFunctionIdBits) - 1;
inline constexpr uint64_t kUntrackedIdField = kIdFieldMask;  // id field of a function the table had no room for

LW_HOT uint32_t IndexPosition(uint64_t address, uint32_t mask) {
  // Fibonacci hashing: code addresses are 16-byte aligned and clustered.
  return static_cast<uint32_t>((address * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

LW_COLD uint32_t RegisterFunction(uint64_t address, uint32_t position);

// The function id of `address`, registering it on first sight; kNoFunction
// when the address cannot be recorded.
LW_HOT uint32_t LookupFunction(uint64_t address) {
  uint32_t mask = g_process.function_index_mask;
  uint32_t position = IndexPosition(address, mask);
  for (;;) {
    uint64_t packed = g_process.function_index[position].packed.load(std::memory_order_relaxed);
    if ((packed >> shm::kFunctionIdBits) == address) {
      uint64_t id_field = packed & kIdFieldMask;
      return id_field == kUntrackedIdField ? shm::kNoFunction : static_cast<uint32_t>(id_field - 1);
    }
    if (packed == 0) return RegisterFunction(address, position);
    position = (position + 1) & mask;
  }
}

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_FUNCTION_REGISTRY_H_
