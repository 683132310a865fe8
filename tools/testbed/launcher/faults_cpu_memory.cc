// CPU and memory faults.
//
// cpu-quota: the server's threads go into a cpu cgroup whose CFS quota gives
//   it --percent of one CPU (v1 cpu.cfs_quota_us / cpu.cfs_period_us; v2
//   cpu.max). Only that server is throttled. By default the quota is a third
//   of what the server used in the second before: a fixed quota above what
//   an I/O-bound server uses would never bite.
// cpu-hog: the server's threads are pinned to one CPU and --spinners busy
//   processes are pinned beside them: the server gets a fraction of that
//   CPU. Its affinity is restored on clear.
// memory-hog: a process grows its resident memory to --mib MiB (touching
//   every page) and holds it. With this machine's 24 GB of RAM a few GiB
//   barely disturb a server; the fault exists for completeness and its effect
//   is measured, not assumed.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "launcher/cgroup_control.h"
#include "launcher/fault.h"
#include "launcher/fault_registry.h"
#include "launcher/process_control.h"

namespace limpwatch::testbed::launcher {
namespace {

constexpr uint64_t kCfsPeriodUs = 100000;

std::string CpuListOf(const cpu_set_t& set) {
  std::string list;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    if (!list.empty()) list += ",";
    list += std::to_string(cpu);
  }
  return list;
}

cpu_set_t CpuSetOf(const std::string& list) {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::istringstream stream(list);
  std::string cpu;
  while (std::getline(stream, cpu, ',')) {
    if (!cpu.empty()) CPU_SET(std::stoi(cpu), &set);
  }
  return set;
}

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
    return "the server's threads are pinned to one CPU and --spinners busy-looping processes are pinned to the same "
           "CPU; the server's affinity is restored on clear";
  }

  bool Configure(CommandLine* flags, std::string* error) override {
    cpu_ = flags->GetString("cpu", "");
    return flags->GetUint("spinners", 2, 1, 64, &spinners_, error);
  }

  bool Inject(const FaultTarget& target, StateRecord* record, std::string* error) override {
    cpu_set_t original;
    if (sched_getaffinity(target.pid, sizeof original, &original) != 0) {
      *error = std::string("sched_getaffinity: ") + strerror(errno);
      return false;
    }
    int cpu = -1;
    for (int i = 0; i < CPU_SETSIZE; ++i) {
      if (CPU_ISSET(i, &original)) cpu = i;  // the highest CPU it may use
    }
    if (!cpu_.empty()) cpu = std::stoi(cpu_);
    record->Set("original_cpus", CpuListOf(original));
    record->Set("server_pid", static_cast<uint64_t>(target.pid));
    record->Set("server_start", target.start_time);
    record->Set("cpu", static_cast<uint64_t>(cpu));
    cpu_set_t pinned;
    CPU_ZERO(&pinned);
    CPU_SET(cpu, &pinned);
    for (pid_t thread : ThreadsOf(target.pid)) {
      if (sched_setaffinity(thread, sizeof pinned, &pinned) != 0) {
        *error =
            "sched_setaffinity(" + std::to_string(thread) + ", cpu " + std::to_string(cpu) + "): " + strerror(errno);
        return false;
      }
    }
    for (uint64_t i = 0; i < spinners_; ++i) {
      std::string key = "spinner" + std::to_string(i);
      if (!StartHelper(target.tools_dir + "/limpwatch-testbed-hog", {"cpu", "--cpu", std::to_string(cpu)}, {},
                       target.dir + "/fault-" + record->Get("id") + "-" + key + ".out", key, record, error)) {
        return false;
      }
      record->Set("helpers", i + 1);
    }
    return true;
  }

  bool Verify(const FaultTarget& target, const StateRecord& record, JsonLine* evidence, std::string* error) override {
    cpu_set_t expected = CpuSetOf(record.Get("cpu"));
    for (pid_t thread : ThreadsOf(target.pid)) {
      cpu_set_t actual;
      if (sched_getaffinity(thread, sizeof actual, &actual) != 0 || !CPU_EQUAL(&actual, &expected)) {
        *error = "thread " + std::to_string(thread) + " is not pinned to CPU " + record.Get("cpu");
        return false;
      }
    }
    uint64_t helpers = record.GetUint("helpers");
    std::vector<uint64_t> before;
    for (uint64_t i = 0; i < helpers; ++i) {
      before.push_back(ProcessCpuNs(static_cast<pid_t>(record.GetUint("spinner" + std::to_string(i) + "_pid"))));
    }
    SleepMs(1000);
    double busy_seconds = 0;
    for (uint64_t i = 0; i < helpers; ++i) {
      std::string key = "spinner" + std::to_string(i);
      if (!HelperAlive(record, key)) {
        *error = key + " exited";
        return false;
      }
      busy_seconds +=
          double(ProcessCpuNs(static_cast<pid_t>(record.GetUint(key + "_pid"))) - before[i]) / 1e9;
    }
    evidence->Add("cpu", record.GetUint("cpu"))
        .Add("server_threads_pinned", static_cast<uint64_t>(ThreadsOf(target.pid).size()))
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
    auto pid = static_cast<pid_t>(record.GetUint("server_pid"));
    uint64_t restored = 0;
    if (IsSameProcessAlive(pid, record.GetUint("server_start")) && !record.Get("original_cpus").empty()) {
      cpu_set_t original = CpuSetOf(record.Get("original_cpus"));
      for (pid_t thread : ThreadsOf(pid)) {
        if (sched_setaffinity(thread, sizeof original, &original) == 0) ++restored;
      }
    }
    evidence->Add("spinners_stopped", ok)
        .Add("threads_restored_to", record.Get("original_cpus"))
        .Add("threads_restored", restored);
    return ok;
  }

 private:
  std::string cpu_;
  uint64_t spinners_ = 2;
};

