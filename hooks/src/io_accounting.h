// Counting one interposed call: the part every hook shares.
//
// A call is counted when the calling thread records (its recursion guard is
// clear and it holds a slot; an unattached thread is attached first). Its
// counts go to the thread's own IoBlock with plain load/store pairs (single
// writer). A thread that found no free slot still has its calls counted, in
// the process's retired totals with atomic adds, so no call is lost. The
// runtime's own threads and calls made inside a hook pass straight through.
//
// The guard is clear while the real call runs, so a signal handler that
// interrupts a blocking read is traced (and its own I/O counted) like any
// other code; it is set (kGuardCounting) only while the counters are
// updated. A handler's call that lands there is counted in the process
// totals with atomic adds (ProcessCounters::calls_during_hooks), never in
// the thread's own counters, which the interrupted hook is updating; the
// counting sections restore the guard they found.
//
// errno: the fast path never touches it (it reads it only when the call
// failed, to count the errno); the slow paths save and restore it. The
// caller sees exactly what the C library left.
//
// Service time. Reading the clock twice costs about 45 ns on our VMs (an
// rdtsc is 20-23 ns there), ten per cent of a 4 KiB page-cache pread. So a
// transfer is timed according to how long the previous timed transfer of
// the same (fd kind, operation) on this thread took:
//   - 10 us or more: every call is timed, exactly (a disk or a network that
//     makes the server wait: what dread / nsread are about);
//   - less: one call in 32, chosen at random, is timed and its time counted
//     32 times (Horvitz-Thompson: the choice is made before the call, so the
//     total is an unbiased estimate). The next timed call decides again.
// Calls, bytes and errors are always exact. LIMPWATCH_IO_TIMING=every times
// every call. open() and close() follow the same rule per (fd kind,
// operation): a program that opens, writes and closes many small files
// would otherwise pay two clock reads per open and per close (a quarter of
// what tracing costs it). Other calls that create fds, syncs and POSIX AIO
// are always timed.
#ifndef LIMPWATCH_HOOKS_SRC_IO_ACCOUNTING_H_
#define LIMPWATCH_HOOKS_SRC_IO_ACCOUNTING_H_

#include <cerrno>
#include <cstdint>

#include "fd_table.h"
#include "limpwatch/shm/layout.h"
#include "shadow_stack.h"
#include "thread_state.h"

namespace limpwatch::hooks {

// Where a call's counts go.
struct IoSink {
  shm::IoBlock* block = nullptr;
  bool shared = false;  // the retired totals: several writers, atomic adds
};

// Timing policy, set once at load (LIMPWATCH_IO_TIMING) and when the clock
// is known; read-only afterwards.
struct IoTimingPolicy {
  uint32_t fast_call_mask;     // a fast call is timed when (random & mask) == 0; 0 times every call
  std::atomic<uint64_t> slow_call_ticks;  // a call this long makes the next ones timed; 0 until known
};
extern IoTimingPolicy g_timing;

// Per thread: the sampling mask of each (kind, operation), and the random state.
struct IoTimingState {
  uint8_t masks[shm::kFdKindCount][shm::kIoOperationCount];
  uint32_t random;
};
// constinit: no TLS wrapper call on access (the definition is constant-initialized).
extern constinit thread_local IoTimingState t_timing [[gnu::tls_model("initial-exec")]];

LW_HOT void Add(std::atomic<uint64_t>& counter, uint64_t amount, bool shared) {
  if (__builtin_expect(shared, 0)) {
    counter.fetch_add(amount, std::memory_order_relaxed);
  } else {
    runtime::Bump(counter, amount);
  }
}

// True when this thread's calls are counted in its own slot right now.
LW_HOT bool RecordsFast(const runtime::ThreadState& thread) {
  return thread.in_hook == 0 && thread.status == runtime::ThreadStatus::kRecording;
}

LW_COLD bool AcquireSinkUnusual(runtime::ThreadState& thread, IoSink* sink);

// True when this call is to be counted, with *sink set.
LW_HOT bool AcquireSink(runtime::ThreadState& thread, IoSink* sink) {
  if (__builtin_expect(RecordsFast(thread), 1)) {
    sink->block = thread.io;
    sink->shared = false;
    return true;
  }
  return AcquireSinkUnusual(thread, sink);
}

// xorshift32: a different sequence per thread, so periodic call patterns
// (header read, body read, ...) are not sampled in lockstep.
LW_HOT uint32_t NextRandom(IoTimingState& state) {
  uint32_t x = state.random;
  if (__builtin_expect(x == 0, 0)) x = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(&state) >> 4) | 1u;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  state.random = x;
  return x;
}

// The mask for the next calls after a timed one that took `ticks`.
LW_HOT uint8_t NextTimingMask(uint64_t ticks) {
  return ticks >= g_timing.slow_call_ticks.load(std::memory_order_relaxed) ? 0
                                                                            : static_cast<uint8_t>(g_timing.fast_call_mask);
}

