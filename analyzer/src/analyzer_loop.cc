#include "limpwatch/analyzer/analyzer_loop.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <random>
#include <sstream>

#include "file_appender.h"
#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/analyzer/peer_table.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "limpwatch/analyzer/score_status.h"
#include "limpwatch/analyzer/start_line.h"

namespace limpwatch::analyzer {
namespace {

constexpr uint64_t kTickPhaseMs = 50;  // after the boundary: ticks of all servers line up

const char* Get(const char* variable) {
  const char* value = std::getenv(variable);
  return (value != nullptr && value[0] != '\0') ? value : nullptr;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, ',')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

}  // namespace

AnalyzerSetup AnalyzerSetupFromEnvironment(const std::string& node, std::function<void(const std::string&)> log) {
  AnalyzerSetup setup;
  setup.node = node;
  setup.log = std::move(log);
  std::vector<std::string> problems;
  setup.config = ReadAnalyzerConfigFromEnvironment(&problems);
  if (const char* path = Get("LIMPWATCH_THRESHOLDS")) {
    if (setup.thresholds.Load(path, &problems)) {
      setup.thresholds_path = path;
    } else {
      problems.push_back(std::string("LIMPWATCH_THRESHOLDS='") + path + "' cannot be read; using default thresholds");
    }
  }
  if (const char* paths = Get("LIMPWATCH_MANIFEST")) {
    setup.manifest_paths = paths;
    for (const std::string& path : SplitList(paths)) {
      if (!setup.manifest.Load(path, &problems)) {
        problems.push_back("LIMPWATCH_MANIFEST: '" + path + "' cannot be read");
      }
    }
  }
  if (const char* record = Get("LIMPWATCH_RECORD")) setup.record_path = ExpandRecordPath(record, node, getpid());
  if (const char* alarms = Get("LIMPWATCH_ALARMS")) setup.alarms_path = ExpandRecordPath(alarms, node, getpid());
  // The runtime reports a malformed value of this flag; here it only decides the start line.
  if (const char* quiet = Get("LIMPWATCH_QUIET")) {
    std::string value = quiet;
    setup.announce = value != "1" && value != "yes" && value != "true";
  }
  std::random_device entropy;
  setup.boot_id = (uint64_t(entropy()) << 32) ^ entropy() ^ uint64_t(getpid());
  for (const std::string& problem : problems) setup.log("analyzer: " + problem);
  return setup;
}

AnalyzerLoop::AnalyzerLoop(AnalyzerSetup setup)
    : setup_(std::move(setup)),
      pipeline_(setup_.config, setup_.boot_id),
      diagnoser_(setup_.config, setup_.thresholds, setup_.manifest, &names_, setup_.node),
      verdicts_(setup_.node, VerdictOpenWindows(setup_.config), setup_.config.peer_silence_windows) {
  diagnoser_.KeepResults(false);
  if (!setup_.record_path.empty()) {
    std::string error;
    recording_ = TraceWriter::Open(setup_.record_path, setup_.node, setup_.config.tick_ms, &error);
    if (!recording_) setup_.log("analyzer: " + error + "; not recording");
  }
  if (!setup_.alarms_path.empty() && !OpenAlarmsFile()) {
    setup_.log("analyzer: cannot open LIMPWATCH_ALARMS file '" + setup_.alarms_path + "'; trying again at the first alarm");
  }
}

AnalyzerLoop::~AnalyzerLoop() = default;

bool AnalyzerLoop::OpenAlarmsFile() {
  std::string error;
  alarms_file_ = FileAppender::Open(setup_.alarms_path, &error);
  return alarms_file_ != nullptr;
}

uint64_t AnalyzerLoop::NextTickUnixMs(uint64_t now_unix_ms) const {
  uint64_t tick = setup_.config.tick_ms;
  uint64_t next = (now_unix_ms / tick + 1) * tick + kTickPhaseMs;
  if (next - now_unix_ms > tick) next -= tick;  // still before this tick's phase
  return next;
}

void AnalyzerLoop::CountMissedTicks() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  uint64_t now_unix_ms = uint64_t(now.tv_sec) * 1000 + uint64_t(now.tv_nsec) / 1000000;
  // The tick boundary this tick belongs to: it starts kTickPhaseMs after it.
  uint64_t tick_ms = std::max<uint64_t>(setup_.config.tick_ms, 1);
  uint64_t boundary = (now_unix_ms - std::min(now_unix_ms, kTickPhaseMs)) / tick_ms;
  if (last_tick_boundary_ != 0 && boundary > last_tick_boundary_ + 1) {
    ticks_missed_ += boundary - last_tick_boundary_ - 1;
  }
  last_tick_boundary_ = std::max(last_tick_boundary_, boundary);
}

