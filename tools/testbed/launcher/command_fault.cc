// inject, clear, clear-all, faults and probe.
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <vector>

#include "common/json_line.h"
#include "launcher/cgroup_control.h"
#include "launcher/cluster.h"
#include "launcher/commands.h"
#include "launcher/iptables_control.h"
#include "launcher/nft_control.h"
#include "launcher/probe_runner.h"
#include "launcher/process_control.h"
#include "launcher/stop_flag.h"

namespace limpwatch::testbed::launcher {
namespace {

std::string NowText() {
  time_t now = time(nullptr);
  tm local{};
  localtime_r(&now, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &local);
  return text;
}

ProbeSettings ProbeFor(const FaultTarget& target, uint32_t server, uint64_t size_mib) {
  ProbeSettings settings;
  settings.tools_dir = target.tools_dir;
  settings.config_path = target.config_path;
  settings.server = server;
  settings.size_mib = size_mib;
  return settings;
}

// Probes the target and one peer (the next server), before or after.
struct ProbePair {
  ProbeResult target;
  ProbeResult peer;
  bool has_peer = false;
};

ProbePair ProbeTargetAndPeer(const FaultTarget& target, uint64_t size_mib) {
  ProbePair pair;
  pair.target = RunProbe(ProbeFor(target, target.server, size_mib));
  if (target.server_count > 1) {
    pair.has_peer = true;
    pair.peer = RunProbe(ProbeFor(target, (target.server + 1) % target.server_count, size_mib));
  }
  return pair;
}

// Clears a fault under the lock and reports it.
bool ClearAndReport(const std::string& dir, uint64_t id) {
  StateLock lock(dir);
  TestbedState state;
  std::string error;
  if (!state.Load(dir, &error)) return false;
  StateRecord* record = state.Fault(id);
  if (record == nullptr) return true;  // someone cleared it already
  JsonLine line;
  line.Add("event", "cleared")
      .Add("id", id)
      .Add("fault", record->Get("fault"))
      .Add("server", record->GetUint("server"));
  JsonLine evidence;
  bool ok = ClearRecordedFault(&state, id, &evidence, &error);
  if (!evidence.empty()) line.AddRaw("evidence", evidence.str());
  line.Add("ok", ok);
  if (!ok) line.Add("error", error);
  std::string save_error;
  state.Save(&save_error);
  EmitJsonLine(line);
  return ok;
}

}  // namespace

int Fail(const std::string& command, const std::string& error, int status) {
  EmitJsonLine(JsonLine().Add("event", "error").Add("command", command).Add("error", error));
  return status;
}

bool RequireDir(CommandLine* flags, std::string* dir, std::string* error) {
  *dir = flags->GetString("dir", "");
  if (dir->empty()) {
    *error = "--dir is required";
    return false;
  }
  while (dir->size() > 1 && dir->back() == '/') dir->pop_back();
  return true;
}

bool TargetOf(TestbedState* state, uint32_t index, FaultTarget* target, std::string* error) {
  StateRecord* cluster = state->Cluster();
  StateRecord* server = state->Server(index);
  if (cluster == nullptr || server == nullptr) {
    *error = cluster == nullptr ? "no test-bed runs here" : "no server " + std::to_string(index);
    return false;
  }
  target->dir = cluster->Get("dir");
  target->server = index;
  target->alias = server->Get("alias");
  target->pid = static_cast<pid_t>(server->GetUint("pid"));
  target->start_time = server->GetUint("start");
  target->port = static_cast<uint16_t>(server->GetUint("port"));
  target->storage = server->Get("storage");
  // A disk image is mounted too, but only a small file system is for enospc to fill.
  if (!server->Get("small_fs_mib").empty()) target->mount = server->Get("mount");
  target->memory_group = server->Get("memory_group");
  target->config_path = cluster->Get("config");
  target->tools_dir = cluster->Get("tools");
  target->server_count = static_cast<uint32_t>(cluster->GetUint("servers"));
  for (StateRecord* member : state->Servers()) {
    ClusterServer entry;
    entry.index = static_cast<uint32_t>(member->GetUint("index"));
    entry.alias = member->Get("alias");
    entry.pid = static_cast<pid_t>(member->GetUint("pid"));
    entry.start_time = member->GetUint("start");
    entry.storage = member->Get("storage");
    target->cluster.push_back(entry);
  }
  return true;
}

bool IsClusterWideFault(const std::string& name) {
  std::unique_ptr<Fault> fault = MakeFault(name);
  return fault && fault->cluster_wide();
}

bool ClearRecordedFault(TestbedState* state, uint64_t id, JsonLine* evidence, std::string* error) {
  StateRecord* record = state->Fault(id);
  if (record == nullptr) return true;
  StateRecord copy = *record;
  std::unique_ptr<Fault> fault = MakeFault(copy.Get("fault"));
  if (!fault) {
    *error = "unknown fault '" + copy.Get("fault") + "' in the state file";
    return false;
  }
  ClearContext context;
  context.restart_server = [state](uint32_t index, std::string* restart_error) {
    StateRecord* server = state->Server(index);
    if (server == nullptr) return false;
    if (IsSameProcessAlive(static_cast<pid_t>(server->GetUint("pid")), server->GetUint("start"))) return true;
    return StartServer(state, server, restart_error);
  };
  if (!fault->Clear(copy, context, evidence, error)) return false;
  state->RemoveFault(id);
  return true;
}

int CommandInject(CommandLine* flags) {
  std::string dir, error;
  uint64_t index = 0, probe_mib = 256;
  double seconds = 0;
  // A cluster-wide fault needs no --server (and ignores one).
  bool cluster_wide = flags->positional().size() == 2 && IsClusterWideFault(flags->positional()[1]);
  if (!RequireDir(flags, &dir, &error) || (!cluster_wide && !flags->Has("server")) ||
      !flags->GetUint("server", 0, 0, 63, &index, &error) || !flags->GetDouble("for", 0, 0, 86400, &seconds, &error) ||
      !flags->GetUint("probe-mib", 256, 1, 4096, &probe_mib, &error)) {
    return Fail("inject", error.empty() ? "inject FAULT --dir D --server I [--for SECONDS] [--measure]" : error, 2);
  }
  bool measure = flags->Has("measure");
  if (flags->positional().size() != 2) return Fail("inject", "inject FAULT --dir D --server I", 2);
  std::string name = flags->positional()[1];
  std::unique_ptr<Fault> fault = MakeFault(name);
  if (!fault) return Fail("inject", "unknown fault '" + name + "' (see `limpwatch-testbed faults`)", 2);
  if (!fault->Configure(flags, &error)) return Fail("inject", error, 2);
  if (std::string unread = flags->ReportUnread("inject " + name); !unread.empty()) return Fail("inject", unread, 2);

  FaultTarget target;
  {
    StateLock lock(dir);
    TestbedState state;
    if (!state.Load(dir, &error) || !TargetOf(&state, static_cast<uint32_t>(index), &target, &error)) {
      return Fail("inject", error);
    }
  }
  if (!IsSameProcessAlive(target.pid, target.start_time)) return Fail("inject", target.alias + " is not running");

  ProbePair before;
  if (measure) before = ProbeTargetAndPeer(target, probe_mib);
  if (StopRequested()) return 130;

  uint64_t id = 0;
  bool injected = false;
  JsonLine evidence;
  {
    StateLock lock(dir);
    TestbedState state;
    if (!state.Load(dir, &error)) return Fail("inject", error);
    for (StateRecord* active : state.Faults()) {
      if (active->Get("fault") == name && (cluster_wide || active->GetUint("server") == index)) {
        return Fail("inject", name + " is already injected on " +
                                  (cluster_wide ? std::string("this cluster") : "server " + std::to_string(index)) +
                                  " (id " + active->Get("id") + "); clear it first");
      }
    }
    id = state.NextFaultId();
    StateRecord& record = state.Add("fault");
    record.Set("id", id);
    record.Set("fault", name);
    record.Set("server", index);
    record.Set("since", NowText());
    state.Save(&error);  // on record before anything is set up
    injected = fault->Inject(target, &record, &error);
    std::string save_error;
    state.Save(&save_error);
    if (injected) injected = fault->Verify(target, *state.Fault(id), &evidence, &error);
    if (!injected) {
      std::string clear_error;
      JsonLine ignored;
      ClearRecordedFault(&state, id, &ignored, &clear_error);
      state.Save(&save_error);
    }
  }
  if (!injected) return Fail("inject " + name, error);
  EmitJsonLine(JsonLine()
                   .Add("event", "injected")
                   .Add("id", id)
                   .Add("fault", name)
                   .Add("server", index)
                   .Add("alias", target.alias)
                   .Add("pid", static_cast<int64_t>(target.pid))
                   .Add("cluster_wide", cluster_wide)
                   .Add("verified", true)
                   .Add("description", fault->description())
                   .AddRaw("evidence", evidence.str()));

  if (measure && !StopRequested()) {
    ProbePair after = ProbeTargetAndPeer(target, probe_mib);
    JsonLine measured;
    measured.Add("event", "measured").Add("id", id).Add("fault", name).Add("server", index);
    measured.AddRaw("target", CompareProbes(before.target, after.target));
    if (before.has_peer) measured.AddRaw("peer", CompareProbes(before.peer, after.peer));
    EmitJsonLine(measured);
  }
  if (seconds <= 0 && !StopRequested()) return 0;  // stays until `clear`
  if (seconds > 0) SleepUnlessStopped(static_cast<int>(seconds * 1000));
  bool cleared = ClearAndReport(dir, id);
  if (StopRequested()) return 130;
  return cleared ? 0 : 1;
}

int CommandClear(CommandLine* flags) {
  std::string dir, error;
  uint64_t server = 0, id = 0;
  if (!RequireDir(flags, &dir, &error) || !flags->GetUint("server", 0, 0, 63, &server, &error) ||
      !flags->GetUint("id", 0, 0, UINT64_MAX, &id, &error)) {
    return Fail("clear", error, 2);
  }
  bool by_server = flags->Has("server");
  std::string only_fault = flags->positional().size() > 1 ? flags->positional()[1] : flags->GetString("fault", "");
  if (std::string unread = flags->ReportUnread("clear"); !unread.empty()) return Fail("clear", unread, 2);
  std::vector<uint64_t> ids;
  {
    StateLock lock(dir);
    TestbedState state;
    if (!state.Load(dir, &error)) return Fail("clear", error);
    for (StateRecord* fault : state.Faults()) {
      if (by_server && fault->GetUint("server") != server && !IsClusterWideFault(fault->Get("fault"))) continue;
      if (!only_fault.empty() && fault->Get("fault") != only_fault) continue;
      if (id != 0 && fault->GetUint("id") != id) continue;
      ids.push_back(fault->GetUint("id"));
    }
  }
  bool ok = true;
  for (uint64_t fault_id : ids) ok = ClearAndReport(dir, fault_id) && ok;
  if (ids.empty()) EmitJsonLine(JsonLine().Add("event", "cleared").Add("faults", 0));
  return ok ? 0 : 1;
}

int CommandClearAll(CommandLine* flags) {
  std::string dir = flags->GetString("dir", "");
  if (std::string unread = flags->ReportUnread("clear-all"); !unread.empty()) return Fail("clear-all", unread, 2);
  bool ok = true;
  std::string error;
  // With --dir: that test-bed's recorded faults, then leftovers carrying its
  // aliases (cgroups) or ports (nft tables). Without: every test-bed leftover.
  std::vector<std::string> aliases;
  std::vector<std::string> ports;
  if (!dir.empty()) {
    std::vector<uint64_t> ids;
    {
      StateLock lock(dir);
      TestbedState state;
      if (!state.Load(dir, &error)) return Fail("clear-all", error);
      for (StateRecord* fault : state.Faults()) ids.push_back(fault->GetUint("id"));
      for (StateRecord* server : state.Servers()) {
        aliases.push_back(server->Get("alias"));
        ports.push_back(server->Get("port"));
        // A server left stopped by a hang whose record was lost: continue it.
        auto pid = static_cast<pid_t>(server->GetUint("pid"));
        if (IsSameProcessAlive(pid, server->GetUint("start")) && ProcessState(pid) == 'T') {
          SignalProcess(pid, server->GetUint("start"), SIGCONT);
        }
      }
    }
    for (uint64_t id : ids) ok = ClearAndReport(dir, id) && ok;
  }
  // Name suffixes of this test-bed's leftovers: "/limpwatch-testbed-<alias>", "_<port>".
  std::vector<std::string> group_suffixes, table_suffixes;
  for (const std::string& alias : aliases) group_suffixes.push_back(std::string("/") + kCgroupPrefix + alias);
  for (const std::string& port : ports) table_suffixes.push_back("_" + port);
  auto ours = [&](const std::string& name, const std::vector<std::string>& suffixes) {
    if (dir.empty()) return true;
    for (const std::string& suffix : suffixes) {
      if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        return true;
      }
    }
    return false;
  };
  std::string groups = "[";
  for (const auto& [root, group] : FindTestbedGroups()) {
    if (!ours(group, group_suffixes)) continue;
    bool removed = RemoveGroup(root, group, "/", &error);
    ok = removed && ok;
    if (groups.size() > 1) groups += ",";
    groups += JsonLine().Add("cgroup", group).Add("removed", removed).str();
  }
  std::string tables = "[";
  std::string why;
  if (NftAvailable(&why)) {
    for (const auto& [family, table] : NftTestbedTables()) {
      if (!ours(table, table_suffixes)) continue;
      bool removed = NftDeleteTable(family, table, &error);
      ok = removed && ok;
      if (tables.size() > 1) tables += ",";
      tables += JsonLine().Add("table", family + " " + table).Add("removed", removed).str();
    }
  }
  std::string chains = "[";
  for (const std::string& chain : IptablesTestbedChains()) {
    if (!ours(chain, table_suffixes)) continue;
    bool removed = IptablesRemoveChain(chain, true, &error);  // an empty filter table changes nothing
    ok = removed && ok;
    if (chains.size() > 1) chains += ",";
    chains += JsonLine().Add("chain", chain).Add("removed", removed).str();
  }
  JsonLine report;
  report.Add("event", "cleared-all")
      .AddRaw("cgroups", groups + "]")
      .AddRaw("nft_tables", tables + "]")
      .AddRaw("iptables_chains", chains + "]")
      .Add("ok", ok);
  if (!ok) report.Add("error", error);
  EmitJsonLine(report);
  return ok ? 0 : 1;
}