// One call's share of the adaptive rule: whether it is timed, and the
// weight of its ticks. Shared by transfers and by open / close.
struct TimingChoice {
  uint8_t* mask;  // the (kind, operation)'s mask on this thread
  uint32_t weight;
  bool timed;
};

LW_HOT TimingChoice ChooseTiming(IoTimingState& timing, shm::FdKind kind, shm::IoOperation operation) {
  uint8_t& mask = timing.masks[static_cast<uint32_t>(kind)][static_cast<uint32_t>(operation)];
  return {&mask, uint32_t{mask} + 1, mask == 0 || (NextRandom(timing) & mask) == 0};
}

// A timed call took `ticks`: sets the mask for the next calls and returns the weighted ticks.
LW_HOT uint64_t WeighTimedCall(const TimingChoice& choice, uint64_t ticks) {
  *choice.mask = NextTimingMask(ticks);
  return ticks * choice.weight;
}

LW_COLD void CountErrno(const IoSink& sink, shm::FdKind kind, shm::IoOperation operation, int error);

LW_HOT bool IsWouldBlock(int error) { return error == EAGAIN || error == EWOULDBLOCK; }

// Adds one finished call. `ticks` is already weighted. `role_code` is the
// fd's role (0 none): reads on accepted / connected sockets are counted
// again per role, except the would-block returns of non-blocking sockets,
// which read no request.
LW_HOT void CountCall(const IoSink& sink, shm::FdKind kind, shm::IoOperation operation, bool failed, int error,
                      uint64_t bytes, uint64_t ticks, uint32_t role_code) {
  shm::IoCounters& counters = sink.block->counters[static_cast<uint32_t>(kind)][static_cast<uint32_t>(operation)];
  Add(counters.calls, 1, sink.shared);
  Add(counters.ticks, ticks, sink.shared);
  if (__builtin_expect(failed, 0)) {
    Add(counters.errors, 1, sink.shared);
    CountErrno(sink, kind, operation, error);
  } else if (bytes != 0) {
    Add(counters.bytes, bytes, sink.shared);
  }
  if (role_code != 0 && operation == shm::IoOperation::kRead && !(failed && IsWouldBlock(error))) {
    shm::IoCounters& role = sink.block->socket_reads[role_code - 1];
    Add(role.calls, 1, sink.shared);
    Add(role.ticks, ticks, sink.shared);
    if (failed) {
      Add(role.errors, 1, sink.shared);
    } else {
      Add(role.bytes, bytes, sink.shared);
    }
  }
}

// One interposed call that is not a plain transfer (open, close, accept,
// connect, dup, sync, AIO):
//
//   CountedCall call;          // does this thread count?
//   call.Start();              // time starts (always timed), or
//   call.StartSampled(k, op);  // timed as a transfer of that kind would be
//   result = real(...);
//   call.Stop();               // time stops, errno saved, guard set
//   ... work out the kind (may classify the fd) ...
//   call.Count(kind, ...);     // counters, guard cleared, errno restored
//
// Count() must follow Stop() whenever counting() is true.
class CountedCall {
 public:
  LW_HOT CountedCall() : thread_(runtime::t_thread), saved_guard_(thread_.in_hook) {
    counting_ = AcquireSink(thread_, &sink_);
  }

  LW_HOT bool counting() const { return counting_; }
  LW_HOT int error() const { return error_; }

  LW_HOT void Start() {
    if (counting_) start_ = runtime::ReadTicks();
  }

  // Times the call or not by the adaptive rule of (kind, operation) on this
  // thread; an untimed call counts no ticks, a timed one its weight's worth.
  LW_HOT void StartSampled(shm::FdKind kind, shm::IoOperation operation) {
    if (!counting_) return;
    choice_ = ChooseTiming(t_timing, kind, operation);
    if (choice_.timed) start_ = runtime::ReadTicks();
  }

  LW_HOT void Stop() {
    if (!counting_) return;
    if (choice_.timed) {
      ticks_ = runtime::ReadTicks() - start_;
      if (choice_.mask != nullptr) ticks_ = WeighTimedCall(choice_, ticks_);
    }
    error_ = runtime::ThreadErrno(thread_);
    thread_.in_hook = runtime::kGuardCounting;
  }

  LW_HOT void Count(shm::FdKind kind, shm::IoOperation operation, bool failed, uint64_t bytes = 0,
                    uint32_t role_code = 0) {
    if (!counting_) return;
    CountCall(sink_, kind, operation, failed, error_, bytes, ticks_, role_code);
    thread_.in_hook = saved_guard_;
    runtime::ThreadErrno(thread_) = error_;
  }

  // Counts a call whose service time was measured elsewhere (POSIX AIO);
  // `timed` false: no time was measured (IoBlock::untimed_calls).
  LW_HOT void CountMeasured(shm::FdKind kind, shm::IoOperation operation, bool failed, int error, uint64_t bytes,
                            uint64_t ticks, bool timed) {
    if (!counting_) return;
    int saved = errno;
    thread_.in_hook = runtime::kGuardCounting;
    CountCall(sink_, kind, operation, failed, error, bytes, timed ? ticks : 0, 0);
    if (!timed) Add(sink_.block->untimed_calls, 1, sink_.shared);
    thread_.in_hook = saved_guard_;
    errno = saved;
  }

