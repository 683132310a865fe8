#include "patching/trampolines.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "patching/sled_bytes.h"

// Stack layout of the entry trampoline once everything is saved (offsets
// from rsp): 0-127 xmm0-7, 128-135 padding, 136-207 r11 r10 rax r9 r8 rcx
// rdx rsi rdi, 208 the return address into f (its sled + 5), 216 f's own
// return slot. At f's first byte rsp is 8 mod 16; the sled's call makes it
// 0, nine pushes 8, and 136 bytes 0 again for the call below.
asm(R"(
  .text
  .p2align 4
  .globl limpwatch_entry_trampoline
  .hidden limpwatch_entry_trampoline
  .type limpwatch_entry_trampoline, @function
limpwatch_entry_trampoline:
  .cfi_startproc
  pushq %rdi
  .cfi_adjust_cfa_offset 8
  pushq %rsi
  .cfi_adjust_cfa_offset 8
  pushq %rdx
  .cfi_adjust_cfa_offset 8
  pushq %rcx
  .cfi_adjust_cfa_offset 8
  pushq %r8
  .cfi_adjust_cfa_offset 8
  pushq %r9
  .cfi_adjust_cfa_offset 8
  pushq %rax
  .cfi_adjust_cfa_offset 8
  pushq %r10
  .cfi_adjust_cfa_offset 8
  pushq %r11
  .cfi_adjust_cfa_offset 8
  subq $136, %rsp
  .cfi_adjust_cfa_offset 136
  movdqu %xmm0, 0(%rsp)
  movdqu %xmm1, 16(%rsp)
  movdqu %xmm2, 32(%rsp)
  movdqu %xmm3, 48(%rsp)
  movdqu %xmm4, 64(%rsp)
  movdqu %xmm5, 80(%rsp)
  movdqu %xmm6, 96(%rsp)
  movdqu %xmm7, 112(%rsp)
  movq 208(%rsp), %rdi
  subq $5, %rdi
  leaq 216(%rsp), %rsi
  call limpwatch_patched_enter
  movdqu 0(%rsp), %xmm0
  movdqu 16(%rsp), %xmm1
  movdqu 32(%rsp), %xmm2
  movdqu 48(%rsp), %xmm3
  movdqu 64(%rsp), %xmm4
  movdqu 80(%rsp), %xmm5
  movdqu 96(%rsp), %xmm6
  movdqu 112(%rsp), %xmm7
  addq $136, %rsp
  .cfi_adjust_cfa_offset -136
  popq %r11
  .cfi_adjust_cfa_offset -8
  popq %r10
  .cfi_adjust_cfa_offset -8
  popq %rax
  .cfi_adjust_cfa_offset -8
  popq %r9
  .cfi_adjust_cfa_offset -8
  popq %r8
  .cfi_adjust_cfa_offset -8
  popq %rcx
  .cfi_adjust_cfa_offset -8
  popq %rdx
  .cfi_adjust_cfa_offset -8
  popq %rsi
  .cfi_adjust_cfa_offset -8
  popq %rdi
  .cfi_adjust_cfa_offset -8
  ret
  .cfi_endproc
  .size limpwatch_entry_trampoline, .-limpwatch_entry_trampoline

  .p2align 4
  .globl limpwatch_return_trampoline
  .hidden limpwatch_return_trampoline
  .type limpwatch_return_trampoline, @function
limpwatch_return_trampoline:
  .cfi_startproc
  .cfi_undefined rip
  pushq %rax
  pushq %rdx
  subq $32, %rsp
  movdqu %xmm0, 0(%rsp)
  movdqu %xmm1, 16(%rsp)
  leaq 40(%rsp), %rdi
  call limpwatch_patched_return
  movq %rax, %r11
  movdqu 0(%rsp), %xmm0
  movdqu 16(%rsp), %xmm1
  addq $32, %rsp
  popq %rdx
  popq %rax
  jmp *%r11
  .cfi_endproc
  .size limpwatch_return_trampoline, .-limpwatch_return_trampoline
)");
// The return trampoline starts where f's `ret` left rsp: one word above the
// slot that held our address (0 mod 16). Two pushes and 32 bytes keep it
// aligned for the call; the slot is then at rsp + 48 - 8.

namespace limpwatch::runtime::patching {
namespace {

constexpr uint64_t kSearchStep = uint64_t{16} << 20;
constexpr uint64_t kSearchLimit = uint64_t{1} << 30;  // well inside the rel32 reach

// One stub per page, at its start; objects within reach of each other share it.
std::vector<uint64_t>& StubPages() {
  static auto* pages = new std::vector<uint64_t>();
  return *pages;
}

uint64_t PageSize() { return static_cast<uint64_t>(sysconf(_SC_PAGESIZE)); }

// Maps one page exactly at `address` (never over an existing mapping).
uint64_t MapPageAt(uint64_t address) {
  void* page = mmap(reinterpret_cast<void*>(address), PageSize(), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (page == MAP_FAILED) return 0;
  if (reinterpret_cast<uint64_t>(page) != address) {  // a kernel that ignores the flag gave another place
    munmap(page, PageSize());
    return 0;
  }
  return address;
}

uint64_t MapPageNear(uint64_t code_low, uint64_t code_high) {
  uint64_t page_mask = ~(PageSize() - 1);
  for (uint64_t distance = kSearchStep; distance <= kSearchLimit; distance += kSearchStep) {
    if (code_low > distance + PageSize()) {
      uint64_t below = (code_low - distance) & page_mask;
      if (uint64_t page = MapPageAt(below); page != 0) return page;
    }
    uint64_t above = (code_high + distance) & page_mask;
    if (above < (uint64_t{1} << 47)) {
      if (uint64_t page = MapPageAt(above); page != 0) return page;
    }
  }
  return 0;
}

// jmp *0(%rip) followed by the absolute address of the entry trampoline.
void WriteStub(uint64_t at) {
  static constexpr uint8_t kJumpIndirect[6] = {0xFF, 0x25, 0x00, 0x00, 0x00, 0x00};
  uint64_t target = reinterpret_cast<uint64_t>(&limpwatch_entry_trampoline);
  std::memcpy(reinterpret_cast<void*>(at), kJumpIndirect, sizeof kJumpIndirect);
  std::memcpy(reinterpret_cast<void*>(at + sizeof kJumpIndirect), &target, sizeof target);
}

}  // namespace

uint64_t EntryStubNear(uint64_t code_low, uint64_t code_high) {
  for (uint64_t page : StubPages()) {
    if (CallReaches(code_low, code_high, page)) return page;
  }
  uint64_t page = MapPageNear(code_low, code_high);
  if (page == 0) return 0;
  WriteStub(page);
  if (mprotect(reinterpret_cast<void*>(page), PageSize(), PROT_READ | PROT_EXEC) != 0 ||
      !CallReaches(code_low, code_high, page)) {
    munmap(reinterpret_cast<void*>(page), PageSize());
    return 0;
  }
  StubPages().push_back(page);
  return page;
}

}  // namespace limpwatch::runtime::patching
