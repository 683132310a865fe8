#include "subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

extern char** environ;

namespace limpwatch::eval {
namespace {

std::atomic<bool> g_interrupted{false};
std::vector<pid_t> g_started;

void OnInterrupt(int) { g_interrupted.store(true); }

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

std::vector<std::string> MergedEnvironment(const std::vector<std::string>& extra) {
  std::vector<std::string> merged;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string text(*entry);
    std::string name = text.substr(0, text.find('='));
    bool replaced = std::any_of(extra.begin(), extra.end(),
                                [&name](const std::string& item) { return item.rfind(name + "=", 0) == 0; });
    if (!replaced) merged.push_back(text);
  }
  merged.insert(merged.end(), extra.begin(), extra.end());
  return merged;
}

pid_t Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& environment, int stdout_fd) {
  std::vector<std::string> args = argv;
  std::vector<std::string> env = MergedEnvironment(environment);
  auto arg_pointers = Pointers(args);
  auto env_pointers = Pointers(env);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdout_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stdout_fd, STDOUT_FILENO);
  pid_t pid = -1;
  int result = posix_spawn(&pid, args[0].c_str(), &actions, nullptr, arg_pointers.data(), env_pointers.data());
  posix_spawn_file_actions_destroy(&actions);
  return result == 0 ? pid : -1;
}

}  // namespace

CommandOutput RunCommand(const std::vector<std::string>& argv, const std::vector<std::string>& environment) {
  CommandOutput result;
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return result;
  pid_t pid = Spawn(argv, environment, pipe_fds[1]);
  close(pipe_fds[1]);
  if (pid < 0) {
    close(pipe_fds[0]);
    return result;
  }
  g_started.push_back(pid);
  char buffer[4096];
  ssize_t count;
  while ((count = read(pipe_fds[0], buffer, sizeof buffer)) > 0 || (count < 0 && errno == EINTR)) {
    if (count > 0) result.output.append(buffer, size_t(count));
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_started.erase(std::remove(g_started.begin(), g_started.end(), pid), g_started.end());
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

pid_t StartCommand(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
                   const std::string& log_path) {
  int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  pid_t pid = Spawn(argv, environment, log);
  if (log >= 0) close(log);
  if (pid > 0) g_started.push_back(pid);
  return pid;
}

void StopCommand(pid_t pid, int grace_ms) {
  if (pid <= 0) return;
  kill(pid, SIGINT);
  int status = 0;
  for (int waited = 0; waited < grace_ms; waited += 50) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      g_started.erase(std::remove(g_started.begin(), g_started.end(), pid), g_started.end());
      return;
    }
    usleep(50000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  g_started.erase(std::remove(g_started.begin(), g_started.end(), pid), g_started.end());
}

void StopAll() {
  std::vector<pid_t> running = g_started;
  for (pid_t pid : running) StopCommand(pid, 3000);
}

bool Interrupted() { return g_interrupted.load(); }

void InstallInterruptHandlers() {
  struct sigaction action{};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

}  // namespace limpwatch::eval
