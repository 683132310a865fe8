#include "launcher/cluster.h"

#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/ping_client.h"
#include "common/socket_util.h"
#include "launcher/cgroup_control.h"
#include "launcher/disk_image.h"
#include "launcher/process_control.h"
#include "launcher/stop_flag.h"
#include "limpwatch/shm/segment.h"

namespace limpwatch::testbed::launcher {
namespace {

constexpr int kReadyTimeoutMs = 15000;
constexpr int kStopGraceMs = 5000;

bool WriteTextFile(const std::string& path, const std::string& text, std::string* error) {
  std::ofstream file(path, std::ios::trunc);
  file << text;
  file.flush();
  if (!file) {
    *error = "cannot write " + path;
    return false;
  }
  return true;
}

// A UDP socket bound to 127.0.0.1:port, or -1 when the port is taken.
int BindUdp(uint16_t port) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Chooses the servers' TCP ports (their UDP port + offset free as well) and
// returns their listening sockets in *listeners: each server inherits its own,
// so no other process can take a port between this choice and the server's
// start (two test-beds starting at once would otherwise pick the same one).
bool ChoosePorts(const ClusterSettings& settings, std::vector<uint16_t>* ports, std::vector<int>* listeners,
                 std::string* error) {
  // Closed once every port is chosen, so that none is offered twice; the UDP
  // ports are for the servers' runtimes to bind.
  std::vector<int> released;
  bool ok = true;
  for (uint32_t i = 0; i < settings.servers && ok; ++i) {
    for (int attempt = 0;; ++attempt) {
      uint16_t wanted = settings.base_port == 0 ? 0 : static_cast<uint16_t>(settings.base_port + i);
      int tcp = ListenTcp("127.0.0.1", wanted, error);
      if (tcp < 0) {
        ok = false;
        break;
      }
      uint16_t port = LocalPort(tcp);
      int udp = port + kPeerPortOffset <= 65535 ? BindUdp(static_cast<uint16_t>(port + kPeerPortOffset)) : -1;
      if (udp >= 0) {
        released.push_back(udp);
        listeners->push_back(tcp);
        ports->push_back(port);
        break;
      }
      released.push_back(tcp);
      if (settings.base_port != 0 || attempt > 50) {
        *error = "UDP port " + std::to_string(port + kPeerPortOffset) + " (limpwatch's peer port for TCP port " +
                 std::to_string(port) + ") is taken";
        ok = false;
        break;
      }
    }
  }
  for (int fd : released) close(fd);
  if (!ok) {
    for (int fd : *listeners) close(fd);
    listeners->clear();
  }
  return ok;
}

bool MountSmallFileSystem(const std::string& path, uint64_t mib, std::string* error) {
  std::string options = "size=" + std::to_string(mib) + "m,mode=0755";
  if (mount("limpwatch-testbed", path.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
    *error = "mount tmpfs (" + options + ") on " + path + ": " + strerror(errno);
    return false;
  }
  return true;
}

bool Unmount(const std::string& path, std::string* error) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    if (umount2(path.c_str(), 0) == 0 || errno == EINVAL || errno == ENOENT) return true;
    SleepMs(50);
  }
  if (umount2(path.c_str(), MNT_DETACH) == 0) return true;
  *error = "umount " + path + ": " + strerror(errno);
  return false;
}

std::string ServerEnvironmentSummary(const StateRecord& cluster) {
  return cluster.Get("peer_source") == "peers" ? "LIMPWATCH_PEERS" : "LIMPWATCH_PVFS_CONFIG";
}

// Named after the port as well: two clusters running at once (a test beside
// an evaluation) both have a server1.
bool CreateMemoryGroup(StateRecord* server, std::string* error) {
  CgroupController controller;
  std::string group;
  std::string name = kCgroupPrefix + server->Get("alias") + "-" + server->Get("port") + "-memory";
  if (!FindController("memory", "memory", &controller, error) || !CreateGroup(controller, name, &group, error)) {
    *error = "--memory-groups: " + *error;
    return false;
  }
  server->Set("memory_group", group);
  server->Set("memory_root", controller.root);
  return true;
}

}  // namespace

bool MemoryGroupsAvailable(std::string* why) {
  CgroupController controller;
  return FindController("memory", "memory", &controller, why);
}

