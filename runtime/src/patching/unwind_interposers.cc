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

[[gnu::visibility("default")]] void _Unwind_Resume(_Unwind_Exception* exception) {
  patching::RestoreHijackedReturns();
  patching::Next(patching::g_resume, "_Unwind_Resume")(exception);
  __builtin_unreachable();
}

[[gnu::visibility("default")]] _Unwind_Reason_Code _Unwind_Resume_or_Rethrow(_Unwind_Exception* exception) {
  patching::RestoreHijackedReturns();
  return patching::Next(patching::g_resume_or_rethrow, "_Unwind_Resume_or_Rethrow")(exception);
}

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
