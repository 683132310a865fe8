// Per-second throughput of a workload as JSON lines on stdout, so a runner
// sees a slowdown the second it happens:
//
//   {"event":"start","workload":"ddw","pid":...,"servers":4,...}
//   {"event":"phase","workload":"iozonew","phase":"rewrite","t":12.004}
//   {"event":"progress","workload":"ddw","phase":"write","t":3.001,
//    "interval_s":1.000,"bytes":..., "mib_per_s":..., "ops":..., "ops_per_s":..., "errors":0}
//   {"event":"error","workload":"ddw","what":"write","errno":28,"error":"No space left on device"}
//   {"event":"done","workload":"ddw","status":"ok","seconds":...,"bytes":...,"mib_per_s":...,...,
//    "phases":[{"phase":"write","seconds":...,"bytes":...,"mib_per_s":...,"ops":...,"errors":0},...]}
//
// The done line's totals leave out a "prepare" phase (ddr and iozoner
// writing the file they are about to read): it is not the measured load.
//
// Counters are atomics the workload threads bump; a reporter thread prints
// the difference every second.
#ifndef LIMPWATCH_TOOLS_TESTBED_CLIENT_PROGRESS_REPORTER_H_
#define LIMPWATCH_TOOLS_TESTBED_CLIENT_PROGRESS_REPORTER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/json_line.h"

namespace limpwatch::testbed::client {

class ProgressReporter {
 public:
  explicit ProgressReporter(std::string workload);
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  // Prints the start line (with `details` merged in) and starts the clock.
  void Start(const JsonLine& details);
  void SetPhase(const std::string& phase);
  void AddBytes(uint64_t bytes) { bytes_.fetch_add(bytes, std::memory_order_relaxed); }
  void AddOps(uint64_t ops) { ops_.fetch_add(ops, std::memory_order_relaxed); }
  // Counts an error and prints it (the first 50; later ones only count).
  void AddError(const std::string& what, int error);
  uint64_t errors() const { return errors_.load(); }
  double ElapsedSeconds() const;
  // Stops the reporter thread and prints the done line; returns the exit
  // status the client should use (0 ok, 1 errors or interrupted).
  int Finish(bool interrupted, const JsonLine& details);

 private:
  struct PhaseTotals {
    std::string phase;
    uint64_t start_ns = 0;
    uint64_t end_ns = 0;
    uint64_t bytes = 0;
    uint64_t ops = 0;
    uint64_t errors = 0;
  };

  void ReportEverySecond();
  void EmitProgress(bool final_partial);
  void ClosePhaseLocked(uint64_t now);  // mutex_ held

  std::string workload_;
  uint64_t start_ns_ = 0;
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> ops_{0};
  std::atomic<uint64_t> errors_{0};
  std::mutex mutex_;  // guards phase_, last_* and stopping_
  std::condition_variable wake_;
  std::string phase_;
  uint64_t last_ns_ = 0;
  uint64_t last_bytes_ = 0;
  uint64_t last_ops_ = 0;
  uint64_t last_errors_ = 0;
  bool stopping_ = false;
  std::vector<PhaseTotals> phases_;  // the last one is open
  std::thread thread_;
};

}  // namespace limpwatch::testbed::client

#endif  // LIMPWATCH_TOOLS_TESTBED_CLIENT_PROGRESS_REPORTER_H_
