// start, stop, status, restart-server and run.
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>

#include "common/json_line.h"
#include "launcher/cluster.h"
#include "launcher/commands.h"
#include "launcher/disk_image.h"
#include "launcher/process_control.h"
#include "launcher/stop_flag.h"

namespace limpwatch::testbed::launcher {
namespace {

bool MakeDirectories(const std::string& path, std::string* error) {
  for (size_t slash = 1; slash != std::string::npos;) {
    slash = path.find('/', slash + 1);
    std::string prefix = path.substr(0, slash);
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      *error = "mkdir " + prefix + ": " + strerror(errno);
      return false;
    }
  }
  return true;
}

int RemoveEntry(const char* path, const struct stat*, int, FTW*) { return remove(path); }

// Removes a test-bed directory (only one that holds an fs.conf, never
// crossing into a file system mounted below it).
bool RemoveTestbedDirectory(const std::string& dir, std::string* error) {
  if (access((dir + "/fs.conf").c_str(), F_OK) != 0) {
    *error = dir + " holds no fs.conf; not removing it";
    return false;
  }
  if (nftw(dir.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) != 0) {
    *error = "removing " + dir + ": " + strerror(errno);
    return false;
  }
  return true;
}

bool AnyServerAlive(TestbedState* state) {
  for (StateRecord* server : state->Servers()) {
    if (IsSameProcessAlive(static_cast<pid_t>(server->GetUint("pid")), server->GetUint("start"))) return true;
  }
  return false;
}

// Clears every recorded fault, stops the servers and removes the state.
bool TearDown(TestbedState* state, JsonLine* report, std::string* error) {
  bool ok = true;
  std::string cleared = "[";
  std::vector<uint64_t> ids;
  for (StateRecord* fault : state->Faults()) ids.push_back(fault->GetUint("id"));
  for (uint64_t id : ids) {
    JsonLine evidence;
    std::string fault_error;
    std::string name = state->Fault(id)->Get("fault");
    bool fault_ok = ClearRecordedFault(state, id, &evidence, &fault_error);
    if (!fault_ok) {
      ok = false;
      *error = fault_error;
    }
    if (cleared.size() > 1) cleared += ",";
    cleared += JsonLine().Add("id", id).Add("fault", name).Add("cleared", fault_ok).str();
  }
  report->AddRaw("faults_cleared", cleared + "]");
  std::string stop_error;
  if (!StopServers(state, report, &stop_error)) {
    ok = false;
    *error = stop_error;
  }
  std::string remove_error;
  if (ok && !state->Remove(&remove_error)) {
    ok = false;
    *error = remove_error;
  }
  if (!ok) state->Save(&remove_error);  // keep what could not be undone on record
  return ok;
}

bool ParseSmallFs(const std::string& text, int* server, uint64_t* mib) {
  size_t colon = text.find(':');
  if (colon == std::string::npos) return false;
  // Named strings: `end` points into them after the calls.
  std::string index_text = text.substr(0, colon);
  std::string size_text = text.substr(colon + 1);
  char* end = nullptr;
  long index = std::strtol(index_text.c_str(), &end, 10);
  if (index_text.empty() || *end != '\0' || index < 0) return false;
  unsigned long long size = std::strtoull(size_text.c_str(), &end, 10);
  if (size_text.empty() || *end != '\0' || size < 8 || size > 65536) return false;
  *server = static_cast<int>(index);
  *mib = size;
  return true;
}

}  // namespace

