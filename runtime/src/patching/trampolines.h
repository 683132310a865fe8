// The assembly between a patched sled and the hot path.
//
//   caller:          call f
//   f's sled:        call <entry stub near f's object>    (E8 rel32)
//   entry stub:      jmp *[rip]  -> limpwatch_entry_trampoline
//   entry trampoline saves the argument registers (rdi rsi rdx rcx r8 r9,
//   rax for varargs, r10 the static chain, r11) and xmm0-7, calls
//   limpwatch_patched_enter(f, &f's return slot), restores, returns into f.
//   f runs, and its `ret` lands in
//   limpwatch_return_trampoline, which saves the return registers (rax rdx
//   xmm0 xmm1), calls limpwatch_patched_return(slot) and jumps (not returns:
//   the return stack buffer stays balanced) to the original return address.
//
// The C++ handlers (return_stack.h) may run cold paths that call the C
// library, so every vector argument register is saved, not just the ones the
// handlers' own code avoids. x87 st0/st1 (long double results) are not saved:
// nothing on the return path uses x87. Vector arguments or results wider than
// 128 bits (__m256 in ymm) are not preserved when a cold path runs a C
// library routine that uses AVX.
//
// GCC disables interprocedural register allocation (-fipa-ra) in code built
// with -fpatchable-function-entry, so callers of a patched function assume
// only the standard calling convention, which these trampolines keep.
#ifndef LIMPWATCH_RUNTIME_SRC_PATCHING_TRAMPOLINES_H_
#define LIMPWATCH_RUNTIME_SRC_PATCHING_TRAMPOLINES_H_

#include <cstdint>

extern "C" {
void limpwatch_entry_trampoline();
void limpwatch_return_trampoline();
}

namespace limpwatch::runtime::patching {

// An entry stub (jump to limpwatch_entry_trampoline) that a rel32 call from
// every address in [code_low, code_high) reaches: an existing one, or one on
// a new executable page mapped near. 0 when no page can be placed within
// reach or made executable. Not thread-safe: the patcher's lock is held.
uint64_t EntryStubNear(uint64_t code_low, uint64_t code_high);

}  // namespace limpwatch::runtime::patching

#endif  // LIMPWATCH_RUNTIME_SRC_PATCHING_TRAMPOLINES_H_
