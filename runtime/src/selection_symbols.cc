#include "selection_symbols.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

#include "mapped_file.h"

namespace limpwatch::runtime {
namespace {

std::string ExecutablePath() {
  char path[4096];
  ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) return "/proc/self/exe";
  return std::string(path, static_cast<size_t>(length));
}

int CollectObject(dl_phdr_info* info, size_t, void* data) {
  auto* objects = static_cast<std::vector<LoadedObject>*>(data);
  bool main_program = info->dlpi_name == nullptr || info->dlpi_name[0] == '\0';
  if (!main_program && info->dlpi_name[0] != '/') return 0;  // the vDSO has no file
  LoadedObject object;
  object.path = main_program ? std::string() : info->dlpi_name;
  object.bias = info->dlpi_addr;
  for (int index = 0; index < info->dlpi_phnum; ++index) {
    const ElfW(Phdr)& header = info->dlpi_phdr[index];
    if (header.p_type != PT_LOAD) continue;
    uint64_t start = info->dlpi_addr + header.p_vaddr;
    object.loaded_ranges.emplace_back(start, start + header.p_memsz);
    if ((header.p_flags & PF_X) != 0) object.code_ranges.emplace_back(start, start + header.p_memsz);
  }
  objects->push_back(std::move(object));
  return 0;
}

int ReadGeneration(dl_phdr_info* info, size_t size, void* data) {
  if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds) {
    *static_cast<uint64_t*>(data) = info->dlpi_adds;
  }
  return 1;  // every entry carries the same counter
}

// Visits one symbol table; returns how many functions it held.
size_t VisitTable(const MappedFile& file, const Elf64_Shdr& section, const Elf64_Shdr& strings,
                  const std::function<void(const FunctionSymbol&)>& visit) {
  uint64_t count = section.sh_size / sizeof(Elf64_Sym);
  const auto* symbols = file.At<Elf64_Sym>(section.sh_offset, count);
  const char* names = file.At<char>(strings.sh_offset, strings.sh_size);
  if (symbols == nullptr || names == nullptr) return 0;
  size_t functions = 0;
  std::string_view source_file;
  for (uint64_t entry = 0; entry < count; ++entry) {
    const Elf64_Sym& symbol = symbols[entry];
    if (symbol.st_name >= strings.sh_size) continue;
    std::string_view name(names + symbol.st_name, strnlen(names + symbol.st_name, strings.sh_size - symbol.st_name));
    unsigned type = ELF64_ST_TYPE(symbol.st_info);
    if (type == STT_FILE) {
      source_file = name;
      continue;
    }
    bool local = ELF64_ST_BIND(symbol.st_info) == STB_LOCAL;
    if ((type != STT_FUNC && type != STT_GNU_IFUNC) || symbol.st_shndx == SHN_UNDEF || symbol.st_value == 0) continue;
    visit(FunctionSymbol{symbol.st_value, name, local ? source_file : std::string_view{}, symbol.st_size});
    ++functions;
  }
  return functions;
}

// The section header table of a 64-bit ELF file, or null.
const Elf64_Shdr* SectionTable(const MappedFile& file, const Elf64_Ehdr** elf_out) {
  const auto* elf = file.At<Elf64_Ehdr>(0);
  if (elf == nullptr || std::memcmp(elf->e_ident, ELFMAG, SELFMAG) != 0 || elf->e_ident[EI_CLASS] != ELFCLASS64 ||
      elf->e_shentsize != sizeof(Elf64_Shdr)) {
    return nullptr;
  }
  *elf_out = elf;
  return file.At<Elf64_Shdr>(elf->e_shoff, elf->e_shnum);
}

}  // namespace

std::vector<LoadedObject> ListLoadedObjects() {
  std::vector<LoadedObject> objects;
  dl_iterate_phdr(CollectObject, &objects);
  for (LoadedObject& object : objects) {
    if (object.path.empty()) object.path = ExecutablePath();
  }
  return objects;
}

uint64_t LoadedObjectGeneration() {
  uint64_t generation = 0;
  dl_iterate_phdr(ReadGeneration, &generation);
  return generation;
}

bool ForEachFunctionSymbol(const std::string& path, const std::function<void(const FunctionSymbol&)>& visit) {
  MappedFile file(path);
  const Elf64_Ehdr* elf = nullptr;
  const Elf64_Shdr* sections = SectionTable(file, &elf);
  if (sections == nullptr) return false;
  // The full .symtab when present (static functions, files); a stripped
  // object only has the exported functions of .dynsym.
  for (uint32_t wanted : {uint32_t{SHT_SYMTAB}, uint32_t{SHT_DYNSYM}}) {
    size_t functions = 0;
    for (unsigned index = 0; index < elf->e_shnum; ++index) {
      const Elf64_Shdr& section = sections[index];
      if (section.sh_type != wanted || section.sh_entsize != sizeof(Elf64_Sym) || section.sh_link >= elf->e_shnum) {
        continue;
      }
      functions += VisitTable(file, section, sections[section.sh_link], visit);
    }
    if (functions > 0) break;
  }
  return true;
}

std::vector<SectionExtent> FindAllocatedSections(const std::string& path, std::string_view name) {
  std::vector<SectionExtent> extents;
  MappedFile file(path);
  const Elf64_Ehdr* elf = nullptr;
  const Elf64_Shdr* sections = SectionTable(file, &elf);
  if (sections == nullptr || elf->e_shstrndx >= elf->e_shnum) return extents;
  const Elf64_Shdr& names_section = sections[elf->e_shstrndx];
  const char* names = file.At<char>(names_section.sh_offset, names_section.sh_size);
  if (names == nullptr) return extents;
  for (unsigned index = 0; index < elf->e_shnum; ++index) {
    const Elf64_Shdr& section = sections[index];
    if ((section.sh_flags & SHF_ALLOC) == 0 || section.sh_name >= names_section.sh_size) continue;
    std::string_view section_name(names + section.sh_name,
                                  strnlen(names + section.sh_name, names_section.sh_size - section.sh_name));
    if (section_name == name) extents.push_back(SectionExtent{section.sh_addr, section.sh_size});
  }
  return extents;
}

}  // namespace limpwatch::runtime
