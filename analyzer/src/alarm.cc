#include "limpwatch/analyzer/alarm.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "limpwatch/analyzer/resource_manifest.h"

namespace limpwatch::analyzer {
namespace {

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", c);
      out += escape;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string JsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string Joined(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (size_t index = 0; index < parts.size(); ++index) {
    if (index) out += separator;
    out += parts[index];
  }
  return out;
}

void CopyText(char* destination, size_t size, const std::string& text) {
  size_t length = std::min(text.size(), size - 1);
  std::memcpy(destination, text.data(), length);
  destination[length] = '\0';
}

}  // namespace

const char* AlarmKindName(AlarmKind kind) {
  switch (kind) {
    case AlarmKind::kAnomaly: return "anomaly";
    case AlarmKind::kSilent: return "silent";
    case AlarmKind::kLocal: return "local";
    case AlarmKind::kErrors: return "errors";
  }
  return "?";
}

std::string AlarmToJson(const Alarm& alarm) {
  std::string json = "{\"kind\":" + JsonString(AlarmKindName(alarm.kind));
  json += ",\"time_unix_ms\":" + std::to_string(alarm.time_unix_ms);
  json += ",\"raised_unix_ms\":" + std::to_string(alarm.raised_unix_ms ? alarm.raised_unix_ms : alarm.time_unix_ms);
  json += ",\"window\":" + std::to_string(alarm.window);
  json += ",\"reporter\":" + JsonString(alarm.reporter);
  json += ",\"server\":" + JsonString(alarm.server);
  json += ",\"metrics\":[";
  for (size_t index = 0; index < alarm.metrics.size(); ++index) {
    json += (index ? "," : "") + JsonString(alarm.metrics[index]);
  }
  json += "],\"resource\":" + JsonString(ResourceName(alarm.resource));
  json += ",\"score\":" + JsonNumber(alarm.score);
  json += ",\"threshold\":" + JsonNumber(alarm.threshold);
  json += ",\"invariant_bits\":" + std::to_string(alarm.invariant_bits);
  json += ",\"top_functions\":[";
  for (size_t index = 0; index < alarm.top_functions.size(); ++index) {
    const RootCauseFunction& function = alarm.top_functions[index];
    char hash[24];
    std::snprintf(hash, sizeof hash, "%016" PRIx64, function.name_hash);
    json += index ? "," : "";
    json += "{\"name\":" + JsonString(function.name) + ",\"name_hash\":\"" + hash +
            "\",\"score\":" + JsonNumber(function.score) +
            ",\"resource\":" + JsonString(ResourceName(function.resource)) + "}";
  }
  json += "]";
  if (!alarm.evidence.empty() || !alarm.reason.empty()) {
    json += ",\"evidence\":[";
    for (size_t index = 0; index < alarm.evidence.size(); ++index) {
      const AlarmEvidence& item = alarm.evidence[index];
      json += index ? "," : "";
      json += "{\"metric\":" + JsonString(item.metric) + ",\"ratio\":" + JsonNumber(item.ratio) +
              ",\"evidence\":" + JsonNumber(item.statistic) + ",\"resource\":" + JsonString(ResourceName(item.resource)) +
              "}";
    }
    json += "],\"reason\":" + JsonString(alarm.reason);
  }
  if (alarm.analyzers > 0) {
    json += ",\"agreeing\":[";
    for (size_t index = 0; index < alarm.agreeing.size(); ++index) {
      json += (index ? "," : "") + JsonString(alarm.agreeing[index]);
    }
    json += "],\"analyzers\":" + std::to_string(alarm.analyzers);
  }
  return json + "}";
}

std::string HeldByText(size_t agreeing, uint32_t analyzers, const std::vector<std::string>& names) {
  std::string text = "held by " + std::to_string(agreeing) + " of " + std::to_string(analyzers) + " analyzers";
  return names.empty() ? text : text + ": " + Joined(names, " ");
}

std::string AlarmToLogLine(const Alarm& alarm) {
  char numbers[96];
  std::snprintf(numbers, sizeof numbers, "score %.3g > threshold %.3g", alarm.score, alarm.threshold);
  std::vector<std::string> names;
  for (size_t index = 0; index < alarm.top_functions.size() && index < 5; ++index) {
    names.push_back(alarm.top_functions[index].name);
  }
  // A server failing its calls may not be slow at all: say what it does.
  bool errors = alarm.kind == AlarmKind::kErrors;
  std::string what = errors ? " fails its I/O calls" : " limps";
  if (!errors || alarm.resource != shm::Resource::kUnknown) what += std::string(" on ") + ResourceName(alarm.resource);
  std::string line = std::string("ALARM ") + AlarmKindName(alarm.kind) + ": server " + alarm.server + what + " (" + Joined(alarm.metrics, ",") + ", " + numbers +
                     ", window " + std::to_string(alarm.window) + ", reported by " + alarm.reporter;
  if (alarm.analyzers > 0) line += ", " + HeldByText(alarm.agreeing.size(), alarm.analyzers, alarm.agreeing);
  line += ")";
  // Calibrated alarms say why the resource is the one named.
  if (!alarm.reason.empty()) line += "; why: " + alarm.reason;
  if (!names.empty()) line += "; top functions: " + Joined(names, ", ");
  return line;
}

uint64_t PublishAlarm(const shm::SegmentView& segment, const Alarm& alarm) {
  shm::AlarmRingHeader* ring = segment.alarm_ring();
  uint64_t sequence = ring->next_sequence.load(std::memory_order_relaxed) + 1;
  shm::AlarmRecord* record = segment.alarm(sequence);
  record->sequence.store(0, std::memory_order_release);  // readers skip it while it changes
  std::atomic_thread_fence(std::memory_order_release);
  record->time_ns = alarm.time_unix_ms * 1000000ull;
  record->resource = static_cast<uint32_t>(alarm.resource);
  record->metric_count = static_cast<uint32_t>(alarm.metrics.size());
  record->score = alarm.score;
  record->threshold = alarm.threshold;
  CopyText(record->server, sizeof record->server, alarm.server);
  CopyText(record->metrics, sizeof record->metrics, Joined(alarm.metrics, ","));
  for (size_t index = 0; index < shm::kAlarmTopFunctions; ++index) {
    record->top_function_hashes[index] =
        index < alarm.top_functions.size() ? alarm.top_functions[index].name_hash : 0;
  }
  record->kind = static_cast<uint32_t>(alarm.kind) + 1;
  record->agreement.store(
      alarm.analyzers > 0 ? shm::PackAgreement(uint32_t(alarm.agreeing.size()), alarm.analyzers) : 0,
      std::memory_order_relaxed);
  record->sequence.store(sequence, std::memory_order_release);
  ring->next_sequence.store(sequence, std::memory_order_release);
  return sequence;
}

bool UpdateAlarmAgreement(const shm::SegmentView& segment, uint64_t sequence, uint32_t reporters,
                          uint32_t analyzers) {
  shm::AlarmRecord* record = segment.alarm(sequence);
  // One writer: the record cannot change between this check and the store.
  if (record->sequence.load(std::memory_order_relaxed) != sequence) return false;
  record->agreement.store(shm::PackAgreement(reporters, analyzers), std::memory_order_release);
  return true;
}

namespace {

// Copies the ring's record of `sequence` into *alarm; false when it has been
// overwritten or is being written (the sequence changed under the copy).
bool CopyRingRecord(const shm::SegmentView& segment, uint64_t sequence, RingAlarm* alarm) {
  const shm::AlarmRecord* record = segment.alarm(sequence);
  if (record->sequence.load(std::memory_order_acquire) != sequence) return false;
  alarm->sequence = sequence;
  alarm->time_ns = record->time_ns;
  alarm->resource = static_cast<shm::Resource>(record->resource);
  alarm->score = record->score;
  alarm->threshold = record->threshold;
  alarm->server.assign(record->server, strnlen(record->server, sizeof record->server));
  alarm->metrics.assign(record->metrics, strnlen(record->metrics, sizeof record->metrics));
  alarm->top_function_hashes.clear();
  for (uint64_t hash : record->top_function_hashes) {
    if (hash != 0) alarm->top_function_hashes.push_back(hash);
  }
  alarm->kind.reset();
  if (record->kind >= 1 && record->kind <= static_cast<uint32_t>(AlarmKind::kErrors) + 1) {
    alarm->kind = static_cast<AlarmKind>(record->kind - 1);
  }
  uint32_t agreement = record->agreement.load(std::memory_order_acquire);
  alarm->reporters = shm::AgreementReporters(agreement);
  alarm->analyzers = shm::AgreementAnalyzers(agreement);
  std::atomic_thread_fence(std::memory_order_acquire);
  return record->sequence.load(std::memory_order_relaxed) == sequence;
}

}  // namespace

bool ReadAlarmAgreement(const shm::SegmentView& segment, uint64_t sequence, uint32_t* reporters,
                        uint32_t* analyzers) {
  uint64_t newest = segment.alarm_ring()->next_sequence.load(std::memory_order_acquire);
  if (sequence == 0 || sequence > newest) return false;
  RingAlarm alarm;
  if (!CopyRingRecord(segment, sequence, &alarm)) return false;
  *reporters = alarm.reporters;
  *analyzers = alarm.analyzers;
  return true;
}

std::vector<RingAlarm> ReadAlarmRing(const shm::SegmentView& segment, uint64_t after_sequence,
                                     uint64_t* last_sequence) {
  std::vector<RingAlarm> alarms;
  const shm::SegmentHeader& header = *segment.header();
  uint64_t newest = segment.alarm_ring()->next_sequence.load(std::memory_order_acquire);
  uint64_t capacity = header.alarm_capacity;
  *last_sequence = std::max(after_sequence, newest);
  if (after_sequence >= newest) return alarms;
  uint64_t first = std::max(after_sequence + 1, newest > capacity ? newest - capacity + 1 : 1);
  // Counted, not compared with `newest`: a sequence at the top of its range
  // (a segment a reader cannot trust) would wrap the loop around forever.
  uint64_t count = newest - first + 1;  // at most the capacity
  for (uint64_t index = 0; index < count; ++index) {
    RingAlarm alarm;
    if (CopyRingRecord(segment, first + index, &alarm)) alarms.push_back(std::move(alarm));
  }
  return alarms;
}

}  // namespace limpwatch::analyzer
