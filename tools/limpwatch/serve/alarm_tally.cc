#include "serve/alarm_tally.h"

#include <vector>

#include "limpwatch/analyzer/resource_manifest.h"

namespace limpwatch::cli::serve {

std::string AlarmKindOf(const analyzer::RingAlarm& alarm) {
  if (alarm.kind) return analyzer::AlarmKindName(*alarm.kind);
  // A segment older than 1.10 does not record the kind: the analyzer's metric names tell it.
  if (alarm.metrics == "silence") return "silent";
  if (alarm.metrics == "errors") return "errors";
  return "anomaly";
}

void AlarmTally::Update(const shm::SegmentView& segment) {
  std::vector<analyzer::RingAlarm> alarms = analyzer::ReadAlarmRing(segment, last_sequence_, &last_sequence_);
  for (const analyzer::RingAlarm& alarm : alarms) {
    AlarmSeries& series = series_[{alarm.server, analyzer::ResourceName(alarm.resource), AlarmKindOf(alarm)}];
    ++series.count;
    if (alarm.time_ns >= series.last_time_ns) {
      series.last_time_ns = alarm.time_ns;
      series.score = alarm.score;
      series.threshold = alarm.threshold;
      series.metrics = alarm.metrics;
      series.top_function_hashes = alarm.top_function_hashes;
      series.sequence = alarm.sequence;
      series.agreeing = alarm.reporters;
      series.analyzers = alarm.analyzers;
    }
  }
  for (auto& [labels, series] : series_) {
    if (series.sequence == 0) continue;
    uint32_t agreeing = 0;
    uint32_t analyzers = 0;
    if (!analyzer::ReadAlarmAgreement(segment, series.sequence, &agreeing, &analyzers)) {
      series.sequence = 0;  // overwritten: what was read last stays
      continue;
    }
    series.agreeing = agreeing;
    series.analyzers = analyzers;
  }
}

}  // namespace limpwatch::cli::serve
