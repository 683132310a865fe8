// Dynamic patching of the compiler's hook calls (LIMPWATCH_PATCH=1) in code
// built with -finstrument-functions: an unselected function's calls to
// __cyg_profile_func_enter / _exit become 5-byte NOPs, a selected one's stay
// (or become again) the compiler's own calls. A selected function therefore
// costs exactly what it costs without patching, and an unselected one its
// argument set-up and two NOPs.
//
// Sites are learned from the hooks (call_site_table.h). Each learned site is
// checked before anything is written: it must lie in the executable code of
// a loaded object other than liblimpwatch, hold `call rel32`, and that call
// must reach the hook that learned it, directly or through a PLT entry whose
// GOT slot holds the hook (the call just went through it, so the slot is
// bound). A site that fails (an exit hook reached by a tail jump, a call
// through the GOT built with -fno-plt) stays a call and is counted.
//
// The service thread checks for new sites every 100 ms and rewrites sites
// when the selection changes, with the rules of the entry sleds
// (code_writer.h): alone, or with the int3 protocol, which needs membarrier
// SYNC_CORE, limpwatch's SIGTRAP handler and no program thread blocking
// SIGTRAP (otherwise retried, one log line says why). A thread that meets
// the int3 skips the call: that one call goes untraced.
//
// Objects loaded later (dlopen) are covered like the others, since sites are
// learned as they run; before the selection is applied again, the sites of
// objects unloaded since (dlclose), or whose bytes changed under us, are
// forgotten rather than written.
#ifndef LIMPWATCH_RUNTIME_SRC_PATCHING_CALL_SITE_PATCHER_H_
#define LIMPWATCH_RUNTIME_SRC_PATCHING_CALL_SITE_PATCHER_H_

namespace limpwatch::runtime::patching {

// Re-decides every known call site under the active selection. Does nothing
// unless call-site patching started. Service thread (or start-up) only.
void ApplySelectionToCallSites();

}  // namespace limpwatch::runtime::patching

#endif  // LIMPWATCH_RUNTIME_SRC_PATCHING_CALL_SITE_PATCHER_H_