class MemoryHogFault : public Fault {
 public:
  const char* name() const override { return "memory-hog"; }
  const char* description() const override {
    return "a process grows its resident memory to --mib MiB (every page touched) and holds it until cleared";
  }

  bool Configure(CommandLine* flags, std::string* error) override {
    return flags->GetUint("mib", 1024, 16, 1 << 20, &mib_, error) &&
           flags->GetUint("rate-mibps", 512, 1, 1 << 20, &rate_, error);
  }

  bool Inject(const FaultTarget& target, StateRecord* record, std::string* error) override {
    record->Set("mib", mib_);
    return StartHelper(target.tools_dir + "/limpwatch-testbed-hog",
                       {"memory", "--mib", std::to_string(mib_), "--rate-mibps", std::to_string(rate_)}, {},
                       target.dir + "/fault-" + record->Get("id") + "-memory.out", "hog", record, error);
  }

  bool Verify(const FaultTarget&, const StateRecord& record, JsonLine* evidence, std::string* error) override {
    auto pid = static_cast<pid_t>(record.GetUint("hog_pid"));
    uint64_t wanted = record.GetUint("mib") * 9 / 10;
    int wait_ms = static_cast<int>(record.GetUint("mib") * 1000 / rate_) + 5000;
    for (int waited = 0; waited < wait_ms; waited += 100) {
      if (!HelperAlive(record, "hog")) {
        *error = "the memory hog exited: " + LastLine(record.Get("hog_output"));
        return false;
      }
      if (ResidentMib(pid) >= wanted) break;
      SleepMs(100);
    }
    uint64_t resident = ResidentMib(pid);
    evidence->Add("hog_resident_mib", resident).Add("target_mib", record.GetUint("mib"));
    if (resident < wanted) {
      *error = "the memory hog holds only " + std::to_string(resident) + " MiB";
      return false;
    }
    return true;
  }

  bool Clear(const StateRecord& record, const ClearContext&, JsonLine* evidence, std::string* error) override {
    bool ok = StopHelper(record, "hog", 2000, error);
    evidence->Add("hog_stopped", ok);
    return ok;
  }

 private:
  uint64_t mib_ = 1024;
  uint64_t rate_ = 512;
};

}  // namespace

void RegisterCpuMemoryFaults(FaultRegistry* registry) {
  registry->Add("cpu-quota", [] { return std::make_unique<CpuQuotaFault>(); });
  registry->Add("cpu-hog", [] { return std::make_unique<CpuHogFault>(); });
  registry->Add("memory-hog", [] { return std::make_unique<MemoryHogFault>(); });
}

}  // namespace limpwatch::testbed::launcher
