#include "patching/trampolines.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "patching/sled_bytes.h"

// Entry: rsp is f's own entry rsp, R, [R] = A, r11 = f. R is 8 mod 16 only
// when f's caller keeps the ABI's alignment, which GCC drops at calls to
// functions it sees need none (-fipa-stack-alignment), so both halves align
// the stack themselves, keeping the entry value in rbp. limpwatch_patched_enter
// returns nonzero when the call is traced; the flags of that test survive
// the `lea`s, `mov`s and pops.
//
// The call into f's body is made from rsp = R + 8, so that it writes its
// return address into R and f finds its stack arguments at R + 8 as the
// caller left them. From there on the frame has no unwind rule: the
// unwinder's entry points put A back into R first (unwind_interposers.cc),
// and then walk from f straight to its caller.
//
// Return point: rsp = R + 8; R is the slot.
asm(R"(
  .text
  .p2align 4
  .globl limpwatch_entry_trampoline
  .hidden limpwatch_entry_trampoline
  .type limpwatch_entry_trampoline, @function
limpwatch_entry_trampoline:
  .cfi_startproc
  pushq %rbp
  .cfi_adjust_cfa_offset 8
  .cfi_offset rbp, -16
  movq %rsp, %rbp
  .cfi_def_cfa_register rbp
  andq $-16, %rsp
  pushq %rdi
  pushq %rsi
  pushq %rdx
  pushq %rcx
  pushq %r8
  pushq %r9
  pushq %rax
  pushq %r10
  pushq %r11
  subq $136, %rsp
  movaps %xmm0, 0(%rsp)
  movaps %xmm1, 16(%rsp)
  movaps %xmm2, 32(%rsp)
  movaps %xmm3, 48(%rsp)
  movaps %xmm4, 64(%rsp)
  movaps %xmm5, 80(%rsp)
  movaps %xmm6, 96(%rsp)
  movaps %xmm7, 112(%rsp)
  movq %r11, %rdi
  leaq 8(%rbp), %rsi
  call limpwatch_patched_enter
  movaps 0(%rsp), %xmm0
  movaps 16(%rsp), %xmm1
  movaps 32(%rsp), %xmm2
  movaps 48(%rsp), %xmm3
  movaps 64(%rsp), %xmm4
  movaps 80(%rsp), %xmm5
  movaps 96(%rsp), %xmm6
  movaps 112(%rsp), %xmm7
  testl %eax, %eax
  leaq 136(%rsp), %rsp
  popq %r11
  popq %r10
  popq %rax
  popq %r9
  popq %r8
  popq %rcx
  popq %rdx
  popq %rsi
  popq %rdi
  movq %rbp, %rsp
  .cfi_def_cfa_register rsp
  popq %rbp
  .cfi_adjust_cfa_offset -8
  .cfi_restore rbp
  leaq 5(%r11), %r11
  jnz 1f
  jmp *%r11
1:
  leaq 8(%rsp), %rsp
  .cfi_adjust_cfa_offset -8
  .cfi_undefined rip
  call *%r11
  .globl limpwatch_patched_return_point
  .hidden limpwatch_patched_return_point
limpwatch_patched_return_point:
  pushq %rbp
  movq %rsp, %rbp
  andq $-16, %rsp
  pushq %rax
  pushq %rdx
  subq $32, %rsp
  movaps %xmm0, 0(%rsp)
  movaps %xmm1, 16(%rsp)
  movq %rbp, %rdi
  call limpwatch_patched_return
  movq %rax, %r11
  movaps 0(%rsp), %xmm0
  movaps 16(%rsp), %xmm1
  addq $32, %rsp
  popq %rdx
  popq %rax
  movq %rbp, %rsp
  popq %rbp
  pushq %r11
  ret
  .cfi_endproc
  .size limpwatch_entry_trampoline, .-limpwatch_entry_trampoline
)");

