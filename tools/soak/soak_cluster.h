// The processes and places of one soak: the host server (the one whose
// counters are checked, never killed), its peers, the fault proxy between
// them, the shared key, and the small disks of the host's recording and
// alarms file.
#ifndef LIMPWATCH_TOOLS_SOAK_SOAK_CLUSTER_H_
#define LIMPWATCH_TOOLS_SOAK_SOAK_CLUSTER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "load_client.h"
#include "server_process.h"
#include "small_disk.h"
#include "soak_options.h"
#include "udp_fault_proxy.h"

namespace limpwatch::soak {

class SoakCluster {
 public:
  // Sets everything up and starts every server; null with *error if any
  // part could not be made.
  static std::unique_ptr<SoakCluster> Start(const SoakOptions& options, const std::string& work_dir, uint64_t seed,
                                            std::string* error);
  ~SoakCluster();  // kills what still runs, removes the soak's segments, unmounts

  ServerProcess& host() { return *host_; }
  const std::string& host_name() const { return names_.front(); }
  std::string host_object() const;  // the host's segment, while it runs or after (it is kept)
  const ServerEndpoint& endpoint() const { return endpoint_; }
  uint16_t host_peer_port() const { return peer_ports_.front(); }

  size_t peer_count() const { return peers_.size(); }
  ServerProcess& peer(size_t index) { return *peers_.at(index); }
  UdpFaultProxy& proxy() { return *proxy_; }
  const std::string& key_path() const { return key_path_; }  // the cluster's key file

  SmallDisk& record_disk() { return *record_disk_; }
  SmallDisk& alarms_disk() { return *alarms_disk_; }
  const std::string& record_path() const { return record_path_; }
  const std::string& alarms_path() const { return alarms_path_; }

  // Waits until the host answers on its TCP port (it has started).
  bool WaitUntilServing(uint64_t timeout_ms, std::string* error);

 private:
  SoakCluster() = default;
  bool Launch(const SoakOptions& options, const std::string& work_dir, uint64_t seed, std::string* error);

  std::string prefix_;
  std::vector<std::string> names_;  // host first
  std::vector<uint8_t> key_;
  std::string key_path_;
  std::unique_ptr<SmallDisk> record_disk_, alarms_disk_;
  std::string record_path_, alarms_path_;
  std::vector<uint16_t> peer_ports_;  // UDP, host first
  ServerEndpoint endpoint_;
  std::unique_ptr<UdpFaultProxy> proxy_;
  std::unique_ptr<ServerProcess> host_;
  pid_t host_pid_ = -1;
  std::vector<std::unique_ptr<ServerProcess>> peers_;
};

// A port nobody listens on right now (bound to 0 and let go).
uint16_t FreePort(int type);

}  // namespace limpwatch::soak

#endif  // LIMPWATCH_TOOLS_SOAK_SOAK_CLUSTER_H_
