// Where the loaded objects have patchable function entries ("sleds").
//
// GCC's -fpatchable-function-entry=5 puts five 1-byte NOPs at the start of
// every function and lists their addresses in the allocated section
// __patchable_function_entries. In a position-independent object the file
// holds zeros there and the addresses come from R_X86_64_RELATIVE
// relocations, so the list is read from memory, where the dynamic loader has
// already relocated it, not from the file; the file gives only the section's
// place (section headers are not loaded).
//
// Only sleds at the first byte of a function symbol are kept: then the sled's
// address is the function's address, the key the hot path and the symbolizer
// use. A sled placed after an endbr64 (-fcf-protection) or with a nonzero
// offset (-fpatchable-function-entry=N,M) is counted and left alone.
// liblimpwatch itself is never scanned.
#ifndef LIMPWATCH_RUNTIME_SRC_PATCHING_SLED_DISCOVERY_H_
#define LIMPWATCH_RUNTIME_SRC_PATCHING_SLED_DISCOVERY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace limpwatch::runtime::patching {

struct PatchableObject {
  std::string path;
  uint64_t code_low = 0;   // lowest run-time address of its executable segments
  uint64_t code_high = 0;  // end of the highest one
  std::vector<uint64_t> sleds;  // run-time addresses, sorted, each a function's first byte
  uint64_t sleds_elsewhere = 0;  // listed entries not at a function's first byte, or not five NOPs
};

// Every loaded object with at least one listed entry. Runs off the hot path
// (reads files, allocates).
std::vector<PatchableObject> DiscoverPatchableObjects();

}  // namespace limpwatch::runtime::patching

#endif  // LIMPWATCH_RUNTIME_SRC_PATCHING_SLED_DISCOVERY_H_
