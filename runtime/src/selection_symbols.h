// The function symbols of the loaded objects, with the source file of each
// static function, for deciding a selection off the hot path; and the place
// of a named section (patching/sled_discovery.h).
//
// Source files come from the STT_FILE symbols of .symtab: the linker writes
// each input file's STT_FILE followed by that file's local symbols, then all
// global symbols. So a `file:` rule matches static functions only; global
// functions have no file without DWARF. A stripped object has only .dynsym:
// exported functions by name and object, no static functions and no files
// (their calls are decided by the manifest's default).
#ifndef LIMPWATCH_RUNTIME_SRC_SELECTION_SYMBOLS_H_
#define LIMPWATCH_RUNTIME_SRC_SELECTION_SYMBOLS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace limpwatch::runtime {

struct LoadedObject {
  std::string path;  // the file the object was mapped from
  uint64_t bias = 0;
  std::vector<std::pair<uint64_t, uint64_t>> code_ranges;  // executable PT_LOAD segments, run-time addresses
  std::vector<std::pair<uint64_t, uint64_t>> loaded_ranges;  // every PT_LOAD segment, run-time addresses
};

// Every loaded object with a file behind it (the vDSO is skipped).
std::vector<LoadedObject> ListLoadedObjects();

// How many objects have been loaded so far (dlpi_adds): changes on dlopen.
uint64_t LoadedObjectGeneration();

struct FunctionSymbol {
  uint64_t file_address;
  std::string_view name;         // raw (mangled)
  std::string_view source_file;  // empty for global functions
  uint64_t size = 0;              // st_size: 0 when unknown
};

// Calls `visit` for each defined function symbol of the ELF file at `path`
// (.symtab, else .dynsym). Returns false when the file is not a readable
// 64-bit ELF object.
bool ForEachFunctionSymbol(const std::string& path, const std::function<void(const FunctionSymbol&)>& visit);

struct SectionExtent {
  uint64_t file_address;  // sh_addr: add the object's bias for its run-time address
  uint64_t size;
};

// The allocated (SHF_ALLOC) sections named `name` of the ELF file at `path`;
// empty when there is none or the file is not a readable 64-bit ELF object.
std::vector<SectionExtent> FindAllocatedSections(const std::string& path, std::string_view name);

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_SELECTION_SYMBOLS_H_
