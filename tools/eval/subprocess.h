// Running the test-bed's commands from the evaluation runner: every process
// started is remembered by pid and stopped by pid, also on Ctrl-C.
#ifndef LIMPWATCH_TOOLS_EVAL_SUBPROCESS_H_
#define LIMPWATCH_TOOLS_EVAL_SUBPROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace limpwatch::eval {

struct CommandOutput {
  int status = -1;  // exit status, or -1 if it did not exit normally
  std::string output;
};

// Runs a command to completion (stdout captured, stderr passed through) with
// `environment` entries (NAME=VALUE) added to ours.
CommandOutput RunCommand(const std::vector<std::string>& argv, const std::vector<std::string>& environment = {});

// Starts a command in the background (stdout to `log_path`), remembered for StopAll().
pid_t StartCommand(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
                   const std::string& log_path);

// SIGINT then, after `grace_ms`, SIGKILL to one started command; reaps it.
void StopCommand(pid_t pid, int grace_ms = 5000);

// Stops every command still running (on exit and on Ctrl-C).
void StopAll();

// True once SIGINT or SIGTERM arrived.
bool Interrupted();
void InstallInterruptHandlers();

}  // namespace limpwatch::eval

#endif  // LIMPWATCH_TOOLS_EVAL_SUBPROCESS_H_
