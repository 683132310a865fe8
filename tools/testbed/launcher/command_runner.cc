#include "launcher/command_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "common/socket_util.h"

namespace limpwatch::testbed::launcher {

std::string FindProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string directories = std::string(path != nullptr ? path : "") + ":/usr/sbin:/sbin:/usr/bin:/bin";
  std::istringstream stream(directories);
  std::string directory;
  while (std::getline(stream, directory, ':')) {
    if (directory.empty()) continue;
    std::string candidate = directory + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& input, int timeout_ms) {
  CommandResult result;
  std::string program = FindProgram(argv[0]);
  if (program.empty()) {
    result.output = argv[0] + ": not found";
    return result;
  }
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0) return result;
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    close(in_pipe[0]);
    close(in_pipe[1]);
    return result;
  }
  std::vector<std::string> arguments = argv;
  arguments[0] = program;
  std::vector<char*> raw;
  for (auto& argument : arguments) raw.push_back(argument.data());
  raw.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in_pipe[0], STDIN_FILENO);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(out_pipe[1], STDERR_FILENO);
    close_range(3, ~0u, 0);
    execv(program.c_str(), raw.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  if (pid < 0) {
    close(in_pipe[1]);
    close(out_pipe[0]);
    return result;
  }
  signal(SIGPIPE, SIG_IGN);
  if (!input.empty() && write(in_pipe[1], input.data(), input.size()) < 0) {
    // The command did not read its input; its output says why.
  }
  close(in_pipe[1]);
  uint64_t deadline = MonotonicNs() + uint64_t(timeout_ms) * 1000000;
  char buffer[4096];
  for (;;) {
    uint64_t now = MonotonicNs();
    if (now >= deadline) {
      kill(pid, SIGKILL);
      break;
    }
    pollfd poll_fd{out_pipe[0], POLLIN, 0};
    int ready = poll(&poll_fd, 1, static_cast<int>((deadline - now) / 1000000 + 1));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    ssize_t count = read(out_pipe[0], buffer, sizeof buffer);
    if (count <= 0) break;
    result.output.append(buffer, static_cast<size_t>(count));
  }
  close(out_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace limpwatch::testbed::launcher
