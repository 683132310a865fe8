#include "launcher/cgroup_control.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "launcher/process_control.h"

namespace limpwatch::testbed::launcher {
namespace {

struct Mount {
  std::string point;
  std::string type;
  std::string options;
};

std::vector<Mount> ReadMounts() {
  std::vector<Mount> mounts;
  std::ifstream file("/proc/mounts");
  std::string device, point, type, options, rest;
  while (file >> device >> point >> type >> options && std::getline(file, rest))
    mounts.push_back({point, type, options});
  return mounts;
}

bool ListContains(const std::string& list, char separator, const std::string& item) {
  std::istringstream stream(list);
  std::string entry;
  while (std::getline(stream, entry, separator)) {
    if (entry == item) return true;
  }
  return false;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

bool WriteFile(const std::string& path, const std::string& value, std::string* error) {
  std::ofstream file(path);
  file << value;
  file.flush();
  if (!file) {
    *error = "write '" + value + "' to " + path + ": " + strerror(errno);
    return false;
  }
  return true;
}

bool IsDirectory(const std::string& path) {
  struct stat status {};
  return stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode);
}

// The path in a /proc/<pid>/cgroup or /proc/<pid>/task/<tid>/cgroup file.
std::string CgroupFromFile(const CgroupController& controller, const std::string& path) {
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    size_t first = line.find(':');
    size_t second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::string controllers = line.substr(first + 1, second - first - 1);
    std::string group = line.substr(second + 1);
    if (controller.version == CgroupVersion::kV2 && line.compare(0, first, "0") == 0 && controllers.empty()) {
      return group;
    }
    if (controller.version == CgroupVersion::kV1 && ListContains(controllers, ',', controller.v1_name)) return group;
  }
  return {};
}

}  // namespace

bool FindController(const std::string& v1_name, const std::string& v2_name, CgroupController* controller,
                    std::string* why) {
  if (geteuid() != 0) {
    *why = "cgroup faults need root";
    return false;
  }
  std::vector<Mount> mounts = ReadMounts();
  for (const Mount& mount : mounts) {
    if (mount.type == "cgroup" && ListContains(mount.options, ',', v1_name)) {
      *controller = {CgroupVersion::kV1, v1_name, v2_name, mount.point};
      return true;
    }
  }
  for (const Mount& mount : mounts) {
    if (mount.type != "cgroup2") continue;
    std::string available = ReadWholeFile(mount.point + "/cgroup.controllers");
    std::istringstream words(available);
    std::string word;
    while (words >> word) {
      if (word == v2_name) {
        *controller = {CgroupVersion::kV2, v1_name, v2_name, mount.point};
        return true;
      }
    }
  }
  *why = "neither a cgroup v1 '" + v1_name + "' hierarchy nor a cgroup v2 mount offering '" + v2_name + "' is mounted";
  return false;
}

std::string CurrentCgroup(const CgroupController& controller, pid_t pid) {
  return CgroupFromFile(controller, "/proc/" + std::to_string(pid) + "/cgroup");
}

bool CreateGroup(const CgroupController& controller, const std::string& name, std::string* group_path,
                 std::string* error) {
  *group_path = controller.root + "/" + name;
  if (controller.version == CgroupVersion::kV2) {
    // The controller must be enabled for the root's children.
    std::string enabled = ReadWholeFile(controller.root + "/cgroup.subtree_control");
    if (enabled.find(controller.v2_name) == std::string::npos &&
        !WriteFile(controller.root + "/cgroup.subtree_control", "+" + controller.v2_name, error)) {
      return false;
    }
  }
  if (mkdir(group_path->c_str(), 0755) != 0 && errno != EEXIST) {
    *error = "mkdir " + *group_path + ": " + strerror(errno);
    return false;
  }
  return true;
}

bool PlaceProcess(const CgroupController& controller, const std::string& name, pid_t pid, std::string* group_path,
                  std::string* original, std::string* error) {
  *original = CurrentCgroup(controller, pid);
  if (original->empty()) {
    *error = "cannot read the cgroup of pid " + std::to_string(pid);
    return false;
  }
  return CreateGroup(controller, name, group_path, error) &&
         WriteFile(*group_path + "/cgroup.procs", std::to_string(pid), error);
}

bool AllThreadsIn(const CgroupController& controller, pid_t pid, const std::string& relative_group) {
  std::vector<pid_t> threads = ThreadsOf(pid);
  if (threads.empty()) return false;
  for (pid_t thread : threads) {
    std::string path = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(thread) + "/cgroup";
    if (CgroupFromFile(controller, path) != relative_group) return false;
  }
  return true;
}

std::string ReadCgroupFile(const std::string& group_path, const std::string& file) {
  std::string text = ReadWholeFile(group_path + "/" + file);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

namespace {

// v1 lines: "7:2 Read 4096" ... ; the value of `operation` for `device`.
uint64_t V1DeviceValue(const std::string& text, const std::string& device, const std::string& operation) {
  std::istringstream lines(text);
  std::string line_device, line_operation;
  uint64_t value = 0;
  while (lines >> line_device) {
    if (line_device == "Total") {  // the last line has no device
      lines >> value;
      continue;
    }
    if (!(lines >> line_operation >> value)) break;
    if (line_device == device && line_operation == operation) return value;
  }
  return 0;
}

// v2 line: "7:2 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0".
uint64_t V2DeviceValue(const std::string& text, const std::string& device, const std::string& key) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string field;
    if (!(fields >> field) || field != device) continue;
    while (fields >> field) {
      if (field.compare(0, key.size() + 1, key + "=") == 0) {
        return std::strtoull(field.c_str() + key.size() + 1, nullptr, 10);
      }
    }
  }
  return 0;
}

}  // namespace

