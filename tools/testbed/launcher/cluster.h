// The test-bed cluster: N servers on 127.0.0.1, each with its own storage
// directory under <dir>, a shared fs.conf, and their pids in the state file.
//
//   <dir>/fs.conf             PVFS-style configuration (aliases, storage spaces, stripe, flow buffers)
//   <dir>/limpwatch-peers     the same servers as LIMPWATCH_PEERS=alias=127.0.0.1:<udp port>,...
//   <dir>/<alias>/            storage space (bstreams/, keyval.log); a tmpfs mount with --small-fs,
//                             a loop-mounted ext4 image <dir>/<alias>.img with --disk-images
//   <dir>/<alias>.log         the server's log lines (stderr)
//   <dir>/testbed.state       what runs (testbed_state.h)
//
// Each server runs with LIMPWATCH_NAME=<alias>, LIMPWATCH_SELF=<alias>,
// LIMPWATCH_STORAGE_DIR=<dir>/<alias>,
// LIMPWATCH_PVFS_CONFIG=<dir>/fs.conf (or LIMPWATCH_PEERS with
// --peer-source peers), and LIMPWATCH_KEEP=1 with --keep. limpwatch's UDP
// port for a server is its TCP port + 1000 (the analyzer's default offset);
// --base-port 0 picks TCP ports whose UDP port + 1000 is free too. The
// launcher listens on the chosen ports and hands each socket to its server.
#ifndef LIMPWATCH_TOOLS_TESTBED_LAUNCHER_CLUSTER_H_
#define LIMPWATCH_TOOLS_TESTBED_LAUNCHER_CLUSTER_H_

#include <cstdint>
#include <string>

#include "common/json_line.h"
#include "common/server_config.h"
#include "launcher/testbed_state.h"

namespace limpwatch::testbed::launcher {

inline constexpr uint16_t kPeerPortOffset = 1000;

struct ClusterSettings {
  std::string dir;
  uint32_t servers = 4;
  uint32_t base_port = 0;         // 0: pick free ports
  std::string prefix = "server";  // aliases <prefix>0, <prefix>1, ...
  TestbedConfig config;           // flow buffers, stripe, threads, direct I/O
  bool keep_segments = false;     // LIMPWATCH_KEEP=1
  int small_fs_server = -1;       // this server's storage is a size-limited tmpfs
  uint64_t small_fs_mib = 0;
  uint64_t disk_image_mib = 0;    // > 0: every other server's storage is an ext4 image on a loop device of its own
  bool memory_groups = false;     // each server in a memory cgroup of its own from its start (memory-hog)
  std::string peer_source = "config";  // config: LIMPWATCH_PVFS_CONFIG, peers: LIMPWATCH_PEERS
  std::string server_program;          // empty: the traced server beside the launcher
};

// Whether servers can be given memory cgroups of their own (root, and a
// memory controller mounted); *why says why not.
bool MemoryGroupsAvailable(std::string* why);

// Starts every server and waits until each answers a PING. On failure (or a
// stop request) stops what it started and returns false.
bool StartCluster(const ClusterSettings& settings, TestbedState* state, JsonLine* report, std::string* error);

// Starts (or restarts) the server of this record and waits for it; updates
// the record's pid and start time. With `listen_fd` (a socket listening on the
// server's port) the server takes it over instead of binding the port itself.
bool StartServer(TestbedState* state, StateRecord* server, std::string* error, int listen_fd = -1);

// Stops every server (SIGTERM, then SIGKILL after 5 s), unmounts small file
// systems and removes the segments of servers that died without cleaning up
// (unless the cluster keeps segments). Faults must be cleared first.
bool StopServers(TestbedState* state, JsonLine* report, std::string* error);

// JSON array of the servers: index, alias, pid, alive, process state, port, segment.
std::string ServersJson(TestbedState* state);

}  // namespace limpwatch::testbed::launcher

#endif  // LIMPWATCH_TOOLS_TESTBED_LAUNCHER_CLUSTER_H_
