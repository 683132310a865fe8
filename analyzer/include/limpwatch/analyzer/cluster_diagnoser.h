// Peer comparison (seed 000 section 5, seed 001): given every server's
// summary of a window, find the server that behaves unlike its peers.
//
// Two rules decide (AnalyzerConfig::decision_rule). The calibrated rule, the
// default, needs no training (calibrated_decision.h): per window, each
// server's metrics as log ratios to its peers' median (the service times and
// waits as they are, the profiles as the cost of the server's own work at
// its peers' pace, profile_evidence.h), judged against the cluster's noise
// learnt online, by charts whose threshold follows from a false-alarm budget.
// The alarm names the resource the strongest evidence stands for, and why.
//
// The seed rule (seed 000), kept for comparison:
// per window and metric, each server gets a score:
//   vector metrics (samples, count, time): the median of its distances to
//     every other server's feature vector (Manhattan by default);
//   I/O metrics (dread, dwrite, nsread, ncread): its median service time
//     minus the median of its peers' (only slower counts); dsync likewise,
//     with the window's mean time per file sync.
// A score above the server's threshold (trained, or the documented default),
// and above relative_factor times the other servers' median (scores) or
// peers' median (service times), marks the window anomalous for that metric; a server is indicted when a
// metric was anomalous in k of its last 2k-1 windows. The root cause is the
// ten functions with the largest summed distance to the median server over
// those anomalous windows; the resource comes from the function manifest,
// the I/O metrics and the node-local invariants, in that order.
//
// Failed I/O calls are checked apart, in every window: a server that returned
// an errno (ENOSPC, EMFILE, EIO, ...) kErrorPeerFactor times as often as the
// median of its peers, and at least kMinAbnormalErrors times, is indicted at
// once with an "errors" alarm naming the errnos (error_features.h). In a
// server's warm-up windows, refused and reset connections are not counted:
// its peers may not be listening yet.
//
// The same object runs online (in every server, on its own and its peers'
// summaries) and offline (`limpwatch diagnose`, on recordings): given the
// same summaries it gives the same verdicts.
#ifndef LIMPWATCH_ANALYZER_CLUSTER_DIAGNOSER_H_
#define LIMPWATCH_ANALYZER_CLUSTER_DIAGNOSER_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/analyzer/analyzer_config.h"
#include "limpwatch/analyzer/calibrated_decision.h"
#include "limpwatch/analyzer/distance.h"
#include "limpwatch/analyzer/name_book.h"
#include "limpwatch/analyzer/peer_summary.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "limpwatch/analyzer/rpca_detector.h"
#include "limpwatch/analyzer/thresholds.h"

namespace limpwatch::analyzer {

struct MetricScore {
  std::string server;
  ComparedMetric metric = ComparedMetric::kTime;
  double score = 0;
  double threshold = 0;
  bool trained = false;  // threshold from training (else the default rule)
  bool anomalous = false;
  // Calibrated rule: score is the evidence (nats) of the strongest chart and
  // threshold the budget's; ratio the server's value over its peers' median
  // (for the profiles, its cost over its peers' pace) and sigma the noise.
  double ratio = 0;
  double sigma = 0;
  // Among the server's first warmup_windows windows: scored, never counted
  // as anomalous, and so left out of training too.
  bool warming_up = false;
};

struct WindowResult {
  uint64_t window = 0;
  std::vector<std::string> servers;  // the summaries compared
  std::vector<MetricScore> scores;
  std::vector<std::string> indicted;
};

// The calibrated decision over the compared metrics of peer summaries, with
// what a thresholds file adds to it (the noise learnt, the usual ratios).
std::unique_ptr<CalibratedDecision> MakeCalibratedDecision(const AnalyzerConfig& config, const Thresholds& thresholds);

class ClusterDiagnoser {
 public:
  ClusterDiagnoser(const AnalyzerConfig& config, Thresholds thresholds, ResourceManifest manifest,
                   const NameBook* names, std::string reporter);

  // Stores a summary for its window. A second summary of the same server and
  // window replaces the first; a summary of a window already analyzed is
  // counted as late and dropped.
  void Add(const PeerSummary& summary);

  // Forgets a server removed from the comparison (peer_membership.h): its
  // waiting summaries, its history and its noise. It is not silent, and if
  // it comes back it warms up like a new server.
  void Forget(const std::string& server);

  // Compares the summaries of `window` (call with increasing windows) and
  // returns the alarms it raises. Summaries of that window are then freed.
  std::vector<Alarm> Analyze(uint64_t window, uint64_t now_unix_ms);

  // Windows that have summaries waiting, oldest first.
  std::vector<uint64_t> PendingWindows() const;

  const std::vector<WindowResult>& results() const { return results_; }
  // The window Analyze compared last (kept whether or not results are).
  const WindowResult& last_result() const { return last_result_; }
  // The calibrated rule's state (null under the seed rule): its noise, the
  // usual ratios it learnt, and the per-server verdicts when kept.
  const CalibratedDecision* calibrated() const { return calibrated_.get(); }
  void KeepVerdicts(bool keep);
  void KeepResults(bool keep) { keep_results_ = keep; }
  uint64_t late_summaries() const { return late_summaries_; }

