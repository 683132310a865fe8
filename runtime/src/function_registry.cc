#include "function_registry.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "flow_recorder.h"
#include "limpwatch/shm/name_hash.h"
#include "selection.h"

namespace limpwatch::runtime {
namespace {

uint64_t Pack(uint64_t address, uint64_t id_field) { return (address << shm::kFunctionIdBits) | id_field; }

uint64_t SelectedIdField(uint32_t id, bool selected) { return selected ? uint64_t{id} + 1 : kUnselectedIdField; }

bool ScopeSelected(const Selection* selection, const char* name) {
  return selection == nullptr || selection->SelectsScopeName(name);
}

// Takes the next id, or reports that there is none (the table is full).
bool AllocateId(uint32_t* id) {
  shm::SegmentHeader* header = g_process.header;
  uint32_t limit = std::min(g_process.max_functions, kMaxUsableFunctionId + 1);
  if (header->next_function_id.load(std::memory_order_relaxed) >= limit) return false;
  *id = header->next_function_id.fetch_add(1, std::memory_order_relaxed);
  return *id < limit;
}

// A registration decided under `used` may race with a re-selection that
// published a newer selection and walked the table before our symbol was
// visible. Our symbol state store and the re-read of the active selection are
// both sequentially consistent, so one of the two sees the other: re-decide
// until the selection we decided under is the active one.
template <typename Decide>
bool SettleSelection(std::atomic<uint64_t>& entry, uint64_t address, uint32_t id, const Selection* used,
                     bool selected, Decide decide) {
  for (const Selection* current = ActiveSelection(); current != used; current = ActiveSelection()) {
    used = current;
    selected = decide(current);
    entry.store(Pack(address, SelectedIdField(id, selected)), std::memory_order_seq_cst);
  }
  return selected;
}

// The position of `address` in the index, or -1 when it is not there.
int64_t FindPosition(uint64_t address) {
  uint32_t mask = g_process.function_index_mask;
  uint32_t position = IndexPosition(address, mask);
  for (uint32_t probes = 0; probes <= mask; ++probes, position = (position + 1) & mask) {
    uint64_t packed = g_process.function_index[position].packed.load(std::memory_order_acquire);
    if ((packed >> shm::kFunctionIdBits) == address) return position;
    if (packed == 0) return -1;
  }
  return -1;
}

bool EntryUnselected(const std::atomic<uint64_t>& entry) {
  return (entry.load(std::memory_order_seq_cst) & kIdFieldMask) == kUnselectedIdField;
}

// A new function marked `request` by the active selection becomes a flow
// root. A re-selection racing with this registration re-marks every id
// (ApplySelectionToIndex) after publishing, so the last word is its.
template <typename Marks>
void NoteRequestRoot(uint32_t id, const Selection* selection, Marks marks) {
  if (selection == nullptr || !selection->has_request_rules()) return;
  bool root = marks(selection);
  MarkFlowRoot(id, root);
  if (root) UseMarkedFlowRoots(true);
}

}  // namespace

void PrepareUnselectedFilter(uint32_t capacity, bool enabled) {
  static void* mapped = nullptr;
  static size_t mapped_bytes = 0;
  size_t bytes = size_t{capacity} * sizeof(std::atomic<uint64_t>);
  g_process.unselected_filter_enabled = false;
  if (mapped != nullptr && mapped_bytes == bytes) {
    // A forked child: its new index starts empty, so must the filter. It has
    // one thread, so nothing reads the slots while they are zeroed.
    madvise(mapped, bytes, MADV_DONTNEED);
  } else {
    // Untouched pages cost nothing: only the home positions of unselected
    // functions are ever written.
    void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (memory == MAP_FAILED) return;
    mapped = memory;
    mapped_bytes = bytes;
  }
  g_process.unselected_filter = static_cast<std::atomic<uint64_t>*>(mapped);
  g_process.unselected_filter_mask = capacity - 1;
  g_process.unselected_filter_enabled = enabled;
}

void SyncUnselectedFilter(uint64_t address, const std::atomic<uint64_t>& entry) {
  if (!g_process.unselected_filter_enabled) return;
  std::atomic<uint64_t>& slot = g_process.unselected_filter[IndexPosition(address, g_process.unselected_filter_mask)];
  for (;;) {
    bool unselected = EntryUnselected(entry);
    // Fill only an empty slot and clear only our own address: a colliding
    // function keeps the slot it has and ours takes the full path.
    uint64_t expected = unselected ? 0 : address;
    slot.compare_exchange_strong(expected, unselected ? address : 0, std::memory_order_seq_cst);
    if (EntryUnselected(entry) == unselected) return;
  }
}

LW_COLD uint32_t RegisterFunction(uint64_t address, uint32_t position) {
  shm::SegmentHeader* header = g_process.header;
  if (address == 0 || address > shm::kMaxCodeAddress) {
    header->counters.function_table_full.fetch_add(1, std::memory_order_relaxed);
    return shm::kNoFunction;
  }
  uint32_t id = 0;
  bool has_room = AllocateId(&id);
  SelectionReadGuard reading;
  const Selection* selection = ActiveSelection();
  bool selected = SelectsAddress(selection, address);
  uint64_t packed = Pack(address, has_room ? SelectedIdField(id, selected) : kUntrackedIdField);
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
      symbol.state.store(static_cast<uint32_t>(shm::SymbolState::kRegistered), std::memory_order_seq_cst);
      header->counters.functions_registered.fetch_add(1, std::memory_order_relaxed);
      selected = SettleSelection(entry, address, id, selection, selected,
                                 [address](const Selection* current) { return SelectsAddress(current, address); });
      SyncUnselectedFilter(address, entry);
      if (!selected) header->counters.functions_unselected.fetch_add(1, std::memory_order_relaxed);
      NoteRequestRoot(id, ActiveSelection(), [address](const Selection* current) {
        return current->MarksRequest(address);
      });
      return selected ? id : kUnselectedFunction;
    }
    if ((expected >> shm::kFunctionIdBits) == address) {
      // Another thread registered the same function first; our id stays unused.
      if (has_room) header->counters.function_ids_wasted.fetch_add(1, std::memory_order_relaxed);
      return DecodeIdField(expected & kIdFieldMask);
    }
  }
  // Unreachable while the index holds at most half as many functions as positions.
  header->counters.function_table_full.fetch_add(1, std::memory_order_relaxed);
  return shm::kNoFunction;
}

