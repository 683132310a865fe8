#include "patching/call_site_table.h"

#include <sys/mman.h>

#include <algorithm>

namespace limpwatch::runtime::patching {

constinit std::atomic<bool> g_learning_call_sites{false};

namespace {

constexpr uint32_t kCapacityBits = 16;
constexpr uint32_t kCapacity = 1u << kCapacityBits;
constexpr uint32_t kMaxProbes = 64;
// The function word's top bits; user-space addresses stay below 2^47.
constexpr uint64_t kExitBit = uint64_t{1} << 63;
constexpr uint64_t kRewrittenBit = uint64_t{1} << 62;
constexpr uint64_t kTailBit = uint64_t{1} << 61;
constexpr uint64_t kAddressMask = kTailBit - 1;

LW_NO_INSTRUMENT uint64_t KindBits(HookKind kind) {
  switch (kind) {
    case HookKind::kEnter:
      return 0;
    case HookKind::kExit:
      return kExitBit;
    case HookKind::kTailExit:
      return kExitBit | kTailBit;
  }
  return 0;
}

LW_NO_INSTRUMENT HookKind KindOf(uint64_t word) {
  if ((word & kTailBit) != 0) return HookKind::kTailExit;
  return (word & kExitBit) != 0 ? HookKind::kExit : HookKind::kEnter;
}

struct Entry {
  std::atomic<uint64_t> site;      // 0: free
  std::atomic<uint64_t> function;  // 0 until published; then address | kind | rewritten
};

struct Table {
  Entry entries[kCapacity];
  std::atomic<uint32_t> order[kCapacity];  // entry index + 1, in order of arrival; 0: not yet written
  std::atomic<uint32_t> published;
  std::atomic<uint64_t> not_learned;
};

constinit Table* g_table = nullptr;

LW_NO_INSTRUMENT uint32_t Home(uint64_t site) {
  return static_cast<uint32_t>((site * 0x9E3779B97F4A7C15ull) >> (64 - kCapacityBits));
}

LW_NO_INSTRUMENT Entry* Find(uint64_t site) {
  Table* table = g_table;
  if (table == nullptr) return nullptr;
  uint32_t index = Home(site);
  for (uint32_t probe = 0; probe < kMaxProbes; ++probe, index = (index + 1) & (kCapacity - 1)) {
    uint64_t key = table->entries[index].site.load(std::memory_order_acquire);
    if (key == site) return &table->entries[index];
    if (key == 0) return nullptr;
  }
  return nullptr;
}

// Claims an entry for `site` and stores `word`; returns its index, or
// kCapacity when the site was there already or the table is full.
LW_NO_INSTRUMENT uint32_t Insert(Table* table, uint64_t site, uint64_t word) {
  uint32_t index = Home(site);
  for (uint32_t probe = 0; probe < kMaxProbes; ++probe, index = (index + 1) & (kCapacity - 1)) {
    Entry& entry = table->entries[index];
    uint64_t key = entry.site.load(std::memory_order_acquire);
    if (key == site) return kCapacity;
    if (key != 0) continue;
    if (!entry.site.compare_exchange_strong(key, site, std::memory_order_acq_rel)) {
      if (key == site) return kCapacity;
      continue;
    }
    entry.function.store(word, std::memory_order_release);
    return index;
  }
  table->not_learned.fetch_add(1, std::memory_order_relaxed);
  return kCapacity;
}

}  // namespace

bool StartLearningCallSites() {
  if (g_table != nullptr) return true;
  // Untouched pages cost nothing: most programs learn a few thousand sites.
  void* memory = mmap(nullptr, sizeof(Table), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) return false;
  g_table = static_cast<Table*>(memory);
  g_learning_call_sites.store(true, std::memory_order_release);
  return true;
}

LW_COLD void LearnCallSite(uint64_t return_address, uint64_t function, HookKind kind) {
  Table* table = g_table;
  if (table == nullptr || return_address < 5 || function == 0) return;
  uint32_t index = Insert(table, return_address - 5, (function & kAddressMask) | KindBits(kind));
  if (index == kCapacity) return;
  uint32_t position = table->published.fetch_add(1, std::memory_order_acq_rel);
  if (position < kCapacity) table->order[position].store(index + 1, std::memory_order_release);
}

bool AddRewrittenCallSite(uint64_t site, uint64_t function, HookKind kind) {
  Table* table = g_table;
  if (table == nullptr) return false;
  return Insert(table, site, (function & kAddressMask) | KindBits(kind) | kRewrittenBit) != kCapacity ||
         IsRewrittenCallSite(site, &kind);
}

void TakeNewCallSites(uint64_t* cursor, std::vector<LearnedCallSite>* sites) {
  Table* table = g_table;
  if (table == nullptr) return;
  uint32_t published = std::min(table->published.load(std::memory_order_acquire), kCapacity);
  while (*cursor < published) {
    uint32_t slot = table->order[*cursor].load(std::memory_order_acquire);
    if (slot == 0) break;  // its writer is between publishing and ordering: next pass
    const Entry& entry = table->entries[slot - 1];
    uint64_t function = entry.function.load(std::memory_order_acquire);
    sites->push_back(LearnedCallSite{entry.site.load(std::memory_order_relaxed), function & kAddressMask,
                                     KindOf(function)});
    ++*cursor;
  }
}

void MarkCallSiteRewritten(uint64_t site) {
  if (Entry* entry = Find(site)) entry->function.fetch_or(kRewrittenBit, std::memory_order_acq_rel);
}

LW_NO_INSTRUMENT bool IsRewrittenCallSite(uint64_t site, HookKind* kind) {
  Entry* entry = Find(site);
  if (entry == nullptr) return false;
  uint64_t word = entry->function.load(std::memory_order_acquire);
  *kind = KindOf(word);
  return (word & kRewrittenBit) != 0;
}

uint64_t CallSitesNotLearned() {
  return g_table == nullptr ? 0 : g_table->not_learned.load(std::memory_order_relaxed);
}

}  // namespace limpwatch::runtime::patching
