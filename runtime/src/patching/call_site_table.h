// The call sites of the compiler's hooks in unselected functions, learned
// from the hooks themselves as they run (LIMPWATCH_PATCH=1).
//
// A program built with -finstrument-functions calls __cyg_profile_func_enter
// and __cyg_profile_func_exit from every function, selected or not. The
// function's address is passed in a register that the compiler may have
// loaded anywhere earlier, so reading the code cannot reliably tell which
// function a call site belongs to; the hook can: it receives the function and
// returns to just after the call. So an unselected function's hook, instead
// of only returning, records (call site, function) here once per site, and
// the service thread turns the site into a 5-byte NOP (call_site_patcher.h).
// After that the unselected function costs its argument set-up and a NOP.
//
// The table is open addressing over a fixed array, written with one
// compare-and-swap per new site and otherwise only read, so it is safe in a
// signal handler and never blocks the traced program. A site is published in
// order of arrival through a second array, which the service thread walks
// from where it stopped. When the table is full, further sites are counted
// and keep calling the hook.
#ifndef LIMPWATCH_RUNTIME_SRC_PATCHING_CALL_SITE_TABLE_H_
#define LIMPWATCH_RUNTIME_SRC_PATCHING_CALL_SITE_TABLE_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "thread_state.h"

namespace limpwatch::runtime::patching {

// kTailExit: `jmp` to the exit hook as a function's last instruction (GCC
// ends a void function so at -O2); rewritten into `ret`, not a NOP. It is
// not learned from the hook (which returns to the function's caller) but
// found in the function's code.
enum class HookKind : uint8_t { kEnter = 0, kExit = 1, kTailExit = 2 };

// Set once the table exists; read by the unselected hooks.
extern constinit std::atomic<bool> g_learning_call_sites;

// Allocates the table and turns learning on. Once per process.
bool StartLearningCallSites();

// Records that the hook of `kind` for `function` returns to
// `return_address`. Signal-safe, lock-free; a site already known costs one
// hash and a load or two.
LW_COLD void LearnCallSite(uint64_t return_address, uint64_t function, HookKind kind);

struct LearnedCallSite {
  uint64_t site;  // the call instruction's first byte
  uint64_t function;
  HookKind kind;
};

// Appends the sites published since `*cursor` and advances it.
void TakeNewCallSites(uint64_t* cursor, std::vector<LearnedCallSite>* sites);

// Marks a learned site as one limpwatch rewrites: from then on a SIGTRAP at
// it is limpwatch's int3 (sled_trap.h).
void MarkCallSiteRewritten(uint64_t site);

// Adds a site found in the code (not learned), already marked rewritten.
// Returns false when the table is full.
bool AddRewrittenCallSite(uint64_t site, uint64_t function, HookKind kind);

// Whether `site` is a call site limpwatch rewrites, and of which kind.
// Signal-safe.
bool IsRewrittenCallSite(uint64_t site, HookKind* kind);

// Sites the full table could not take.
uint64_t CallSitesNotLearned();

}  // namespace limpwatch::runtime::patching

#endif  // LIMPWATCH_RUNTIME_SRC_PATCHING_CALL_SITE_TABLE_H_
