// Where the program's code lies, for the two patchers (entry sleds and
// compiler hook call sites): range checks before reading or writing code,
// and liblimpwatch itself, which is never patched.
#ifndef LIMPWATCH_RUNTIME_SRC_PATCHING_PROGRAM_CODE_H_
#define LIMPWATCH_RUNTIME_SRC_PATCHING_PROGRAM_CODE_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "selection_symbols.h"

namespace limpwatch::runtime::patching {

using AddressRanges = std::vector<std::pair<uint64_t, uint64_t>>;  // [start, end)

// Whether [address, address + size) lies inside one of `ranges`.
inline bool RangesHold(const AddressRanges& ranges, uint64_t address, uint64_t size) {
  for (const auto& [start, end] : ranges) {
    if (address >= start && address <= end && size <= end - address) return true;
  }
  return false;
}

// Whether `object` is liblimpwatch.
bool IsLimpwatchObject(const LoadedObject& object);

}  // namespace limpwatch::runtime::patching

#endif  // LIMPWATCH_RUNTIME_SRC_PATCHING_PROGRAM_CODE_H_
