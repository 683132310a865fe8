// Per-thread and per-process state of the hot path.
//
// ThreadState is trivially constructible and lives in initial-exec TLS, so
// touching it never calls the allocator or __tls_get_addr. ProcessState is
// written while no thread records (start-up, the child side of fork) and only
// read by the hot path afterwards.
#ifndef LIMPWATCH_RUNTIME_SRC_THREAD_STATE_H_
#define LIMPWATCH_RUNTIME_SRC_THREAD_STATE_H_

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "limpwatch/shm/layout.h"

#define LW_HOT [[gnu::no_instrument_function, gnu::always_inline]] inline
#define LW_COLD [[gnu::no_instrument_function, gnu::cold, gnu::noinline]]
#define LW_NO_INSTRUMENT [[gnu::no_instrument_function]]

namespace limpwatch::runtime {

enum class ThreadStatus : uint32_t {
  kUnattached = 0,  // no slot yet: the next hook takes the cold path
  kRecording = 1,
  kNoSlot = 2,      // every slot was busy: calls are counted as lost
  kExited = 3,      // past its TLS destructor: hooks do nothing
  kIgnored = 4,     // limpwatch's own threads, or recording disabled
};

// How many functions a thread's retirement folds one by one. A server that
// starts a thread per request (OrangeFS's alt-aio) retires threads that ran
// a handful of its thousand known functions; a thread that ran more folds
// every known function.
inline constexpr uint32_t kTouchedFunctionCapacity = 128;

// ThreadState::in_hook, the recursion guard: 0 while the thread runs the
// program's own code; else the hooks it runs into pass through. A hook
// counting one of the program's calls sets kGuardCounting; everything else
// limpwatch does on a thread (start-up, logging, its own threads) sets
// kGuardOwnWork. Only a signal handler can run the program's code while a
// hook counts: its calls are counted apart (tracer.cc, io_accounting.cc), as
// are those of a thread past its exit handler.
inline constexpr uint32_t kGuardOwnWork = 1;
inline constexpr uint32_t kGuardCounting = 2;

struct ThreadState {
  uint32_t in_hook;  // recursion guard: 0, kGuardOwnWork or kGuardCounting
  ThreadStatus status;
  uint32_t depth;        // logical shadow-stack depth (may exceed stack_depth)
  uint32_t stack_depth;  // frames stored in the slot
  shm::StackFrame* frames;
  shm::FunctionCounters* counters;
  shm::ThreadSlotHeader* slot;
  shm::IoBlock* io;  // this thread's I/O counters, for the interposed calls
  uint32_t slot_index;
  // Request flows (flow_recorder.h): the depth of the recorded flow's root
  // frame + 1 (0: none is recorded), and the root calls left until the next
  // one is sampled (0: sampling off).
  uint32_t flow_root_depth;
  uint32_t flow_countdown;
  uint32_t flow_cut;          // the flow reached its bound: nothing more is appended
  uint64_t flow_cursor;       // ring position of the next event
  uint64_t flow_begin;        // ring position of the flow's begin record
  uint64_t flow_limit;        // ring position reserved for the flow's end record
  shm::FlowEvent* flow_events;  // null when the segment has no flows
  shm::FlowRingHeader* flow_ring;
  uint64_t flow_mask;
  int* errno_address;  // this thread's errno, once ThreadErrno has looked it up
  // The ids whose call count this thread moved from zero in its slot;
  // more than the capacity once it touched too many to list.
  uint32_t touched_count;
  uint32_t touched[kTouchedFunctionCapacity];
};

extern thread_local ThreadState t_thread [[gnu::tls_model("initial-exec")]];

// The thread's errno. From outside the C library `errno` is a call to
// __errno_location through the PLT; an interposed open or close reads and
// restores it on every call, so its address is kept with the thread's state
// (it never changes for the thread's life, and a forked child's thread
// keeps its parent's TLS addresses).
[[gnu::always_inline, gnu::no_instrument_function]] inline int& ThreadErrno(ThreadState& thread) {
  if (__builtin_expect(thread.errno_address == nullptr, 0)) thread.errno_address = &errno;
  return *thread.errno_address;
}

// limpwatch's own work on a thread of the program (a start-up constructor):
// the hooks it runs into are ignored, and the program's errno is kept.
class OwnWorkSection {
 public:
  OwnWorkSection() : thread_(t_thread), saved_guard_(thread_.in_hook), saved_errno_(errno) {
    thread_.in_hook = kGuardOwnWork;
  }
  ~OwnWorkSection() {
    errno = saved_errno_;
    thread_.in_hook = saved_guard_;
  }
  OwnWorkSection(const OwnWorkSection&) = delete;
  OwnWorkSection& operator=(const OwnWorkSection&) = delete;

 private:
  ThreadState& thread_;
  uint32_t saved_guard_;
  int saved_errno_;
};

enum class ProcessPhase : uint32_t {
  kUninitialized = 0,
  kReady = 1,     // segment mapped, hooks record
  kDisabled = 2,  // LIMPWATCH_DISABLE, or the segment could not be created
};

struct ProcessState {
  std::atomic<uint32_t> phase;
  shm::SegmentHeader* header;
  shm::FunctionIndexEntry* function_index;  // never null: an empty table until the segment exists
  uint32_t function_index_mask;
  // Process-private, direct-mapped: the addresses of registered functions
  // that are not selected, at their index home positions (function_registry.h).
  std::atomic<uint64_t>* unselected_filter;  // never null, like function_index
  uint32_t unselected_filter_mask;
  bool unselected_filter_enabled;  // off while hook call sites are learned (LIMPWATCH_PATCH)
  uint32_t max_functions;
  shm::SymbolEntry* symbols;
  // Request flows: 1 in flow_sample_every root calls is recorded (0: off).
  // A root is a function the selection marks `request` (a bit per function
  // id in flow_roots) or, when no function is marked (flow_roots null), a
  // thread's outermost traced call.
  uint32_t flow_sample_every;
  std::atomic<const std::atomic<uint64_t>*> flow_roots;
};

extern ProcessState g_process;

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_THREAD_STATE_H_
