// Kernel address -> function name, from /proc/kallsyms.
//
// Loaded once, lazily, when the first kernel sample needs a name: the file
// has ~10^5 lines and most processes never sample the kernel. kallsyms has no
// symbol sizes; an address belongs to the nearest text symbol below it. The
// tables (megabytes) live in pages of their own, not in the program's heap
// (page_allocator.h says why).
#ifndef LIMPWATCH_RUNTIME_SRC_SAMPLER_KERNEL_SYMBOLS_H_
#define LIMPWATCH_RUNTIME_SRC_SAMPLER_KERNEL_SYMBOLS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "page_allocator.h"

namespace limpwatch::runtime {

struct KernelSymbol {
  std::string_view name;
  std::string_view image;  // "[kernel]", or "[<module>]"
};

class KernelSymbols {
 public:
  // Reads `path` (normally /proc/kallsyms). Returns an empty table when the
  // file is unreadable or its addresses are hidden (kptr_restrict).
  static KernelSymbols Load(const char* path);

  bool empty() const { return symbols_.empty(); }
  size_t size() const { return symbols_.size(); }

  // The function containing `address`; false when below the first symbol or
  // beyond the last one's module or text end.
  bool Find(uint64_t address, KernelSymbol* out) const;

 private:
  struct Entry {
    uint64_t address;
    uint32_t name_offset;
    uint16_t name_length;
    uint16_t image;  // index into images_
  };
  std::vector<Entry, PageAllocator<Entry>> symbols_;
  PageString names_;
  std::vector<std::string> images_;
};

// True for the functions of the idle loop, whose samples are a CPU doing
// nothing rather than work done for anyone.
bool IsIdleKernelFunction(std::string_view name);

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_SAMPLER_KERNEL_SYMBOLS_H_
