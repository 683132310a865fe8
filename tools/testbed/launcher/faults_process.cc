// Process faults and propagated errors (seed 001).
//
// crash: SIGKILL to the server. Cleared by starting it again (same port,
//   same storage; it replays its keyval log).
// hang: SIGSTOP to the server: every thread stops, its sockets stay open and
//   its clients time out. Cleared by SIGCONT.
// emfile: the server's soft RLIMIT_NOFILE is lowered (prlimit on the running
//   process) to the lowest free descriptor number seen over 200 ms: new connections are not
//   accepted and new bstreams cannot be opened (EMFILE), while open ones keep
//   working. Cleared by restoring the old limit.
// enospc: the server's storage must be a small file system (start --small-fs
//   I:MIB, a size-limited tmpfs); a filler process grows a ballast file into
//   every block that comes free (limpwatch-testbed-hog fill), so the
//   server's new blocks and metadata commits fail with ENOSPC, which reaches
//   the clients. Cleared by stopping the filler and removing the ballast.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <vector>

#include "common/ping_client.h"
#include "launcher/fault.h"
#include "launcher/fault_registry.h"
#include "launcher/process_control.h"

namespace limpwatch::testbed::launcher {
namespace {

std::set<uint64_t> OpenDescriptors(pid_t pid) {
  std::set<uint64_t> descriptors;
  DIR* directory = opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (directory == nullptr) return descriptors;
  while (dirent* entry = readdir(directory)) {
    if (entry->d_name[0] != '.') descriptors.insert(std::strtoull(entry->d_name, nullptr, 10));
  }
  closedir(directory);
  return descriptors;
}

// The descriptor number the kernel would hand out next: the lowest free one.
// A soft limit at that number makes the next open / accept fail with EMFILE.
uint64_t LowestFreeDescriptor(pid_t pid) {
  std::set<uint64_t> open = OpenDescriptors(pid);
  uint64_t lowest = 0;
  while (open.count(lowest)) ++lowest;
  return lowest;
}

bool AllThreadsStopped(pid_t pid) {
  std::vector<pid_t> threads = ThreadsOf(pid);
  if (threads.empty()) return false;
  for (pid_t thread : threads) {
    std::string path = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(thread) + "/stat";
    FILE* file = fopen(path.c_str(), "r");
    if (file == nullptr) return false;
    char text[512] = {0};
    size_t length = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    const char* close_paren = strrchr(text, ')');
    if (length == 0 || close_paren == nullptr || close_paren[1] == '\0' || close_paren[2] != 'T') return false;
  }
  return true;
}

class CrashFault : public Fault {
 public:
  const char* name() const override { return "crash"; }
  const char* description() const override {
    return "SIGKILL to the server; clear restarts it on the same port and storage";
  }

  bool Inject(const FaultTarget& target, StateRecord* record, std::string* error) override {
    record->Set("server_pid", static_cast<uint64_t>(target.pid));
    record->Set("server_start", target.start_time);
    if (!SignalProcess(target.pid, target.start_time, SIGKILL)) {
      *error = "kill -KILL " + std::to_string(target.pid) + ": " + strerror(errno);
      return false;
    }
    return true;
  }

  bool Verify(const FaultTarget& target, const StateRecord& record, JsonLine* evidence, std::string* error) override {
    if (!WaitForExit(target.pid, target.start_time, 3000)) {
      *error = "pid " + std::to_string(target.pid) + " is still running";
      return false;
    }
    PingResult ping = PingServer("127.0.0.1", target.port, 1, 1000);
    evidence->Add("server_pid", record.GetUint("server_pid")).Add("process_gone", true).Add("port_refuses", !ping.ok);
    if (ping.ok) {
      *error = "something still answers on port " + std::to_string(target.port);
      return false;
    }
    return true;
  }

  bool Clear(const StateRecord& record, const ClearContext& context, JsonLine* evidence, std::string* error) override {
    bool ok = context.restart_server && context.restart_server(static_cast<uint32_t>(record.GetUint("server")), error);
    evidence->Add("server_restarted", ok);
    return ok;
  }
};

class HangFault : public Fault {
 public:
  const char* name() const override { return "hang"; }
  const char* description() const override {
    return "SIGSTOP to the server (every thread stops, connections stay open, clients time out); clear sends SIGCONT";
  }

  bool Inject(const FaultTarget& target, StateRecord* record, std::string* error) override {
    record->Set("server_pid", static_cast<uint64_t>(target.pid));
    record->Set("server_start", target.start_time);
    if (!SignalProcess(target.pid, target.start_time, SIGSTOP)) {
      *error = "kill -STOP " + std::to_string(target.pid) + ": " + strerror(errno);
      return false;
    }
    return true;
  }

