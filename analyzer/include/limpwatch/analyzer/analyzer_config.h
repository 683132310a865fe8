// The analyzer's settings, with the defaults this project uses and why.
#ifndef LIMPWATCH_ANALYZER_ANALYZER_CONFIG_H_
#define LIMPWATCH_ANALYZER_ANALYZER_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "limpwatch/analyzer/distance.h"

namespace limpwatch::analyzer {

// How peer comparison decides (calibrated_decision.h). The seed rule, seed
// 000's trained thresholds and k of 2k-1 windows, is kept for comparison.
enum class DecisionRule : uint8_t { kCalibrated, kSeed };
const char* DecisionRuleName(DecisionRule rule);

struct AnalyzerConfig {
  DecisionRule decision_rule = DecisionRule::kCalibrated;
  // The calibrated rule's budget: at most one false alarm per this many
  // server-days on healthy servers (false_alarm_budget.h).
  double server_days_per_false_alarm = 100;

  uint32_t tick_ms = 1000;
  // Seed 000 used 60 s windows shifted by 30 s and k = 3 of 5 windows: a
  // 90 s latency. Our per-second data is dense enough for 4 s windows
  // shifted by 1 s, which puts a steady fault 3-7 s from its alarm.
  uint32_t window_ticks = 4;
  uint32_t shift_ticks = 1;
  uint32_t k = 3;  // anomalous in k of the last 2k-1 windows
  // A server's first windows hold its start-up (opening files, filling
  // caches): they are compared but never counted as anomalous.
  uint32_t warmup_windows = 8;

  // Dimensionality reduction (seed 000 section 5.1: 100 samples or 1 s of
  // time in some window on some node), per window of window_ticks ticks.
  double min_feature_samples = 20;
  double min_feature_time_ms = 100;
  uint32_t max_features = 200;  // over all metrics: one datagram

  DistanceKind distance = DistanceKind::kManhattan;
  bool variance_weighting = false;  // seed 000 section 7.1
  // The rpca detector (rpca_detector.h: robust PCA over the windows of every
  // server, no training) beside peer comparison. Off by default: it finds
  // fewer fault classes than peer comparison on the test-bed so far, and
  // costs a robust PCA per window (LIMPWATCH_ANALYZE_RPCA=1).
  bool rpca_detector = false;

  // Node-local invariants (seed 003).
  uint32_t invariant_period_ticks = 4;
  double request_drop_alpha = 0.5;
  uint32_t alarm_suppression_s = 30;  // alarms after the first, for the same server

  uint32_t peer_silence_windows = 5;  // a peer heard from before and silent this long: crash / hang
  // A server must also be slower than its peers' median by this factor before
  // an I/O service-time metric indicts it (seed 001 compares against the
  // per-second median of the peers).
  double default_threshold_factor = 3.0;
  // Whatever the threshold, a server is only anomalous when it stands out
  // from its peers by this factor: its distance score over the median of the
  // other servers' scores, its I/O service time over its peers' median. When
  // every server is disturbed (a shared switch, the burst after a peer
  // recovers), none of them is the one that limps.
  double relative_factor = 2.0;
  // The wait for a CPU stands out only at this factor of the peers' median
  // wait. On an overloaded machine a busy healthy server waits 2-2.7x what
  // its peers wait for seconds on end (test-bed ddw: 500-800 ms a tick
  // against 250-350); a CPU quota makes it 15-25x (1.6-2.2 s against 80-100).
  double cpu_wait_relative_factor = 4.0;
};

// Reads LIMPWATCH_ANALYZE_* variables over the defaults; bad values are
// reported in *problems and their default is kept.
AnalyzerConfig ReadAnalyzerConfigFromEnvironment(std::vector<std::string>* problems);

std::optional<DecisionRule> ParseDecisionRule(const std::string& name);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_ANALYZER_CONFIG_H_
