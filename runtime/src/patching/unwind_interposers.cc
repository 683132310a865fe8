// The unwinder's entry points, interposed so that it never meets a hijacked
// return address (return_stack.h). liblimpwatch precedes libgcc_s in the
// lookup order of every program linked with it, so libstdc++'s calls to these
// reach us first; each forwards to the next definition (dlsym RTLD_NEXT).
//
//   _Unwind_RaiseException, _Unwind_Resume, _Unwind_Resume_or_Rethrow,
//   _Unwind_ForcedUnwind (pthread_exit, pthread_cancel):
//       every live hijacked slot of the thread gets its original address back
//       before the unwinder runs.
//   __cxa_begin_catch:
//       the frames above the catching one survived: take them back, so their
//       exits are recorded again; the frames below were unwound: record their
//       exits now.
//   _Unwind_Backtrace:
//       restored for the walk, taken back afterwards.
//
// With nothing patched the return stacks are empty and each is a plain
// forwarding call.
#include <dlfcn.h>
#include <unwind.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "patching/return_stack.h"
#include "process.h"

namespace limpwatch::runtime::patching {
namespace {

template <typename Function>
Function* Next(std::atomic<Function*>& cache, const char* name) {
  Function* next = cache.load(std::memory_order_acquire);
  if (next == nullptr) {
    next = reinterpret_cast<Function*>(dlsym(RTLD_NEXT, name));
    if (next == nullptr) {
      LogLine(std::string("cannot find the unwinder's ") + name + "; stopping");
      std::abort();
    }
    cache.store(next, std::memory_order_release);
  }
  return next;
}

using RaiseFunction = _Unwind_Reason_Code(_Unwind_Exception*);
using ResumeFunction = void(_Unwind_Exception*);
using ForcedFunction = _Unwind_Reason_Code(_Unwind_Exception*, _Unwind_Stop_Fn, void*);
using BacktraceFunction = _Unwind_Reason_Code(_Unwind_Trace_Fn, void*);
using BeginCatchFunction = void*(void*);

constinit std::atomic<RaiseFunction*> g_raise{nullptr};
constinit std::atomic<ResumeFunction*> g_resume{nullptr};
constinit std::atomic<RaiseFunction*> g_resume_or_rethrow{nullptr};
constinit std::atomic<ForcedFunction*> g_forced{nullptr};
constinit std::atomic<BacktraceFunction*> g_backtrace{nullptr};
constinit std::atomic<BeginCatchFunction*> g_begin_catch{nullptr};

// Resolved at load, so that throwing std::bad_alloc never has to call dlsym.
[[gnu::constructor(102)]] void ResolveUnwinder() {
  Next(g_raise, "_Unwind_RaiseException");
  Next(g_resume, "_Unwind_Resume");
  Next(g_resume_or_rethrow, "_Unwind_Resume_or_Rethrow");
  Next(g_forced, "_Unwind_ForcedUnwind");
  Next(g_backtrace, "_Unwind_Backtrace");
  Next(g_begin_catch, "__cxa_begin_catch");
}

}  // namespace
}  // namespace limpwatch::runtime::patching

namespace patching = limpwatch::runtime::patching;

extern "C" {

[[gnu::visibility("default")]] _Unwind_Reason_Code _Unwind_RaiseException(_Unwind_Exception* exception) {
  patching::RestoreHijackedReturns();
  return patching::Next(patching::g_raise, "_Unwind_RaiseException")(exception);
}

// _Unwind_Resume and _Unwind_Resume_or_Rethrow go on unwinding from their
// caller's frame, which must be the landing pad that called them: were our
// forwarding function's frame in between, the unwinder would start from it,
// come back to the same landing pad and resume it again, without end. A C
// function forwards by a tail call only when the compiler makes it one (not
// at -O0 or -O1, nor under ThreadSanitizer, which instruments every
// function's exit). So on x86-64 each is a few instructions that call the
// preparation below and jump, leaving the stack as they found it.
[[gnu::visibility("hidden")]] void* limpwatch_prepare_unwind_resume() {
  patching::RestoreHijackedReturns();
  return reinterpret_cast<void*>(patching::Next(patching::g_resume, "_Unwind_Resume"));
}

[[gnu::visibility("hidden")]] void* limpwatch_prepare_unwind_resume_or_rethrow() {
  patching::RestoreHijackedReturns();
  return reinterpret_cast<void*>(patching::Next(patching::g_resume_or_rethrow, "_Unwind_Resume_or_Rethrow"));
}

}  // extern "C"

