#include "patching/patcher.h"

#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "patching/code_writer.h"
#include "patching/refusal_log.h"
#include "patching/sled_discovery.h"
#include "patching/sled_trap.h"
#include "patching/trampolines.h"
#include "process.h"
#include "service_tasks.h"
#include "selection.h"

namespace limpwatch::runtime::patching {
namespace {

struct Sled {
  uint64_t address;
  uint64_t stub;  // 0: no stub within reach, never patched
  bool patched;
};

struct Patcher {
  std::mutex lock;
  std::vector<Sled> sleds;
  bool active = false;   // sleds prepared: patching may go on
  bool pending = false;  // the last pass was refused for a reason that may pass: try again
  RefusalLog refusals{"LIMPWATCH_PATCH: the selection changed but sleds cannot be rewritten while the program runs: "};
};

constexpr uint32_t kRetryPeriodMs = 500;

constinit std::atomic<Patcher*> g_patcher{nullptr};

bool Verbose() { return !CurrentConfig().quiet && std::getenv("LIMPWATCH_VERBOSE") != nullptr; }

void LockForFork() { g_patcher.load(std::memory_order_acquire)->lock.lock(); }
void UnlockAfterFork() { g_patcher.load(std::memory_order_acquire)->lock.unlock(); }

// The writes that bring every sled in line with the selection.
std::vector<SledWrite> ChangedSleds(Patcher& patcher, std::vector<size_t>* changed) {
  const Selection* selection = ActiveSelection();
  std::vector<SledWrite> writes;
  for (size_t index = 0; index < patcher.sleds.size(); ++index) {
    const Sled& sled = patcher.sleds[index];
    bool wanted = sled.stub != 0 && SelectsAddress(selection, sled.address);
    if (wanted == sled.patched) continue;
    writes.push_back(SledWrite{sled.address, wanted ? JumpBytes(sled.address, sled.stub) : kPreparedSled});
    changed->push_back(index);
  }
  return writes;
}

void ApplyLocked(Patcher& patcher) {
  patcher.pending = false;
  std::vector<size_t> changed;
  std::vector<SledWrite> writes = ChangedSleds(patcher, &changed);
  if (writes.empty()) return;
  bool alone = !OtherProgramThreadsRun();
  if (!alone) {
    std::string refusal;
    if (!CanSerializeAllCores()) {
      refusal = "membarrier SYNC_CORE is not available; the patches stay as they are";
    } else if (!SledTrapHandlerInPlace()) {
      refusal = "the program replaced limpwatch's SIGTRAP handler; the patches stay as they are";
    } else if (ProgramThreadBlocksSigtrap()) {
      refusal = "a thread of the program blocks SIGTRAP; retrying until none does";
      patcher.pending = true;
    }
    if (!refusal.empty()) {
      patcher.refusals.Refused(refusal, patcher.pending);
      return;
    }
  }
  patcher.refusals.Cleared();
  std::string error;
  if (!WriteSleds(writes, alone, &error)) {
    LogLine("LIMPWATCH_PATCH: " + error + "; patching is disabled");
    patcher.active = false;
    return;
  }
  for (size_t index : changed) patcher.sleds[index].patched = !patcher.sleds[index].patched;
}

void RetryRefusedPass(const shm::SegmentView&, uint64_t) {
  Patcher* patcher = g_patcher.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> guard(patcher->lock);
  if (patcher->active && patcher->pending) ApplyLocked(*patcher);
}

// Turns every sled into one 5-byte NOP and gives each its own stub. Alone only.
bool PrepareSleds(Patcher& patcher, const std::vector<PatchableObject>& objects) {
  std::vector<SledWrite> writes;
  uint64_t unreachable = 0;
  for (const PatchableObject& object : objects) {
    std::vector<uint64_t> stubs = EntryStubsFor(object.sleds, object.code_low, object.code_high);
    if (stubs.empty()) unreachable += object.sleds.size();
    for (size_t index = 0; index < object.sleds.size(); ++index) {
      uint64_t address = object.sleds[index];
      patcher.sleds.push_back(Sled{address, stubs.empty() ? 0 : stubs[index], false});
      writes.push_back(SledWrite{address, kPreparedSled});
    }
  }
  std::string error;
  if (!WriteSleds(writes, true, &error)) {
    LogLine("LIMPWATCH_PATCH: " + error + "; nothing is patched");
    return false;
  }
  if (unreachable > 0) {
    LogLine("LIMPWATCH_PATCH: no executable page could be placed within reach of " + std::to_string(unreachable) +
            " sleds; they stay NOPs");
  }
  return true;
}

void StartPatching() {
  if (!CurrentConfig().patch_functions) return;
  std::vector<PatchableObject> objects = DiscoverPatchableObjects();
  size_t sleds = 0;
  uint64_t elsewhere = 0;
  for (const PatchableObject& object : objects) {
    sleds += object.sleds.size();
    elsewhere += object.sleds_elsewhere;
  }
  if (elsewhere > 0) {
    LogLine("LIMPWATCH_PATCH: " + std::to_string(elsewhere) +
            " patchable entries are not five NOPs at a function's first byte (built with "
            "-fpatchable-function-entry=N,M or -fcf-protection?) and are left alone");
  }
  if (sleds == 0) {
    if (Verbose()) LogLine("LIMPWATCH_PATCH: no function was built with -fpatchable-function-entry=5");
    return;
  }
  if (OtherProgramThreadsRun()) {
    LogLine("LIMPWATCH_PATCH: the program already runs other threads when limpwatch starts; its " +
            std::to_string(sleds) + " sleds can only be prepared while it runs alone, so nothing is patched");
    return;
  }
  auto* patcher = new Patcher();
  if (!PrepareSleds(*patcher, objects)) {
    delete patcher;
    return;
  }
  std::vector<uint64_t> addresses;
  for (const Sled& sled : patcher->sleds) addresses.push_back(sled.address);
  if (!InstallSledTrapHandler(std::move(addresses))) {
    LogLine("LIMPWATCH_PATCH: cannot install the SIGTRAP handler; sleds are only patched at start-up");
  }
  CanSerializeAllCores();  // registers now, so that the first re-patch does not wait
  patcher->active = true;
  std::lock_guard<std::mutex> guard(patcher->lock);
  // Published before the first pass: a selection published meanwhile waits
  // for the lock and is applied right after.
  g_patcher.store(patcher, std::memory_order_release);
  pthread_atfork(LockForFork, UnlockAfterFork, UnlockAfterFork);
  RegisterServiceTask("patching", RetryRefusedPass, kRetryPeriodMs);
  ApplyLocked(*patcher);
  if (Verbose()) {
    size_t patched = 0;
    for (const Sled& sled : patcher->sleds) patched += sled.patched;
    LogLine("LIMPWATCH_PATCH: " + std::to_string(patched) + " of " + std::to_string(sleds) +
            " functions patched in " + std::to_string(objects.size()) + " objects");
  }
}

// After the selection's own start-up (102), before the program's constructors.
[[gnu::constructor(103)]] void StartPatchingAtLoad() {
  if (!EnsureProcessInitialized()) return;
  OwnWorkSection own_work;
  StartPatching();
}

}  // namespace

void ApplySelectionToPatches() {
  Patcher* patcher = g_patcher.load(std::memory_order_acquire);
  if (patcher == nullptr) return;
  std::lock_guard<std::mutex> guard(patcher->lock);
  if (patcher->active) ApplyLocked(*patcher);
}

}  // namespace limpwatch::runtime::patching
