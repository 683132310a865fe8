// CPU and memory faults.
//
// cpu-quota: the server's threads go into a cpu cgroup whose CFS quota gives
//   it --percent of one CPU (v1 cpu.cfs_quota_us / cpu.cfs_period_us; v2
//   cpu.max). Only that server is throttled. By default the quota is a third
//   of what the server used in the second before: a fixed quota above what
//   an I/O-bound server uses would never bite.
// cpu-hog: --spinners busy processes join the server in a cpu cgroup of its
//   own, which as a whole weighs what one task does: the server's node, with
//   its share of the machine's CPUs, overused by processes beside the
//   server. Pinning the server and spinners to one CPU (what this fault did
//   first) took that CPU from every server of a 2-CPU machine alike: the
//   pinned one waited for a CPU no longer than its peers. In a shared group
//   it waits 4-5x longer (4 spinners, ddw) and its peers hardly notice.
// memory-hog: the server's node runs out of memory. The server runs in a
//   memory cgroup of its own from its start (start --memory-groups: the
//   node's RAM; a cgroup v1 group does not take over the pages of a process
//   moved into it later), a swap file is turned on, the group is limited to
//   what it holds now plus --headroom-mib, and a process in the same group
//   grows to --mib MiB and keeps touching every page. Reclaim then takes the
//   pages the server has not touched for a moment, and the server reads them
//   back from swap (major page faults). A hog outside the server's group
//   only took RAM this machine (24 GB) has plenty of: no server slowed.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "launcher/cgroup_control.h"
#include "launcher/fault.h"
#include "launcher/fault_registry.h"
#include "launcher/process_control.h"
#include "launcher/swap_file.h"

namespace limpwatch::testbed::launcher {
namespace {

constexpr uint64_t kCfsPeriodUs = 100000;

uint64_t ResidentMib(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/status");
  std::string name;
  while (file >> name) {
    if (name == "VmRSS:") {
      uint64_t kib = 0;
      file >> kib;
      return kib / 1024;
    }
    std::string rest;
    std::getline(file, rest);
  }
  return 0;
}

class CpuQuotaFault : public Fault {
 public:
  const char* name() const override { return "cpu-quota"; }
  const char* description() const override {
    return "CFS bandwidth limit (cgroup v1 cpu.cfs_quota_us, v2 cpu.max) on the server's threads: it may use "
           "--percent of one CPU (default: a third of what it used in the second before)";
  }

  bool Configure(CommandLine* flags, std::string* error) override {
    return flags->GetUint("percent", 0, 0, 1000, &percent_, error);
  }

  bool Inject(const FaultTarget& target, StateRecord* record, std::string* error) override {
    CgroupController controller;
    if (!FindController("cpu", "cpu", &controller, error)) return false;
    std::string group, original;
    record->Set("cgroup_root", controller.root);
    record->Set("cgroup_version", controller.version == CgroupVersion::kV1 ? "1" : "2");
    bool placed = PlaceProcess(controller, kCgroupPrefix + target.alias, target.pid, &group, &original, error);
    record->Set("cgroup", group);
    record->Set("cgroup_original", original);
    if (!placed) return false;
    uint64_t percent = percent_;
    if (percent == 0) {
      uint64_t before = ProcessCpuNs(target.pid);
      SleepMs(1000);
      uint64_t used_percent = (ProcessCpuNs(target.pid) - before) / 10'000'000;
      record->Set("server_cpu_percent", std::to_string(used_percent));
      percent = std::max<uint64_t>(1, used_percent / 3);
    }
    record->Set("quota_percent", std::to_string(percent));
    std::string quota = std::to_string(kCfsPeriodUs * percent / 100);
    std::string readback;
    if (controller.version == CgroupVersion::kV1) {
      return WriteAndVerify(group, "cpu.cfs_period_us", std::to_string(kCfsPeriodUs), std::to_string(kCfsPeriodUs),
                            &readback, error) &&
             WriteAndVerify(group, "cpu.cfs_quota_us", quota, quota, &readback, error);
    }
    std::string line = quota + " " + std::to_string(kCfsPeriodUs);
    return WriteAndVerify(group, "cpu.max", line, line, &readback, error);
  }

