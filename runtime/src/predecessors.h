// Segments left by this server's dead predecessors: a server killed with
// SIGKILL (or crashed) cannot remove its segment, and a restarted server
// would leave one more 15 MiB object in /dev/shm each time. Once, shortly
// after start, the service thread removes the stale segments that carry
// this process's LIMPWATCH_NAME: the same server, an earlier life.
#ifndef LIMPWATCH_RUNTIME_SRC_PREDECESSORS_H_
#define LIMPWATCH_RUNTIME_SRC_PREDECESSORS_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace limpwatch::runtime {

struct RemovedPredecessors {
  std::vector<pid_t> pids;          // the removed segments' owners
  std::vector<std::string> errors;  // one line per segment that could not go
};

// Removes the stale segments named `name` whose owner is not `own_pid`
// (exited segments kept on purpose with LIMPWATCH_KEEP stay).
RemovedPredecessors RemoveDeadPredecessors(const std::string& name, pid_t own_pid);

// Registers the one-time service task doing it for this process, when it
// has a name. Called once, with the runtime's other tasks.
void RemoveDeadPredecessorsSoon(const std::string& name);

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_PREDECESSORS_H_
