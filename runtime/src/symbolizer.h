// Address -> function name, off the hot path.
//
// dladdr only sees exported symbols, and the functions that matter in a
// server are mostly static ones of the executable, so names come from the ELF
// symbol tables (.symtab, else .dynsym) of the object that maps the address.
#ifndef LIMPWATCH_RUNTIME_SRC_SYMBOLIZER_H_
#define LIMPWATCH_RUNTIME_SRC_SYMBOLIZER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "limpwatch/shm/segment.h"

namespace limpwatch::runtime {

struct ResolvedSymbol {
  std::string raw_name;      // as in the symbol table (mangled)
  std::string display_name;  // demangled
  std::string image;         // path of the object
};

// The function symbols of one ELF file, sorted by address.
class ElfSymbolTable {
 public:
  // Reads `path`; returns null if it is not a readable 64-bit ELF file.
  static std::unique_ptr<ElfSymbolTable> Load(const std::string& path);

  // The function containing `file_address` (an address relative to the
  // object's load bias), or null.
  const std::string* Find(uint64_t file_address) const;
  size_t size() const { return symbols_.size(); }

 private:
  struct Symbol {
    uint64_t address;
    uint64_t size;
    std::string name;
  };
  std::vector<Symbol> symbols_;
};

class Symbolizer {
 public:
  // Returns false when no loaded object or symbol covers `address`.
  bool Resolve(uint64_t address, ResolvedSymbol* out);

  // Resolves every registered, unnamed function of the segment and publishes
  // the names. Returns how many were published.
  size_t PublishPendingNames(const shm::SegmentView& view);

  std::mutex& mutex() { return mutex_; }

 private:
  std::mutex mutex_;  // taken by PublishPendingNames and around fork
  std::map<std::string, std::unique_ptr<ElfSymbolTable>> tables_;
};

// The process's symbolizer; never destroyed, so it stays usable during exit.
Symbolizer& ProcessSymbolizer();

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_SYMBOLIZER_H_