  bool Verify(const FaultTarget& target, const StateRecord& record, JsonLine* evidence, std::string* error) override {
    CgroupController controller;
    if (!FindController("cpu", "cpu", &controller, error)) return false;
    std::string group = record.Get("cgroup");
    if (!AllThreadsIn(controller, target.pid, group.substr(controller.root.size()))) {
      *error = "not every thread of pid " + std::to_string(target.pid) + " is in " + group;
      return false;
    }
    evidence->Add("cgroup", group).Add("threads_moved", static_cast<uint64_t>(ThreadsOf(target.pid).size()));
    evidence->Add("quota_percent", record.Get("quota_percent"));
    if (!record.Get("server_cpu_percent").empty()) evidence->Add("server_cpu_percent_before", record.Get("server_cpu_percent"));
    if (controller.version == CgroupVersion::kV1) {
      evidence->Add("cfs_quota_us", ReadCgroupFile(group, "cpu.cfs_quota_us"))
          .Add("cfs_period_us", ReadCgroupFile(group, "cpu.cfs_period_us"));
    } else {
      evidence->Add("cpu_max", ReadCgroupFile(group, "cpu.max"));
    }
    return true;
  }

  bool Clear(const StateRecord& record, const ClearContext&, JsonLine* evidence, std::string* error) override {
    std::string group = record.Get("cgroup");
    if (group.empty()) return true;
    if (record.Get("cgroup_version") == "2") {
      std::ofstream(group + "/cpu.max") << "max " + std::to_string(kCfsPeriodUs);
      if (V2GroupStillLimited(group)) {
        evidence->Add("cpu_limit_lifted", true).Add("cgroup_kept_for_other_fault", group);
        return true;
      }
    }
    bool removed = RemoveGroup(record.Get("cgroup_root"), group, record.Get("cgroup_original"), error);
    evidence->Add("cgroup_removed", removed).Add("cgroup", group);
    return removed;
  }

 private:
  uint64_t percent_ = 0;  // 0: a third of what the server used
};

class CpuHogFault : public Fault {
 public:
  const char* name() const override { return "cpu-hog"; }
  const char* description() const override {
    return "--spinners busy-looping processes join the server in a cpu cgroup of its own (its node's share of the "
           "machine); clear stops them and moves the server back";
  }

  bool Configure(CommandLine* flags, std::string* error) override {
    return flags->GetUint("spinners", 4, 1, 64, &spinners_, error);
  }

  bool Inject(const FaultTarget& target, StateRecord* record, std::string* error) override {
    CgroupController controller;
    if (!FindController("cpu", "cpu", &controller, error)) return false;
    std::string name = kCgroupPrefix + target.alias + "-cpu-hog";
    std::string group, original;
    record->Set("cgroup_root", controller.root);
    bool placed = PlaceProcess(controller, name, target.pid, &group, &original, error);
    record->Set("cgroup", group);
    record->Set("cgroup_original", original);
    if (!placed) return false;
    for (uint64_t i = 0; i < spinners_; ++i) {
      std::string key = "spinner" + std::to_string(i);
      if (!StartHelper(target.tools_dir + "/limpwatch-testbed-hog", {"cpu"}, {},
                       target.dir + "/fault-" + record->Get("id") + "-" + key + ".out", key, record, error)) {
        return false;
      }
      record->Set("helpers", i + 1);
      std::string spinner_group, spinner_original;
      if (!PlaceProcess(controller, name, static_cast<pid_t>(record->GetUint(key + "_pid")), &spinner_group,
                        &spinner_original, error)) {
        return false;
      }
    }
    return true;
  }

