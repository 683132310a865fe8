// Putting one server process into a cgroup of its own and taking it out.
//
// cgroup v1 (what these machines mount): one hierarchy per controller,
//   /sys/fs/cgroup/blkio/limpwatch-testbed-<alias>/  blkio.throttle.*_device
//   /sys/fs/cgroup/cpu/limpwatch-testbed-<alias>/    cpu.cfs_quota_us / cpu.cfs_period_us
//   /sys/fs/cgroup/memory/limpwatch-testbed-<alias>-<port>-memory/  the server's
//     memory from its start (start --memory-groups), for memory-hog
// cgroup v2 (if that is what is mounted, with the controller available):
//   <unified>/limpwatch-testbed-<alias>/              io.max / cpu.max
// (v2 has one hierarchy: a server under both a disk and a CPU fault shares
// the group; each fault resets only its own file on clear.)
//
// Writing the pid into cgroup.procs moves every thread of the server. Clear
// moves the threads back to the cgroup they came from, then removes the
// group (moving any leftover task out first). Every cgroup the test-bed makes
// is named limpwatch-testbed-*, so clear-all can find leftovers.
#ifndef LIMPWATCH_TOOLS_TESTBED_LAUNCHER_CGROUP_CONTROL_H_
#define LIMPWATCH_TOOLS_TESTBED_LAUNCHER_CGROUP_CONTROL_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace limpwatch::testbed::launcher {

inline constexpr const char* kCgroupPrefix = "limpwatch-testbed-";

enum class CgroupVersion { kV1, kV2 };

struct CgroupController {
  CgroupVersion version = CgroupVersion::kV1;
  std::string v1_name;  // "blkio" / "cpu"
  std::string v2_name;  // "io" / "cpu"
  std::string root;     // mount point of the hierarchy holding it
};

// Finds where `v1_name` (or its v2 counterpart) can be used, v1 first.
// False with *why when neither is available (not root, not mounted, ...).
bool FindController(const std::string& v1_name, const std::string& v2_name, CgroupController* controller,
                    std::string* why);

// The cgroup path (relative to the hierarchy root, "/" for the root) `pid`
// is in for that controller, from /proc/<pid>/cgroup.
std::string CurrentCgroup(const CgroupController& controller, pid_t pid);

// Creates root/<name> (reusing it if it exists). For v2 the controller is
// enabled in the root's subtree_control first.
bool CreateGroup(const CgroupController& controller, const std::string& name, std::string* group_path,
                 std::string* error);

// Creates root/<name> (reusing it if it exists) and moves every thread of
// `pid` into it; *original gets the cgroup they came from. For v2 the
// controller is enabled in the root's subtree_control first.
bool PlaceProcess(const CgroupController& controller, const std::string& name, pid_t pid, std::string* group_path,
                  std::string* original, std::string* error);

// True when every thread of `pid` is in group_path (relative, "/name").
bool AllThreadsIn(const CgroupController& controller, pid_t pid, const std::string& relative_group);

// Writes `value` to group_path/file and reads it back; false if the read-back
// does not contain `expect_in_readback`.
bool WriteAndVerify(const std::string& group_path, const std::string& file, const std::string& value,
                    const std::string& expect_in_readback, std::string* readback, std::string* error);

std::string ReadCgroupFile(const std::string& group_path, const std::string& file);

// What the tasks of a group have asked of one device ("major:minor") since
// they were placed there: v1 blkio.throttle.io_serviced / io_service_bytes,
// v2 io.stat. All zero when the group has not touched the device.
struct DeviceIoCounts {
  uint64_t reads = 0;
  uint64_t writes = 0;
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;
};
DeviceIoCounts ReadDeviceIoCounts(CgroupVersion version, const std::string& group_path, const std::string& device);

// Moves every task of group_path to root/<original> (its parent if that is
// gone) and removes the group. True when the directory is gone.
bool RemoveGroup(const std::string& root, const std::string& group_path, const std::string& original,
                 std::string* error);

// cgroup v2 only: whether the group still carries an I/O or CPU limit (a
// second fault sharing it), in which case its clear must leave it in place.
bool V2GroupStillLimited(const std::string& group_path);

// Every limpwatch-testbed-* cgroup in the blkio / cpu / memory v1 hierarchies and the v2 root.
std::vector<std::pair<std::string, std::string>> FindTestbedGroups();  // (root, group path)

// "major:minor" of the whole disk holding `path` (a partition maps to its
// disk: blkio throttles whole devices); false for a path on no block device.
bool BlockDeviceOf(const std::string& path, std::string* major_minor, std::string* device_name, std::string* error);

}  // namespace limpwatch::testbed::launcher

#endif  // LIMPWATCH_TOOLS_TESTBED_LAUNCHER_CGROUP_CONTROL_H_
