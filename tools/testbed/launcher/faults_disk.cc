// Storage faults.
//
// disk-busy (slow disk): the server's threads go into a blkio cgroup of their
//   own whose throttle limits its reads and writes on the disk holding its
//   storage (v1 blkio.throttle.{read,write}_{bps,iops}_device; v2 io.max).
//   Only that server's direct I/O and synced metadata slow down: the one
//   per-server disk fault this machine allows (one virtual disk).
//   The limits are a --slowdown'th of what the server asked of the disk in
//   the --sample-ms after it was placed, at most the fixed --read-mibps ...
//   values. Fixed limits alone missed a server doing small synced files: at
//   90 file operations a second it issued about 145 writes a second, under
//   200 IOPS, its journal commits are the kernel's (outside the group), and
//   it ran no slower.
// disk-hog: a competing process reads the disk under the server's storage
//   with O_DIRECT in large blocks at random offsets (seed 000's dd of 256 MB
//   blocks; 64 MiB here: with 4 MiB a server behind a loop device of its own
//   waited 0.4-0.5 ms more per read than its peers, under the 1 ms floor of
//   the dread metric, and the hog was found in no experiment). The raw device when it may be opened read-only (a loop device of
//   `start --disk-images`); where that is refused (EPERM even for root on
//   this machine's /dev/vda), a data file of its own (--file-mib, written
//   with O_DIRECT first) in the server's storage. Without --disk-images all
//   servers share the one virtual disk here, so it slows every server alike.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "launcher/cgroup_control.h"
#include "launcher/fault.h"
#include "launcher/fault_registry.h"
#include "launcher/process_control.h"

namespace limpwatch::testbed::launcher {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;

class DiskBusyFault : public Fault {
 public:
  const char* name() const override { return "disk-busy"; }
  const char* description() const override {
    return "blkio throttle (cgroup v1 blkio.throttle.*_device, v2 io.max) on the server's threads for the disk of its "
           "storage, a --slowdown'th of the I/O it issued in its first --sample-ms there (at most the fixed "
           "limits): its O_DIRECT bstream I/O and synced keyval commits slow down, the other servers' do not";
  }

  bool Configure(CommandLine* flags, std::string* error) override {
    return flags->GetUint("read-mibps", 4, 0, 100000, &read_mibps_, error) &&
           flags->GetUint("write-mibps", 4, 0, 100000, &write_mibps_, error) &&
           flags->GetUint("read-iops", 200, 0, 1000000, &read_iops_, error) &&
           flags->GetUint("write-iops", 200, 0, 1000000, &write_iops_, error) &&
           flags->GetUint("slowdown", 4, 0, 1000, &slowdown_, error) &&
           flags->GetUint("sample-ms", 1000, 100, 60000, &sample_ms_, error);
  }

  bool Inject(const FaultTarget& target, StateRecord* record, std::string* error) override {
    CgroupController controller;
    std::string device, device_name;
    if (!FindController("blkio", "io", &controller, error) ||
        !BlockDeviceOf(target.storage, &device, &device_name, error)) {
      return false;
    }
    std::string group, original;
    record->Set("cgroup_root", controller.root);
    record->Set("cgroup_version", controller.version == CgroupVersion::kV1 ? "1" : "2");
    record->Set("device", device);
    record->Set("device_name", device_name);
    bool placed = PlaceProcess(controller, kCgroupPrefix + target.alias, target.pid, &group, &original, error);
    record->Set("cgroup", group);
    record->Set("cgroup_original", original);
    record->Set("server_pid", static_cast<uint64_t>(target.pid));
    if (!placed) return false;
    Limits limits{read_mibps_ * kMiB, write_mibps_ * kMiB, read_iops_, write_iops_};
    if (slowdown_ != 0) limits = ScaledToDemand(controller.version, group, device, limits, record);
    std::string readback;
    if (controller.version == CgroupVersion::kV1) {
      struct Limit {
        const char* file;
        uint64_t value;
      };
      const Limit v1_limits[] = {{"blkio.throttle.read_bps_device", limits.read_bps},
                                 {"blkio.throttle.write_bps_device", limits.write_bps},
                                 {"blkio.throttle.read_iops_device", limits.read_iops},
                                 {"blkio.throttle.write_iops_device", limits.write_iops}};
      for (const Limit& limit : v1_limits) {
        if (limit.value == 0) continue;
        std::string line = device + " " + std::to_string(limit.value);
        if (!WriteAndVerify(group, limit.file, line, line, &readback, error)) return false;
      }
    } else {
      std::string line = device + " rbps=" + Max(limits.read_bps) + " wbps=" + Max(limits.write_bps) +
                         " riops=" + Max(limits.read_iops) + " wiops=" + Max(limits.write_iops);
      if (!WriteAndVerify(group, "io.max", line, device, &readback, error)) return false;
    }
    return true;
  }