  bool Verify(const FaultTarget& target, const StateRecord& record, JsonLine* evidence, std::string* error) override {
    CgroupController controller;
    if (!FindController("cpu", "cpu", &controller, error)) return false;
    std::string group = record.Get("cgroup");
    std::string relative = group.substr(controller.root.size());
    if (!AllThreadsIn(controller, target.pid, relative)) {
      *error = "not every thread of pid " + std::to_string(target.pid) + " is in " + group;
      return false;
    }
    uint64_t helpers = record.GetUint("helpers");
    std::vector<uint64_t> before;
    for (uint64_t i = 0; i < helpers; ++i) {
      auto pid = static_cast<pid_t>(record.GetUint("spinner" + std::to_string(i) + "_pid"));
      if (!AllThreadsIn(controller, pid, relative)) {
        *error = "spinner " + std::to_string(pid) + " is not in " + group;
        return false;
      }
      before.push_back(ProcessCpuNs(pid));
    }
    SleepMs(1000);
    double busy_seconds = 0;
    for (uint64_t i = 0; i < helpers; ++i) {
      std::string key = "spinner" + std::to_string(i);
      if (!HelperAlive(record, key)) {
        *error = key + " exited";
        return false;
      }
      busy_seconds += double(ProcessCpuNs(static_cast<pid_t>(record.GetUint(key + "_pid"))) - before[i]) / 1e9;
    }
    evidence->Add("cgroup", group)
        .Add("server_threads_moved", static_cast<uint64_t>(ThreadsOf(target.pid).size()))
        .Add("spinners", helpers)
        .Add("spinner_cpu_seconds_per_second", busy_seconds);
    if (busy_seconds < 0.2) {
      *error = "the spinners used only " + std::to_string(busy_seconds) + " s of CPU in 1 s";
      return false;
    }
    return true;
  }

  bool Clear(const StateRecord& record, const ClearContext&, JsonLine* evidence, std::string* error) override {
    bool ok = true;
    for (uint64_t i = 0; i < record.GetUint("helpers"); ++i) {
      ok = StopHelper(record, "spinner" + std::to_string(i), 1000, error) && ok;
    }
    std::string group = record.Get("cgroup");
    if (group.empty()) return ok;
    bool removed = RemoveGroup(record.Get("cgroup_root"), group, record.Get("cgroup_original"), error);
    evidence->Add("spinners_stopped", ok).Add("cgroup_removed", removed).Add("cgroup", group);
    return ok && removed;
  }

 private:
  uint64_t spinners_ = 4;
};

class MemoryHogFault : public Fault {
 public:
  const char* name() const override { return "memory-hog"; }
  const char* description() const override {
    return "a process in the server's memory cgroup (start --memory-groups) grows to --mib MiB and keeps touching "
           "it, the group limited to what it held plus --headroom-mib, a swap file on: the server's pages are swapped "
           "out and read back";
  }

  bool Configure(CommandLine* flags, std::string* error) override {
    return flags->GetUint("mib", 1024, 16, 1 << 20, &mib_, error) &&
           flags->GetUint("rate-mibps", 512, 1, 1 << 20, &rate_, error) &&
           flags->GetUint("headroom-mib", 0, 0, 1 << 20, &headroom_mib_, error) &&
           flags->GetUint("limit-percent", 100, 10, 1000, &limit_percent_, error) &&
           flags->GetUint("swap-mib", 0, 0, 1 << 22, &swap_mib_, error);
  }

  bool Inject(const FaultTarget& target, StateRecord* record, std::string* error) override {
    if (target.memory_group.empty()) {
      *error = "memory-hog needs the cluster started with --memory-groups (each server in a memory cgroup of its own)";
      return false;
    }
    std::string limit_file = IsV2(target.memory_group) ? "memory.max" : "memory.limit_in_bytes";
    record->Set("memory_group", target.memory_group);
    record->Set("limit_file", limit_file);
    record->Set("server_pid", static_cast<uint64_t>(target.pid));
    record->Set("server_start", target.start_time);
    record->Set("server_major_faults", ProcessMajorFaults(target.pid));
    std::string swap_file = target.dir + "/fault-" + record->Get("id") + "-swap";
    record->Set("swap_file", swap_file);
    if (!AddSwapFile(swap_file, swap_mib_ != 0 ? swap_mib_ : mib_ + mib_ / 2, error)) return false;
    uint64_t usage = GroupUsage(target.memory_group);
    uint64_t limit = usage * limit_percent_ / 100 + (headroom_mib_ << 20);
    record->Set("usage_before", usage);
    std::string readback;
    if (!WriteAndVerify(target.memory_group, limit_file, std::to_string(limit), "", &readback, error)) return false;
    record->Set("limit", readback);
    record->Set("mib", mib_);
    return StartHelper(target.tools_dir + "/limpwatch-testbed-hog",
                       {"memory", "--mib", std::to_string(mib_), "--rate-mibps", std::to_string(rate_)}, {},
                       target.dir + "/fault-" + record->Get("id") + "-memory.out", "hog", record, error,
                       target.memory_group);
  }