int CommandFaults(CommandLine* flags) {
  if (std::string unread = flags->ReportUnread("faults"); !unread.empty()) return Fail("faults", unread, 2);
  for (const std::string& name : FaultNames()) {
    EmitJsonLine(
        JsonLine().Add("event", "fault").Add("fault", name).Add("description", MakeFault(name)->description()));
  }
  return 0;
}

int CommandProbe(CommandLine* flags) {
  std::string dir, error;
  uint64_t index = 0, size_mib = 256, small_files = 200, timeout_ms = 5000;
  double seconds = 1.5;
  if (!RequireDir(flags, &dir, &error) || !flags->Has("server") ||
      !flags->GetUint("server", 0, 0, 63, &index, &error) ||
      !flags->GetUint("size-mib", 256, 1, 4096, &size_mib, &error) ||
      !flags->GetUint("small-files", 200, 0, 100000, &small_files, &error) ||
      !flags->GetDouble("seconds", 1.5, 0.1, 600, &seconds, &error) ||
      !flags->GetUint("timeout-ms", 5000, 100, 600000, &timeout_ms, &error)) {
    return Fail("probe", error.empty() ? "probe --dir D --server I" : error, 2);
  }
  if (std::string unread = flags->ReportUnread("probe"); !unread.empty()) return Fail("probe", unread, 2);
  FaultTarget target;
  {
    StateLock lock(dir);
    TestbedState state;
    if (!state.Load(dir, &error) || !TargetOf(&state, static_cast<uint32_t>(index), &target, &error)) {
      return Fail("probe", error);
    }
  }
  ProbeSettings settings = ProbeFor(target, target.server, size_mib);
  settings.small_files = small_files;
  settings.seconds = seconds;
  settings.request_timeout_ms = static_cast<int>(timeout_ms);
  ProbeResult result = RunProbe(settings);
  if (!result.completed) return Fail("probe", result.status);
  std::fputs((result.line + "\n").c_str(), stdout);
  return result.status == "ok" ? 0 : 1;
}

}  // namespace limpwatch::testbed::launcher