bool StartServer(TestbedState* state, StateRecord* server, std::string* error, int listen_fd) {
  StateRecord* cluster = state->Cluster();
  std::string alias = server->Get("alias");
  SpawnOptions options;
  options.program = cluster->Get("server_program");
  if (options.program.empty()) options.program = cluster->Get("tools") + "/limpwatch-testbed-server";
  options.arguments = {"--config", cluster->Get("config"), "--alias", alias};
  options.unset_environment = {"LIMPWATCH_NAME",        "LIMPWATCH_SELF", "LIMPWATCH_PEERS",
                               "LIMPWATCH_PVFS_CONFIG", "LIMPWATCH_KEEP", "LIMPWATCH_DISABLE"};
  // The runtime samples the disk metrics of the device under the storage directory.
  options.set_environment = {"LIMPWATCH_NAME=" + alias, "LIMPWATCH_SELF=" + alias,
                             "LIMPWATCH_STORAGE_DIR=" + server->Get("storage")};
  if (cluster->Get("peer_source") == "peers") {
    options.set_environment.push_back("LIMPWATCH_PEERS=" + cluster->Get("peers"));
  } else {
    options.set_environment.push_back("LIMPWATCH_PVFS_CONFIG=" + cluster->Get("config"));
  }
  if (cluster->Get("keep") == "1") options.set_environment.push_back("LIMPWATCH_KEEP=1");
  options.stdout_path = cluster->Get("dir") + "/" + alias + ".out";
  options.stderr_path = cluster->Get("dir") + "/" + alias + ".log";
  options.join_cgroup = server->Get("memory_group");
  if (listen_fd >= 0) {
    options.arguments.insert(options.arguments.end(), {"--listen-fd", "3"});
    options.pass_fd = listen_fd;
  }
  pid_t pid = SpawnProcess(options, error);
  if (pid < 0) return false;
  uint64_t start = ProcessStartTime(pid);
  server->Set("pid", static_cast<uint64_t>(pid));
  server->Set("start", start);
  // Every pid this server ever had: its segments are ours to clean, no one else's.
  std::string pids = server->Get("pids");
  server->Set("pids", pids.empty() ? std::to_string(pid) : pids + "," + std::to_string(pid));
  auto port = static_cast<uint16_t>(server->GetUint("port"));
  for (int waited = 0;; waited += 50) {
    ReapIfChild(pid);
    if (!IsSameProcessAlive(pid, start)) {
      *error = alias + " exited during start; see " + options.stderr_path;
      return false;
    }
    PingResult ping = PingServer("127.0.0.1", port, 1, 1000);
    if (ping.ok) return true;
    if (waited >= kReadyTimeoutMs || StopRequested()) {
      *error = StopRequested() ? "interrupted" : alias + " did not answer on port " + std::to_string(port);
      StopProcess(pid, start, kStopGraceMs);
      return false;
    }
    SleepMs(50);
  }
}

bool StartCluster(const ClusterSettings& settings, TestbedState* state, JsonLine* report, std::string* error) {
  std::vector<uint16_t> ports;
  std::vector<int> listeners;
  if (!ChoosePorts(settings, &ports, &listeners, error)) return false;
  // Whatever happens below, the launcher's copies go: a server keeps its own.
  struct CloseListeners {
    std::vector<int>* fds;
    ~CloseListeners() {
      for (int& fd : *fds) {
        if (fd >= 0) close(fd);
      }
    }
  } close_listeners{&listeners};
  TestbedConfig config = settings.config;
  config.servers.clear();
  for (uint32_t i = 0; i < settings.servers; ++i) {
    std::string alias = settings.prefix + std::to_string(i);
    config.servers.push_back({alias, "127.0.0.1", ports[i], settings.dir + "/" + alias});
  }
  if (!ValidateConfig(config, error)) return false;
  std::string config_path = settings.dir + "/fs.conf";
  std::string peers;
  for (const auto& server : config.servers) {
    if (!peers.empty()) peers += ",";
    peers += server.name + "=127.0.0.1:" + std::to_string(server.port + kPeerPortOffset);
  }
  if (!WriteTextFile(config_path, FormatConfigFile(config), error) ||
      !WriteTextFile(settings.dir + "/limpwatch-peers", peers + "\n", error)) {
    return false;
  }

  {
    StateRecord& cluster = state->Add("cluster");  // a reference only until the next Add
    cluster.Set("dir", settings.dir);
    cluster.Set("servers", settings.servers);
    cluster.Set("prefix", settings.prefix);
    cluster.Set("config", config_path);
    cluster.Set("peers", peers);
    cluster.Set("peer_source", settings.peer_source);
    cluster.Set("keep", settings.keep_segments ? "1" : "0");
    cluster.Set("tools", ExecutableDirectory());
    cluster.Set("server_program", settings.server_program);
    cluster.Set("next_fault_id", 1);
  }
  for (uint32_t i = 0; i < settings.servers; ++i) {
    StateRecord& server = state->Add("server");
    server.Set("index", i);
    server.Set("alias", config.servers[i].name);
    server.Set("port", config.servers[i].port);
    server.Set("storage", config.servers[i].storage_space);
    server.Set("pid", 0);
  }

  bool ok = true;
  for (StateRecord* server : state->Servers()) {
    std::string storage = server->Get("storage");
    if (mkdir(storage.c_str(), 0755) != 0 && errno != EEXIST) {
      *error = "mkdir " + storage + ": " + strerror(errno);
      ok = false;
      break;
    }
    if (static_cast<int64_t>(server->GetUint("index")) == settings.small_fs_server) {
      if (!MountSmallFileSystem(storage, settings.small_fs_mib, error)) {
        ok = false;
        break;
      }
      server->Set("mount", storage);
      server->Set("small_fs_mib", settings.small_fs_mib);
    } else if (settings.disk_image_mib > 0) {
      std::string image = settings.dir + "/" + server->Get("alias") + ".img";
      std::string loop_device;
      if (!MountDiskImage(image, settings.disk_image_mib, storage, &loop_device, error)) {
        ok = false;
        break;
      }
      server->Set("mount", storage);
      server->Set("image", image);
      server->Set("loop_device", loop_device);
    }
    if (settings.memory_groups && !CreateMemoryGroup(server, error)) {
      ok = false;
      break;
    }
    // Record the server before it starts, so that an interrupted start still stops it.
    std::string ignored;
    state->Save(&ignored);
    int& listener = listeners[server->GetUint("index")];
    bool started = StartServer(state, server, error, listener);
    close(listener);
    listener = -1;
    if (!started) {
      ok = false;
      break;
    }
    state->Save(&ignored);
    if (StopRequested()) {
      *error = "interrupted";
      ok = false;
      break;
    }
  }
  if (!ok) {
    std::string stop_error;
    JsonLine ignored;
    StopServers(state, &ignored, &stop_error);
    return false;
  }
  if (!state->Save(error)) return false;
  report->Add("event", "started")
      .Add("dir", settings.dir)
      .Add("config", config_path)
      .Add("peers_file", settings.dir + "/limpwatch-peers")
      .Add("peers", peers)
      .Add("peer_environment", ServerEnvironmentSummary(*state->Cluster()))
      .AddRaw("servers", ServersJson(state));
  return true;
}

