#include "sampler/kernel_symbols.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace limpwatch::runtime {
namespace {

constexpr std::string_view kCoreImage = "[kernel]";
constexpr size_t kExpectedTextSymbols = 1 << 17;

// Symbols that close a text range: an address past them is in no function.
bool IsTextEnd(std::string_view name) { return name == "_etext" || name == "__init_end" || name == "_einittext"; }

}  // namespace

KernelSymbols KernelSymbols::Load(const char* path) {
  KernelSymbols table;
  FILE* file = std::fopen(path, "re");
  if (file == nullptr) return table;
  // Address space only: pages are touched as the tables fill.
  table.symbols_.reserve(kExpectedTextSymbols);
  table.names_.reserve(kExpectedTextSymbols * 24);
  table.images_.emplace_back(kCoreImage);
  bool any_address = false;
  char* line = nullptr;
  size_t capacity = 0;
  while (getline(&line, &capacity, file) > 0) {
    // "ffffffff81000000 T _stext" or "ffffffffc0123000 t name\t[module]"
    char* end = nullptr;
    uint64_t address = std::strtoull(line, &end, 16);
    if (end == line || *end != ' ') continue;
    char type = end[1];
    if (end[2] != ' ') continue;
    char* name = end + 3;
    size_t name_length = std::strcspn(name, "\t\n ");
    std::string_view name_view(name, name_length);
    bool text = type == 't' || type == 'T';
    if (!text && !IsTextEnd(name_view)) continue;
    if (address != 0) any_address = true;
    uint16_t image = 0;
    const char* module = std::strchr(name + name_length, '[');
    if (module != nullptr) {
      const char* close = std::strchr(module, ']');
      std::string image_name(module, close != nullptr ? static_cast<size_t>(close - module + 1) : std::strlen(module));
      auto found = std::find(table.images_.begin(), table.images_.end(), image_name);
      if (found == table.images_.end()) {
        if (table.images_.size() >= 0xffff) continue;
        table.images_.push_back(image_name);
        found = table.images_.end() - 1;
      }
      image = static_cast<uint16_t>(found - table.images_.begin());
    }
    if (name_length > 0xffff || table.names_.size() > 0xffffffffu - name_length) continue;
    // A text-end marker keeps an empty name: Find() reports "no function" there.
    uint16_t stored_length = text ? static_cast<uint16_t>(name_length) : 0;
    table.symbols_.push_back({address, static_cast<uint32_t>(table.names_.size()), stored_length, image});
    table.names_.append(name, stored_length);
  }
  std::free(line);
  std::fclose(file);
  if (!any_address) {
    // kptr_restrict hides the addresses from this process: all zero.
    return KernelSymbols();
  }
  // In file order among equal addresses (names are appended in file order,
  // and a text-end marker's empty name sits where the next name starts), the
  // way a stable sort would leave them, without the temporary heap buffer of
  // one.
  std::sort(table.symbols_.begin(), table.symbols_.end(), [](const Entry& a, const Entry& b) {
    if (a.address != b.address) return a.address < b.address;
    if (a.name_offset != b.name_offset) return a.name_offset < b.name_offset;
    return a.name_length < b.name_length;
  });
  return table;
}

bool KernelSymbols::Find(uint64_t address, KernelSymbol* out) const {
  auto after = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                                [](uint64_t value, const Entry& entry) { return value < entry.address; });
  if (after == symbols_.begin()) return false;
  const Entry& entry = *(after - 1);
  if (entry.name_length == 0) return false;
  // The last module symbol has nothing above it to bound it; a sample far
  // beyond it is in no known function.
  if (after == symbols_.end() && address - entry.address > (1u << 20)) return false;
  out->name = std::string_view(names_).substr(entry.name_offset, entry.name_length);
  out->image = images_[entry.image];
  return true;
}

bool IsIdleKernelFunction(std::string_view name) {
  // The idle loop's leaf functions across x86 kernels (perf's symbol__is_idle
  // keeps a similar list).
  static constexpr std::string_view kIdle[] = {
      "default_idle",       "default_idle_call",  "arch_cpu_idle",   "cpu_idle_poll",      "do_idle",
      "native_safe_halt",   "pv_native_safe_halt", "mwait_idle",     "mwait_idle_with_hints", "intel_idle",
      "intel_idle_ibrs",    "intel_idle_irq",     "poll_idle",       "acpi_idle_do_entry", "acpi_safe_halt",
      "acpi_idle_enter",    "cpuidle_enter_state", "cpu_startup_entry", "amd_e400_idle",  "io_idle",
  };
  for (std::string_view idle : kIdle) {
    if (name == idle) return true;
  }
  return name.starts_with("mwait_idle_with_hints.") || name.starts_with("intel_idle.");
}

}  // namespace limpwatch::runtime
