// The assembly between a patched sled and the hot path.
//
//   caller:          call f                     (pushes A, f's return address)
//   f's sled:        jmp <f's entry stub>       (E9 rel32)
//   f's entry stub:  lea f(%rip), %r11; jmp *<limpwatch_entry_trampoline>
//   entry trampoline saves the argument registers (rdi rsi rdx rcx r8 r9,
//   rax for varargs, r10 the static chain) and xmm0-7, calls
//   limpwatch_patched_enter(f, &f's return slot), restores, and then either
//   jumps into f's body (the call is not traced) or calls it, from the very
//   stack pointer f was entered with: `call` writes the return point's
//   address over A in f's slot, so arguments passed on the stack stay where
//   f looks for them.
//   f runs, and its `ret` lands on the return point inside the trampoline,
//   which saves the return registers (rax rdx xmm0 xmm1), calls
//   limpwatch_patched_return(slot) for A, puts A back in the slot and
//   returns there.
//
// Every `ret` on the way is matched by the `call` that pushed its address,
// so the processor's return stack buffer predicts each of them: f's return
// to the trampoline, and the trampoline's to A. Hijacking f's return address
// instead (writing the trampoline's address into the slot) costs one return
// misprediction a call.
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
// only the standard calling convention, which these trampolines keep; r11,
// which the stub takes, is free at any function's entry.
#ifndef LIMPWATCH_RUNTIME_SRC_PATCHING_TRAMPOLINES_H_
#define LIMPWATCH_RUNTIME_SRC_PATCHING_TRAMPOLINES_H_

#include <cstdint>
#include <vector>

extern "C" {
void limpwatch_entry_trampoline();
// Where a traced patched function returns to: the address its slot holds
// while it runs.
extern const char limpwatch_patched_return_point[];
}

namespace limpwatch::runtime::patching {

// One entry stub for each of an object's sleds (stubs[i] for sleds[i]), on
// new executable pages that a rel32 jump from every address in
// [code_low, code_high) reaches. Empty when no page can be placed within
// reach or made executable. The pages are written once, before they become
// executable, and never change: a thread may run a stub while another
// patches. Not thread-safe: the patcher's lock is held.
std::vector<uint64_t> EntryStubsFor(const std::vector<uint64_t>& sleds, uint64_t code_low, uint64_t code_high);

}  // namespace limpwatch::runtime::patching

#endif  // LIMPWATCH_RUNTIME_SRC_PATCHING_TRAMPOLINES_H_
