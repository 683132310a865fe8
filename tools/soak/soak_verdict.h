// The end of a soak: everything measured, the properties it must hold,
// and the summary table.
#ifndef LIMPWATCH_TOOLS_SOAK_SOAK_VERDICT_H_
#define LIMPWATCH_TOOLS_SOAK_SOAK_VERDICT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fault_actions.h"
#include "limpwatch/shm/snapshot.h"
#include "load_client.h"
#include "resource_trend.h"
#include "soak_options.h"
#include "udp_fault_proxy.h"

namespace limpwatch::soak {

struct SoakFigures {
  uint64_t seed = 0;
  double run_seconds = 0;
  double warm_up_seconds = 0;
  std::vector<std::string> problems;  // anything that went wrong in the run itself

  // The workload's own counts.
  const LoadTally* load = nullptr;
  FaultTally faults;
  ProxyTally proxy;
  uint64_t kernel_drops = 0;  // at the host's peer socket (/proc/net/udp)

  // The host server.
  bool server_stopped_cleanly = false;
  std::map<std::string, uint64_t> server_tally;  // its own tally, as written at exit
  bool snapshot_taken = false;
  shm::Snapshot snapshot;                         // its segment, after it exited
  uint64_t alarms_published = 0;                  // in its alarm ring
  uint64_t alarm_lines = 0, torn_alarm_lines = 0;  // in its alarms file
  bool recording_read = false;
  uint64_t recorded_ticks = 0;
  std::vector<std::string> recording_problems;
  std::vector<ResourceSample> resources;
  uint64_t quiet_fds_before = 0, quiet_fds_after = 0;  // with no load, at the start and at the end
  std::vector<std::string> threads_at_start, threads_at_end;  // limpwatch's, by name
  uint64_t ticks_in_last_seconds = 0;                        // the analyzer's ticks over the last 3 s
  // Segments of the host's forked children (which exec) left in /dev/shm:
  // stale (nobody removes them) or, the host running with LIMPWATCH_KEEP=1,
  // marked exited and kept as asked.
  uint64_t children_segments_stale = 0;
  uint64_t children_segments_kept = 0;
};

// Parses the lines the server wrote at exit ("key 000...42").
std::map<std::string, uint64_t> ParseServerTally(const std::string& text);

// Counts the complete lines of the alarms file that are JSON objects, and the others.
void CountAlarmLines(const std::string& path, uint64_t* lines, uint64_t* torn);

// Checks every property, prints the figures and the checks; true when all hold.
bool ReportVerdict(const SoakFigures& figures);

}  // namespace limpwatch::soak

#endif  // LIMPWATCH_TOOLS_SOAK_SOAK_VERDICT_H_
