#include "function_registry.h"

namespace limpwatch::runtime {

LW_COLD uint32_t RegisterFunction(uint64_t address, uint32_t position) {
  shm::SegmentHeader* header = g_process.header;
  if (address == 0 || address > shm::kMaxCodeAddress) {
    header->counters.function_table_full.fetch_add(1, std::memory_order_relaxed);
    return shm::kNoFunction;
  }
  uint32_t id = header->next_function_id.load(std::memory_order_relaxed);
  bool has_room = id < g_process.max_functions;
  if (has_room) id = header->next_function_id.fetch_add(1, std::memory_order_relaxed);
  has_room = has_room && id < g_process.max_functions;
  uint64_t id_field = has_room ? uint64_t{id} + 1 : kUntrackedIdField;
  uint64_t packed = (address << shm::kFunctionIdBits) | id_field;
  uint32_t mask = g_process.function_index_mask;

  // Probe from the first empty position we saw; another thread may fill it
  // (with this address or another) between our look and our CAS.
  for (uint32_t probes = 0; probes <= mask; ++probes, position = (position + 1) & mask) {
    auto& entry = g_process.function_index[position].packed;
    uint64_t expected = 0;
    if (entry.compare_exchange_strong(expected, packed, std::memory_order_acq_rel)) {
      if (!has_room) {
        header->counters.function_table_full.fetch_add(1, std::memory_order_relaxed);
        return shm::kNoFunction;
      }
      shm::SymbolEntry& symbol = g_process.symbols[id];
      symbol.address.store(address, std::memory_order_relaxed);
      symbol.state.store(static_cast<uint32_t>(shm::SymbolState::kRegistered), std::memory_order_release);
      header->counters.functions_registered.fetch_add(1, std::memory_order_relaxed);
      return id;
    }
    if ((expected >> shm::kFunctionIdBits) == address) {
      // Another thread registered the same function first; our id stays unused.
      if (has_room) header->counters.function_ids_wasted.fetch_add(1, std::memory_order_relaxed);
      uint64_t winner = expected & kIdFieldMask;
      return winner == kUntrackedIdField ? shm::kNoFunction : static_cast<uint32_t>(winner - 1);
    }
  }
  // Unreachable while the index holds at most half as many functions as positions.
  header->counters.function_table_full.fetch_add(1, std::memory_order_relaxed);
  return shm::kNoFunction;
}

}  // namespace limpwatch::runtime
