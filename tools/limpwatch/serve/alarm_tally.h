// What one segment's alarm ring has said, kept between scrapes.
//
// The ring holds the last alarm_capacity alarms (256 by default); the tally
// reads the ones it has not seen on every update and adds them to a count
// per (indicted server, resource, kind), so the counts keep growing when the
// ring wraps between two updates of a running reader. A reader started
// afterwards can only count what the ring still holds: `raised()` is exact
// whatever happens (the ring's sequence), the per-label counts are exact
// until the ring first wraps.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_SERVE_ALARM_TALLY_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_SERVE_ALARM_TALLY_H_

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/shm/segment.h"

namespace limpwatch::cli::serve {

struct AlarmLabels {
  std::string server;    // the server indicted
  std::string resource;  // disk, network, cpu, memory, process, unknown
  std::string kind;      // anomaly, silent, errors

  auto operator<=>(const AlarmLabels&) const = default;
};

struct AlarmSeries {
  uint64_t count = 0;
  uint64_t last_time_ns = 0;  // CLOCK_REALTIME of the newest one (the end of its window)
  double score = 0;           // of the newest one
  double threshold = 0;
  std::string metrics;                       // of the newest one: "dread,time"
  std::vector<uint64_t> top_function_hashes;  // of the newest one, most affected first
  // The newest one's place in the ring and how many analyzers of the cluster
  // hold it open, of how many (0 of 0: not recorded); read again at every
  // update, as the analyzer stores it again while its peers' verdicts arrive.
  uint64_t sequence = 0;
  uint32_t agreeing = 0;
  uint32_t analyzers = 0;
};

// Whether the newest alarm of a series is still open at `now_ns`: within
// `open_seconds` of the end of its window. The exposition's gauge and the
// dashboard's list use this one rule.
inline bool IsOpen(const AlarmSeries& series, uint64_t now_ns, double open_seconds) {
  return series.last_time_ns + uint64_t(open_seconds * 1e9) > now_ns;
}

// The kind of alarm a ring record stands for. The ring keeps no kind; the
// analyzer names a silent peer's metrics "silence" and a failing server's
// "errors", and every other alarm is an anomaly of named metrics.
std::string AlarmKindOf(const analyzer::RingAlarm& alarm);

class AlarmTally {
 public:
  // Adds the alarms published since the previous update.
  void Update(const shm::SegmentView& segment);

  // Every alarm the ring has published, overwritten ones included.
  uint64_t raised() const { return last_sequence_; }
  const std::map<AlarmLabels, AlarmSeries>& series() const { return series_; }

 private:
  uint64_t last_sequence_ = 0;
  std::map<AlarmLabels, AlarmSeries> series_;
};

}  // namespace limpwatch::cli::serve

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_SERVE_ALARM_TALLY_H_