void AnalyzerLoop::Tick(const shm::SegmentView& segment, const std::string& object_name, bool publish_alarms) {
  CountMissedTicks();
  try {
    TickOrThrow(segment, object_name, publish_alarms);
  } catch (const std::exception& error) {
    ++tick_failures_;
    setup_.log(std::string("analyzer: tick failed: ") + error.what() + "; continuing");
  } catch (...) {
    ++tick_failures_;
    setup_.log("analyzer: tick failed; continuing");
  }
  // Writes that failed since the last append are counted now, not at the next one.
  if (recording_) recording_->Collect();
  if (alarms_file_) alarms_file_->Collect();
  if (publish_alarms) PublishHealth(segment);
}

void AnalyzerLoop::Finish(const shm::SegmentView& segment) {
  if (recording_) recording_->Flush();
  if (alarms_file_) alarms_file_->Flush();
  PublishHealth(segment);
}

void AnalyzerLoop::PublishHealth(const shm::SegmentView& segment) const {
  shm::AnalyzerHealth* health = segment.analyzer_health();
  health->ticks.store(ticks_, std::memory_order_relaxed);
  health->tick_failures.store(tick_failures_, std::memory_order_relaxed);
  health->windows_analyzed.store(windows_analyzed_, std::memory_order_relaxed);
  health->recording_failed_writes.store(recording_ ? recording_->failed_writes() : 0, std::memory_order_relaxed);
  health->recording_path.store(uint32_t(!recording_                  ? shm::AnalyzerPath::kNone
                                        : recording_->uses_io_uring() ? shm::AnalyzerPath::kIoUring
                                                                      : shm::AnalyzerPath::kPlainCalls),
                               std::memory_order_relaxed);
  health->alarms_failed_writes.store((alarms_file_ ? alarms_file_->failed_writes() : 0) + alarms_unopened_,
                                     std::memory_order_relaxed);
  shm::AnalyzerShedding* shedding = segment.analyzer_shedding();
  shedding->summaries_late.store(diagnoser_.late_summaries(), std::memory_order_relaxed);
  shedding->ticks_missed.store(ticks_missed_, std::memory_order_relaxed);
  uint32_t refused = 0;
  if (recording_ && recording_->io_uring_refused()) refused |= shm::kRingOfRecording;
  if (alarms_file_ && alarms_file_->io_uring_refused()) refused |= shm::kRingOfAlarmsFile;
  if (refused != 0) shedding->io_uring_refused.fetch_or(refused, std::memory_order_relaxed);
}

void AnalyzerLoop::TickOrThrow(const shm::SegmentView& segment, const std::string& object_name,
                               bool publish_alarms) {
  ++ticks_;
  if (setup_.exchange) {
    for (const PeerSummary& summary : setup_.exchange->Receive()) {
      if (summary.node == setup_.node) continue;  // our own, looped back
      verdicts_.Heard(summary);
      pipeline_.LearnFromPeer(summary);
      diagnoser_.Add(summary);
    }
    for (const std::string& departed : setup_.exchange->TakeDeparted()) {
      diagnoser_.Forget(departed);
      verdicts_.Forget(departed);
    }
  }

  shm::Snapshot snapshot;
  shm::TakeSnapshot(segment, object_name, &snapshot);
  names_.Add(CollectFunctionNames(snapshot));
  if (!previous_) {
    if (setup_.announce) setup_.log(AnalyzerStartLine(setup_, segment, snapshot));
    previous_ = std::move(snapshot);
    return;  // the first snapshot only starts the first interval
  }
  TickRecord tick = BuildTickRecord(setup_.node, *previous_, snapshot, setup_.config.tick_ms);
  previous_ = std::move(snapshot);

  if (recording_) {
    if (names_.size() != names_recorded_) {
      recording_->Append(TraceRecordType::kNames, EncodeNamesRecord(CollectFunctionNames(*previous_)));
      names_recorded_ = names_.size();
    }
    recording_->Append(TraceRecordType::kTick, EncodeTickRecord(tick));
    FlowsRecord flows;
    if (segment.has_flows()) flows = CollectFlows(segment, *previous_, &flow_reader_, RealtimeNowMs());
    if (!flows.flows.empty() || flows.flows_lost != 0 || flows.flows_unnamed != 0) {
      recording_->Append(TraceRecordType::kFlows, EncodeFlowsRecord(flows));
    }
  }

  if (setup_.exchange && publish_alarms) setup_.exchange->PublishStatus(segment);
  for (PeerSummary& produced : pipeline_.AddTick(tick)) {
    produced.verdicts = verdicts_.OwnVerdicts();
    PeerSummary summary = setup_.exchange ? setup_.exchange->AsReceived(produced) : produced;
    if (setup_.exchange) setup_.exchange->Send(produced);
    diagnoser_.Add(summary);
    newest_window_ = std::max(newest_window_, summary.window);
  }
  for (uint64_t window : diagnoser_.PendingWindows()) {
    if (window >= newest_window_) break;
    uint64_t window_end_ms = (window * setup_.config.shift_ticks) * uint64_t(setup_.config.tick_ms);
    ++windows_analyzed_;
    std::vector<Alarm> alarms = diagnoser_.Analyze(window, window_end_ms);
    verdicts_.Indicted(diagnoser_.last_result().indicted, window);
    for (const Alarm& alarm : alarms) Raise(alarm, segment, publish_alarms);
    if (publish_alarms) {
      PublishScoreStatus(segment, diagnoser_.last_result(), setup_.node, RealtimeNowMs());
      RefreshAgreements(segment);
    }
  }
}