 private:
  struct History {
    std::deque<bool> anomalous;                    // last 2k-1 windows, newest last
    std::deque<std::vector<Feature>> components;   // distance to the median server per key / threshold
    std::deque<MetricScore> scores;
  };
  struct ServerState {
    History metrics[kComparedMetricCount];
    uint64_t last_window = 0;
    uint64_t boot_id = 0;
    uint64_t windows_seen = 0;  // since the server (re)started
    uint64_t windows_missed = 0;  // windows between those seen whose summary never came
    bool warming_up = false;    // the window analyzed now is among its first warmup_windows
    bool silent_reported = false;
    uint64_t last_alarm_ms = 0;
    shm::Resource last_alarm_resource = shm::Resource::kUnknown;
    uint32_t invariant_bits = 0;
    uint64_t last_error_alarm_ms = 0;
    // Calibrated rule: where the server's extra time went in its last
    // windows, and which functions made its extra calls.
    std::deque<std::unordered_map<uint32_t, double>> excess_time;
    std::deque<std::unordered_map<uint32_t, double>> excess_calls;
    std::deque<std::unordered_map<uint32_t, double>> excess_samples;
  };

  std::vector<Alarm> DecideBySeedRule(uint64_t window, uint64_t now_unix_ms,
                                      const std::vector<const PeerSummary*>& summaries, WindowResult* result);
  std::vector<Alarm> DecideCalibrated(uint64_t window, uint64_t now_unix_ms,
                                      const std::vector<const PeerSummary*>& summaries, WindowResult* result);
  // Adds `alarm` unless the same server and resource were alarmed within
  // the suppression period.
  void RaiseUnlessSuppressed(ServerState& state, Alarm alarm, uint64_t now_unix_ms, std::vector<Alarm>* alarms) const;
  // A server's extra (per function) summed over its last windows
  // (SumWindows), then by the resource the manifest gives it (idle functions left out, and with
  // `functions_only` limpwatch's own features too); Clear() is the resource
  // most of it stands for, when the manifest names enough of it.
  struct ExtraByResource {
    double weight[6] = {};
    double classified = 0;
    double total = 0;
    shm::Resource Clear() const;
  };
  static std::unordered_map<uint32_t, double> SumWindows(const std::deque<std::unordered_map<uint32_t, double>>& extra);
  ExtraByResource SumExtra(const std::unordered_map<uint32_t, double>& summed, bool functions_only) const;
  Alarm BuildCalibratedAlarm(const std::string& server, ServerState& state, const ServerEvidence& evidence,
                             uint64_t window, uint64_t now_unix_ms);
  void ScoreVectorMetric(ComparedMetric metric, const std::vector<const PeerSummary*>& summaries,
                         WindowResult* result, std::vector<std::vector<Feature>>* components);
  void ScoreScalarMetric(ComparedMetric metric, const std::vector<const PeerSummary*>& summaries,
                         WindowResult* result);
  // Functions the manifest marks idle (waiting for work) are left out of the
  // distances: the time a fault takes from them shows, mirrored, in the
  // functions that do the work, while how idle time splits among a server's
  // waiting threads is noise that differs from server to server. Functions
  // it marks uncounted are left out of the count vector only.
  struct LeftOutMask {
    std::vector<uint32_t> keys;
    std::vector<uint8_t> left_out;
  };
  bool IsLeftOut(uint32_t key, Metric metric);
  std::vector<Feature> WithoutLeftOutFunctions(const std::vector<Feature>& features, Metric metric,
                                               LeftOutMask* mask);
  double ThresholdFor(const std::string& server, ComparedMetric metric, double default_threshold, bool* trained) const;
  // An alarm of this reporter's on `server` for `window`: what every kind fills the same way.
  Alarm NewAlarm(AlarmKind kind, const std::string& server, uint64_t window, uint64_t now_unix_ms) const;
  Alarm BuildAlarm(const std::string& server, ServerState& state, const std::vector<ComparedMetric>& fired,
                   uint64_t window, uint64_t now_unix_ms, const std::vector<const PeerSummary*>& summaries);
  // Windows without a summary before a peer is silent: at least
  // peer_silence_windows, more on a link that loses its summaries.
  uint64_t SilenceWindows(const ServerState& state) const;
  std::vector<Alarm> CheckSilentPeers(uint64_t window, uint64_t now_unix_ms);
  // Errnos a server returned far more often than its peers in this window
  // (error_features.h): one alarm per server, the errnos as its top functions.
  std::vector<Alarm> CheckErrors(uint64_t window, uint64_t now_unix_ms,
                                 const std::vector<const PeerSummary*>& summaries);
  // Whether a server other than `server` is away in `window`: it sent no
  // summary for it (crashed, hung, cut off) or is starting up again.
  bool AnotherServerAway(const std::string& server, uint64_t window) const;

  AnalyzerConfig config_;
  Thresholds thresholds_;
  ResourceManifest manifest_;
  const NameBook* names_;
  std::string reporter_;
  std::map<uint64_t, std::map<std::string, PeerSummary>> pending_;
  std::map<std::string, ServerState> servers_;
  uint64_t last_analyzed_ = 0;
  bool analyzed_any_ = false;
  uint64_t late_summaries_ = 0;
  bool keep_results_ = true;
  std::vector<WindowResult> results_;
  WindowResult last_result_;
  std::unique_ptr<CalibratedDecision> calibrated_;
  std::unique_ptr<RpcaDetector> rpca_;  // config.rpca_detector
  // Seed 000 section 7.1: per feature, the running relative spread among
  // servers in windows where nobody was anomalous; features that vary a lot
  // without a fault weigh less.
  std::unordered_map<uint32_t, double> spread_[kVectorMetricCount];
  // By feature key, once its name is known: kLeftOut* bits.
  std::unordered_map<uint32_t, uint8_t> left_out_keys_;
};

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_CLUSTER_DIAGNOSER_H_
