#include "soak_cluster.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "limpwatch/shm/segment.h"

namespace limpwatch::soak {
namespace {

constexpr uint64_t kRecordDiskBytes = 32ull << 20;
constexpr uint64_t kAlarmsDiskBytes = 1ull << 20;
constexpr size_t kKeyBytes = 64;

std::string Loopback(uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

bool WriteKey(const std::string& path, const std::vector<uint8_t>& key, std::string* error) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  bool written = fd >= 0 && write(fd, key.data(), key.size()) == ssize_t(key.size());
  if (fd >= 0) close(fd);
  if (!written) *error = "cannot write the key file " + path + ": " + std::strerror(errno);
  return written;
}

}  // namespace

uint16_t FreePort(int type) {
  int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  uint16_t port = 0;
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  if (fd >= 0) close(fd);
  return port;
}

std::unique_ptr<SoakCluster> SoakCluster::Start(const SoakOptions& options, const std::string& work_dir,
                                                uint64_t seed, std::string* error) {
  std::unique_ptr<SoakCluster> cluster(new SoakCluster());
  if (!cluster->Launch(options, work_dir, seed, error)) return nullptr;
  return cluster;
}

bool SoakCluster::Launch(const SoakOptions& options, const std::string& work_dir, uint64_t seed,
                         std::string* error) {
  prefix_ = "soak-" + std::to_string(getpid());
  for (uint32_t index = 0; index <= options.peers; ++index) names_.push_back(prefix_ + "-" + std::to_string(index));
  // Hex digits: a key file's trailing newline is not part of the key, and a
  // random byte may be one.
  std::mt19937_64 random(seed ^ 0x6b6579);
  for (size_t index = 0; index < kKeyBytes; ++index) key_.push_back(uint8_t("0123456789abcdef"[random() % 16]));
  key_path_ = work_dir + "/peer.key";
  if (!WriteKey(key_path_, key_, error)) return false;

  // The alarms disk starts read-only: the alarms file cannot even be opened
  // until a fault action (or the end of the run) makes it writable.
  record_disk_ = std::make_unique<SmallDisk>(work_dir + "/record-disk", kRecordDiskBytes, false);
  alarms_disk_ = std::make_unique<SmallDisk>(work_dir + "/alarms-disk", kAlarmsDiskBytes, true);
  record_path_ = record_disk_->Path("host.lwrec");
  alarms_path_ = alarms_disk_->Path("alarms.jsonl");

  proxy_ = UdpFaultProxy::Create(options.peers, seed ^ 0x70726f7879, error);
  if (!proxy_) return false;
  for (size_t index = 0; index < names_.size(); ++index) peer_ports_.push_back(FreePort(SOCK_DGRAM));
  proxy_->SetAddresses(peer_ports_.front(), std::vector<uint16_t>(peer_ports_.begin() + 1, peer_ports_.end()));
  proxy_->Start();

  std::string host_peers = names_[0] + "=" + Loopback(peer_ports_[0]);
  for (uint32_t peer = 0; peer < options.peers; ++peer) {
    host_peers += "," + names_[peer + 1] + "=" + Loopback(proxy_->host_side_port(peer));
  }
  auto launch = [&](size_t index, const std::vector<std::string>& extra) {
    ServerLaunch server;
    server.program = options.server_path;
    std::string own = work_dir + "/" + names_[index];
    uint16_t tcp_port = FreePort(SOCK_STREAM);
    server.arguments = {"--tcp-port", std::to_string(tcp_port), "--unix-socket", own + ".sock", "--storage",
                        own + ".storage"};
    server.environment = {"LIMPWATCH_NAME=" + names_[index], "LIMPWATCH_ANALYZE=1",
                          "LIMPWATCH_PEER_KEY_FILE=" + key_path_, "LIMPWATCH_STORAGE_DIR=" + work_dir};
    server.environment.insert(server.environment.end(), extra.begin(), extra.end());
    server.log_path = own + ".log";
    server.capture_stdout = index == 0;
    if (index == 0) endpoint_ = {tcp_port, own + ".sock"};
    return std::make_unique<ServerProcess>(std::move(server));
  };
  host_ = launch(0, {"LIMPWATCH_PEERS=" + host_peers, "LIMPWATCH_RECORD=" + record_path_,
                     "LIMPWATCH_ALARMS=" + alarms_path_, "LIMPWATCH_KEEP=1"});
  if (!host_->Start(error)) return false;
  host_pid_ = host_->pid();
  for (uint32_t peer = 0; peer < options.peers; ++peer) {
    std::string peers = names_[0] + "=" + Loopback(proxy_->peer_side_port(peer)) + "," + names_[peer + 1] + "=" +
                        Loopback(peer_ports_[peer + 1]);
    peers_.push_back(launch(peer + 1, {"LIMPWATCH_PEERS=" + peers}));
    if (!peers_.back()->Start(error)) return false;
  }
  return true;
}

SoakCluster::~SoakCluster() {
  if (proxy_) proxy_->Stop();
  peers_.clear();
  host_.reset();
  // The soak's segments: the host's kept one, killed peers', and those of
  // the host's children (forked, then exec'd: never removed by their owner).
  for (const shm::SegmentListing& listing : shm::ListSegments()) {
    if (listing.parts.name.rfind(prefix_ + "-", 0) == 0) {
      std::string ignored;
      shm::RemoveSegmentObject(listing.object_name, &ignored);
    }
  }
  record_disk_.reset();
  alarms_disk_.reset();
}

std::string SoakCluster::host_object() const { return shm::SegmentObjectName(host_name(), host_pid_); }

bool SoakCluster::WaitUntilServing(uint64_t timeout_ms, std::string* error) {
  LoadTally probe;
  for (uint64_t waited = 0; waited < timeout_ms; waited += 50) {
    SoakConnection connection(endpoint_, Transport::kTcp, &probe);
    if (connection.Connect()) return true;
    if (!host_->Running()) {
      *error = "the host server exited at start (see " + host_->log_path() + ")";
      return false;
    }
    timespec pause{0, 50'000'000};
    nanosleep(&pause, nullptr);
  }
  *error = "the host server did not listen within " + std::to_string(timeout_ms) + " ms";
  return false;
}

}  // namespace limpwatch::soak
