// Runs the client's probe against one server (client/workload_probe.cc) and
// reads its figures: what inject --measure and `probe` report.
#ifndef LIMPWATCH_TOOLS_TESTBED_LAUNCHER_PROBE_RUNNER_H_
#define LIMPWATCH_TOOLS_TESTBED_LAUNCHER_PROBE_RUNNER_H_

#include <cstdint>
#include <string>

namespace limpwatch::testbed::launcher {

struct ProbeSettings {
  std::string tools_dir;
  std::string config_path;
  uint32_t server = 0;
  uint64_t size_mib = 256;  // at most; each phase also stops after `seconds`
  uint64_t small_files = 200;
  double seconds = 1.5;
  int request_timeout_ms = 5000;  // a hung server fails the probe this fast
  int overall_timeout_ms = 120000;
};

struct ProbeResult {
  bool completed = false;  // the probe ran and printed its line
  std::string line;        // its JSON line
  std::string status;      // "ok", "error", or why it did not run
  double ping_us = 0;
  double write_mib_per_s = 0;
  double read_mib_per_s = 0;
  double meta_ops_per_s = 0;
};

ProbeResult RunProbe(const ProbeSettings& settings);

// {"before":{...},"after":{...},"write_slowdown":x,...}: slowdown = before / after
// for rates (after / before for the round trip); absent where a side failed.
std::string CompareProbes(const ProbeResult& before, const ProbeResult& after);

}  // namespace limpwatch::testbed::launcher

#endif  // LIMPWATCH_TOOLS_TESTBED_LAUNCHER_PROBE_RUNNER_H_
