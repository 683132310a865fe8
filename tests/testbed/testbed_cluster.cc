#include "testbed/testbed_cluster.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "limpwatch/shm/segment.h"
#include "support/traced_run.h"

namespace limpwatch::testing {
namespace {

// Alive and not a zombie (a stopped server is reparented to init, which may
// take a moment to reap it).
bool ProcessRuns(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(file, text)) return false;
  size_t close_paren = text.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < text.size() && text[close_paren + 2] != 'Z' &&
         text[close_paren + 2] != 'X';
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  std::string line;
  while (std::getline(stream, line)) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

CommandOutput Run(const std::string& program, const std::vector<std::string>& arguments,
                  const std::vector<std::string>& environment) {
  ProgramRun run = RunProgram(program, arguments, environment);
  CommandOutput output;
  output.exit_status = run.exit_status;
  output.output = run.output;
  output.lines = SplitLines(run.output);
  return output;
}

// The value of `"key":N` in a JSON object text.
std::vector<uint64_t> NumbersOf(const std::string& text, const std::string& key) {
  std::vector<uint64_t> numbers;
  std::regex pattern("\"" + key + "\":([0-9]+)");
  for (auto match = std::sregex_iterator(text.begin(), text.end(), pattern); match != std::sregex_iterator(); ++match) {
    numbers.push_back(std::stoull((*match)[1]));
  }
  return numbers;
}

}  // namespace

std::string CommandOutput::EventLine(const std::string& event) const {
  for (const auto& line : lines) {
    if (line.find("\"event\":\"" + event + "\"") != std::string::npos) return line;
  }
  return {};
}

std::vector<std::string> CommandOutput::EventLines(const std::string& event) const {
  std::vector<std::string> found;
  for (const auto& line : lines) {
    if (line.find("\"event\":\"" + event + "\"") != std::string::npos) found.push_back(line);
  }
  return found;
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

std::string TestbedTool(const std::string& name) { return std::string(LIMPWATCH_TESTBED_DIR) + "/" + name; }

TestbedCluster::TestbedCluster(int servers, std::vector<std::string> extra_start_flags,
                               std::vector<std::string> server_environment) {
  static std::atomic<int> counter{0};
  char pattern[] = "/tmp/limpwatch-testbed-test-XXXXXX";
  char* made = mkdtemp(pattern);
  if (made == nullptr) {
    ADD_FAILURE() << "mkdtemp failed";
    return;
  }
  dir_ = made;
  // Unique per test process and cluster: segment names and cgroups carry it.
  prefix_ = "tb" + std::to_string(getpid()) + "x" + std::to_string(counter.fetch_add(1)) + "-s";
  std::vector<std::string> arguments = {
      "start", "--dir", dir_, "--servers", std::to_string(servers), "--base-port", "0", "--name-prefix", prefix_};
  arguments.insert(arguments.end(), extra_start_flags.begin(), extra_start_flags.end());
  CommandOutput started = Run(TestbedTool("limpwatch-testbed"), arguments, server_environment);
  start_output_ = started.output;
  std::string line = started.EventLine("started");
  if (started.exit_status != 0 || line.empty()) {
    ADD_FAILURE() << "the test-bed did not start: " << started.output;
    return;
  }
  for (uint64_t pid : NumbersOf(line, "pid")) pids_.push_back(static_cast<pid_t>(pid));
  std::regex address("\"address\":\"127\\.0\\.0\\.1:([0-9]+)\"");
  for (auto match = std::sregex_iterator(line.begin(), line.end(), address); match != std::sregex_iterator(); ++match) {
    ports_.push_back(static_cast<uint16_t>(std::stoi((*match)[1])));
  }
  started_ = pids_.size() == static_cast<size_t>(servers) && ports_.size() == pids_.size();
  EXPECT_TRUE(started_) << line;
}

TestbedCluster::~TestbedCluster() {
  if (dir_.empty()) return;
  CommandOutput stopped = Run(TestbedTool("limpwatch-testbed"), {"stop", "--dir", dir_, "--remove"}, {});
  EXPECT_EQ(stopped.exit_status, 0) << stopped.output;
  // Belt and braces: nothing of this cluster may outlive the test.
  for (pid_t pid : pids_) {
    if (ProcessRuns(pid)) {
      ADD_FAILURE() << "server pid " << pid << " survived stop; killing it";
      kill(pid, SIGCONT);
      kill(pid, SIGKILL);
    }
  }
  for (int server = 0; server < servers(); ++server) RemoveSegmentsNamed(alias(server));
  std::error_code ignored;
  if (std::filesystem::exists(dir_)) std::filesystem::remove_all(dir_, ignored);
}

CommandOutput TestbedCluster::Launcher(std::vector<std::string> arguments) {
  // Before a "--": what follows it is the client's (run).
  auto end_of_own = std::find(arguments.begin(), arguments.end(), "--");
  arguments.insert(end_of_own, {"--dir", dir_});
  return Run(TestbedTool("limpwatch-testbed"), arguments, {});
}

CommandOutput TestbedCluster::Client(std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), {"--config", config()});
  return Run(TestbedTool("limpwatch-testbed-client"), arguments, {"LIMPWATCH_DISABLE=1"});
}

shm::Snapshot TestbedCluster::Snapshot(int server) { return ReadSegment(alias(server), pid(server)); }

std::map<std::string, shm::CounterValues> FunctionsStartingWith(const shm::Snapshot& snapshot,
                                                                const std::string& prefix) {
  std::map<std::string, shm::CounterValues> matching;
  for (const auto& [name, counters] : CountersByName(snapshot)) {
    if (name.rfind(prefix, 0) == 0) matching[name] = counters;
  }
  return matching;
}

shm::CounterValues DeltaOf(const shm::Snapshot& before, const shm::Snapshot& after, const std::string& prefix) {
  shm::CounterValues delta;
  auto then = FunctionsStartingWith(before, prefix);
  for (const auto& [name, now] : FunctionsStartingWith(after, prefix)) {
    shm::CounterValues was = then.count(name) ? then[name] : shm::CounterValues{};
    delta.calls += now.calls - was.calls;
    delta.self_ticks += now.self_ticks - was.self_ticks;
    delta.total_ticks += now.total_ticks - was.total_ticks;
  }
  return delta;
}

}  // namespace limpwatch::testing
