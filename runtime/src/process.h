// Process-wide life cycle of the runtime: start-up, fork, thread exit and
// process exit. Everything here runs off the hot path.
#ifndef LIMPWATCH_RUNTIME_SRC_PROCESS_H_
#define LIMPWATCH_RUNTIME_SRC_PROCESS_H_

#include <sys/types.h>

#include <string>

#include "config.h"
#include "limpwatch/shm/segment.h"
#include "thread_state.h"

namespace limpwatch::runtime {

// Creates the segment on first use. Returns true when hooks may record.
// Safe to call from any thread; the first caller does the work.
bool EnsureProcessInitialized();

// The mapped segment of this process (valid once initialized).
const shm::SegmentView& CurrentSegmentView();
const RuntimeConfig& CurrentConfig();

// Arranges for the calling thread's slot to be released when it exits.
void RegisterThreadExit();

// Folds a recording thread's counts into the retired totals and frees its slot.
void ReleaseThreadSlot(ThreadState& thread);

// Starts a detached background thread of limpwatch's own, named `name`,
// with every signal blocked so that the server's signal handling is not
// disturbed. Returns 0, or the errno of pthread_create.
int StartQuietThread(const char* name, void* (*main)(void*), void* argument);

// Whether `tid` is one of the threads StartQuietThread started and that is
// still running. A thread counts from its first instruction of `main` to its
// end, so a caller scanning /proc/self/task errs on the side of "not ours".
bool IsLimpwatchThread(pid_t tid);

// Around an exec (hooks/src/hooks_exec.cc). An exec that succeeds replaces
// the process's image, and nothing writes its segment again: before it, the
// segment's name is removed (with LIMPWATCH_KEEP, the segment is marked
// exited instead), as at exit. A forked child that execs, the usual way to
// run another program, would otherwise leave one segment behind per child.
// If the exec fails and returns, the segment is published again as it was.
void BeforeExec();
void AfterFailedExec();

// One line on stderr, prefixed with "limpwatch[<pid>]: ".
void LogLine(const std::string& message);

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_PROCESS_H_
