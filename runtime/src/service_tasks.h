// Periodic work done off the hot path, on the runtime's service thread.
//
// Parts of the library that need a tick (node metrics, the sampler's ring
// reader, the analyzer) register a task instead of starting threads of their
// own: the service thread is started with every signal blocked, at low
// priority, and is restarted in the child after fork, so the tasks survive a
// daemonizing server. Tasks run one after the other on that one thread.
#ifndef LIMPWATCH_RUNTIME_SRC_SERVICE_TASKS_H_
#define LIMPWATCH_RUNTIME_SRC_SERVICE_TASKS_H_

#include <cstdint>

#include "limpwatch/shm/segment.h"

namespace limpwatch::runtime {

// A task gets the process's segment and the CLOCK_MONOTONIC time in ns. It
// must not throw (exceptions are caught and the task is disabled with one
// log line) and should return quickly.
using ServiceTask = void (*)(const shm::SegmentView& segment, uint64_t now_ns);

inline constexpr int kMaxServiceTasks = 16;

// Registers `task` to run every `period_ms` (rounded to the service thread's
// interval). Call from a constructor or before the first traced call; returns
// false when the table is full. `name` must outlive the process.
bool RegisterServiceTask(const char* name, ServiceTask task, uint32_t period_ms);

// Also called after fork in the child, where the task's own state may need
// resetting: `on_fork_child` (may be null) runs once in the child before the
// first task call there.
bool RegisterServiceTaskForkHandler(ServiceTask task, void (*on_fork_child)());

// Runs the due tasks once; used by the service thread and at exit.
void RunDueServiceTasks(const shm::SegmentView& segment, uint64_t now_ns, bool run_all);

// Calls every registered fork-child handler (from the runtime's fork handler).
void ResetServiceTasksInChild();

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_SERVICE_TASKS_H_
