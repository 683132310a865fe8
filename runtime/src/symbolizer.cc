#include "symbolizer.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "limpwatch/shm/name_hash.h"
#include "demangler.h"
#include "mapped_file.h"

namespace limpwatch::runtime {
namespace {

struct ObjectLookup {
  uint64_t address = 0;
  bool found = false;
  std::string path;
  uint64_t bias = 0;
};

int FindObject(dl_phdr_info* info, size_t, void* data) {
  auto* lookup = static_cast<ObjectLookup*>(data);
  for (int index = 0; index < info->dlpi_phnum; ++index) {
    const ElfW(Phdr)& header = info->dlpi_phdr[index];
    if (header.p_type != PT_LOAD) continue;
    uint64_t start = info->dlpi_addr + header.p_vaddr;
    if (lookup->address >= start && lookup->address < start + header.p_memsz) {
      lookup->found = true;
      lookup->bias = info->dlpi_addr;
      lookup->path = (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') ? info->dlpi_name : "/proc/self/exe";
      return 1;
    }
  }
  return 0;
}

}  // namespace

std::unique_ptr<ElfSymbolTable> ElfSymbolTable::Load(const std::string& path) {
  MappedFile file(path);
  const auto* elf = file.At<Elf64_Ehdr>(0);
  if (elf == nullptr || std::memcmp(elf->e_ident, ELFMAG, SELFMAG) != 0 || elf->e_ident[EI_CLASS] != ELFCLASS64 ||
      elf->e_shentsize != sizeof(Elf64_Shdr)) {
    return nullptr;
  }
  const auto* sections = file.At<Elf64_Shdr>(elf->e_shoff, elf->e_shnum);
  if (sections == nullptr) return nullptr;

  auto table = std::unique_ptr<ElfSymbolTable>(new ElfSymbolTable());
  // Prefer the full .symtab (static functions); stripped objects only have .dynsym.
  for (uint32_t wanted : {uint32_t{SHT_SYMTAB}, uint32_t{SHT_DYNSYM}}) {
    for (unsigned index = 0; index < elf->e_shnum; ++index) {
      const Elf64_Shdr& section = sections[index];
      if (section.sh_type != wanted || section.sh_entsize != sizeof(Elf64_Sym) || section.sh_link >= elf->e_shnum) {
        continue;
      }
      const Elf64_Shdr& strings = sections[section.sh_link];
      const auto* symbols = file.At<Elf64_Sym>(section.sh_offset, section.sh_size / sizeof(Elf64_Sym));
      const char* names = file.At<char>(strings.sh_offset, strings.sh_size);
      if (symbols == nullptr || names == nullptr) continue;
      for (uint64_t entry = 0; entry < section.sh_size / sizeof(Elf64_Sym); ++entry) {
        const Elf64_Sym& symbol = symbols[entry];
        unsigned type = ELF64_ST_TYPE(symbol.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || symbol.st_shndx == SHN_UNDEF || symbol.st_value == 0 ||
            symbol.st_name >= strings.sh_size) {
          continue;
        }
        const char* name = names + symbol.st_name;
        size_t length = strnlen(name, strings.sh_size - symbol.st_name);
        table->symbols_.push_back({symbol.st_value, symbol.st_size, std::string(name, length)});
      }
    }
    if (!table->symbols_.empty()) break;
  }
  std::sort(table->symbols_.begin(), table->symbols_.end(),
            [](const Symbol& a, const Symbol& b) { return a.address < b.address; });
  return table;
}

const std::string* ElfSymbolTable::Find(uint64_t file_address) const {
  auto after = std::upper_bound(symbols_.begin(), symbols_.end(), file_address,
                                [](uint64_t address, const Symbol& symbol) { return address < symbol.address; });
  // Several symbols may share an address (aliases): any of those containing it will do.
  while (after != symbols_.begin()) {
    --after;
    if (file_address == after->address || file_address < after->address + after->size) return &after->name;
    if (after->size != 0) break;
  }
  return nullptr;
}

bool Symbolizer::Resolve(uint64_t address, ResolvedSymbol* out) {
  ObjectLookup lookup;
  lookup.address = address;
  dl_iterate_phdr(FindObject, &lookup);
  if (!lookup.found) return false;
  auto [position, inserted] = tables_.try_emplace(lookup.path);
  if (inserted) position->second = ElfSymbolTable::Load(lookup.path);
  const std::string* name = position->second ? position->second->Find(address - lookup.bias) : nullptr;
  if (name == nullptr) {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(address), &info) == 0 || info.dli_sname == nullptr ||
        reinterpret_cast<uint64_t>(info.dli_saddr) != address) {
      return false;
    }
    out->raw_name = info.dli_sname;
  } else {
    out->raw_name = *name;
  }
  out->display_name = Demangle(out->raw_name);
  out->image = lookup.path;
  return true;
}

size_t Symbolizer::PublishPendingNames(const shm::SegmentView& view) {
  std::lock_guard<std::mutex> lock(mutex_);
  shm::SegmentHeader* header = view.header();
  uint32_t functions = std::min(header->next_function_id.load(std::memory_order_acquire), header->max_functions);
  size_t published = 0;
  for (uint32_t id = 0; id < functions; ++id) {
    shm::SymbolEntry& entry = view.symbols()[id];
    if (entry.state.load(std::memory_order_acquire) != static_cast<uint32_t>(shm::SymbolState::kRegistered)) continue;
    uint64_t address = entry.address.load(std::memory_order_relaxed);
    ResolvedSymbol symbol;
    std::string text;
    shm::SymbolState state = shm::SymbolState::kResolved;
    if (Resolve(address, &symbol)) {
      text = symbol.display_name;
      entry.name_hash = shm::FunctionNameHash(symbol.raw_name);
    } else {
      char hex[32];
      std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(address));
      text = hex;
      state = shm::SymbolState::kUnresolvable;
    }
    size_t length = std::min(text.size(), shm::kSymbolNameSize - 1);
    std::memcpy(entry.name, text.data(), length);
    entry.name[length] = '\0';
    entry.name_length = static_cast<uint32_t>(length);
    entry.state.store(static_cast<uint32_t>(state), std::memory_order_release);
    ++published;
  }
  return published;
}

Symbolizer& ProcessSymbolizer() {
  static Symbolizer* symbolizer = new Symbolizer();
  return *symbolizer;
}

}  // namespace limpwatch::runtime