int CommandStart(CommandLine* flags) {
  ClusterSettings settings;
  std::string error;
  uint64_t servers, base_port, flow_kib, flow_buffers, stripe_kib, workers, storage_threads;
  if (!RequireDir(flags, &settings.dir, &error) || !flags->GetUint("servers", 4, 1, 64, &servers, &error) ||
      !flags->GetUint("base-port", 0, 0, 65535 - 1000 - 64, &base_port, &error) ||
      !flags->GetUint("flow-buffer-kib", 1024, 64, 4096, &flow_kib, &error) ||
      !flags->GetUint("flow-buffers", 4, 1, 16, &flow_buffers, &error) ||
      !flags->GetUint("stripe-kib", 1024, 64, 4096, &stripe_kib, &error) ||
      !flags->GetUint("workers", 4, 1, 64, &workers, &error) ||
      !flags->GetUint("storage-threads", 2, 1, 64, &storage_threads, &error) ||
      !flags->GetUint("disk-images", 0, 0, 1 << 20, &settings.disk_image_mib, &error)) {
    return Fail("start", error, 2);
  }
  settings.servers = static_cast<uint32_t>(servers);
  settings.base_port = static_cast<uint32_t>(base_port);
  settings.prefix = flags->GetString("name-prefix", "server");
  settings.config.flow_buffer_size = static_cast<uint32_t>(flow_kib * 1024);
  settings.config.flow_buffers_per_flow = static_cast<uint32_t>(flow_buffers);
  settings.config.stripe_size = static_cast<uint32_t>(stripe_kib * 1024);
  settings.config.worker_threads = static_cast<uint32_t>(workers);
  settings.config.storage_threads = static_cast<uint32_t>(storage_threads);
  settings.config.direct_io = !flags->Has("buffered");
  settings.config.sync_metadata = !flags->Has("no-sync-meta");
  settings.keep_segments = flags->Has("keep");
  settings.memory_groups = flags->Has("memory-groups");
  settings.peer_source = flags->GetString("peer-source", "config");
  bool foreground = flags->Has("foreground");
  // Another build of the server (an uninstrumented one, for overhead runs).
  std::string server_program = flags->GetString("server-program", "");
  if (!server_program.empty()) {
    char resolved_program[PATH_MAX];
    if (realpath(server_program.c_str(), resolved_program) == nullptr || access(resolved_program, X_OK) != 0) {
      return Fail("start", "--server-program " + server_program + " is not an executable file", 2);
    }
    settings.server_program = resolved_program;
  }
  std::string small_fs = flags->GetString("small-fs", "");
  if (!small_fs.empty() && !ParseSmallFs(small_fs, &settings.small_fs_server, &settings.small_fs_mib)) {
    return Fail("start", "--small-fs is INDEX:MIB with 8-65536 MiB", 2);
  }
  if (settings.small_fs_server >= static_cast<int>(settings.servers)) {
    return Fail("start", "--small-fs names no server", 2);
  }
  if (settings.disk_image_mib != 0 && settings.disk_image_mib < 64) {
    return Fail("start", "--disk-images is the image size in MiB, at least 64", 2);
  }
  if (std::string why; settings.disk_image_mib != 0 && !DiskImagesAvailable(&why)) {
    return Fail("start", "--disk-images: " + why);
  }
  if (std::string why; settings.memory_groups && !MemoryGroupsAvailable(&why)) {
    return Fail("start", "--memory-groups: " + why);
  }
  if (settings.peer_source != "config" && settings.peer_source != "peers") {
    return Fail("start", "--peer-source is config or peers", 2);
  }
  for (char c : settings.prefix) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') {
      return Fail("start", "--name-prefix may hold letters, digits, '-' and '_' (it names the segments)", 2);
    }
  }
  if (std::string unread = flags->ReportUnread("start"); !unread.empty()) return Fail("start", unread, 2);
  char resolved[PATH_MAX];
  if (!MakeDirectories(settings.dir, &error) || realpath(settings.dir.c_str(), resolved) == nullptr) {
    return Fail("start", error.empty() ? "cannot resolve " + settings.dir : error);
  }
  settings.dir = resolved;

  JsonLine report;
  {
    StateLock lock(settings.dir);
    TestbedState state;
    if (!state.Load(settings.dir, &error)) return Fail("start", error);
    if (state.exists()) {
      if (AnyServerAlive(&state))
        return Fail("start", "a test-bed already runs in " + settings.dir + "; stop it first");
      JsonLine leftovers;
      if (!TearDown(&state, &leftovers, &error)) return Fail("start", "cleaning up a previous run: " + error);
    }
    if (!StartCluster(settings, &state, &report, &error)) {
      state.Remove(&error);
      return Fail("start", error, StopRequested() ? 130 : 1);
    }
  }
  EmitJsonLine(report);
  if (!foreground) return 0;

  // In the foreground the launcher owns the cluster until Ctrl-C / SIGTERM.
  while (SleepUnlessStopped(500)) {
    StateLock lock(settings.dir);
    TestbedState state;
    if (!state.Load(settings.dir, &error) || !state.exists()) return 0;  // stopped by someone else
    for (StateRecord* server : state.Servers()) ReapIfChild(static_cast<pid_t>(server->GetUint("pid")));
  }
  StateLock lock(settings.dir);
  TestbedState state;
  if (!state.Load(settings.dir, &error)) return Fail("start", error);
  JsonLine stopped;
  stopped.Add("event", "stopped").Add("dir", settings.dir);
  bool ok = TearDown(&state, &stopped, &error);
  if (!ok) stopped.Add("error", error);
  EmitJsonLine(stopped);
  return ok ? 0 : 1;
}

