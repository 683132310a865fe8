#include "support/traced_run.h"

#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

extern char** environ;

namespace limpwatch::testing {

std::string UniqueSegmentName(const std::string& prefix) {
  static std::atomic<int> counter{0};
  return prefix + "-" + std::to_string(getpid()) + "-" + std::to_string(counter.fetch_add(1));
}

std::string TestProgram(const std::string& name) { return std::string(LIMPWATCH_TEST_PROGRAM_DIR) + "/" + name; }

pid_t StartProgram(const std::string& program, const std::vector<std::string>& args,
                   const std::vector<std::string>& environment, int* stdout_fd) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return -1;
  std::vector<std::string> env_strings;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, "LIMPWATCH_", 10) != 0) env_strings.emplace_back(*entry);
  }
  for (const auto& extra : environment) env_strings.push_back(extra);
  std::vector<char*> envp;
  for (auto& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> arg_strings{program};
  arg_strings.insert(arg_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : arg_strings) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  pid_t pid = -1;
  int result = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (result != 0) {
    close(pipe_fds[0]);
    return -1;
  }
  *stdout_fd = pipe_fds[0];
  return pid;
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return "signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  }
  return "wait status " + std::to_string(status);
}

std::string ReadLine(int fd) {
  std::string line;
  char c;
  while (read(fd, &c, 1) == 1 && c != '\n') line.push_back(c);
  return line;
}

ProgramRun RunProgram(const std::string& program, const std::vector<std::string>& args,
                      const std::vector<std::string>& environment) {
  ProgramRun run;
  int out = -1;
  run.pid = StartProgram(program, args, environment, &out);
  if (run.pid < 0) return run;
  char buffer[4096];
  ssize_t count;
  while ((count = read(out, buffer, sizeof buffer)) > 0) run.output.append(buffer, static_cast<size_t>(count));
  close(out);
  int status = 0;
  waitpid(run.pid, &status, 0);
  run.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

shm::Snapshot ReadSegment(const std::string& name, pid_t pid) {
  shm::Snapshot snapshot;
  std::string error;
  auto reader = shm::SegmentReader::Open(shm::SegmentObjectName(name, pid), &error);
  EXPECT_TRUE(reader) << error;
  if (reader) shm::TakeSnapshot(*reader, &snapshot);
  return snapshot;
}

std::map<std::string, shm::CounterValues> CountersByName(const shm::Snapshot& snapshot) {
  std::map<std::string, shm::CounterValues> counters;
  for (const auto& function : snapshot.functions) {
    auto& total = counters[function.name];
    total.calls += function.counters.calls;
    total.self_ticks += function.counters.self_ticks;
    total.total_ticks += function.counters.total_ticks;
  }
  return counters;
}

int RemoveSegmentsNamed(const std::string& name) {
  int removed = 0;
  for (const auto& listing : shm::ListSegments()) {
    std::string error;
    if (listing.parts.name == name && shm::RemoveSegmentObject(listing.object_name, &error)) ++removed;
  }
  return removed;
}

}  // namespace limpwatch::testing
