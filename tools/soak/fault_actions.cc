#include "fault_actions.h"

#include "resource_trend.h"
#include "soak_clock.h"

#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace limpwatch::soak {
namespace {

// The key as the servers read it from their key file.
analyzer::PeerKey KeyOf(const std::string& path) {
  std::string error;
  std::optional<analyzer::PeerKey> key = analyzer::LoadPeerKeyFile(path, &error);
  if (!key) {
    std::fprintf(stderr, "limpwatch-soak: %s\n", error.c_str());
    std::abort();  // the cluster was started with this very file
  }
  return *key;
}

// The server's own threads: every task but limpwatch's (which block every signal).
std::vector<pid_t> ServerThreads(pid_t pid) {
  std::vector<pid_t> tids;
  std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* listing = opendir(tasks.c_str());
  if (listing == nullptr) return tids;
  while (dirent* entry = readdir(listing)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream comm(tasks + "/" + entry->d_name + "/comm");
    std::string name;
    std::getline(comm, name);
    if (!IsLimpwatchThreadName(name)) tids.push_back(pid_t(std::atoi(entry->d_name)));
  }
  closedir(listing);
  return tids;
}

}  // namespace

FaultActions::FaultActions(SoakCluster* cluster, const SoakOptions& options, uint64_t seed, LoadTally* load,
                           std::string self_path, std::FILE* log)
    : cluster_(cluster),
      options_(options),
      load_(load),
      self_path_(std::move(self_path)),
      log_(log),
      random_(seed),
      forger_(KeyOf(cluster->key_path())),
      peer_down_(cluster->peer_count(), false) {
  unknown_sender_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
}

FaultActions::~FaultActions() {
  for (std::thread& reader : readers_) reader.join();
  if (unknown_sender_ >= 0) close(unknown_sender_);
}

FaultTally FaultActions::tally() {
  std::lock_guard lock(mutex_);
  return tally_;
}

void FaultActions::Note(const std::string& line) {
  double seconds = double(NowMs() - start_ms_) / 1000.0;
  std::fprintf(log_, "[%8.1f s] %s\n", seconds, line.c_str());
  std::fflush(log_);
  if (options_.verbose) std::printf("[%8.1f s] %s\n", seconds, line.c_str());
}

void FaultActions::RunDue(bool all) {
  uint64_t now = NowMs();
  for (bool ran = true; ran;) {
    ran = false;
    for (size_t index = 0; index < timed_.size(); ++index) {
      if (!all && timed_[index].due_ms > now) continue;
      Timed due = std::move(timed_[index]);
      timed_.erase(timed_.begin() + ptrdiff_t(index));
      Note(due.what);
      due.action();
      ran = true;
      break;
    }
  }
}

void FaultActions::RunUntil(uint64_t start_ms, uint64_t seconds, const std::atomic<bool>* stop) {
  start_ms_ = start_ms;
  uint64_t end_ms = start_ms + seconds * 1000;
  if (cluster_->alarms_disk().mounted()) {
    // Read-only from the start (the alarms file cannot be opened) for the
    // first 5 to 20 per cent of the run.
    alarms_read_only_since_ms_ = start_ms;
    uint64_t writable_at = start_ms + seconds * 1000 * (5 + random_() % 16) / 100;
    timed_.push_back({writable_at, "alarms disk: read-write again", [this] {
                        std::string error;
                        if (!cluster_->alarms_disk().SetReadOnly(false, &error)) Note(error);
                        std::lock_guard lock(mutex_);
                        tally_.alarms_disk_read_only_ms += NowMs() - alarms_read_only_since_ms_;
                      }});
  } else {
    std::lock_guard lock(mutex_);
    tally_.skipped["alarms file unwritable"] = cluster_->alarms_disk().why_not_mounted();
    tally_.skipped["recording disk full"] = cluster_->record_disk().why_not_mounted();
  }
  struct Choice {
    const char* name;
    uint32_t weight;
    void (FaultActions::*run)();
  };
  const Choice choices[] = {
      {"kill a peer", 10, &FaultActions::KillPeer},
      {"change the proxy's faults", 10, &FaultActions::ChangeProxyFaults},
      {"forge datagrams", 8, &FaultActions::Forge},
      {"replay datagrams", 6, &FaultActions::Replay},
      {"fill the recording's disk", 4, &FaultActions::FillRecordDisk},
      {"make the alarms file unwritable", 4, &FaultActions::MakeAlarmsUnwritable},
      {"burst of short threads", 5, &FaultActions::BurstThreads},
      {"fork children that exec", 5, &FaultActions::ForkChildren},
      {"deliver signals", 8, &FaultActions::DeliverSignals},
      {"start a reader that dies", 6, &FaultActions::StartReader},
  };
  uint32_t total_weight = 0;
  for (const Choice& choice : choices) total_weight += choice.weight;
  while (NowMs() < end_ms && !stop->load()) {
    RunDue(false);
    uint32_t pick = uint32_t(random_() % total_weight);
    for (const Choice& choice : choices) {
      if (pick >= choice.weight) {
        pick -= choice.weight;
        continue;
      }
      {
        std::lock_guard lock(mutex_);
        ++tally_.actions[choice.name];
      }
      (this->*choice.run)();
      break;
    }
    uint64_t wake = NowMs() + 200 + random_() % 2300;
    for (uint64_t now = NowMs(); now < wake && now < end_ms && !stop->load(); now = NowMs()) {
      uint64_t next = wake;
      for (const Timed& timed : timed_) next = std::min(next, timed.due_ms);
      if (next > now) SleepMs(std::min<uint64_t>(next - now, 100));
      RunDue(false);
    }
  }
}

