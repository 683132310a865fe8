// A fault injector: one real fault against one chosen server, set up,
// checked and undone on command.
//
// Life of a fault (command_fault.cc drives it):
//   Configure(flags)        its options (--percent, --read-mibps, ...)
//   Inject(target, record)  sets it up; everything Clear needs goes into the
//                           record as soon as it exists (the launcher saves the
//                           record in the state file even when Inject fails
//                           half-way, so nothing is left behind)
//   Verify(target, record)  checks that it took effect (a throttle value reads
//                           back, a rule is listed, a process is stopped, a
//                           helper is running) and reports the evidence
//   Clear(record)           undoes it; idempotent; needs nothing but the record
//                           (a later `clear` or `clear-all` may run it)
// The slowdown it causes is measured separately (inject --measure runs the
// probe before and after).
#ifndef LIMPWATCH_TOOLS_TESTBED_LAUNCHER_FAULT_H_
#define LIMPWATCH_TOOLS_TESTBED_LAUNCHER_FAULT_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "common/json_line.h"
#include "launcher/testbed_state.h"

namespace limpwatch::testbed::launcher {

// One server of the cluster, for a fault that acts on all of them.
struct ClusterServer {
  uint32_t index = 0;
  std::string alias;
  pid_t pid = 0;
  uint64_t start_time = 0;
  std::string storage;
};

struct FaultTarget {
  std::string dir;
  uint32_t server = 0;
  std::string alias;
  pid_t pid = 0;
  uint64_t start_time = 0;
  uint16_t port = 0;
  std::string storage;
  std::string mount;  // the storage's small-fs mount point, if any
  std::string memory_group;  // the server's memory cgroup (start --memory-groups), if any
  std::string config_path;
  std::string tools_dir;  // where the test-bed programs are
  uint32_t server_count = 0;
  std::vector<ClusterServer> cluster;  // every server, the target included
};

// What Clear may need besides the record.
struct ClearContext {
  // Restarts server `index` of the cluster (crash is cleared by a restart).
  std::function<bool(uint32_t index, std::string* error)> restart_server;
};

class Fault {
 public:
  virtual ~Fault() = default;
  virtual const char* name() const = 0;
  // One line: what this fault really does on this machine.
  virtual const char* description() const = 0;
  // A fault of every server alike (a regression in the code they all run):
  // injected once per cluster whatever --server says, and cleared by any
  // `clear` that names it.
  virtual bool cluster_wide() const { return false; }
  virtual bool Configure(CommandLine* flags, std::string* error) { return true; }
  virtual bool Inject(const FaultTarget& target, StateRecord* record, std::string* error) = 0;
  virtual bool Verify(const FaultTarget& target, const StateRecord& record, JsonLine* evidence, std::string* error) = 0;
  virtual bool Clear(const StateRecord& record, const ClearContext& context, JsonLine* evidence,
                     std::string* error) = 0;
};

// The fault named `name`, or null.
std::unique_ptr<Fault> MakeFault(const std::string& name);
std::vector<std::string> FaultNames();

// Helpers the faults share.
// Starts a helper process (detached, own session; in cgroup directory
// `join_cgroup` from its first instruction, if given) and records it under
// `key` (key_pid, key_start) in the record.
bool StartHelper(const std::string& program, const std::vector<std::string>& arguments,
                 const std::vector<std::string>& environment, const std::string& output_path, const std::string& key,
                 StateRecord* record, std::string* error, const std::string& join_cgroup = "");
// Stops the helper recorded under `key` (grace_ms for a clean exit).
bool StopHelper(const StateRecord& record, const std::string& key, int grace_ms, std::string* error);
bool HelperAlive(const StateRecord& record, const std::string& key);
// Bytes read / written by a process so far (/proc/<pid>/io), 0 if unknown.
uint64_t ProcessIoBytes(pid_t pid, const char* field);
// The last line of a file, for a helper's JSON output.
std::string LastLine(const std::string& path);

}  // namespace limpwatch::testbed::launcher

#endif  // LIMPWATCH_TOOLS_TESTBED_LAUNCHER_FAULT_H_