std::vector<std::string> AnalyzerLoop::ScorersOf(const std::string& server) const {
  return setup_.exchange ? setup_.exchange->ScorersOf(server) : std::vector<std::string>{};
}

void AnalyzerLoop::RefreshAgreements(const shm::SegmentView& segment) {
  std::erase_if(open_alarms_, [&](PublishedAlarm& published) {
    if (!verdicts_.HoldsOpen(published.server, published.resource, published.kind)) return true;
    Agreement agreement =
        verdicts_.On(published.server, published.resource, published.kind, ScorersOf(published.server));
    auto agreeing = uint32_t(agreement.agreeing.size());
    if (agreeing == published.agreeing && agreement.analyzers == published.analyzers) return false;
    if (!UpdateAlarmAgreement(segment, published.sequence, agreeing, agreement.analyzers)) return true;
    published.agreeing = agreeing;
    published.analyzers = agreement.analyzers;
    setup_.log("analyzer: alarm #" + std::to_string(published.sequence) + " (server " + published.server + ", " +
               ResourceName(published.resource) + ", " + AlarmKindName(published.kind) + ") now " +
               HeldByText(agreeing, agreement.analyzers, agreement.agreeing));
    return false;
  });
}

void AnalyzerLoop::Raise(const Alarm& window_alarm, const shm::SegmentView& segment, bool publish_alarms) {
  Alarm alarm = window_alarm;
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  alarm.raised_unix_ms = uint64_t(now.tv_sec) * 1000 + uint64_t(now.tv_nsec) / 1000000;
  verdicts_.Opened(alarm);
  Agreement agreement = verdicts_.On(alarm.server, alarm.resource, alarm.kind, ScorersOf(alarm.server));
  alarm.agreeing = agreement.agreeing;
  alarm.analyzers = agreement.analyzers;
  alarms_.push_back(alarm);
  // The segment first (memory: `limpwatch alarms` sees it at once), then
  // the file (queued: file_appender.h), the log line last: the log is a
  // plain write, which a throttled disk can hold up.
  if (publish_alarms) {
    uint64_t sequence = PublishAlarm(segment, alarm);
    // A newer alarm of the same verdict takes the place of the older one.
    std::erase_if(open_alarms_, [&](const PublishedAlarm& published) {
      return published.server == alarm.server && published.resource == alarm.resource && published.kind == alarm.kind;
    });
    open_alarms_.push_back(
        {sequence, alarm.server, alarm.resource, alarm.kind, uint32_t(alarm.agreeing.size()), alarm.analyzers});
  }
  bool queued = true;
  if (!setup_.alarms_path.empty()) {
    std::string line = AlarmToJson(alarm) + '\n';
    if (!alarms_file_ && !OpenAlarmsFile()) ++alarms_unopened_;  // a write lost as surely as a failed one
    queued = alarms_file_ && alarms_file_->Append(std::vector<uint8_t>(line.begin(), line.end())) &&
             alarms_file_->failed_writes() == reported_alarm_write_failures_;
    if (alarms_file_) reported_alarm_write_failures_ = alarms_file_->failed_writes();
  }
  setup_.log(AlarmToLogLine(alarm));
  if (!queued) setup_.log("analyzer: cannot append to LIMPWATCH_ALARMS file '" + setup_.alarms_path + "'");
}

}  // namespace limpwatch::analyzer