namespace limpwatch::runtime::patching {
namespace {

constexpr uint64_t kSearchStep = uint64_t{16} << 20;
constexpr uint64_t kSearchLimit = uint64_t{1} << 30;  // well inside the rel32 reach

// A stub region: the trampoline's address in its first 8 bytes, then one
// 16-byte stub per sled from byte 16:
//   4C 8D 1D <rel32>   lea f(%rip), %r11
//   FF 25 <rel32>      jmp *region(%rip)
//   CC CC CC           never reached
constexpr uint64_t kStubSize = 16;
constexpr uint64_t kFirstStub = 16;

uint64_t PageSize() { return static_cast<uint64_t>(sysconf(_SC_PAGESIZE)); }

// Maps `size` bytes exactly at `address` (never over an existing mapping).
uint64_t MapAt(uint64_t address, uint64_t size) {
  void* region = mmap(reinterpret_cast<void*>(address), size, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (region == MAP_FAILED) return 0;
  if (reinterpret_cast<uint64_t>(region) != address) {  // a kernel that ignores the flag gave another place
    munmap(region, size);
    return 0;
  }
  return address;
}

uint64_t MapNear(uint64_t code_low, uint64_t code_high, uint64_t size) {
  uint64_t page_mask = ~(PageSize() - 1);
  for (uint64_t distance = kSearchStep; distance <= kSearchLimit; distance += kSearchStep) {
    if (code_low > distance + size) {
      uint64_t below = (code_low - distance - size) & page_mask;
      if (uint64_t region = MapAt(below, size); region != 0) return region;
    }
    uint64_t above = (code_high + distance) & page_mask;
    if (above + size < (uint64_t{1} << 47)) {
      if (uint64_t region = MapAt(above, size); region != 0) return region;
    }
  }
  return 0;
}

int32_t Displacement(uint64_t from_next_instruction, uint64_t to) {
  return static_cast<int32_t>(static_cast<int64_t>(to - from_next_instruction));
}

void WriteStub(uint64_t region, uint64_t stub, uint64_t function) {
  uint8_t bytes[kStubSize] = {0x4C, 0x8D, 0x1D, 0, 0, 0, 0, 0xFF, 0x25, 0, 0, 0, 0, 0xCC, 0xCC, 0xCC};
  int32_t to_function = Displacement(stub + 7, function);
  int32_t to_pointer = Displacement(stub + 13, region);
  std::memcpy(&bytes[3], &to_function, sizeof to_function);
  std::memcpy(&bytes[9], &to_pointer, sizeof to_pointer);
  std::memcpy(reinterpret_cast<void*>(stub), bytes, sizeof bytes);
}

}  // namespace

std::vector<uint64_t> EntryStubsFor(const std::vector<uint64_t>& sleds, uint64_t code_low, uint64_t code_high) {
  if (sleds.empty()) return {};
  uint64_t page = PageSize();
  uint64_t size = (kFirstStub + kStubSize * sleds.size() + page - 1) / page * page;
  uint64_t region = MapNear(code_low, code_high, size);
  if (region == 0) return {};
  if (!CallReaches(code_low, code_high, region) || !CallReaches(code_low, code_high, region + size)) {
    munmap(reinterpret_cast<void*>(region), size);
    return {};
  }
  uint64_t trampoline = reinterpret_cast<uint64_t>(&limpwatch_entry_trampoline);
  std::memcpy(reinterpret_cast<void*>(region), &trampoline, sizeof trampoline);
  std::vector<uint64_t> stubs;
  stubs.reserve(sleds.size());
  for (size_t index = 0; index < sleds.size(); ++index) {
    uint64_t stub = region + kFirstStub + kStubSize * index;
    WriteStub(region, stub, sleds[index]);
    stubs.push_back(stub);
  }
  if (mprotect(reinterpret_cast<void*>(region), size, PROT_READ | PROT_EXEC) != 0) {
    munmap(reinterpret_cast<void*>(region), size);
    return {};
  }
  return stubs;
}

}  // namespace limpwatch::runtime::patching