  bool Verify(const FaultTarget& target, const StateRecord&, JsonLine* evidence, std::string* error) override {
    for (int waited = 0; waited < 2000 && !AllThreadsStopped(target.pid); waited += 20) SleepMs(20);
    if (!AllThreadsStopped(target.pid)) {
      *error = "pid " + std::to_string(target.pid) + " is not stopped (state " +
               std::string(1, ProcessState(target.pid)) + ")";
      return false;
    }
    PingResult ping = PingServer("127.0.0.1", target.port, 1, 500);
    evidence->Add("process_state", std::string(1, ProcessState(target.pid)))
        .Add("threads_stopped", static_cast<uint64_t>(ThreadsOf(target.pid).size()))
        .Add("ping_times_out", !ping.ok && ping.error == ETIMEDOUT);
    return true;
  }

  bool Clear(const StateRecord& record, const ClearContext&, JsonLine* evidence, std::string* error) override {
    auto pid = static_cast<pid_t>(record.GetUint("server_pid"));
    uint64_t start = record.GetUint("server_start");
    if (!IsSameProcessAlive(pid, start)) return true;
    SignalProcess(pid, start, SIGCONT);
    for (int waited = 0; waited < 2000 && ProcessState(pid) == 'T'; waited += 20) SleepMs(20);
    bool running = ProcessState(pid) != 'T';
    evidence->Add("process_state", std::string(1, ProcessState(pid))).Add("continued", running);
    if (!running) *error = "pid " + std::to_string(pid) + " is still stopped";
    return running;
  }
};

class EmfileFault : public Fault {
 public:
  const char* name() const override { return "emfile"; }
  const char* description() const override {
    return "prlimit lowers the running server's soft RLIMIT_NOFILE to the lowest free descriptor number seen over 200 ms: new "
           "connections and new bstream opens fail with EMFILE";
  }

  bool Configure(CommandLine* flags, std::string* error) override {
    return flags->GetUint("spare", 0, 0, 1000, &spare_, error);
  }

  bool Inject(const FaultTarget& target, StateRecord* record, std::string* error) override {
    rlimit old_limit{};
    if (prlimit(target.pid, RLIMIT_NOFILE, nullptr, &old_limit) != 0) {
      *error = std::string("prlimit (read): ") + strerror(errno);
      return false;
    }
    record->Set("server_pid", static_cast<uint64_t>(target.pid));
    record->Set("server_start", target.start_time);
    record->Set("old_soft", static_cast<uint64_t>(old_limit.rlim_cur));
    record->Set("old_hard", static_cast<uint64_t>(old_limit.rlim_max));
    // A server that opens and closes files all the time (postmark) frees low
    // descriptors now and then, and the limit caps descriptor numbers, not
    // their count: the lowest free number seen over a fifth of a second is
    // one the server rarely gets below, so new opens keep failing.
    uint64_t lowest_free = LowestFreeDescriptor(target.pid);
    for (int look = 0; look < 20; ++look) {
      SleepMs(10);
      lowest_free = std::min(lowest_free, LowestFreeDescriptor(target.pid));
    }
    record->Set("lowest_free_descriptor", lowest_free);
    rlimit new_limit{static_cast<rlim_t>(lowest_free + spare_), old_limit.rlim_max};
    record->Set("new_soft", static_cast<uint64_t>(new_limit.rlim_cur));
    if (prlimit(target.pid, RLIMIT_NOFILE, &new_limit, nullptr) != 0) {
      *error = std::string("prlimit (set): ") + strerror(errno);
      return false;
    }
    return true;
  }

  bool Verify(const FaultTarget& target, const StateRecord& record, JsonLine* evidence, std::string* error) override {
    rlimit current{};
    if (prlimit(target.pid, RLIMIT_NOFILE, nullptr, &current) != 0 || current.rlim_cur != record.GetUint("new_soft")) {
      *error = "the soft RLIMIT_NOFILE of pid " + std::to_string(target.pid) + " does not read back as " +
               record.Get("new_soft");
      return false;
    }
    // A new connection now waits in the backlog: the server cannot accept it.
    PingResult ping = PingServer("127.0.0.1", target.port, 1, 1000);
    evidence->Add("soft_limit", static_cast<uint64_t>(current.rlim_cur))
        .Add("old_soft_limit", record.GetUint("old_soft"))
        .Add("open_descriptors", static_cast<uint64_t>(OpenDescriptors(target.pid).size()))
        .Add("new_connection_served", ping.ok);
    if (ping.ok) {
      *error = "a new connection was still served";
      return false;
    }
    return true;
  }

