#include "patching/sled_discovery.h"

#include <algorithm>
#include <cstring>

#include "patching/program_code.h"
#include "patching/sled_bytes.h"
#include "selection_symbols.h"

namespace limpwatch::runtime::patching {
namespace {

constexpr char kSledSection[] = "__patchable_function_entries";

}  // namespace

std::vector<PatchableObject> DiscoverPatchableObjects() {
  std::vector<PatchableObject> found;
  for (const LoadedObject& object : ListLoadedObjects()) {
    if (object.code_ranges.empty() || IsLimpwatchObject(object)) continue;
    std::vector<SectionExtent> sections = FindAllocatedSections(object.path, kSledSection);
    if (sections.empty()) continue;
    std::vector<uint64_t> functions;
    ForEachFunctionSymbol(object.path, [&](const FunctionSymbol& symbol) {
      functions.push_back(object.bias + symbol.file_address);
    });
    std::sort(functions.begin(), functions.end());

    PatchableObject patchable;
    patchable.path = object.path;
    patchable.code_low = object.code_ranges.front().first;
    patchable.code_high = object.code_ranges.front().second;
    for (const auto& [start, end] : object.code_ranges) {
      patchable.code_low = std::min(patchable.code_low, start);
      patchable.code_high = std::max(patchable.code_high, end);
    }
    for (const SectionExtent& section : sections) {
      // A file replaced since it was loaded could name any place: read only inside the object's segments.
      if (!RangesHold(object.loaded_ranges, object.bias + section.file_address, section.size)) continue;
      // Relocated by the loader: each word is a run-time address.
      const auto* entries = reinterpret_cast<const uint64_t*>(object.bias + section.file_address);
      for (uint64_t index = 0; index < section.size / sizeof(uint64_t); ++index) {
        uint64_t entry = entries[index];
        bool usable = RangesHold(object.code_ranges, entry, kSledSize) && std::binary_search(functions.begin(), functions.end(), entry) &&
                      std::memcmp(reinterpret_cast<const void*>(entry), kFreshSled, kSledSize) == 0;
        if (usable) {
          patchable.sleds.push_back(entry);
        } else {
          ++patchable.sleds_elsewhere;
        }
      }
    }
    std::sort(patchable.sleds.begin(), patchable.sleds.end());
    patchable.sleds.erase(std::unique(patchable.sleds.begin(), patchable.sleds.end()), patchable.sleds.end());
    if (!patchable.sleds.empty() || patchable.sleds_elsewhere > 0) found.push_back(std::move(patchable));
  }
  return found;
}

}  // namespace limpwatch::runtime::patching
