#include "support/resolved_symbol.h"

#include <algorithm>
#include <cstring>

namespace limpwatch::testing {

void WriteResolvedSymbol(const shm::SegmentView& view, uint32_t id, std::string_view name, uint64_t address,
                         uint64_t name_hash) {
  shm::SymbolEntry& entry = view.symbols()[id];
  entry.address.store(address, std::memory_order_relaxed);
  entry.name_hash = name_hash;
  size_t length = std::min(name.size(), shm::kSymbolNameSize - 1);
  std::memcpy(entry.name, name.data(), length);
  entry.name[length] = '\0';
  entry.name_length = static_cast<uint32_t>(length);
  entry.state.store(static_cast<uint32_t>(shm::SymbolState::kResolved), std::memory_order_release);
  auto& next = view.header()->next_function_id;
  if (next.load() < id + 1) next.store(id + 1);
}

}  // namespace limpwatch::testing