DeviceIoCounts ReadDeviceIoCounts(CgroupVersion version, const std::string& group_path, const std::string& device) {
  DeviceIoCounts counts;
  if (version == CgroupVersion::kV1) {
    std::string serviced = ReadCgroupFile(group_path, "blkio.throttle.io_serviced");
    std::string bytes = ReadCgroupFile(group_path, "blkio.throttle.io_service_bytes");
    counts.reads = V1DeviceValue(serviced, device, "Read");
    counts.writes = V1DeviceValue(serviced, device, "Write");
    counts.read_bytes = V1DeviceValue(bytes, device, "Read");
    counts.write_bytes = V1DeviceValue(bytes, device, "Write");
  } else {
    std::string stat = ReadCgroupFile(group_path, "io.stat");
    counts.reads = V2DeviceValue(stat, device, "rios");
    counts.writes = V2DeviceValue(stat, device, "wios");
    counts.read_bytes = V2DeviceValue(stat, device, "rbytes");
    counts.write_bytes = V2DeviceValue(stat, device, "wbytes");
  }
  return counts;
}

bool WriteAndVerify(const std::string& group_path, const std::string& file, const std::string& value,
                    const std::string& expect_in_readback, std::string* readback, std::string* error) {
  if (!WriteFile(group_path + "/" + file, value, error)) return false;
  *readback = ReadCgroupFile(group_path, file);
  if (readback->find(expect_in_readback) == std::string::npos) {
    *error = file + " reads back '" + *readback + "', expected '" + expect_in_readback + "'";
    return false;
  }
  return true;
}

bool RemoveGroup(const std::string& root, const std::string& group_path, const std::string& original,
                 std::string* error) {
  if (!IsDirectory(group_path)) return true;
  std::string destination = root + (original == "/" ? "" : original);
  if (original.empty() || !IsDirectory(destination)) destination = root;
  // v1 lists single threads in "tasks"; v2 moves whole processes through cgroup.procs.
  std::string member_file = access((group_path + "/tasks").c_str(), F_OK) == 0 ? "tasks" : "cgroup.procs";
  for (int attempt = 0; attempt < 50; ++attempt) {
    std::istringstream members(ReadWholeFile(group_path + "/" + member_file));
    std::string member;
    while (members >> member) {
      std::string ignored;
      WriteFile(destination + "/" + member_file, member, &ignored);  // a task may exit meanwhile
    }
    if (rmdir(group_path.c_str()) == 0 || errno == ENOENT) return true;
    SleepMs(20);
  }
  *error = "rmdir " + group_path + ": " + strerror(errno);
  return false;
}

bool V2GroupStillLimited(const std::string& group_path) {
  std::istringstream io_lines(ReadWholeFile(group_path + "/io.max"));
  std::string line;
  while (std::getline(io_lines, line)) {
    std::istringstream words(line);
    std::string device, setting;
    words >> device;
    while (words >> setting) {
      if (setting.substr(setting.find('=') + 1) != "max") return true;
    }
  }
  std::string cpu_max = ReadCgroupFile(group_path, "cpu.max");
  return !cpu_max.empty() && cpu_max.rfind("max", 0) != 0;
}

std::vector<std::pair<std::string, std::string>> FindTestbedGroups() {
  std::vector<std::pair<std::string, std::string>> groups;
  for (const Mount& mount : ReadMounts()) {
    bool wanted = mount.type == "cgroup2" || (mount.type == "cgroup" && (ListContains(mount.options, ',', "blkio") ||
                                                                         ListContains(mount.options, ',', "cpu") ||
                                                                         ListContains(mount.options, ',', "memory")));
    if (!wanted) continue;
    DIR* directory = opendir(mount.point.c_str());
    if (directory == nullptr) continue;
    while (dirent* entry = readdir(directory)) {
      std::string name = entry->d_name;
      if (name.rfind(kCgroupPrefix, 0) == 0) groups.emplace_back(mount.point, mount.point + "/" + name);
    }
    closedir(directory);
  }
  return groups;
}

bool BlockDeviceOf(const std::string& path, std::string* major_minor, std::string* device_name, std::string* error) {
  struct stat status {};
  if (stat(path.c_str(), &status) != 0) {
    *error = "stat " + path + ": " + strerror(errno);
    return false;
  }
  unsigned major_number = major(status.st_dev);
  unsigned minor_number = minor(status.st_dev);
  std::string sys = "/sys/dev/block/" + std::to_string(major_number) + ":" + std::to_string(minor_number);
  char resolved[PATH_MAX];
  if (major_number == 0 || realpath(sys.c_str(), resolved) == nullptr) {
    *error = path + " is not on a block device (device " + std::to_string(major_number) + ":" +
             std::to_string(minor_number) + ", e.g. tmpfs): blkio cannot throttle it";
    return false;
  }
  std::string device = resolved;
  if (access((device + "/partition").c_str(), F_OK) == 0) device = device.substr(0, device.rfind('/'));
  std::string dev = ReadWholeFile(device + "/dev");
  while (!dev.empty() && (dev.back() == '\n' || dev.back() == ' ')) dev.pop_back();
  if (dev.empty()) {
    *error = "cannot read " + device + "/dev";
    return false;
  }
  *major_minor = dev;
  *device_name = device.substr(device.rfind('/') + 1);
  return true;
}

}  // namespace limpwatch::testbed::launcher