#if defined(__x86_64__)
// rdi (the exception) is kept across the call; the push also aligns the
// stack for it. The unwinder later finds the landing pad's return address
// where its caller left it.
#define LIMPWATCH_FORWARD_KEEPING_THE_CALLERS_FRAME(name, prepare) \
  asm(".text\n"                                                    \
      ".globl " #name "\n"                                         \
      ".type " #name ", @function\n"                               \
      ".p2align 4\n" #name ":\n"                                   \
      ".cfi_startproc\n"                                          \
      "endbr64\n"                                                 \
      "push %rdi\n"                                               \
      ".cfi_adjust_cfa_offset 8\n"                                \
      "call " #prepare "\n"                                        \
      "pop %rdi\n"                                                \
      ".cfi_adjust_cfa_offset -8\n"                               \
      "jmp *%rax\n"                                               \
      ".cfi_endproc\n"                                            \
      ".size " #name ", .-" #name "\n")
LIMPWATCH_FORWARD_KEEPING_THE_CALLERS_FRAME(_Unwind_Resume, limpwatch_prepare_unwind_resume);
LIMPWATCH_FORWARD_KEEPING_THE_CALLERS_FRAME(_Unwind_Resume_or_Rethrow, limpwatch_prepare_unwind_resume_or_rethrow);
#else
extern "C" {
[[gnu::visibility("default")]] void _Unwind_Resume(_Unwind_Exception* exception) {
  reinterpret_cast<void (*)(_Unwind_Exception*)>(limpwatch_prepare_unwind_resume())(exception);
  __builtin_unreachable();
}

[[gnu::visibility("default")]] _Unwind_Reason_Code _Unwind_Resume_or_Rethrow(_Unwind_Exception* exception) {
  return reinterpret_cast<_Unwind_Reason_Code (*)(_Unwind_Exception*)>(limpwatch_prepare_unwind_resume_or_rethrow())(
      exception);
}
}  // extern "C"
#endif

extern "C" {

[[gnu::visibility("default")]] _Unwind_Reason_Code _Unwind_ForcedUnwind(_Unwind_Exception* exception,
                                                                       _Unwind_Stop_Fn stop, void* argument) {
  patching::RestoreHijackedReturns();
  return patching::Next(patching::g_forced, "_Unwind_ForcedUnwind")(exception, stop, argument);
}

[[gnu::visibility("default"), gnu::noinline]] _Unwind_Reason_Code _Unwind_Backtrace(_Unwind_Trace_Fn trace,
                                                                                   void* argument) {
  patching::RestoreHijackedReturns();
  _Unwind_Reason_Code result = patching::Next(patching::g_backtrace, "_Unwind_Backtrace")(trace, argument);
  // Our caller's frame and everything above it are still live.
  patching::RehijackSurvivors(reinterpret_cast<uint64_t>(__builtin_dwarf_cfa()));
  return result;
}

[[gnu::visibility("default"), gnu::noinline]] void* __cxa_begin_catch(void* exception) {
  // The catching frame begins where our caller's stack pointer was (our CFA);
  // every frame below it was unwound.
  patching::RehijackSurvivors(reinterpret_cast<uint64_t>(__builtin_dwarf_cfa()));
  return patching::Next(patching::g_begin_catch, "__cxa_begin_catch")(exception);
}

}  // extern "C"
