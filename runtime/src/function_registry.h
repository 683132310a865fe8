// Address -> dense function id, shared by all threads of the process.
//
// The index is an open-addressing table in the segment; each entry packs the
// address and id into one 64-bit word, so a lookup is one load and a compare,
// and an insertion is one CAS: no lock, no allocation. A function that finds
// the table full is inserted with the "untracked" id, so its later calls are
// rejected just as fast and are counted as untracked.
//
// Selective tracing (LIMPWATCH_SELECT) uses the same word: a function that is
// registered but not selected has the "unselected" id field, so its enter and
// exit are one index load and compare, with no shadow-stack frame. Its real id
// stays in the symbol table (SymbolEntry::address), where a re-selection finds
// it to flip the entry back.
#ifndef LIMPWATCH_RUNTIME_SRC_FUNCTION_REGISTRY_H_
#define LIMPWATCH_RUNTIME_SRC_FUNCTION_REGISTRY_H_

#include <cstdint>

#include "thread_state.h"

namespace limpwatch::runtime {

inline constexpr uint64_t kIdFieldMask = (uint64_t{1} << shm::kFunctionIdBits) - 1;
inline constexpr uint64_t kUntrackedIdField = kIdFieldMask;  // id field of a function the table had no room for
inline constexpr uint64_t kUnselectedIdField = kIdFieldMask - 1;  // id field of a function not selected for tracing
// Ids stop below the special fields, whatever LIMPWATCH_MAX_FUNCTIONS says.
inline constexpr uint32_t kMaxUsableFunctionId = static_cast<uint32_t>(kUnselectedIdField) - 2;
// LookupFunction's answer for a function that is registered but not selected.
inline constexpr uint32_t kUnselectedFunction = shm::kNoFunction - 1;

LW_HOT uint32_t DecodeIdField(uint64_t id_field) {
  if (__builtin_expect(id_field < kUnselectedIdField, 1)) return static_cast<uint32_t>(id_field - 1);
  return id_field == kUnselectedIdField ? kUnselectedFunction : shm::kNoFunction;
}

LW_HOT uint32_t IndexPosition(uint64_t address, uint32_t mask) {
  // Fibonacci hashing: code addresses are 16-byte aligned and clustered.
  return static_cast<uint32_t>((address * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

LW_COLD uint32_t RegisterFunction(uint64_t address, uint32_t position);

// Registers an explicit call site (LW_SCOPE, lw_begin) keyed by the address
// of its static handle, with `name` published at once as kResolved, so the
// symbolizer never looks at it. Returns what LookupFunction would.
LW_COLD uint32_t RegisterNamedScope(uint64_t site_address, const char* name);

// Re-decides every registered function under the active selection and flips
// the index entries that changed. Service thread only. Returns the number of
// registered functions now unselected.
uint64_t ApplySelectionToIndex();

// The function id of `address`, registering it on first sight; kNoFunction
// when the address cannot be recorded, kUnselectedFunction when it is not
// selected for tracing.
LW_HOT uint32_t LookupFunction(uint64_t address) {
  uint32_t mask = g_process.function_index_mask;
  uint32_t position = IndexPosition(address, mask);
  for (;;) {
    uint64_t packed = g_process.function_index[position].packed.load(std::memory_order_relaxed);
    if ((packed >> shm::kFunctionIdBits) == address) return DecodeIdField(packed & kIdFieldMask);
    if (packed == 0) return RegisterFunction(address, position);
    position = (position + 1) & mask;
  }
}

// True when `address` is registered and not selected: its exit has nothing to
// pop. Never registers.
LW_HOT bool IsUnselected(uint64_t address) {
  uint32_t mask = g_process.function_index_mask;
  uint32_t position = IndexPosition(address, mask);
  for (;;) {
    uint64_t packed = g_process.function_index[position].packed.load(std::memory_order_relaxed);
    if ((packed >> shm::kFunctionIdBits) == address) return (packed & kIdFieldMask) == kUnselectedIdField;
    if (packed == 0) return false;
    position = (position + 1) & mask;
  }
}

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_FUNCTION_REGISTRY_H_
