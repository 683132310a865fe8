// An alarm: which server limps, on which resource, how sure we are, and the
// functions most affected. Written to the segment's alarm ring, to the log
// and, when LIMPWATCH_ALARMS names a file, as JSON lines.
#ifndef LIMPWATCH_ANALYZER_ALARM_H_
#define LIMPWATCH_ANALYZER_ALARM_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "limpwatch/shm/segment.h"

namespace limpwatch::analyzer {

struct RootCauseFunction {
  uint32_t key = 0;
  uint64_t name_hash = 0;  // 0 when this server does not know the name
  std::string name;        // "key:<hex>" when unknown
  double score = 0;        // summed component distance / threshold over the anomalous windows
  shm::Resource resource = shm::Resource::kUnknown;
};

// One metric behind a calibrated alarm (calibrated_decision.h): how much
// slower than its peers the server was on it, and how far its evidence went.
struct AlarmEvidence {
  std::string metric;
  double ratio = 0;      // its value over its peers' median in the alarm's window
  double statistic = 0;  // its strongest chart over the threshold: 1 or more indicts on its own
  shm::Resource resource = shm::Resource::kUnknown;  // what it stands for
};

enum class AlarmKind {
  kAnomaly,  // peer comparison indicted the server
  kSilent,   // a peer stopped sending summaries (crash or hang)
  kLocal,    // node-local invariants (seed 003) alone
  kErrors,   // the server's I/O calls failed with an errno its peers did not see (error_features.h)
};

struct Alarm {
  AlarmKind kind = AlarmKind::kAnomaly;
  uint64_t time_unix_ms = 0;    // the end of the window that raised it (the same online and offline)
  uint64_t raised_unix_ms = 0;  // when it was raised (online: the clock; offline: time_unix_ms)
  uint64_t window = 0;
  std::string reporter;  // the server whose analyzer raised it
  std::string server;    // the server indicted
  std::vector<std::string> metrics;
  shm::Resource resource = shm::Resource::kUnknown;
  double score = 0;      // of the strongest metric
  double threshold = 0;
  uint32_t invariant_bits = 0;
  std::vector<RootCauseFunction> top_functions;
  // Calibrated alarms: the metrics with evidence, strongest first, and in
  // words why the resource is the one named (or that the evidence is mixed).
  std::vector<AlarmEvidence> evidence;
  std::string reason;
  // The analyzers that held the same alarm (server, resource, kind) open when
  // it was raised, the reporter among them, and how many analyzers' word was
  // known then (verdict_board.h); analyzers 0: not known (offline diagnosis).
  std::vector<std::string> agreeing;
  uint32_t analyzers = 0;
};

const char* AlarmKindName(AlarmKind kind);
std::string AlarmToJson(const Alarm& alarm);
std::string AlarmToLogLine(const Alarm& alarm);
// How many analyzers hold an alarm open, as every view words it: "held by 3
// of 4 analyzers", then ": s0 s1 s3" when the names are given.
std::string HeldByText(size_t agreeing, uint32_t analyzers, const std::vector<std::string>& names = {});

// Appends an alarm to a segment's alarm ring (single writer: the analyzer)
// and returns its sequence.
uint64_t PublishAlarm(const shm::SegmentView& segment, const Alarm& alarm);

// Stores how many analyzers hold the ring's alarm `sequence` open, of how
// many; false when the ring has overwritten it since.
bool UpdateAlarmAgreement(const shm::SegmentView& segment, uint64_t sequence, uint32_t reporters, uint32_t analyzers);

// Reads the alarms of a segment's ring with sequence > after_sequence, in
// order; sets *last_sequence to the newest sequence seen.
struct RingAlarm {
  uint64_t sequence = 0;
  uint64_t time_ns = 0;
  shm::Resource resource = shm::Resource::kUnknown;
  double score = 0;
  double threshold = 0;
  std::string server;
  std::string metrics;
  std::vector<uint64_t> top_function_hashes;
  std::optional<AlarmKind> kind;  // none in a segment older than 1.10
  uint32_t reporters = 0;  // analyzers holding it open, of `analyzers`; 0 of 0: not recorded (before 1.12)
  uint32_t analyzers = 0;
};
// The agreement now stored with the ring's alarm `sequence`; false when the
// ring no longer holds it.
bool ReadAlarmAgreement(const shm::SegmentView& segment, uint64_t sequence, uint32_t* reporters, uint32_t* analyzers);

std::vector<RingAlarm> ReadAlarmRing(const shm::SegmentView& segment, uint64_t after_sequence,
                                     uint64_t* last_sequence);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_ALARM_H_
