// Runs a helper command (nft) to completion and captures what it prints.
#ifndef LIMPWATCH_TOOLS_TESTBED_LAUNCHER_COMMAND_RUNNER_H_
#define LIMPWATCH_TOOLS_TESTBED_LAUNCHER_COMMAND_RUNNER_H_

#include <string>
#include <vector>

namespace limpwatch::testbed::launcher {

struct CommandResult {
  int exit_status = -1;  // -1: could not run or killed
  std::string output;    // stdout and stderr together
};

// Runs argv (argv[0] searched in PATH and /usr/sbin, /sbin), feeding `input`
// on stdin; gives up (killing it) after timeout_ms.
CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& input, int timeout_ms);

// Full path of a program found in PATH, /usr/sbin or /sbin; empty if none.
std::string FindProgram(const std::string& name);

}  // namespace limpwatch::testbed::launcher

#endif  // LIMPWATCH_TOOLS_TESTBED_LAUNCHER_COMMAND_RUNNER_H_