std::vector<std::string> FaultActions::Settle() {
  std::vector<std::string> problems;
  RunDue(true);
  cluster_->proxy().SetFaults({});
  if (cluster_->alarms_disk().read_only()) {
    std::string error;
    if (!cluster_->alarms_disk().SetReadOnly(false, &error)) problems.push_back("alarms disk: " + error);
  }
  for (std::thread& reader : readers_) reader.join();
  readers_.clear();
  for (size_t peer = 0; peer < cluster_->peer_count(); ++peer) {
    if (!cluster_->peer(peer).Running()) {
      std::string error;
      if (!cluster_->peer(peer).Start(&error)) problems.push_back("peer " + std::to_string(peer + 1) + ": " + error);
    }
  }
  Note("settled: every lasting fault undone");
  return problems;
}

void FaultActions::KillPeer() {
  std::vector<size_t> up;
  for (size_t peer = 0; peer < peer_down_.size(); ++peer) {
    if (!peer_down_[peer]) up.push_back(peer);
  }
  if (up.empty()) return;
  size_t peer = up[random_() % up.size()];
  cluster_->peer(peer).Kill();
  peer_down_[peer] = true;
  uint64_t down_ms = 500 + random_() % 9500;
  Note("kill peer " + std::to_string(peer + 1) + " (SIGKILL), restart in " + std::to_string(down_ms) + " ms");
  {
    std::lock_guard lock(mutex_);
    ++tally_.peer_kills;
  }
  std::function<void()> restart = [this, peer] {
    std::string error;
    if (cluster_->peer(peer).Start(&error)) {
      peer_down_[peer] = false;
      return;
    }
    Note("restart failed: " + error);
    std::lock_guard lock(mutex_);
    ++tally_.peer_restart_failures;
  };
  timed_.push_back({NowMs() + down_ms, "restart peer " + std::to_string(peer + 1), restart});
}

void FaultActions::ChangeProxyFaults() {
  ProxyFaults faults;
  std::uniform_real_distribution<double> chance(0.0, 0.3);
  if (random_() % 10 >= 3) {
    faults.drop = chance(random_);
    faults.duplicate = chance(random_);
    faults.reorder = chance(random_);
    faults.delay = chance(random_);
    faults.max_delay_ms = 200 + uint32_t(random_() % 3800);
  }
  cluster_->proxy().SetFaults(faults);
  char line[200];
  std::snprintf(line, sizeof line, "proxy: drop %.2f, duplicate %.2f, reorder %.2f, delay %.2f (up to %u ms)",
                faults.drop, faults.duplicate, faults.reorder, faults.delay, faults.max_delay_ms);
  Note(line);
}

void FaultActions::Forge() {
  uint32_t count = 1 + uint32_t(random_() % 12);
  uint32_t unknown = 0;
  sockaddr_in host{};
  host.sin_family = AF_INET;
  host.sin_port = htons(cluster_->host_peer_port());
  host.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (uint32_t index = 0; index < count; ++index) {
    analyzer::DecodeError refusal = kForgedClasses[random_() % std::size(kForgedClasses)];
    std::vector<uint8_t> datagram = forger_.Forge(refusal, random_);
    if (random_() % 100 < 15) {
      // From an address nobody configured: refused before anything else is looked at.
      if (sendto(unknown_sender_, datagram.data(), datagram.size(), 0, reinterpret_cast<sockaddr*>(&host),
                 sizeof host) == ssize_t(datagram.size())) {
        ++unknown;
      }
      continue;
    }
    cluster_->proxy().SendForged(random_() % cluster_->peer_count(), std::move(datagram), uint32_t(refusal));
  }
  std::lock_guard lock(mutex_);
  tally_.unknown_sender_sent += unknown;
  Note("forge " + std::to_string(count) + " datagrams (" + std::to_string(unknown) + " from an unknown sender)");
}

