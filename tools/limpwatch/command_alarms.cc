// `limpwatch alarms NAME [--follow] [--json]`: the alarms in a segment's ring,
// each with how many analyzers of the cluster hold it open. With --follow, an
// alarm is printed again (same sequence) when that count changes.
#include <cinttypes>
#include <cstdio>
#include <map>
#include <utility>

#include "args.h"
#include "commands.h"
#include "format.h"
#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "limpwatch/shm/segment.h"
#include "json_writer.h"
#include "output.h"
#include "stop_signals.h"
#include "usage.h"

namespace limpwatch::cli {
namespace {

constexpr OptionSpec kAlarmsOptions[] = {
    {"--follow", "-f", false},
    {"--json", "", false},
    {"--help", "-h", false},
};

std::string FormatAlarm(const analyzer::RingAlarm& alarm, bool json) {
  if (json) {
    JsonWriter writer(0);
    writer.BeginObject();
    writer.Field("sequence", alarm.sequence);
    writer.Field("time_ns", alarm.time_ns);
    writer.Key("server");
    writer.String(alarm.server);
    writer.Key("resource");
    writer.String(analyzer::ResourceName(alarm.resource));
    writer.Key("metrics");
    writer.String(alarm.metrics);
    writer.Field("score", alarm.score);
    writer.Field("threshold", alarm.threshold);
    if (alarm.analyzers > 0) {
      writer.Field("agreeing", uint64_t{alarm.reporters});
      writer.Field("analyzers", uint64_t{alarm.analyzers});
    }
    writer.Key("top_function_hashes");
    writer.BeginArray();
    for (uint64_t hash : alarm.top_function_hashes) {
      char text[24];
      std::snprintf(text, sizeof text, "%016" PRIx64, hash);
      writer.String(text);
    }
    writer.EndArray();
    writer.EndObject();
    return writer.str() + "\n";
  }
  char numbers[96];
  std::snprintf(numbers, sizeof numbers, "score %.3g > %.3g", alarm.score, alarm.threshold);
  std::string agreement = alarm.analyzers > 0 ? "  " + analyzer::HeldByText(alarm.reporters, alarm.analyzers) : "";
  return "#" + std::to_string(alarm.sequence) + " " + FormatLocalTime(alarm.time_ns) + "  server " +
         Printable(alarm.server) + "  resource " + analyzer::ResourceName(alarm.resource) + "  metrics " +
         Printable(alarm.metrics) + "  " + numbers + agreement + "\n";
}

// The agreement each alarm was last printed with, by sequence.
using PrintedAgreements = std::map<uint64_t, std::pair<uint32_t, uint32_t>>;

void Print(const analyzer::RingAlarm& alarm, bool json, PrintedAgreements* printed) {
  WriteOut(FormatAlarm(alarm, json));
  (*printed)[alarm.sequence] = {alarm.reporters, alarm.analyzers};
}

// Prints the ring's alarms not printed yet, and again those whose agreement
// changed since they were: one read of the ring each time, so an alarm still
// being written when it was read is printed at the next read.
void PrintNewAndChanged(const shm::SegmentView& view, bool json, PrintedAgreements* printed) {
  uint64_t newest = 0;
  for (const analyzer::RingAlarm& alarm : analyzer::ReadAlarmRing(view, 0, &newest)) {
    auto found = printed->find(alarm.sequence);
    if (found != printed->end() && found->second == std::pair(alarm.reporters, alarm.analyzers)) continue;
    Print(alarm, json, printed);
  }
  // Forget what the ring no longer holds.
  uint64_t capacity = view.header()->alarm_capacity;
  if (newest > capacity) printed->erase(printed->begin(), printed->lower_bound(newest - capacity + 1));
}

}  // namespace

int RunAlarms(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  std::string error;
  if (!ParseArgs(args, kAlarmsOptions, &parsed, &error)) return UsageError("alarms", error);
  if (parsed.Has("--help")) {
    WriteOut(CommandHelp("alarms"));
    return FinishOutput(kExitOk);
  }
  if (parsed.positional.size() != 1) return UsageError("alarms", "expected one segment NAME");
  std::optional<std::string> object = shm::ResolveSegment(parsed.positional[0], &error);
  if (!object) return Fail(kExitFailure, error);
  std::unique_ptr<shm::SegmentReader> reader = shm::SegmentReader::Open(*object, &error);
  if (!reader) return Fail(kExitFailure, error);
  bool json = parsed.Has("--json");
  PrintedAgreements printed;
  PrintNewAndChanged(reader->view(), json, &printed);
  if (!parsed.Has("--follow")) {
    if (printed.empty() && !json) WriteOut("no alarms\n");
    return FinishOutput(kExitOk);
  }
  FlushOut();
  StopSignals stop;
  while (!stop.Sleep(0.5)) {
    PrintNewAndChanged(reader->view(), json, &printed);
    if (!FlushOut()) break;
    if (shm::SegmentLiveness(reader->header()) != shm::Liveness::kLive) break;
  }
  return FinishOutput(kExitOk);
}

}  // namespace limpwatch::cli
