#include "patching/call_site_patcher.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "patching/call_site_table.h"
#include "patching/code_writer.h"
#include "patching/program_code.h"
#include "patching/refusal_log.h"
#include "patching/sled_bytes.h"
#include "patching/sled_trap.h"
#include "process.h"
#include "selection.h"
#include "selection_symbols.h"
#include "service_tasks.h"

extern "C" {
void __cyg_profile_func_enter(void* function, void* call_site);
void __cyg_profile_func_exit(void* function, void* call_site);
}

namespace limpwatch::runtime::patching {
namespace {

constexpr uint32_t kPassPeriodMs = 100;
constexpr uint32_t kRetryEveryPasses = 5;

struct CallSite {
  uint64_t function;
  SledBytes original;  // the compiler's `call rel32` (or `jmp rel32`, kTailExit)
  SledBytes off;       // what an unselected function has there: a NOP (or `ret`)
  bool nopped;
};

constexpr uint8_t kJumpOpcode = 0xE9;
constexpr uint8_t kReturnOpcode = 0xC3;

// An unselected tail exit returns at once; the four bytes after the `ret`
// are never executed and keep the displacement, so that a thread can only
// ever decode the old or the new first byte.
SledBytes ReturnBytes(const SledBytes& jump) {
  SledBytes bytes = jump;
  bytes[0] = kReturnOpcode;
  return bytes;
}

// The start and size of every function symbol of one object, at run time.
using FunctionExtents = std::map<uint64_t, uint64_t>;

struct CallSitePatcher {
  std::mutex lock;
  uint64_t cursor = 0;                            // into the learned sites
  std::unordered_map<uint64_t, CallSite> sites;   // verified, by address
  std::unordered_set<uint64_t> scanned_functions;  // searched for tail exits
  std::map<std::string, FunctionExtents> extents;  // by object path, read when first needed
  uint64_t rejected = 0;
  bool active = true;
  bool pending = false;
  uint32_t passes_to_skip = 0;  // after a refusal: retry every kRetryEveryPasses passes, not every one
  RefusalLog refusals{"LIMPWATCH_PATCH: hook calls of unselected functions cannot be rewritten while the program runs: "};
};

constinit std::atomic<CallSitePatcher*> g_call_site_patcher{nullptr};

bool Verbose() { return !CurrentConfig().quiet && std::getenv("LIMPWATCH_VERBOSE") != nullptr; }

// Every loaded object but limpwatch's.
std::vector<LoadedObject> ProgramObjects() {
  std::vector<LoadedObject> objects = ListLoadedObjects();
  std::erase_if(objects, IsLimpwatchObject);
  return objects;
}

uint64_t HookAddress(HookKind kind) {
  return reinterpret_cast<uint64_t>(kind == HookKind::kEnter ? &__cyg_profile_func_enter : &__cyg_profile_func_exit);
}

template <typename T>
T Load(uint64_t address) {
  T value;
  std::memcpy(&value, reinterpret_cast<const void*>(address), sizeof value);
  return value;
}

// Whether a jump to `target` ends in `hook`: it is the hook, or a PLT entry
// ([endbr64] [bnd] jmp *slot(%rip)) whose slot holds it.
bool ReachesHook(uint64_t target, uint64_t hook, const AddressRanges& code, const AddressRanges& readable) {
  if (target == hook) return true;
  constexpr uint64_t kLongestEntry = 4 + 1 + 6;
  if (!RangesHold(code, target, kLongestEntry)) return false;
  uint64_t at = target;
  if (Load<uint32_t>(at) == 0xFA1E0FF3u) at += 4;  // endbr64
  if (Load<uint8_t>(at) == 0xF2) at += 1;          // bnd
  if (Load<uint8_t>(at) != 0xFF || Load<uint8_t>(at + 1) != 0x25) return false;
  uint64_t slot = at + 6 + static_cast<int64_t>(Load<int32_t>(at + 2));
  return RangesHold(readable, slot, sizeof(uint64_t)) && Load<uint64_t>(slot) == hook;
}

bool Verify(const LearnedCallSite& learned, const AddressRanges& code, const AddressRanges& readable, SledBytes* original) {
  if (!RangesHold(code, learned.site, kSledSize)) return false;
  std::memcpy(original->data(), reinterpret_cast<const void*>(learned.site), kSledSize);
  if ((*original)[0] != kCallOpcode) return false;
  int32_t displacement;
  std::memcpy(&displacement, original->data() + 1, sizeof displacement);
  uint64_t target = learned.site + kSledSize + static_cast<int64_t>(displacement);
  return ReachesHook(target, HookAddress(learned.kind), code, readable);
}

// The object whose code holds `address`, or null.
const LoadedObject* ObjectHolding(const std::vector<LoadedObject>& objects, uint64_t address) {
  for (const LoadedObject& object : objects) {
    if (RangesHold(object.code_ranges, address, 1)) return &object;
  }
  return nullptr;
}

// An exit hook whose return address is not after a call to it was reached
// by a jump: the function ends in `jmp hook`. Its body (from the symbol
// table) is searched for such jumps; each is adopted as a kTailExit site.
void AdoptTailExits(CallSitePatcher& patcher, uint64_t function, const std::vector<LoadedObject>& objects,
                    const AddressRanges& code, const AddressRanges& readable, std::vector<uint64_t>* adopted) {
  if (!patcher.scanned_functions.insert(function).second) return;
  const LoadedObject* object = ObjectHolding(objects, function);
  if (object == nullptr) return;
  auto [found, inserted] = patcher.extents.try_emplace(object->path);
  if (inserted) {
    uint64_t bias = object->bias;
    ForEachFunctionSymbol(object->path, [&](const FunctionSymbol& symbol) {
      if (symbol.size > 0) found->second[bias + symbol.file_address] = symbol.size;
    });
  }
  auto extent = found->second.find(function);
  if (extent == found->second.end() || !RangesHold(code, function, extent->second)) return;
  uint64_t hook = HookAddress(HookKind::kExit);
  uint64_t end = function + extent->second;
  for (uint64_t at = function; at + kSledSize <= end; ++at) {
    if (Load<uint8_t>(at) != kJumpOpcode) continue;
    uint64_t target = at + kSledSize + static_cast<int64_t>(Load<int32_t>(at + 1));
    if (!ReachesHook(target, hook, code, readable) || patcher.sites.count(at) != 0) continue;
    if (!AddRewrittenCallSite(at, function, HookKind::kTailExit)) return;
    SledBytes original{};
    std::memcpy(original.data(), reinterpret_cast<const void*>(at), kSledSize);
    patcher.sites.emplace(at, CallSite{function, original, ReturnBytes(original), false});
    adopted->push_back(at);
  }
}

// Verifies the sites learned since the last pass; returns the ones adopted.
std::vector<uint64_t> AdoptNewSites(CallSitePatcher& patcher) {
  std::vector<LearnedCallSite> learned;
  std::vector<uint64_t> adopted;
  TakeNewCallSites(&patcher.cursor, &learned);
  if (learned.empty()) return adopted;
  std::vector<LoadedObject> objects = ProgramObjects();
  AddressRanges code;
  AddressRanges readable;
  for (const LoadedObject& object : objects) {
    code.insert(code.end(), object.code_ranges.begin(), object.code_ranges.end());
    readable.insert(readable.end(), object.loaded_ranges.begin(), object.loaded_ranges.end());
  }
  for (const LearnedCallSite& site : learned) {
    SledBytes original{};
    if (patcher.sites.count(site.site) != 0) continue;
    if (Verify(site, code, readable, &original)) {
      patcher.sites.emplace(site.site, CallSite{site.function, original, kPreparedSled, false});
      MarkCallSiteRewritten(site.site);
      adopted.push_back(site.site);
    } else if (site.kind == HookKind::kExit) {
      AdoptTailExits(patcher, site.function, objects, code, readable, &adopted);
    } else {
      ++patcher.rejected;
    }
  }
  return adopted;
}

// Drops the sites whose object was unloaded (dlclose) since they were
// learned, or whose bytes are no longer what limpwatch left there (another
// object mapped at the same place): writing there would corrupt it.
void ForgetUnloadedSites(CallSitePatcher& patcher) {
  AddressRanges code;
  for (const LoadedObject& object : ProgramObjects()) {
    code.insert(code.end(), object.code_ranges.begin(), object.code_ranges.end());
  }
  std::erase_if(patcher.sites, [&](const auto& entry) {
    const auto& [address, site] = entry;
    if (!RangesHold(code, address, kSledSize)) return true;
    const SledBytes& expected = site.nopped ? site.off : site.original;
    return std::memcmp(reinterpret_cast<const void*>(address), expected.data(), kSledSize) != 0;
  });
}

// Whether the int3 protocol may run now; logs why not, once per reason.
bool MayRewriteWhileOthersRun(CallSitePatcher& patcher) {
  std::string refusal;
  if (!CanSerializeAllCores()) {
    refusal = "membarrier SYNC_CORE is not available; hook calls stay as compiled";
    patcher.active = false;
  } else if (!SledTrapHandlerInPlace()) {
    refusal = "the program replaced limpwatch's SIGTRAP handler; hook calls stay as they are";
    patcher.active = false;
  } else if (ProgramThreadBlocksSigtrap()) {
    refusal = "a thread of the program blocks SIGTRAP; retrying until none does";
    patcher.pending = true;
  }
  if (refusal.empty()) {
    patcher.refusals.Cleared();
    return true;
  }
  patcher.refusals.Refused(refusal, patcher.active);
  return false;
}

// `every_site`: the selection changed (or a pass was refused), so every
// known site is decided again; otherwise only the newly learned ones are,
// which keeps the periodic pass cheap in a program with thousands of sites.
void PassLocked(CallSitePatcher& patcher, bool every_site) {
  if (!patcher.active) return;
  every_site = every_site || patcher.pending;
  patcher.pending = false;
  std::vector<uint64_t> adopted = AdoptNewSites(patcher);
  const Selection* selection = ActiveSelection();
  std::vector<SledWrite> writes;
  std::vector<CallSite*> changed;
  auto decide = [&](uint64_t address, CallSite& site) {
    bool wanted_nop = !SelectsAddress(selection, site.function);
    if (wanted_nop == site.nopped) return;
    writes.push_back(SledWrite{address, wanted_nop ? site.off : site.original});
    changed.push_back(&site);
  };
  if (every_site) {
    ForgetUnloadedSites(patcher);
    for (auto& [address, site] : patcher.sites) decide(address, site);
  } else {
    for (uint64_t address : adopted) decide(address, patcher.sites.at(address));
  }
  if (writes.empty()) return;
  bool alone = !OtherProgramThreadsRun();
  if (!alone && !MayRewriteWhileOthersRun(patcher)) {
    patcher.pending = patcher.pending || patcher.active;
    patcher.passes_to_skip = kRetryEveryPasses - 1;
    return;
  }
  std::string error;
  if (!WriteSleds(writes, alone, &error)) {
    LogLine("LIMPWATCH_PATCH: " + error + "; hook calls are no longer rewritten");
    patcher.active = false;
    return;
  }
  for (CallSite* site : changed) site->nopped = !site->nopped;
  if (Verbose()) {
    size_t nopped = std::count_if(patcher.sites.begin(), patcher.sites.end(),
                                  [](const auto& entry) { return entry.second.nopped; });
    LogLine("LIMPWATCH_PATCH: " + std::to_string(nopped) + " of " + std::to_string(patcher.sites.size()) +
            " known hook calls are NOPs (" + std::to_string(patcher.rejected) + " not rewritable, " +
            std::to_string(CallSitesNotLearned()) + " not learned)");
  }
}

void PeriodicPass(const shm::SegmentView&, uint64_t) {
  CallSitePatcher* patcher = g_call_site_patcher.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> guard(patcher->lock);
  if (patcher->passes_to_skip > 0) {
    --patcher->passes_to_skip;
    return;
  }
  PassLocked(*patcher, false);
}

void LockForFork() { g_call_site_patcher.load(std::memory_order_acquire)->lock.lock(); }
void UnlockAfterFork() { g_call_site_patcher.load(std::memory_order_acquire)->lock.unlock(); }

void StartCallSitePatching() {
  if (!CurrentConfig().patch_functions) return;
  if (!EnsureSledTrapHandler()) {
    LogLine("LIMPWATCH_PATCH: cannot install the SIGTRAP handler; hook calls are only rewritten while the program "
            "runs alone");
  }
  CanSerializeAllCores();  // registers now, so that the first pass does not wait
  auto* patcher = new CallSitePatcher();
  g_call_site_patcher.store(patcher, std::memory_order_release);
  pthread_atfork(LockForFork, UnlockAfterFork, UnlockAfterFork);
  if (!RegisterServiceTask("call sites", PeriodicPass, kPassPeriodMs) || !StartLearningCallSites()) {
    LogLine("LIMPWATCH_PATCH: cannot start learning hook call sites; they stay as compiled");
  }
}

// After the entry sleds' start-up (103): their SIGTRAP handler, when they
// have sleds, is the one installed.
[[gnu::constructor(104)]] void StartCallSitePatchingAtLoad() {
  if (!EnsureProcessInitialized()) return;
  OwnWorkSection own_work;
  StartCallSitePatching();
}

}  // namespace

void ApplySelectionToCallSites() {
  CallSitePatcher* patcher = g_call_site_patcher.load(std::memory_order_acquire);
  if (patcher == nullptr) return;
  std::lock_guard<std::mutex> guard(patcher->lock);
  PassLocked(*patcher, true);
}

}  // namespace limpwatch::runtime::patching