bool StopServers(TestbedState* state, JsonLine* report, std::string* error) {
  bool ok = true;
  std::string stopped = "[";
  StateRecord* cluster = state->Cluster();
  bool keep = cluster != nullptr && cluster->Get("keep") == "1";
  for (StateRecord* server : state->Servers()) {
    auto pid = static_cast<pid_t>(server->GetUint("pid"));
    uint64_t start = server->GetUint("start");
    bool was_alive = IsSameProcessAlive(pid, start);
    if (pid > 0 && !StopProcess(pid, start, kStopGraceMs)) {
      *error = "could not stop " + server->Get("alias") + " (pid " + std::to_string(pid) + ")";
      ok = false;
    }
    // A server that died without cleaning up (crash fault, SIGKILL) leaves a stale segment.
    int removed = 0;
    if (!keep) {
      std::string pids = "," + server->Get("pids") + ",";
      for (const auto& listing : shm::ListSegments()) {
        if (listing.parts.name != server->Get("alias") || listing.liveness != shm::Liveness::kStale) continue;
        if (pids.find("," + std::to_string(listing.parts.pid) + ",") == std::string::npos) continue;
        std::string ignored;
        if (shm::RemoveSegmentObject(listing.object_name, &ignored)) ++removed;
      }
    }
    std::string mount = server->Get("mount");
    if (!mount.empty() && !Unmount(mount, error)) ok = false;
    // The image is the server's disk for this run only; unmounted, its loop device is already released.
    std::string image = server->Get("image");
    if (!image.empty() && unlink(image.c_str()) != 0 && errno != ENOENT) {
      *error = "unlink " + image + ": " + strerror(errno);
      ok = false;
    }
    std::string memory_group = server->Get("memory_group");
    if (!memory_group.empty() && !RemoveGroup(server->Get("memory_root"), memory_group, "/", error)) ok = false;
    if (stopped.size() > 1) stopped += ",";
    stopped += JsonLine()
                   .Add("alias", server->Get("alias"))
                   .Add("pid", static_cast<uint64_t>(pid))
                   .Add("was_alive", was_alive)
                   .Add("stale_segments_removed", removed)
                   .str();
  }
  report->AddRaw("servers", stopped + "]");
  return ok;
}

std::string ServersJson(TestbedState* state) {
  std::string json = "[";
  for (StateRecord* server : state->Servers()) {
    auto pid = static_cast<pid_t>(server->GetUint("pid"));
    bool alive = IsSameProcessAlive(pid, server->GetUint("start"));
    char process_state = alive ? ProcessState(pid) : 0;
    if (json.size() > 1) json += ",";
    json += JsonLine()
                .Add("index", server->GetUint("index"))
                .Add("alias", server->Get("alias"))
                .Add("pid", static_cast<uint64_t>(pid))
                .Add("alive", alive)
                .Add("state", std::string(process_state != 0 ? 1 : 0, process_state))
                .Add("address", "127.0.0.1:" + server->Get("port"))
                .Add("segment", "limpwatch." + server->Get("alias") + "." + std::to_string(pid))
                .Add("storage", server->Get("storage"))
                .Add("small_fs", !server->Get("small_fs_mib").empty())
                .Add("disk", server->Get("loop_device").empty() ? "shared" : server->Get("loop_device"))
                .str();
  }
  return json + "]";
}

}  // namespace limpwatch::testbed::launcher