int CommandStop(CommandLine* flags) {
  std::string dir, error;
  if (!RequireDir(flags, &dir, &error)) return Fail("stop", error, 2);
  bool remove = flags->Has("remove");
  if (std::string unread = flags->ReportUnread("stop"); !unread.empty()) return Fail("stop", unread, 2);
  JsonLine report;
  report.Add("event", "stopped").Add("dir", dir);
  bool ok = true;
  {
    StateLock lock(dir);
    TestbedState state;
    if (!state.Load(dir, &error)) return Fail("stop", error);
    if (state.exists()) ok = TearDown(&state, &report, &error);
  }
  if (ok && remove) {
    ok = RemoveTestbedDirectory(dir, &error);
    report.Add("removed", ok);
  }
  if (!ok) report.Add("error", error);
  EmitJsonLine(report);
  return ok ? 0 : 1;
}

int CommandStatus(CommandLine* flags) {
  std::string dir, error;
  if (!RequireDir(flags, &dir, &error)) return Fail("status", error, 2);
  if (std::string unread = flags->ReportUnread("status"); !unread.empty()) return Fail("status", unread, 2);
  StateLock lock(dir);
  TestbedState state;
  if (!state.Load(dir, &error)) return Fail("status", error);
  JsonLine report;
  report.Add("event", "status").Add("dir", dir).Add("running", state.exists() && AnyServerAlive(&state));
  if (StateRecord* cluster = state.Cluster()) {
    report.Add("config", cluster->Get("config")).Add("peers", cluster->Get("peers"));
  }
  report.AddRaw("servers", ServersJson(&state));
  std::string faults = "[";
  for (StateRecord* fault : state.Faults()) {
    if (faults.size() > 1) faults += ",";
    faults += JsonLine()
                  .Add("id", fault->GetUint("id"))
                  .Add("fault", fault->Get("fault"))
                  .Add("server", fault->GetUint("server"))
                  .Add("since", fault->Get("since"))
                  .str();
  }
  report.AddRaw("faults", faults + "]");
  EmitJsonLine(report);
  return 0;
}

int CommandRestartServer(CommandLine* flags) {
  std::string dir, error;
  uint64_t index = 0;
  if (!RequireDir(flags, &dir, &error) || !flags->GetUint("server", 0, 0, 63, &index, &error)) {
    return Fail("restart-server", error, 2);
  }
  if (std::string unread = flags->ReportUnread("restart-server"); !unread.empty()) {
    return Fail("restart-server", unread, 2);
  }
  StateLock lock(dir);
  TestbedState state;
  if (!state.Load(dir, &error) || state.Cluster() == nullptr) return Fail("restart-server", "no test-bed in " + dir);
  StateRecord* server = state.Server(static_cast<uint32_t>(index));
  if (server == nullptr) return Fail("restart-server", "no server " + std::to_string(index));
  if (IsSameProcessAlive(static_cast<pid_t>(server->GetUint("pid")), server->GetUint("start"))) {
    return Fail("restart-server", server->Get("alias") + " is running");
  }
  if (!StartServer(&state, server, &error)) return Fail("restart-server", error);
  state.Save(&error);
  EmitJsonLine(JsonLine().Add("event", "restarted").AddRaw("servers", ServersJson(&state)));
  return 0;
}

