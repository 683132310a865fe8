// Address -> dense function id, shared by all threads of the process.
//
// The index is an open-addressing table in the segment; each entry packs the
// address and id into one 64-bit word, so a lookup is one load and a compare,
// and an insertion is one CAS: no lock, no allocation. A function that finds
// the table full is inserted with the "untracked" id, so its later calls are
// rejected just as fast and are counted as untracked.
//
// Selective tracing (LIMPWATCH_SELECT) uses the same word: a function that is
// registered but not selected has the "unselected" id field and no
// shadow-stack frame. Its real id stays in the symbol table
// (SymbolEntry::address), where a re-selection finds it to flip the entry back.
//
// The hooks do not read the index first: they read the unselected filter, a
// process-private direct-mapped table holding at a function's home position
// its plain address when it is registered and not selected. Comparing that
// word with the hook's argument needs no unpacking, so an unselected call
// costs a shift, a mask, one load and a compare, about half the instructions
// of the packed-word test. The filter only ever answers "unselected" for a
// function whose index entry says so (SyncUnselectedFilter); a miss (not
// registered yet, a collision, the filter off) takes the full path, which
// probes the index and is right in every case.
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
  // Functions are at least a few bytes long and mostly 16-byte aligned, so
  // the address's 16-byte line spreads them over the positions in code order
  // with one shift: the probe is every hook's first step, even an unselected
  // function's, and a multiplication would be a third of its cost.
  return static_cast<uint32_t>(address >> 4) & mask;
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

// ProbeIdField's answer for an address the index does not hold yet.
inline constexpr uint64_t kIdFieldAbsent = 0;

// The id field of `address`'s index entry, or kIdFieldAbsent. One probe,
// never registers: the hot path's first step, so that an unselected
// function costs this and nothing more.
LW_HOT uint64_t ProbeIdField(uint64_t address) {
  uint32_t mask = g_process.function_index_mask;
  uint32_t position = IndexPosition(address, mask);
  for (;;) {
    uint64_t packed = g_process.function_index[position].packed.load(std::memory_order_relaxed);
    if ((packed >> shm::kFunctionIdBits) == address) return packed & kIdFieldMask;
    if (packed == 0) return kIdFieldAbsent;
    position = (position + 1) & mask;
  }
}

// The word at `address`'s home position of the index (where a probe starts).
LW_HOT uint64_t HomeEntry(uint64_t address) {
  return g_process.function_index[IndexPosition(address, g_process.function_index_mask)].packed.load(
      std::memory_order_relaxed);
}

// The id field of `address` given its home entry: no second load when the
// function sits at its home position, the usual case.
LW_HOT uint64_t IdFieldGivenHome(uint64_t address, uint64_t home) {
  if ((home >> shm::kFunctionIdBits) == address) return home & kIdFieldMask;
  return ProbeIdField(address);
}

// True when `address` is registered and not selected. Never registers.
LW_HOT bool IsUnselected(uint64_t address) { return ProbeIdField(address) == kUnselectedIdField; }

// The hooks' first step: true when the filter says `address` is not selected.
LW_HOT bool FilteredAsUnselected(uint64_t address) {
  return g_process.unselected_filter[IndexPosition(address, g_process.unselected_filter_mask)].load(
             std::memory_order_relaxed) == address;
}

// Maps (or, in a forked child, clears) the filter for an index of `capacity`
// positions. Disabled, every probe misses.
void PrepareUnselectedFilter(uint32_t capacity, bool enabled);

// Makes `address`'s filter slot agree with its index entry. Whoever stores an
// entry calls this afterwards; the store, the slot's compare-and-swap and
// the re-read of the entry are sequentially consistent, so of two threads
// racing on one function the last to store decides the slot.
void SyncUnselectedFilter(uint64_t address, const std::atomic<uint64_t>& entry);

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_FUNCTION_REGISTRY_H_
