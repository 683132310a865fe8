// Names for addresses in the vDSO, the kernel's code mapped into every
// process (clock_gettime, gettimeofday, getcpu). It is not a file, so the
// Symbolizer cannot read it; its ELF image is parsed where it is mapped.
#ifndef LIMPWATCH_RUNTIME_SRC_SAMPLER_VDSO_SYMBOLS_H_
#define LIMPWATCH_RUNTIME_SRC_SAMPLER_VDSO_SYMBOLS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace limpwatch::runtime {

inline constexpr const char* kVdsoImage = "[vdso]";

class VdsoSymbols {
 public:
  // Reads this process's vDSO (getauxval(AT_SYSINFO_EHDR)); empty if none.
  static VdsoSymbols Load();

  // The function containing `address`, or null.
  const std::string* Find(uint64_t address) const;

 private:
  struct Symbol {
    uint64_t start;
    uint64_t end;
    std::string name;
  };
  std::vector<Symbol> symbols_;
};

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_SAMPLER_VDSO_SYMBOLS_H_
