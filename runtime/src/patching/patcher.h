// Dynamic patching (LIMPWATCH_PATCH=1) of programs built with
// -fpatchable-function-entry=5: the selected functions' sleds call limpwatch,
// every other sled stays a NOP.
//
// Life cycle:
//   start-up   (a constructor, after the selection is loaded) find the sleds
//              of the program and its shared objects (sled_discovery.h). If a
//              thread of the program already runs, log why and patch nothing:
//              the five 1-byte NOPs cannot be rewritten while a thread may be
//              between two of them. Otherwise, alone: turn every sled into one
//              5-byte NOP, place an entry stub within rel32 reach of each
//              object (trampolines.h), install the SIGTRAP handler for sleds
//              (sled_trap.h) and patch the selected sleds.
//   selection  (the service thread, right after the function index follows
//   changes    a new selection) patch the newly selected sleds and unpatch the
//              deselected ones with the int3 protocol while the program runs
//              (code_writer.h). That needs membarrier SYNC_CORE, our
//              SIGTRAP handler still in place and no program thread blocking
//              SIGTRAP; without the first two the patches stay as they are,
//              without the third the pass is retried every 500 ms; one log
//              line says which.
//   fork       the patch lock is held across fork, so a child never inherits
//              a half-written batch.
//
// Objects loaded later (dlopen) are not patched: by the time the service
// thread sees them their code may be running, unprepared. A refused writable
// code page (W^X policy) logs one line and disables patching.
#ifndef LIMPWATCH_RUNTIME_SRC_PATCHING_PATCHER_H_
#define LIMPWATCH_RUNTIME_SRC_PATCHING_PATCHER_H_

namespace limpwatch::runtime::patching {

// Re-decides every sled under the active selection and patches or unpatches
// the ones that changed. Does nothing unless patching started. Service thread
// (or start-up) only.
void ApplySelectionToPatches();

}  // namespace limpwatch::runtime::patching

#endif  // LIMPWATCH_RUNTIME_SRC_PATCHING_PATCHER_H_
