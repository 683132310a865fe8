#include <fstream>
#include <sstream>

#include "launcher/fault.h"
#include "launcher/process_control.h"

namespace limpwatch::testbed::launcher {

bool StartHelper(const std::string& program, const std::vector<std::string>& arguments,
                 const std::vector<std::string>& environment, const std::string& output_path, const std::string& key,
                 StateRecord* record, std::string* error, const std::string& join_cgroup) {
  SpawnOptions options;
  options.join_cgroup = join_cgroup;
  options.program = program;
  options.arguments = arguments;
  options.set_environment = environment;
  options.stdout_path = output_path;
  pid_t pid = SpawnProcess(options, error);
  if (pid < 0) return false;
  record->Set(key + "_pid", static_cast<uint64_t>(pid));
  record->Set(key + "_start", ProcessStartTime(pid));
  record->Set(key + "_output", output_path);
  return true;
}

bool StopHelper(const StateRecord& record, const std::string& key, int grace_ms, std::string* error) {
  auto pid = static_cast<pid_t>(record.GetUint(key + "_pid"));
  if (pid <= 0) return true;
  if (!StopProcess(pid, record.GetUint(key + "_start"), grace_ms)) {
    *error = "could not stop helper " + key + " (pid " + std::to_string(pid) + ")";
    return false;
  }
  return true;
}

bool HelperAlive(const StateRecord& record, const std::string& key) {
  auto pid = static_cast<pid_t>(record.GetUint(key + "_pid"));
  ReapIfChild(pid);
  return IsSameProcessAlive(pid, record.GetUint(key + "_start"));
}

uint64_t ProcessIoBytes(pid_t pid, const char* field) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/io");
  std::string name;
  uint64_t value;
  while (file >> name >> value) {
    if (name == std::string(field) + ":") return value;
  }
  return 0;
}

std::string LastLine(const std::string& path) {
  std::ifstream file(path);
  std::string line, last;
  while (std::getline(file, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

}  // namespace limpwatch::testbed::launcher
