// The launcher's state file, <dir>/testbed.state: what is running and what
// was done to it, so that any later `limpwatch-testbed` call (stop, clear,
// clear-all) can undo it by pid and by name, never by guessing.
//
// One record a line: a kind, then key=value fields, values %-escaped.
//   cluster servers=4 prefix=server config=/d/fs.conf peers=... keep=0
//   server index=0 alias=server0 pid=1234 start=987654 port=4000 storage=/d/server0 mount=
//   fault id=1 fault=disk-busy server=0 cgroup=/sys/fs/cgroup/blkio/limpwatch-testbed-server0-1 ...
// A pid is always stored with the process's start time (/proc/<pid>/stat
// field 22), so a recycled pid is never signalled.
//
// Readers and writers take an exclusive flock on <dir>/testbed.lock around
// load-modify-save (StateLock); saving writes a temporary file and renames it.
#ifndef LIMPWATCH_TOOLS_TESTBED_LAUNCHER_TESTBED_STATE_H_
#define LIMPWATCH_TOOLS_TESTBED_LAUNCHER_TESTBED_STATE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace limpwatch::testbed::launcher {

struct StateRecord {
  std::string kind;  // cluster, server, fault
  std::map<std::string, std::string> fields;

  std::string Get(const std::string& key) const;
  uint64_t GetUint(const std::string& key) const;  // 0 when absent or not a number
  void Set(const std::string& key, const std::string& value) { fields[key] = value; }
  void Set(const std::string& key, uint64_t value) { fields[key] = std::to_string(value); }
};

class TestbedState {
 public:
  static std::string PathIn(const std::string& dir) { return dir + "/testbed.state"; }

  // False with *error only when the file exists but cannot be read; a
  // missing file is an empty state.
  bool Load(const std::string& dir, std::string* error);
  bool Save(std::string* error) const;
  bool exists() const { return exists_; }
  bool Remove(std::string* error);

  StateRecord* Cluster();
  std::vector<StateRecord*> Servers();
  StateRecord* Server(uint32_t index);
  std::vector<StateRecord*> Faults();
  StateRecord* Fault(uint64_t id);
  StateRecord& Add(const std::string& kind);
  void RemoveFault(uint64_t id);
  uint64_t NextFaultId();

 private:
  std::string dir_;
  bool exists_ = false;
  std::vector<StateRecord> records_;
};

// An exclusive lock on <dir>/testbed.lock for as long as it lives.
class StateLock {
 public:
  explicit StateLock(const std::string& dir);
  ~StateLock();
  StateLock(const StateLock&) = delete;
  StateLock& operator=(const StateLock&) = delete;
  bool locked() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace limpwatch::testbed::launcher

#endif  // LIMPWATCH_TOOLS_TESTBED_LAUNCHER_TESTBED_STATE_H_
