// The calibrated decision: which servers are slower than their peers,
// beyond the noise of this cluster, often enough that the false alarms it
// raises stay within a stated budget. It needs no training.
//
// Per window, metric and server:
//  1. Direction and scale. The server's value over the median of its
//     peers', as a log ratio d (a value of 0 is no measurement for a level,
//     a value for a wait, which gets a small epsilon added: the amount of
//     waiting that slows nothing). Only slower counts: a server faster or
//     idler than its peers has d < 0, which only lowers its charts. For a
//     metric the caller already gives as a log ratio (the profiles'
//     work-normalised time, cluster_diagnoser.cc), the server's usual ratio
//     is taken off first, once it has one: a server that always does more
//     of the metadata work is different, not limping.
//  2. Load. A load metric (throughput, request rate) is never a symptom; a
//     server carrying more load than its peers has the share of its latency
//     ratio its load explains taken off: the slope of the symptom's log
//     ratio on the load's, fitted over the cluster's windows, between 0 and 1.
//  3. Noise. The spread of healthy servers' log ratios, their wander over
//     many windows and their tails, learnt online from every server's own
//     history (metric_noise.h).
//  4. Evidence. A multi-chart CUSUM per server and metric (shift_detector.h)
//     for limps of 1.2x, 1.5x, 2.5x and 6x against a tolerated difference
//     of 1.07x: healthy peers differ that much persistently and are never
//     indicted; a server persistently 1.2x slower always is, and a larger
//     limp sooner. When half the servers compared or more look slower
//     together, the window holds two groups, not one limping server: nobody
//     gains evidence on that metric in it.
//  5. Decision. A server is indicted while one of its charts is over
//     h = log(windows per budget x charts) (false_alarm_budget.h).
// A server's first `warmup_windows` windows (its start-up) are compared,
// learnt from and never counted.
#ifndef LIMPWATCH_ANALYZER_CALIBRATED_DECISION_H_
#define LIMPWATCH_ANALYZER_CALIBRATED_DECISION_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "limpwatch/analyzer/metric_noise.h"
#include "limpwatch/analyzer/residual_history.h"
#include "limpwatch/analyzer/shift_detector.h"
#include "limpwatch/shm/layout.h"

namespace limpwatch::analyzer {

enum class EvidenceKind : uint8_t {
  kLevel,     // a positive level (a service time per call, a latency); 0 = not measured
  kWait,      // time waited per tick, 0 a value; compared with `epsilon` added to both sides
  kLogRatio,  // the caller's log ratio to the peers, judged against the server's usual one
  kLoad,      // explains the symptoms, never one itself
};

struct DecisionMetric {
  std::string name;
  EvidenceKind kind = EvidenceKind::kLevel;
  shm::Resource resource = shm::Resource::kUnknown;  // what a limp on it stands for
  double epsilon = 0;                                // kWait: the amount that slows nothing
};

struct DecisionSettings {
  double tolerated_ratio = 1.07;  // a persistent healthy difference
  std::vector<double> limps = {1.2, 1.5, 2.5, 6.0};
  double server_days_per_false_alarm = 100;
  double window_shift_s = 1;    // seconds between two windows
  double overlap = 4;           // windows sharing each tick (window length / shift)
  uint32_t warmup_windows = 8;  // a server's start-up
  // Windows a kLogRatio metric's usual ratio is learnt over before it counts.
  uint32_t baseline_windows = 32;
  // Collect the per-server figures of Verdicts() (offline diagnosis).
  bool keep_verdicts = false;
};

struct MetricEvidence {
  bool compared = false;  // measured on the server and enough peers
  bool counted = false;   // added to its charts (not warming up, not a two-group window)
  double log_ratio = 0;   // d: its value over its peers' median, log
  double excess = 0;      // what the charts judged: d less the share its load explains, less its usual ratio
  double sigma = 0;       // the metric's noise in this window
  double statistic = 0;   // its largest chart over the threshold: 1 or more indicts
  double limp = 0;        // the limp size of that chart
  bool still_seen = false;  // this window added to that chart: the limp goes on
  bool beyond = false;      // this window alone is past the tolerated difference by two spreads
};

struct ServerEvidence {
  std::string server;
  std::vector<MetricEvidence> metrics;  // one per DecisionMetric
  bool warming_up = false;
  bool indicted = false;
  // Indicted on a metric that this window still adds evidence to: worth an
  // alarm. A chart still over the threshold after its limp ended is not.
  bool limping_now = false;
  int strongest = -1;  // the metric with the largest statistic
};

struct DecisionWindow {
  uint64_t window = 0;
  std::vector<ServerEvidence> servers;
};

// What Verdicts() reports per server and metric.
struct MetricVerdict {
  uint64_t compared = 0;
  uint64_t anomalous = 0;  // windows more than two spreads past the tolerated difference
  double median_ratio = 0;  // of its value to its peers' median, over the windows compared
  double largest_statistic = 0;
};

struct ServerVerdict {
  std::string server;
  uint64_t windows = 0;            // windows it was compared in (any metric)
  uint64_t anomalous_windows = 0;  // windows anomalous on any metric
  uint64_t indicted_windows = 0;
  uint64_t first_indicted = 0, last_indicted = 0;  // windows; valid when indicted_windows > 0
  std::vector<MetricVerdict> metrics;
};

class CalibratedDecision {
 public:
  CalibratedDecision(const DecisionSettings& settings, std::vector<DecisionMetric> metrics);
  ~CalibratedDecision();

