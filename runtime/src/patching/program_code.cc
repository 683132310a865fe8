#include "patching/program_code.h"

namespace limpwatch::runtime::patching {

bool IsLimpwatchObject(const LoadedObject& object) {
  uint64_t own = reinterpret_cast<uint64_t>(&IsLimpwatchObject);
  return RangesHold(object.code_ranges, own, 1);
}

}  // namespace limpwatch::runtime::patching