void FaultActions::Replay() {
  size_t count = 1 + random_() % 16;
  cluster_->proxy().RequestReplay(count);
  Note("replay " + std::to_string(count) + " earlier datagrams to the host");
}

void FaultActions::FillRecordDisk() {
  SmallDisk& disk = cluster_->record_disk();
  if (!disk.mounted() || disk.full()) return;
  std::string error;
  if (!disk.Fill(&error)) {
    Note("fill the recording's disk: " + error);
    return;
  }
  uint64_t hold_ms = 2000 + random_() % 18000;
  Note("recording's disk full for " + std::to_string(hold_ms) + " ms");
  {
    std::lock_guard lock(mutex_);
    ++tally_.record_disk_fills;
  }
  timed_.push_back({NowMs() + hold_ms, "recording's disk emptied", [this] { cluster_->record_disk().Free(); }});
}

void FaultActions::MakeAlarmsUnwritable() {
  SmallDisk& disk = cluster_->alarms_disk();
  if (!disk.mounted() || disk.full() || disk.read_only()) return;
  std::string error;
  if (!disk.Fill(&error)) {
    Note("fill the alarms disk: " + error);
    return;
  }
  uint64_t hold_ms = 3000 + random_() % 27000;
  Note("alarms file unwritable (its disk full) for " + std::to_string(hold_ms) + " ms");
  {
    std::lock_guard lock(mutex_);
    ++tally_.alarms_disk_fills;
  }
  timed_.push_back({NowMs() + hold_ms, "alarms disk emptied", [this] { cluster_->alarms_disk().Free(); }});
}

void FaultActions::BurstThreads() {
  uint32_t threads = 50 + uint32_t(random_() % 350);
  uint32_t calls = 1 + uint32_t(random_() % 20);
  bool answered = RequestThreads(cluster_->endpoint(), threads, calls, load_);
  Note("burst of " + std::to_string(threads) + " short threads" + (answered ? "" : ": NOT ANSWERED"));
}

void FaultActions::ForkChildren() {
  uint32_t children = 1 + uint32_t(random_() % 6);
  bool answered = RequestOnce(cluster_->endpoint(), Transport::kTcp, RequestType::kForkExec, {}, children, load_);
  Note("fork " + std::to_string(children) + " children that exec /bin/true" + (answered ? "" : ": NOT ANSWERED"));
}

void FaultActions::DeliverSignals() {
  pid_t pid = cluster_->host().pid();
  if (pid <= 0) return;
  uint32_t count = 1 + uint32_t(random_() % 40);
  uint32_t to_process = 0, to_threads = 0;
  const int numbers[] = {SIGUSR1, SIGUSR2, SIGHUP};
  std::vector<pid_t> threads = ServerThreads(pid);
  for (uint32_t index = 0; index < count; ++index) {
    int number = numbers[random_() % 3];
    if (random_() % 10 < 3 && !threads.empty()) {
      pid_t tid = threads[random_() % threads.size()];
      if (syscall(SYS_tgkill, pid, tid, number) == 0) ++to_threads;
    } else if (kill(pid, number) == 0) {
      ++to_process;
    }
    SleepMs(random_() % 3);
  }
  std::lock_guard lock(mutex_);
  tally_.signals_to_process += to_process;
  tally_.signals_to_threads += to_threads;
  Note("signals: " + std::to_string(to_process) + " to the process, " + std::to_string(to_threads) +
       " to its threads");
}

void FaultActions::StartReader() {
  if (readers_.size() >= 2) {
    readers_.front().join();
    readers_.erase(readers_.begin());
  }
  ReaderKind kind = static_cast<ReaderKind>(random_() % 3);
  uint64_t life_ms = kind == ReaderKind::kDumpJson ? 100 : kind == ReaderKind::kTop ? 3000 : 2000;
  uint64_t seed = random_();
  static const char* const kNames[] = {"limpwatch top", "limpwatch dump --json", "a snapshot loop"};
  Note(std::string("reader: ") + kNames[int(kind)] + ", killed within " + std::to_string(life_ms) + " ms");
  readers_.emplace_back([this, kind, life_ms, seed] {
    std::mt19937_64 random(seed);
    ReaderTally tally;
    RunDyingReader(kind, options_.cli_path, self_path_, cluster_->host_name(), cluster_->host_object(), life_ms,
                   random, &tally);
    std::lock_guard lock(mutex_);
    tally_.readers.started += tally.started;
    tally_.readers.killed_while_reading += tally.killed_while_reading;
    tally_.readers.finished_first += tally.finished_first;
    tally_.readers.failed_to_start += tally.failed_to_start;
  });
}

}  // namespace limpwatch::soak
