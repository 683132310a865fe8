#include "support/sampled_run.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <sstream>

extern char** environ;

namespace limpwatch::testing {

CapturedRun RunCapturing(const std::string& program, const std::vector<std::string>& args,
                         const std::vector<std::string>& environment) {
  CapturedRun result;
  std::vector<std::string> env_strings;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, "LIMPWATCH_", 10) != 0) env_strings.emplace_back(*entry);
  }
  env_strings.insert(env_strings.end(), environment.begin(), environment.end());
  std::vector<char*> envp;
  for (auto& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> arg_strings{program};
  arg_strings.insert(arg_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : arg_strings) argv.push_back(arg.data());
  argv.push_back(nullptr);

  int out[2], err[2];
  // Close-on-exec: a program started meanwhile by another thread of the
  // test must not hold these pipes open (dup2 into the child clears it).
  if (pipe2(out, O_CLOEXEC) != 0) return result;
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  posix_spawn_file_actions_addclose(&actions, err[0]);
  pid_t pid = -1;
  int spawned = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  close(err[1]);
  if (spawned != 0) {
    close(out[0]);
    close(err[0]);
    return result;
  }
  result.pid = pid;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_count = 2;
  while (open_count > 0) {
    if (poll(fds, 2, -1) < 0) break;
    for (int index = 0; index < 2; ++index) {
      if (fds[index].fd < 0 || fds[index].revents == 0) continue;
      char buffer[4096];
      ssize_t count = read(fds[index].fd, buffer, sizeof buffer);
      if (count > 0) {
        sinks[index]->append(buffer, static_cast<size_t>(count));
      } else {
        close(fds[index].fd);
        fds[index].fd = -1;
        --open_count;
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  std::string line;
  while (std::getline(stream, line)) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

SampledRun RunSampledWork(const std::vector<std::string>& args, std::vector<std::string> environment,
                          const std::vector<std::string>& launcher_options) {
  SampledRun sampled;
  sampled.name = UniqueSegmentName("sampler");
  environment.push_back("LIMPWATCH_NAME=" + sampled.name);
  environment.push_back("LIMPWATCH_KEEP=1");
  if (launcher_options.empty()) {
    sampled.run = RunCapturing(TestProgram("sampled_work"), args, environment);
  } else {
    std::vector<std::string> launcher_args = launcher_options;
    launcher_args.push_back(TestProgram("sampled_work"));
    launcher_args.insert(launcher_args.end(), args.begin(), args.end());
    sampled.run = RunCapturing(TestProgram("sandbox_launcher"), launcher_args, environment);
  }
  EXPECT_EQ(sampled.run.exit_status, 0) << "stderr: " << sampled.run.err;
  sampled.snapshot = ReadSegment(sampled.name, sampled.run.pid);
  return sampled;
}

const shm::SampledFunctionRecord* Sampled(const shm::Snapshot& snapshot, const std::string& name) {
  for (const auto& function : snapshot.samples.functions) {
    if (function.name == name && function.image_kind != shm::ImageKind::kNodeKernel) return &function;
  }
  return nullptr;
}

uint64_t SamplesOf(const shm::Snapshot& snapshot, const std::string& name) {
  const shm::SampledFunctionRecord* function = Sampled(snapshot, name);
  return function == nullptr ? 0 : function->samples;
}

uint64_t SamplesOfKind(const shm::Snapshot& snapshot, shm::ImageKind kind) {
  uint64_t total = 0;
  for (const auto& function : snapshot.samples.functions) {
    if (function.image_kind == kind) total += function.samples;
  }
  return total;
}

std::string DescribeSamples(const shm::Snapshot& snapshot) {
  std::ostringstream text;
  const shm::SampleSnapshot& samples = snapshot.samples;
  text << "source " << samples.source << " flags " << samples.flags << " rate " << samples.rate_hz << " total "
       << samples.samples_total << " lost " << samples.samples_lost << " unknown " << samples.samples_unknown
       << " node " << samples.node_samples_total << "/" << samples.node_samples_idle << "\n";
  for (const auto& function : samples.functions) {
    text << "  " << function.image << " (" << static_cast<uint32_t>(function.image_kind) << ") " << function.name
         << ": " << function.samples << " samples, " << function.kernel_samples << " kernel under\n";
  }
  return text.str();
}

}  // namespace limpwatch::testing