  bool Verify(const FaultTarget& target, const StateRecord& record, JsonLine* evidence, std::string* error) override {
    CgroupController controller;
    if (!FindController("blkio", "io", &controller, error)) return false;
    std::string group = record.Get("cgroup");
    std::string relative = group.substr(controller.root.size());
    if (!AllThreadsIn(controller, target.pid, relative)) {
      *error = "not every thread of pid " + std::to_string(target.pid) + " is in " + group;
      return false;
    }
    evidence->Add("cgroup", group).Add("device", record.Get("device") + " (" + record.Get("device_name") + ")");
    evidence->Add("threads_moved", static_cast<uint64_t>(ThreadsOf(target.pid).size()));
    if (!record.Get("sampled_ms").empty()) {
      evidence->Add("sampled_ms", record.GetUint("sampled_ms"))
          .Add("server_read_iops", record.GetUint("server_read_iops"))
          .Add("server_write_iops", record.GetUint("server_write_iops"))
          .Add("server_read_kibps", record.GetUint("server_read_bps") / 1024)
          .Add("server_write_kibps", record.GetUint("server_write_bps") / 1024);
    }
    if (controller.version == CgroupVersion::kV1) {
      evidence->Add("read_bps_device", ReadCgroupFile(group, "blkio.throttle.read_bps_device"))
          .Add("write_bps_device", ReadCgroupFile(group, "blkio.throttle.write_bps_device"))
          .Add("read_iops_device", ReadCgroupFile(group, "blkio.throttle.read_iops_device"))
          .Add("write_iops_device", ReadCgroupFile(group, "blkio.throttle.write_iops_device"));
      if (ReadCgroupFile(group, "blkio.throttle.read_bps_device").find(record.Get("device")) == std::string::npos &&
          ReadCgroupFile(group, "blkio.throttle.write_bps_device").find(record.Get("device")) == std::string::npos) {
        *error = "no throttle is set in " + group;
        return false;
      }
    } else {
      std::string io_max = ReadCgroupFile(group, "io.max");
      evidence->Add("io_max", io_max);
      if (io_max.find(record.Get("device")) == std::string::npos) {
        *error = "io.max of " + group + " has no line for " + record.Get("device");
        return false;
      }
    }
    return true;
  }

  bool Clear(const StateRecord& record, const ClearContext&, JsonLine* evidence, std::string* error) override {
    std::string group = record.Get("cgroup");
    if (group.empty()) return true;
    std::string root = record.Get("cgroup_root");
    if (record.Get("cgroup_version") == "2") {
      // The group may also hold a CPU fault: lift our limit before taking it apart.
      std::ofstream(group + "/io.max") << record.Get("device") + " rbps=max wbps=max riops=max wiops=max";
      if (V2GroupStillLimited(group)) {
        evidence->Add("io_limit_lifted", true).Add("cgroup_kept_for_other_fault", group);
        return true;
      }
    }
    bool removed = RemoveGroup(root, group, record.Get("cgroup_original"), error);
    evidence->Add("cgroup_removed", removed).Add("cgroup", group);
    return removed;
  }

 private:
  static std::string Max(uint64_t value) { return value == 0 ? "max" : std::to_string(value); }