  // Refinements from training: a metric's spread learnt over `windows`
  // fault-free windows, and a server's usual log ratio on a kLogRatio metric.
  void SetNoisePrior(size_t metric, double sigma, double windows);
  void SetUsualRatio(const std::string& server, size_t metric, double log_ratio);

  // One window: `values[i][m]` is servers[i]'s value of metric m (NaN: not
  // measured); `warming_up[i]`: in its start-up.
  DecisionWindow Observe(uint64_t window, const std::vector<std::string>& servers,
                         const std::vector<std::vector<double>>& values, const std::vector<bool>& warming_up);

  // A server restarted: its charts, history and usual ratios start again.
  void Forget(const std::string& server);

  void KeepVerdicts(bool keep) { settings_.keep_verdicts = keep; }
  const std::vector<DecisionMetric>& metrics() const { return metrics_; }
  const DecisionSettings& settings() const { return settings_; }
  double threshold() const { return threshold_; }
  const MetricNoise& noise(size_t metric) const { return noise_[metric]; }
  // The metric's load slope (how much of a load ratio its latency follows).
  double load_slope(size_t metric) const;
  std::vector<ServerVerdict> Verdicts() const;
  // A server's usual log ratio on a kLogRatio metric, once learnt.
  bool UsualRatio(const std::string& server, size_t metric, double* log_ratio) const;
  // The same, or the center of its history once it holds a few windows:
  // what training keeps, from runs too short to settle a usual ratio.
  bool RatioSoFar(const std::string& server, size_t metric, double* log_ratio) const;

 private:
  struct Track;
  struct ServerState;
  ServerState& StateOf(const std::string& server);
  static void CountRatio(Track& track, double log_ratio);
  // The steps of Observe: each metric's log ratio of each server to its
  // peers' median; the load each server carries over its peers'; one
  // symptom's evidence, noise and charts; the decision and the verdicts.
  std::vector<std::vector<double>> LogRatios(const std::vector<std::vector<double>>& values) const;
  std::vector<double> LoadRatios(const std::vector<std::vector<double>>& ratios) const;
  void JudgeMetric(size_t metric, const std::vector<double>& ratios, const std::vector<double>& load,
                   const std::vector<ServerState*>& states, DecisionWindow* result);
  void Conclude(const std::vector<ServerState*>& states, DecisionWindow* result);

  DecisionSettings settings_;
  std::vector<DecisionMetric> metrics_;
  std::vector<double> limp_logs_;
  double tolerated_log_;
  double threshold_;
  std::vector<MetricNoise> noise_;
  std::vector<double> load_zy_, load_zx_;  // per metric: the load fit's sums
  std::map<std::string, std::unique_ptr<ServerState>> servers_;
};

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_CALIBRATED_DECISION_H_
