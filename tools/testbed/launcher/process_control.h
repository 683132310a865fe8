// Starting and stopping the processes the launcher owns, by pid only.
//
// Every process is identified by (pid, start time): /proc/<pid>/stat field 22
// in clock ticks since boot. A pid whose start time differs is someone else
// and is never signalled.
#ifndef LIMPWATCH_TOOLS_TESTBED_LAUNCHER_PROCESS_CONTROL_H_
#define LIMPWATCH_TOOLS_TESTBED_LAUNCHER_PROCESS_CONTROL_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace limpwatch::testbed::launcher {

struct SpawnOptions {
  std::string program;
  std::vector<std::string> arguments;          // without argv[0]
  std::vector<std::string> set_environment;    // NAME=VALUE, added or replacing
  std::vector<std::string> unset_environment;  // names (or "PREFIX*") removed
  std::string stdout_path;                     // empty: /dev/null
  std::string stderr_path;                     // empty: same as stdout
  bool new_session = true;                     // setsid: terminal signals do not reach it
  int stdout_pipe = -1;                        // >= 0: dup'd to stdout instead of stdout_path
  std::string join_cgroup;                     // a cgroup directory the child joins before exec
  int pass_fd = -1;                            // >= 0: inherited by the child as fd 3, nothing else is
};

// Starts the program; returns its pid or -1 with *error.
pid_t SpawnProcess(const SpawnOptions& options, std::string* error);

// Start time of `pid` (0 if it does not exist).
uint64_t ProcessStartTime(pid_t pid);

// Process state letter from /proc/<pid>/stat (R, S, D, T, Z, ...), or 0 if gone.
char ProcessState(pid_t pid);

// CPU time `pid` has used (user + system, all threads), in nanoseconds.
uint64_t ProcessCpuNs(pid_t pid);

// Major page faults of `pid` so far (pages read back from storage or swap).
uint64_t ProcessMajorFaults(pid_t pid);

// True when (pid, start_time) is still the same, non-zombie process.
bool IsSameProcessAlive(pid_t pid, uint64_t start_time);

// Reaps `pid` if it is our child (no effect otherwise).
void ReapIfChild(pid_t pid);

// Sends `signal_number` only if (pid, start_time) still matches.
bool SignalProcess(pid_t pid, uint64_t start_time, int signal_number);

// SIGTERM, up to `grace_ms` for it to exit, then SIGKILL. True when it is gone.
bool StopProcess(pid_t pid, uint64_t start_time, int grace_ms);

// Waits until the process is gone (or a zombie) or timeout_ms passes. A
// child of ours is reaped on the way: its exit status is lost.
bool WaitForExit(pid_t pid, uint64_t start_time, int timeout_ms);

// Reaps our child `pid` once it exits, within timeout_ms, into *wait_status.
bool ReapChild(pid_t pid, int timeout_ms, int* wait_status);

// Thread ids of a process.
std::vector<pid_t> ThreadsOf(pid_t pid);

// Directory holding this executable (to find the sibling test-bed programs).
std::string ExecutableDirectory();

void SleepMs(int milliseconds);

}  // namespace limpwatch::testbed::launcher

#endif  // LIMPWATCH_TOOLS_TESTBED_LAUNCHER_PROCESS_CONTROL_H_