  struct Limits {  // 0: no limit
    uint64_t read_bps;
    uint64_t write_bps;
    uint64_t read_iops;
    uint64_t write_iops;
  };

  // The server's own I/O rate in the group over sample_ms_, a slowdown_'th
  // of it as each limit, never above the fixed one. A direction the server
  // did not use in the sample keeps the fixed limit.
  Limits ScaledToDemand(CgroupVersion version, const std::string& group, const std::string& device,
                        const Limits& fixed, StateRecord* record) const {
    DeviceIoCounts before = ReadDeviceIoCounts(version, group, device);
    SleepMs(static_cast<int>(sample_ms_));
    DeviceIoCounts after = ReadDeviceIoCounts(version, group, device);
    auto per_second = [this](uint64_t from, uint64_t to) { return to > from ? (to - from) * 1000 / sample_ms_ : 0; };
    uint64_t read_iops = per_second(before.reads, after.reads);
    uint64_t write_iops = per_second(before.writes, after.writes);
    uint64_t read_bps = per_second(before.read_bytes, after.read_bytes);
    uint64_t write_bps = per_second(before.write_bytes, after.write_bytes);
    record->Set("sampled_ms", sample_ms_);
    record->Set("server_read_iops", read_iops);
    record->Set("server_write_iops", write_iops);
    record->Set("server_read_bps", read_bps);
    record->Set("server_write_bps", write_bps);
    auto scaled = [this](uint64_t fixed_limit, uint64_t demand, uint64_t least) {
      if (demand == 0) return fixed_limit;
      uint64_t limit = std::max(least, demand / slowdown_);
      return fixed_limit == 0 ? limit : std::min(fixed_limit, limit);
    };
    // Floors keep a throttle the kernel accepts and a server that still moves.
    return Limits{scaled(fixed.read_bps, read_bps, kMinimumBytesPerSecond),
                  scaled(fixed.write_bps, write_bps, kMinimumBytesPerSecond),
                  scaled(fixed.read_iops, read_iops, kMinimumIops), scaled(fixed.write_iops, write_iops, kMinimumIops)};
  }

  static constexpr uint64_t kMinimumBytesPerSecond = 64 * 1024;
  static constexpr uint64_t kMinimumIops = 5;

  uint64_t read_mibps_ = 4;
  uint64_t write_mibps_ = 4;
  uint64_t read_iops_ = 200;
  uint64_t write_iops_ = 200;
  uint64_t slowdown_ = 4;  // 0: the fixed limits alone
  uint64_t sample_ms_ = 1000;
};

class DiskHogFault : public Fault {
 public:
  const char* name() const override { return "disk-hog"; }
  const char* description() const override {
    return "a competing process reads the disk under the server's storage with O_DIRECT, random 64 MiB blocks (the raw "
           "device if it may be opened, else a data file of its own on that disk); without start --disk-images every "
           "server's storage is on the one virtual disk and it slows them all";
  }

  bool Configure(CommandLine* flags, std::string* error) override {
    return flags->GetUint("block-kib", 65536, 4, 1 << 20, &block_kib_, error) &&
           flags->GetUint("readers", 1, 1, 16, &readers_, error) &&
           flags->GetUint("file-mib", 1024, 16, 1 << 20, &file_mib_, error);
  }

  bool Inject(const FaultTarget& target, StateRecord* record, std::string* error) override {
    std::string device, device_name;
    if (!BlockDeviceOf(target.storage, &device, &device_name, error)) return false;
    // The raw disk when we may open it; where the sandbox forbids that (EPERM
    // on /dev/vda here), a data file of our own on the same disk.
    std::string path = "/dev/" + device_name;
    int probe = open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (probe >= 0) {
      close(probe);
      record->Set("source", "raw device");
    } else {
      record->Set("raw_device_error", path + ": " + strerror(errno));
      path = target.storage + "/fault-" + record->Get("id") + "-disk-hog.data";
      record->Set("data_file", path);
      record->Set("source", "data file on the same disk");
      if (!WriteDataFile(path, file_mib_, error)) return false;
    }
    record->Set("device", device + " (" + device_name + ")");
    record->Set("read_path", path);
    for (uint64_t i = 0; i < readers_; ++i) {
      std::string key = "hog" + std::to_string(i);
      if (!StartHelper(target.tools_dir + "/limpwatch-testbed-hog",
                       {"disk", "--device", path, "--block-kib", std::to_string(block_kib_)}, {},
                       target.dir + "/fault-" + record->Get("id") + "-" + key + ".out", key, record, error)) {
        return false;
      }
      record->Set("helpers", i + 1);
    }
    return true;
  }