 private:
  runtime::ThreadState& thread_;
  uint32_t saved_guard_;  // 0, or kGuardCounting when a signal handler's call interrupted a hook
  IoSink sink_;
  bool counting_ = false;
  TimingChoice choice_{nullptr, 1, true};  // Start(): always timed, unweighted
  int error_ = 0;
  uint64_t start_ = 0;
  uint64_t ticks_ = 0;
};

// A transfer outside the fast path: a thread without a slot of its own, a
// thread not attached yet, or an fd the table cannot vouch for (classified
// after the call, before counting). Always timed.
template <typename Call>
[[gnu::cold, gnu::noinline, gnu::no_instrument_function]] auto CountedTransferSlow(int fd,
                                                                                   shm::IoOperation operation,
                                                                                   Call& call) -> decltype(call()) {
  runtime::ThreadState& thread = runtime::t_thread;
  uint32_t saved_guard = thread.in_hook;
  IoSink sink;
  if (!AcquireSink(thread, &sink)) return call();
  uint64_t entry = LoadFdEntry(fd);
  uint64_t start = runtime::ReadTicks();
  auto result = call();
  uint64_t ticks = runtime::ReadTicks() - start;
  int error = errno;
  thread.in_hook = runtime::kGuardCounting;
  shm::FdKind kind = IsCheckedEntry(entry) ? EntryKind(entry) : ClassifyFd(fd, entry, &entry);
  bool failed = result < 0;
  CountCall(sink, kind, operation, failed, error, failed ? 0 : static_cast<uint64_t>(result), ticks,
            EntryRoleCode(entry));
  thread.in_hook = saved_guard;
  errno = error;
  return result;
}

inline constexpr uint32_t kUncheckedFileCheckOneIn = 32;  // a power of two

// A read or write on `fd`: counted under the fd's kind, bytes from the result.
template <typename Call>
LW_HOT auto CountedTransfer(int fd, shm::IoOperation operation, Call call) -> decltype(call()) {
  runtime::ThreadState& thread = runtime::t_thread;
  uint64_t entry = LoadFdEntry(fd);
  IoTimingState& timing = t_timing;
  if (__builtin_expect(!RecordsFast(thread) || !IsCheckedEntry(entry), 0)) {
    // A path open() left unchecked is a regular file nearly always; checking
    // it costs an fstat, as much as a small file's read. So it is checked
    // on one use in kUncheckedFileCheckOneIn and counted as a file meanwhile:
    // a program opening, writing and closing many small files does not pay
    // one more system call per file.
    if (!RecordsFast(thread) || !IsUncheckedFileEntry(entry) ||
        (NextRandom(timing) & (kUncheckedFileCheckOneIn - 1)) == 0) {
      return CountedTransferSlow(fd, operation, call);
    }
  }
  shm::FdKind kind = EntryKind(entry);
  TimingChoice choice = ChooseTiming(timing, kind, operation);
  uint64_t start = choice.timed ? runtime::ReadTicks() : 0;
  auto result = call();
  uint64_t ticks = 0;
  if (choice.timed) ticks = WeighTimedCall(choice, runtime::ReadTicks() - start);
  thread.in_hook = runtime::kGuardCounting;  // it was clear: the fast path
  uint32_t role_code = EntryRoleCode(entry);
  if (__builtin_expect(result >= 0 && role_code == 0, 1)) {
    shm::IoCounters& counters = thread.io->counters[static_cast<uint32_t>(kind)][static_cast<uint32_t>(operation)];
    runtime::Bump(counters.calls, 1);
    runtime::Bump(counters.ticks, ticks);
    runtime::Bump(counters.bytes, static_cast<uint64_t>(result));
  } else {
    // A failure (errno is read here, never on success) or a socket read with a role.
    bool failed = result < 0;
    CountCall(IoSink{thread.io, false}, kind, operation, failed, failed ? errno : 0,
              failed ? 0 : static_cast<uint64_t>(result), ticks, role_code);
  }
  thread.in_hook = 0;
  return result;
}

// The kind an fd is known to have, classifying it if needed; for calls that
// do not transfer data (sync, connect, accept, dup). Call between Stop() and
// Count().
LW_HOT shm::FdKind KnownKind(int fd, uint64_t entry) {
  if (__builtin_expect(IsCheckedEntry(entry), 1)) return EntryKind(entry);
  if ((entry & fd_bits::kKindMask) != 0) return EntryKind(entry);  // unchecked: what open() left
  uint64_t classified;
  return ClassifyFd(fd, entry, &classified);
}

}  // namespace limpwatch::hooks

#endif  // LIMPWATCH_HOOKS_SRC_IO_ACCOUNTING_H_