int CommandRun(CommandLine* flags) {
  std::string dir, error;
  uint64_t clients = 1;
  if (!RequireDir(flags, &dir, &error) || !flags->GetUint("clients", 1, 1, 64, &clients, &error)) {
    return Fail("run", error, 2);
  }
  bool keep_segments = flags->Has("keep-segments");
  if (std::string unread = flags->ReportUnread("run"); !unread.empty()) {
    return Fail("run", unread + " (client flags go after --)", 2);
  }
  std::vector<std::string> workload(flags->positional().begin() + 1, flags->positional().end());
  if (workload.empty()) return Fail("run", "run WORKLOAD --dir D [--clients K] [-- client flags]", 2);
  std::string config, tools, prefix;
  {
    StateLock lock(dir);
    TestbedState state;
    if (!state.Load(dir, &error) || state.Cluster() == nullptr) return Fail("run", "no test-bed in " + dir);
    config = state.Cluster()->Get("config");
    tools = state.Cluster()->Get("tools");
    prefix = state.Cluster()->Get("prefix");
  }
  struct Client {
    pid_t pid;
    uint64_t start;
    int output;
    std::string pending;
  };
  std::vector<Client> running;
  for (uint64_t k = 0; k < clients; ++k) {
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) break;
    SpawnOptions options;
    options.program = tools + "/limpwatch-testbed-client";
    options.arguments = {"--config", config};
    options.arguments.insert(options.arguments.end(), workload.begin(), workload.end());
    options.unset_environment = {"LIMPWATCH_KEEP", "LIMPWATCH_NAME", "LIMPWATCH_SELF", "LIMPWATCH_PEERS",
                                 "LIMPWATCH_PVFS_CONFIG"};
    options.set_environment = {"LIMPWATCH_NAME=" + prefix + "-client" + std::to_string(k)};
    if (keep_segments) options.set_environment.push_back("LIMPWATCH_KEEP=1");
    options.stdout_pipe = pipe_fds[1];
    options.stderr_path = dir + "/client" + std::to_string(k) + ".log";
    pid_t pid = SpawnProcess(options, &error);
    close(pipe_fds[1]);
    if (pid < 0) {
      close(pipe_fds[0]);
      break;
    }
    running.push_back({pid, ProcessStartTime(pid), pipe_fds[0], {}});
  }
  // Relay every client's lines, tagged with its number, until all are done.
  size_t open_outputs = running.size();
  bool stopping = false;
  while (open_outputs > 0) {
    if (StopRequested() && !stopping) {
      stopping = true;  // clients stop at their next request, clean up and print their done line
      for (const Client& client : running) SignalProcess(client.pid, client.start, SIGTERM);
    }
    std::vector<pollfd> polls;
    for (const Client& client : running) polls.push_back({client.output, POLLIN, 0});
    if (poll(polls.data(), polls.size(), 200) <= 0) continue;
    for (size_t k = 0; k < running.size(); ++k) {
      if (running[k].output < 0 || polls[k].revents == 0) continue;
      char buffer[8192];
      ssize_t count = read(running[k].output, buffer, sizeof buffer);
      if (count <= 0) {
        close(running[k].output);
        running[k].output = -1;
        --open_outputs;
        continue;
      }
      running[k].pending.append(buffer, static_cast<size_t>(count));
      for (size_t newline; (newline = running[k].pending.find('\n')) != std::string::npos;) {
        std::string line = running[k].pending.substr(0, newline);
        running[k].pending.erase(0, newline + 1);
        if (!line.empty() && line[0] == '{') line = "{\"client\":" + std::to_string(k) + "," + line.substr(1);
        std::fputs((line + "\n").c_str(), stdout);
        std::fflush(stdout);
      }
    }
  }
  int status = 0;
  for (const Client& client : running) {
    // Reaped here, not by a liveness check, or its exit status would be lost.
    int wait_status = 0;
    bool exited = ReapChild(client.pid, 20000, &wait_status);
    if (!exited) StopProcess(client.pid, client.start, 1000);  // and reaps it: a failure
    if (exited && WIFEXITED(wait_status)) {
      status = std::max(status, WEXITSTATUS(wait_status));
    } else {
      status = std::max(status, 1);
    }
  }
  if (running.size() != clients) return Fail("run", "could not start every client: " + error);
  return StopRequested() ? 130 : status;
}

}  // namespace limpwatch::testbed::launcher