  bool Verify(const FaultTarget&, const StateRecord& record, JsonLine* evidence, std::string* error) override {
    uint64_t helpers = record.GetUint("helpers");
    uint64_t before = 0, after = 0;
    for (uint64_t i = 0; i < helpers; ++i) {
      before += ProcessIoBytes(static_cast<pid_t>(record.GetUint("hog" + std::to_string(i) + "_pid")), "read_bytes");
    }
    SleepMs(1000);
    for (uint64_t i = 0; i < helpers; ++i) {
      std::string key = "hog" + std::to_string(i);
      if (!HelperAlive(record, key)) {
        *error = "the disk reader exited: " + LastLine(record.Get(key + "_output"));
        return false;
      }
      after += ProcessIoBytes(static_cast<pid_t>(record.GetUint(key + "_pid")), "read_bytes");
    }
    double mib_per_s = double(after - before) / double(kMiB);
    evidence->Add("device", record.Get("device"))
        .Add("source", record.Get("source"))
        .Add("read_path", record.Get("read_path"))
        .Add("readers", helpers)
        .Add("hog_read_mib_per_s", mib_per_s);
    if (!record.Get("raw_device_error").empty()) evidence->Add("raw_device_error", record.Get("raw_device_error"));
    if (after <= before) {
      *error = "the disk reader read nothing from " + record.Get("read_path") + " in 1 s";
      return false;
    }
    return true;
  }

  bool Clear(const StateRecord& record, const ClearContext&, JsonLine* evidence, std::string* error) override {
    bool ok = true;
    for (uint64_t i = 0; i < record.GetUint("helpers"); ++i) {
      ok = StopHelper(record, "hog" + std::to_string(i), 2000, error) && ok;
    }
    std::string data_file = record.Get("data_file");
    if (!data_file.empty() && unlink(data_file.c_str()) != 0 && errno != ENOENT) {
      *error = "unlink " + data_file + ": " + strerror(errno);
      ok = false;
    }
    evidence->Add("readers_stopped", ok);
    return ok;
  }

 private:
  // Writes `mib` MiB of non-zero data with O_DIRECT and syncs it: the blocks
  // are on the disk (a hole or a preallocated extent would read without I/O).
  static bool WriteDataFile(const std::string& path, uint64_t mib, std::string* error) {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0600);
    if (fd < 0) {
      *error = "create " + path + ": " + strerror(errno);
      return false;
    }
    void* block = nullptr;
    bool ok = posix_memalign(&block, 4096, kMiB) == 0;
    if (ok) std::memset(block, 0xa5, kMiB);
    for (uint64_t i = 0; ok && i < mib; ++i) {
      ok = pwrite(fd, block, kMiB, static_cast<off_t>(i * kMiB)) == static_cast<ssize_t>(kMiB);
      if (!ok) *error = "write " + path + ": " + strerror(errno);
    }
    if (ok && fsync(fd) != 0) {
      *error = "fsync " + path + ": " + strerror(errno);
      ok = false;
    }
    std::free(block);
    close(fd);
    if (!ok) unlink(path.c_str());
    return ok;
  }

  uint64_t block_kib_ = 65536;
  uint64_t readers_ = 1;
  uint64_t file_mib_ = 1024;
};

}  // namespace

void RegisterDiskFaults(FaultRegistry* registry) {
  registry->Add("disk-busy", [] { return std::make_unique<DiskBusyFault>(); });
  registry->Add("disk-hog", [] { return std::make_unique<DiskHogFault>(); });
}

}  // namespace limpwatch::testbed::launcher
