// Faults of the code every server runs (issue 25): a regression is the same
// on every server, so peer comparison must stay silent on it, and only a
// comparison of recordings before and after can point at it.
//
// slow-path: every server's small-file create (the metadata create,
//   HandleCreateMetafile) spends --delay-ms of CPU in SlowPathRegression. The
//   launcher writes the delay into <storage>/slow-path of each server and
//   sends it SIGUSR1; each server acknowledges in <storage>/slow-path.state.
//   Cleared by removing the control file, SIGUSR1 again, and, once each
//   server has said "off", its state file.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "launcher/fault.h"
#include "launcher/fault_registry.h"
#include "launcher/process_control.h"

namespace limpwatch::testbed::launcher {
namespace {

// The names the server reads and writes (server/slow_path_switch.h).
constexpr const char* kControlFile = "/slow-path";
constexpr const char* kStateFile = "/slow-path.state";
constexpr int kAcknowledgeTimeoutMs = 3000;

std::string Member(size_t index, const char* field) { return "member" + std::to_string(index) + "_" + field; }

std::string ReadState(const std::string& storage) {
  std::ifstream file(storage + kStateFile);
  std::string line;
  std::getline(file, line);
  return line;
}

// Waits until the server's state file says `expected`; false after the timeout.
bool WaitForState(const std::string& storage, const std::string& expected) {
  for (int waited = 0; waited < kAcknowledgeTimeoutMs; waited += 10) {
    if (ReadState(storage) == expected) return true;
    SleepMs(10);
  }
  return ReadState(storage) == expected;
}

bool WriteControl(const std::string& storage, uint64_t delay_us, std::string* error) {
  std::string path = storage + kControlFile;
  std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary, std::ios::trunc);
    file << delay_us << "\n";
    if (!file.flush()) {
      *error = "cannot write " + temporary;
      return false;
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    *error = "rename " + temporary + ": " + strerror(errno);
    unlink(temporary.c_str());
    return false;
  }
  return true;
}

class SlowPathFault : public Fault {
 public:
  const char* name() const override { return "slow-path"; }
  const char* description() const override {
    return "a regression on every server at once: each small-file create spins --delay-ms of CPU in "
           "SlowPathRegression (control file and SIGUSR1); peer comparison should stay silent";
  }
  bool cluster_wide() const override { return true; }

  bool Configure(CommandLine* flags, std::string* error) override {
    double delay_ms = 3;
    if (!flags->GetDouble("delay-ms", 3, 0.01, 1000, &delay_ms, error)) return false;
    delay_us_ = static_cast<uint64_t>(std::llround(delay_ms * 1000));
    return true;
  }

  bool Inject(const FaultTarget& target, StateRecord* record, std::string* error) override {
    record->Set("delay_us", delay_us_);
    record->Set("members", static_cast<uint64_t>(target.cluster.size()));
    // Every member on record before any is switched: Clear can undo a half-done inject.
    for (size_t index = 0; index < target.cluster.size(); ++index) {
      const ClusterServer& server = target.cluster[index];
      record->Set(Member(index, "alias"), server.alias);
      record->Set(Member(index, "pid"), static_cast<uint64_t>(server.pid));
      record->Set(Member(index, "start"), server.start_time);
      record->Set(Member(index, "storage"), server.storage);
    }
    for (const ClusterServer& server : target.cluster) {
      if (!WriteControl(server.storage, delay_us_, error)) return false;
      if (!SignalProcess(server.pid, server.start_time, SIGUSR1)) {
        *error = "kill -USR1 " + std::to_string(server.pid) + " (" + server.alias + "): " + strerror(errno);
        return false;
      }
    }
    return true;
  }

  bool Verify(const FaultTarget&, const StateRecord& record, JsonLine* evidence, std::string* error) override {
    const std::string expected = "on " + record.Get("delay_us");
    std::string acknowledged = "[";
    bool all_on = true;
    for (size_t index = 0; index < record.GetUint("members"); ++index) {
      std::string storage = record.Get(Member(index, "storage"));
      bool on = WaitForState(storage, expected);
      all_on = all_on && on;
      if (acknowledged.size() > 1) acknowledged += ",";
      acknowledged += JsonLine().Add("server", record.Get(Member(index, "alias"))).Add("state", ReadState(storage)).str();
      if (!on && error->empty()) {
        *error = record.Get(Member(index, "alias")) + " did not acknowledge '" + expected + "' in " + storage +
                 kStateFile + " within " + std::to_string(kAcknowledgeTimeoutMs) + " ms";
      }
    }
    evidence->Add("delay_us", record.GetUint("delay_us"))
        .Add("function", "limpwatch::testbed::request::SlowPathRegression")
        .Add("servers_on", all_on ? record.GetUint("members") : 0)
        .AddRaw("acknowledged", acknowledged + "]");
    return all_on;
  }

  bool Clear(const StateRecord& record, const ClearContext&, JsonLine* evidence, std::string* error) override {
    bool ok = true;
    uint64_t switched_off = 0;
    for (size_t index = 0; index < record.GetUint("members"); ++index) {
      std::string storage = record.Get(Member(index, "storage"));
      if (storage.empty()) continue;
      unlink((storage + kControlFile + ".tmp").c_str());
      if (unlink((storage + kControlFile).c_str()) != 0 && errno != ENOENT) {
        *error = "unlink " + storage + kControlFile + ": " + strerror(errno);
        ok = false;
        continue;
      }
      auto pid = static_cast<pid_t>(record.GetUint(Member(index, "pid")));
      uint64_t start = record.GetUint(Member(index, "start"));
      // A server that is gone (or was restarted, and read no control file)
      // runs no regression; only a running one has to say so.
      bool alive = IsSameProcessAlive(pid, start);
      if (alive && ProcessState(pid) != 'T') {
        SignalProcess(pid, start, SIGUSR1);
        if (!WaitForState(storage, "off")) {
          *error = record.Get(Member(index, "alias")) + " did not acknowledge 'off' in " + storage + kStateFile;
          ok = false;
          continue;
        }
        ++switched_off;
      }
      unlink((storage + kStateFile).c_str());
    }
    evidence->Add("servers_switched_off", switched_off);
    return ok;
  }

 private:
  uint64_t delay_us_ = 3000;
};

}  // namespace

void RegisterRegressionFaults(FaultRegistry* registry) {
  registry->Add("slow-path", [] { return std::make_unique<SlowPathFault>(); });
}

}  // namespace limpwatch::testbed::launcher
