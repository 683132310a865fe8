// A test-bed cluster for one test: started with the real launcher in a fresh
// temporary directory, under names and ports no other test uses, and taken
// down completely when the object goes (also after a failed assertion):
// `limpwatch-testbed stop --remove` (which clears every recorded fault), then
// any server pid still alive is killed, its segments removed, and the
// directory removed if the launcher could not.
#ifndef LIMPWATCH_TESTS_TESTBED_TESTBED_CLUSTER_H_
#define LIMPWATCH_TESTS_TESTBED_TESTBED_CLUSTER_H_

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "limpwatch/shm/snapshot.h"

namespace limpwatch::testing {

struct CommandOutput {
  int exit_status = -1;
  std::string output;
  std::vector<std::string> lines;  // non-empty output lines

  // The first line whose "event" is `event`, or "" if none.
  std::string EventLine(const std::string& event) const;
  std::vector<std::string> EventLines(const std::string& event) const;
};

std::string TestbedTool(const std::string& name);  // path of a test-bed program

// The whole content of a file, byte for byte ("" when unreadable).
std::string ReadFile(const std::string& path);

class TestbedCluster {
 public:
  // `server_environment`: LIMPWATCH_* settings the launcher passes on to
  // every server (the tests' own LIMPWATCH_* variables are never inherited).
  explicit TestbedCluster(int servers, std::vector<std::string> extra_start_flags = {},
                          std::vector<std::string> server_environment = {});
  ~TestbedCluster();
  TestbedCluster(const TestbedCluster&) = delete;
  TestbedCluster& operator=(const TestbedCluster&) = delete;

  bool started() const { return started_; }
  const std::string& start_output() const { return start_output_; }
  const std::string& dir() const { return dir_; }
  std::string config() const { return dir_ + "/fs.conf"; }
  int servers() const { return static_cast<int>(pids_.size()); }
  pid_t pid(int server) const { return pids_[static_cast<size_t>(server)]; }
  uint16_t port(int server) const { return ports_[static_cast<size_t>(server)]; }
  std::string alias(int server) const { return prefix_ + std::to_string(server); }
  std::string storage(int server) const { return dir_ + "/" + alias(server); }

  // limpwatch-testbed ARGS... --dir DIR (before a "--", if any)
  CommandOutput Launcher(std::vector<std::string> arguments);
  // limpwatch-testbed-client --config FS.CONF ARGS... (untraced: LIMPWATCH_DISABLE=1)
  CommandOutput Client(std::vector<std::string> arguments);

  // The server's live segment, read now (function names published first).
  shm::Snapshot Snapshot(int server);

 private:
  std::string dir_;
  std::string prefix_;
  bool started_ = false;
  std::string start_output_;
  std::vector<pid_t> pids_;
  std::vector<uint16_t> ports_;
};

// Function name -> counters, for the functions whose name starts with `prefix`.
std::map<std::string, shm::CounterValues> FunctionsStartingWith(const shm::Snapshot& snapshot,
                                                                const std::string& prefix);

// Counter differences after - before, summed over the functions with that prefix.
shm::CounterValues DeltaOf(const shm::Snapshot& before, const shm::Snapshot& after, const std::string& prefix);

}  // namespace limpwatch::testing

#endif  // LIMPWATCH_TESTS_TESTBED_TESTBED_CLUSTER_H_
