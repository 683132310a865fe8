#include "sampler/vdso_symbols.h"

#include <elf.h>
#include <link.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace limpwatch::runtime {

VdsoSymbols VdsoSymbols::Load() {
  VdsoSymbols table;
  auto base = static_cast<uintptr_t>(getauxval(AT_SYSINFO_EHDR));
  if (base == 0) return table;
  const auto* elf = reinterpret_cast<const ElfW(Ehdr)*>(base);
  if (std::memcmp(elf->e_ident, ELFMAG, SELFMAG) != 0 || elf->e_shentsize != sizeof(ElfW(Shdr))) return table;
  // The vDSO is a few pages mapped whole: its section headers are in memory.
  // Its symbols hold link-time addresses; the load bias comes from PT_LOAD.
  const auto* program_headers = reinterpret_cast<const ElfW(Phdr)*>(base + elf->e_phoff);
  uintptr_t bias = base;
  for (unsigned index = 0; index < elf->e_phnum; ++index) {
    if (program_headers[index].p_type == PT_LOAD) {
      bias = base + program_headers[index].p_offset - program_headers[index].p_vaddr;
      break;
    }
  }
  const auto* sections = reinterpret_cast<const ElfW(Shdr)*>(base + elf->e_shoff);
  for (unsigned index = 0; index < elf->e_shnum; ++index) {
    const ElfW(Shdr)& section = sections[index];
    if (section.sh_type != SHT_DYNSYM || section.sh_link >= elf->e_shnum) continue;
    const auto* symbols = reinterpret_cast<const ElfW(Sym)*>(base + section.sh_offset);
    const char* names = reinterpret_cast<const char*>(base + sections[section.sh_link].sh_offset);
    size_t names_size = sections[section.sh_link].sh_size;
    for (size_t entry = 0; entry < section.sh_size / sizeof(ElfW(Sym)); ++entry) {
      const ElfW(Sym)& symbol = symbols[entry];
      if (ELF64_ST_TYPE(symbol.st_info) != STT_FUNC || symbol.st_value == 0 || symbol.st_name >= names_size) continue;
      const char* name = names + symbol.st_name;
      table.symbols_.push_back({bias + symbol.st_value, bias + symbol.st_value + std::max<uint64_t>(symbol.st_size, 1),
                                std::string(name, strnlen(name, names_size - symbol.st_name))});
    }
  }
  return table;
}

const std::string* VdsoSymbols::Find(uint64_t address) const {
  // A handful of symbols, several aliases each (__vdso_x and x): any will do,
  // but the public name reads better, so prefer names without "__vdso_".
  const std::string* found = nullptr;
  for (const Symbol& symbol : symbols_) {
    if (address < symbol.start || address >= symbol.end) continue;
    if (found == nullptr || found->starts_with("__vdso_")) found = &symbol.name;
  }
  return found;
}

}  // namespace limpwatch::runtime