LW_COLD uint32_t RegisterNamedScope(uint64_t site_address, const char* name) {
  shm::SegmentHeader* header = g_process.header;
  if (site_address == 0 || site_address > shm::kMaxCodeAddress) {
    header->counters.function_table_full.fetch_add(1, std::memory_order_relaxed);
    return shm::kNoFunction;
  }
  // Claim the entry first as unselected (nothing is pushed for it meanwhile),
  // so that only the winner of a race allocates an id and writes a symbol.
  uint32_t mask = g_process.function_index_mask;
  uint32_t position = IndexPosition(site_address, mask);
  std::atomic<uint64_t>* entry = nullptr;
  for (uint32_t probes = 0; probes <= mask; ++probes, position = (position + 1) & mask) {
    auto& candidate = g_process.function_index[position].packed;
    uint64_t expected = 0;
    if (candidate.compare_exchange_strong(expected, Pack(site_address, kUnselectedIdField),
                                          std::memory_order_acq_rel)) {
      entry = &candidate;
      break;
    }
    if ((expected >> shm::kFunctionIdBits) == site_address) return DecodeIdField(expected & kIdFieldMask);
  }
  uint32_t id = 0;
  if (entry == nullptr || !AllocateId(&id)) {
    if (entry != nullptr) entry->store(Pack(site_address, kUntrackedIdField), std::memory_order_release);
    header->counters.function_table_full.fetch_add(1, std::memory_order_relaxed);
    return shm::kNoFunction;
  }
  shm::SymbolEntry& symbol = g_process.symbols[id];
  size_t length = strnlen(name, shm::kSymbolNameSize - 1);
  std::memcpy(symbol.name, name, length);
  symbol.name[length] = '\0';
  symbol.name_length = static_cast<uint32_t>(length);
  symbol.name_hash = shm::FunctionNameHash(std::string_view(name));
  symbol.address.store(site_address, std::memory_order_relaxed);
  symbol.state.store(static_cast<uint32_t>(shm::SymbolState::kResolved), std::memory_order_seq_cst);
  header->counters.functions_registered.fetch_add(1, std::memory_order_relaxed);
  SelectionReadGuard reading;
  const Selection* selection = ActiveSelection();
  bool selected = ScopeSelected(selection, name);
  entry->store(Pack(site_address, SelectedIdField(id, selected)), std::memory_order_seq_cst);
  selected = SettleSelection(*entry, site_address, id, selection, selected,
                             [name](const Selection* current) { return ScopeSelected(current, name); });
  SyncUnselectedFilter(site_address, *entry);
  if (!selected) header->counters.functions_unselected.fetch_add(1, std::memory_order_relaxed);
  NoteRequestRoot(id, ActiveSelection(), [name](const Selection* current) {
    return current->MarksRequestScopeName(name);
  });
  return selected ? id : kUnselectedFunction;
}

uint64_t ApplySelectionToIndex() {
  const Selection* selection = ActiveSelection();
  shm::SegmentHeader* header = g_process.header;
  uint32_t functions = std::min(header->next_function_id.load(std::memory_order_acquire), g_process.max_functions);
  uint64_t unselected = 0;
  UseMarkedFlowRoots(selection != nullptr && selection->has_request_rules());
  for (uint32_t id = 0; id < functions; ++id) {
    shm::SymbolEntry& symbol = g_process.symbols[id];
    uint32_t state = symbol.state.load(std::memory_order_seq_cst);
    if (state == static_cast<uint32_t>(shm::SymbolState::kEmpty)) continue;  // its registration settles itself
    uint64_t address = symbol.address.load(std::memory_order_relaxed);
    int64_t position = FindPosition(address);
    if (position < 0) continue;
    // A named scope's handle lies in data, outside every object's code.
    bool scope = selection != nullptr && !selection->CoversCode(address) &&
                 state == static_cast<uint32_t>(shm::SymbolState::kResolved);
    bool selected = scope ? selection->SelectsScopeName(symbol.name) : SelectsAddress(selection, address);
    if (!selected) ++unselected;
    if (selection != nullptr && selection->has_request_rules()) {
      MarkFlowRoot(id, scope ? selection->MarksRequestScopeName(symbol.name) : selection->MarksRequest(address));
    }
    std::atomic<uint64_t>& entry = g_process.function_index[position].packed;
    entry.store(Pack(address, SelectedIdField(id, selected)), std::memory_order_seq_cst);
    SyncUnselectedFilter(address, entry);
  }
  return unselected;
}

}  // namespace limpwatch::runtime