  bool Clear(const StateRecord& record, const ClearContext&, JsonLine* evidence, std::string* error) override {
    auto pid = static_cast<pid_t>(record.GetUint("server_pid"));
    if (!IsSameProcessAlive(pid, record.GetUint("server_start"))) return true;
    rlimit old_limit{static_cast<rlim_t>(record.GetUint("old_soft")), static_cast<rlim_t>(record.GetUint("old_hard"))};
    if (prlimit(pid, RLIMIT_NOFILE, &old_limit, nullptr) != 0) {
      *error = std::string("prlimit (restore): ") + strerror(errno);
      return false;
    }
    evidence->Add("soft_limit_restored", record.GetUint("old_soft"));
    return true;
  }

 private:
  uint64_t spare_ = 0;
};

class EnospcFault : public Fault {
 public:
  const char* name() const override { return "enospc"; }
  const char* description() const override {
    return "a filler process keeps the server's small storage file system full (start --small-fs I:MIB): its new "
           "blocks and metadata commits fail with ENOSPC";
  }

  bool Inject(const FaultTarget& target, StateRecord* record, std::string* error) override {
    if (target.mount.empty()) {
      *error = "server " + target.alias + "'s storage is not a small file system; start the cluster with --small-fs " +
               std::to_string(target.server) + ":MIB";
      return false;
    }
    std::string ballast = target.mount + "/.limpwatch-ballast";
    record->Set("ballast", ballast);
    record->Set("mount", target.mount);
    return StartHelper(target.tools_dir + "/limpwatch-testbed-hog", {"fill", "--ballast", ballast}, {},
                       target.dir + "/fault-" + record->Get("id") + "-filler.out", "filler", record, error);
  }

  bool Verify(const FaultTarget& target, const StateRecord& record, JsonLine* evidence, std::string* error) override {
    // The filler says when its first fill is done.
    for (int waited = 0; LastLine(record.Get("filler_output")).find("space-filler") == std::string::npos;
         waited += 50) {
      if (!HelperAlive(record, "filler")) {
        *error = "the space filler exited: " + LastLine(record.Get("filler_output"));
        return false;
      }
      if (waited >= 10000) {
        *error = "the space filler did not fill " + target.mount + " within 10 s";
        return false;
      }
      SleepMs(50);
    }
    struct statvfs space {};
    statvfs(target.mount.c_str(), &space);
    uint64_t available = space.f_bavail * space.f_frsize;
    std::string test_path = target.mount + "/.limpwatch-enospc-check";
    int fd = open(test_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int write_errno = 0;
    if (fd >= 0) {
      std::vector<char> block(64 * 1024, 0);
      if (write(fd, block.data(), block.size()) < 0) write_errno = errno;
      close(fd);
      unlink(test_path.c_str());
    } else {
      write_errno = errno;
    }
    evidence->Add("ballast", record.Get("ballast"))
        .Add("bytes_available", available)
        .Add("test_write_errno", write_errno)
        .Add("test_write_error", write_errno != 0 ? strerror(write_errno) : "none");
    if (write_errno != ENOSPC) {
      *error = "a 64 KiB write on " + target.mount + " did not fail with ENOSPC";
      return false;
    }
    return true;
  }

  bool Clear(const StateRecord& record, const ClearContext&, JsonLine* evidence, std::string* error) override {
    // The filler first, or it would take the space the ballast gives back.
    if (!StopHelper(record, "filler", 2000, error)) return false;
    std::string ballast = record.Get("ballast");
    if (ballast.empty()) return true;
    if (unlink(ballast.c_str()) != 0 && errno != ENOENT) {
      *error = "unlink " + ballast + ": " + strerror(errno);
      return false;
    }
    struct statvfs space {};
    statvfs(record.Get("mount").c_str(), &space);
    evidence->Add("ballast_removed", true).Add("bytes_available", uint64_t{space.f_bavail * space.f_frsize});
    return true;
  }
};

}  // namespace

void RegisterProcessFaults(FaultRegistry* registry) {
  registry->Add("crash", [] { return std::make_unique<CrashFault>(); });
  registry->Add("hang", [] { return std::make_unique<HangFault>(); });
  registry->Add("emfile", [] { return std::make_unique<EmfileFault>(); });
}

void RegisterStorageErrorFaults(FaultRegistry* registry) {
  registry->Add("enospc", [] { return std::make_unique<EnospcFault>(); });
}

}  // namespace limpwatch::testbed::launcher
