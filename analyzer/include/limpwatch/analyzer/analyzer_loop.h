// The online analyzer: once per tick, the server's own segment becomes a
// tick record, its windows become summaries exchanged with the peers, and
// the cluster's summaries are compared. Runs on the analyzer thread inside
// the server (LIMPWATCH_ANALYZE=1) and in `limpwatch analyze NAME`.
//
// Order within a tick, so that online verdicts equal the offline replay's:
//   1. receive the peers' summaries (sent at the previous tick) and learn
//      their features;
//   2. snapshot, build the tick record, record it, produce this server's
//      summaries of the windows that end now, send them;
//   3. analyze every window older than the newest one produced.
#ifndef LIMPWATCH_ANALYZER_ANALYZER_LOOP_H_
#define LIMPWATCH_ANALYZER_ANALYZER_LOOP_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "limpwatch/analyzer/analyzer_config.h"
#include "limpwatch/analyzer/cluster_diagnoser.h"
#include "limpwatch/analyzer/name_book.h"
#include "limpwatch/analyzer/node_pipeline.h"
#include "limpwatch/analyzer/trace_file.h"
#include "limpwatch/analyzer/verdict_board.h"
#include "limpwatch/shm/flows.h"
#include "limpwatch/shm/snapshot.h"

namespace limpwatch::analyzer {

class FileAppender;

// How summaries reach the peers. Implementations never block for long and
// never throw.
class SummaryExchange {
 public:
  virtual ~SummaryExchange() = default;
  virtual void Send(const PeerSummary& summary) = 0;
  // Every summary received since the last call (already validated).
  virtual std::vector<PeerSummary> Receive() = 0;
  // What a summary looks like after the trip (the wire's precision).
  virtual PeerSummary AsReceived(const PeerSummary& summary) const = 0;
  // Whom it exchanges with, and how, for the analyzer's start line.
  virtual std::string Describe() const { return "an exchange"; }
  // The analyzers that compare `server`: its comparison group and itself,
  // when the cluster is larger than one group; empty: every peer does.
  virtual std::vector<std::string> ScorersOf(const std::string& /*server*/) const { return {}; }
  // The peers that left the configuration since the last call: the analyzer
  // forgets them (no silence alarm for a server removed on purpose).
  virtual std::vector<std::string> TakeDeparted() { return {}; }
  // Writes what it heard from the peers into this server's own segment.
  virtual void PublishStatus(const shm::SegmentView&) {}
};

struct AnalyzerSetup {
  AnalyzerConfig config;
  std::string node;
  Thresholds thresholds;
  std::string thresholds_path;  // where they were read from; empty: untrained defaults
  ResourceManifest manifest;
  std::string manifest_paths;   // LIMPWATCH_MANIFEST as given
  std::string record_path;  // empty: no recording
  std::string alarms_path;  // empty: no JSON lines file
  std::function<void(const std::string&)> log;
  std::unique_ptr<SummaryExchange> exchange;  // null: this server alone (no peer comparison)
  uint64_t boot_id = 0;
  bool announce = true;  // log the start line (LIMPWATCH_QUIET=1: not)
};

// Builds a setup from the LIMPWATCH_* environment (thresholds, manifests,
// recording, alarms file). Problems are reported through setup.log.
AnalyzerSetup AnalyzerSetupFromEnvironment(const std::string& node, std::function<void(const std::string&)> log);

class AnalyzerLoop {
 public:
  explicit AnalyzerLoop(AnalyzerSetup setup);
  ~AnalyzerLoop();

  // One tick. `segment` is this server's segment; alarms are published to its
  // ring when `publish_alarms`. Never throws: a failure is logged and the
  // next tick starts afresh.
  void Tick(const shm::SegmentView& segment, const std::string& object_name, bool publish_alarms);

  // At the end (the server exits): waits for the recording's and the alarms
  // file's writes and publishes the writes lost, the last ones included.
  void Finish(const shm::SegmentView& segment);

  // When the next tick should start (CLOCK_REALTIME ms): just after the next
  // tick boundary, so every server of the cluster snapshots at the same time.
  uint64_t NextTickUnixMs(uint64_t now_unix_ms) const;

  const std::vector<Alarm>& alarms() const { return alarms_; }
  uint64_t ticks() const { return ticks_; }
  const AnalyzerSetup& setup() const { return setup_; }

 private:
  void TickOrThrow(const shm::SegmentView& segment, const std::string& object_name, bool publish_alarms);
  void Raise(const Alarm& alarm, const shm::SegmentView& segment, bool publish_alarms);
  // Stores in the ring how many analyzers now hold each of this analyzer's
  // open alarms, logging each change; forgets the alarms that closed.
  void RefreshAgreements(const shm::SegmentView& segment);
  std::vector<std::string> ScorersOf(const std::string& server) const;
  void PublishHealth(const shm::SegmentView& segment) const;
  // Counts the tick boundaries passed since the previous tick beyond the
  // one expected (the previous tick, or the process, ran late).
  void CountMissedTicks();

  AnalyzerSetup setup_;
  NodePipeline pipeline_;
  ClusterDiagnoser diagnoser_;
  NameBook names_;
  size_t names_recorded_ = 0;
  std::unique_ptr<TraceWriter> recording_;
  shm::FlowReader flow_reader_;  // the segment's request flows, recorded beside the ticks
  std::optional<shm::Snapshot> previous_;
  uint64_t newest_window_ = 0;
  uint64_t ticks_ = 0;
  uint64_t tick_failures_ = 0;
  uint64_t windows_analyzed_ = 0;
  uint64_t ticks_missed_ = 0;
  uint64_t last_tick_boundary_ = 0;  // 0: no tick yet
  std::vector<Alarm> alarms_;
  VerdictBoard verdicts_;
  struct PublishedAlarm {
    uint64_t sequence = 0;  // in the segment's ring
    std::string server;     // the verdict it stands for
    shm::Resource resource = shm::Resource::kUnknown;
    AlarmKind kind = AlarmKind::kAnomaly;
    uint32_t agreeing = 0;  // as last stored
    uint32_t analyzers = 0;
  };
  std::vector<PublishedAlarm> open_alarms_;
  // LIMPWATCH_ALARMS, opened at start and kept: a server out of descriptors
  // (EMFILE) is one the alarms are about, and must still be able to append;
  // and appended to without waiting for a disk that may be the fault.
  std::unique_ptr<FileAppender> alarms_file_;
  uint64_t reported_alarm_write_failures_ = 0;
  uint64_t alarms_unopened_ = 0;  // alarms not appended: the file could not be opened
  bool OpenAlarmsFile();
};

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_ANALYZER_LOOP_H_
