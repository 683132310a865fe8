// The soak's faults, chosen at random (from the run's seed) every 0.2 to
// 2.5 s, and the timed undoing of those that last: a killed peer is
// restarted, a filled disk emptied, the alarms disk made writable again.
#ifndef LIMPWATCH_TOOLS_SOAK_FAULT_ACTIONS_H_
#define LIMPWATCH_TOOLS_SOAK_FAULT_ACTIONS_H_

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "datagram_forger.h"
#include "dying_readers.h"
#include "load_client.h"
#include "soak_cluster.h"

namespace limpwatch::soak {

struct FaultTally {
  std::map<std::string, uint64_t> actions;  // how often each action ran
  uint64_t peer_kills = 0;
  uint64_t peer_restart_failures = 0;
  uint64_t signals_to_process = 0;
  uint64_t signals_to_threads = 0;
  uint64_t unknown_sender_sent = 0;  // forged datagrams from an address no server has configured
  uint64_t record_disk_fills = 0;
  uint64_t alarms_disk_fills = 0;
  uint64_t alarms_disk_read_only_ms = 0;
  ReaderTally readers;
  std::map<std::string, std::string> skipped;  // action -> why it could not run
};

class FaultActions {
 public:
  FaultActions(SoakCluster* cluster, const SoakOptions& options, uint64_t seed, LoadTally* load,
               std::string self_path, std::FILE* log);
  ~FaultActions();

  // Runs random actions until `seconds` have passed since `start_ms`, or
  // until *stop is set (the driver was interrupted).
  void RunUntil(uint64_t start_ms, uint64_t seconds, const std::atomic<bool>* stop);
  // Ends every fault that lasts: restarts the peers, empties the disks,
  // makes the alarms disk writable, stops the proxy's faults, waits for
  // the readers. Returns the problems met, if any.
  std::vector<std::string> Settle();

  FaultTally tally();

 private:
  struct Timed {
    uint64_t due_ms;
    std::string what;
    std::function<void()> action;
  };

  void Note(const std::string& line);
  void RunDue(bool all);
  void KillPeer();
  void ChangeProxyFaults();
  void Forge();
  void Replay();
  void FillRecordDisk();
  void MakeAlarmsUnwritable();
  void BurstThreads();
  void ForkChildren();
  void DeliverSignals();
  void StartReader();

  SoakCluster* cluster_;
  const SoakOptions& options_;
  LoadTally* load_;
  std::string self_path_;
  std::FILE* log_;
  std::mt19937_64 random_;
  DatagramForger forger_;
  int unknown_sender_ = -1;
  uint64_t start_ms_ = 0;
  std::vector<Timed> timed_;
  std::vector<bool> peer_down_;
  uint64_t alarms_read_only_since_ms_ = 0;
  std::mutex mutex_;  // guards tally_ (the readers' threads add to it)
  FaultTally tally_;
  std::vector<std::thread> readers_;
};

}  // namespace limpwatch::soak

#endif  // LIMPWATCH_TOOLS_SOAK_FAULT_ACTIONS_H_