  bool Verify(const FaultTarget& target, const StateRecord& record, JsonLine* evidence, std::string* error) override {
    // The group is full once the hog has grown past the headroom; from then
    // on every page it touches pushes another one out to swap.
    std::string swap_file = record.Get("swap_file");
    int wait_ms = static_cast<int>(record.GetUint("mib") * 1000 / rate_) + 10000;
    int64_t swapped_kib = 0;
    for (int waited = 0; waited < wait_ms; waited += 100) {
      if (!HelperAlive(record, "hog")) {
        *error = "the memory hog exited: " + LastLine(record.Get("hog_output"));
        return false;
      }
      swapped_kib = SwapFileUsedKib(swap_file);
      if (swapped_kib >= 16 * 1024) break;
      SleepMs(100);
    }
    evidence->Add("memory_group", target.memory_group)
        .Add("limit_mib", static_cast<uint64_t>(std::stoull(record.Get("limit")) >> 20))
        .Add("server_group_mib_before", record.GetUint("usage_before") >> 20)
        .Add("hog_target_mib", record.GetUint("mib"))
        .Add("hog_resident_mib", ResidentMib(static_cast<pid_t>(record.GetUint("hog_pid"))))
        .Add("swapped_mib", static_cast<uint64_t>(std::max<int64_t>(swapped_kib, 0) >> 10))
        .Add("server_major_faults_since_inject", ProcessMajorFaults(target.pid) - record.GetUint("server_major_faults"));
    if (swapped_kib < 16 * 1024) {
      *error = "the server's memory group swapped only " + std::to_string(std::max<int64_t>(swapped_kib, 0)) + " KiB";
      return false;
    }
    return true;
  }

  bool Clear(const StateRecord& record, const ClearContext&, JsonLine* evidence, std::string* error) override {
    bool ok = StopHelper(record, "hog", 2000, error);
    std::string group = record.Get("memory_group");
    bool lifted = true;
    if (!group.empty() && !record.Get("limit").empty() && access(group.c_str(), F_OK) == 0) {
      std::string unlimited = record.Get("limit_file") == "memory.max" ? "max" : "-1";
      std::string readback;
      lifted = WriteAndVerify(group, record.Get("limit_file"), unlimited, "", &readback, error);
    }
    auto server = static_cast<pid_t>(record.GetUint("server_pid"));
    uint64_t faults = IsSameProcessAlive(server, record.GetUint("server_start"))
                          ? ProcessMajorFaults(server) - record.GetUint("server_major_faults")
                          : 0;
    bool swap_removed = record.Get("swap_file").empty() || RemoveSwapFile(record.Get("swap_file"), error);
    evidence->Add("hog_stopped", ok)
        .Add("limit_lifted", lifted)
        .Add("swap_removed", swap_removed)
        .Add("server_major_faults_during_fault", faults);
    return ok && lifted && swap_removed;
  }

 private:
  static bool IsV2(const std::string& group) { return access((group + "/memory.max").c_str(), F_OK) == 0; }
  static uint64_t GroupUsage(const std::string& group) {
    std::string text = ReadCgroupFile(group, IsV2(group) ? "memory.current" : "memory.usage_in_bytes");
    return text.empty() ? 0 : std::stoull(text);
  }

  uint64_t mib_ = 1024;
  uint64_t rate_ = 512;
  uint64_t headroom_mib_ = 0;
  uint64_t limit_percent_ = 100;
  uint64_t swap_mib_ = 0;  // 0: 1.5x --mib
};

}  // namespace

void RegisterCpuMemoryFaults(FaultRegistry* registry) {
  registry->Add("cpu-quota", [] { return std::make_unique<CpuQuotaFault>(); });
  registry->Add("cpu-hog", [] { return std::make_unique<CpuHogFault>(); });
  registry->Add("memory-hog", [] { return std::make_unique<MemoryHogFault>(); });
}

}  // namespace limpwatch::testbed::launcher
