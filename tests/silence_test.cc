// A peer is silent after peer_silence_windows without a summary on a link
// that loses none, and after more on one that loses some: so many windows
// in a row are not lost by chance within the false-alarm budget.
#include <gtest/gtest.h>

#include "limpwatch/analyzer/cluster_diagnoser.h"

namespace limpwatch::analyzer {
namespace {

PeerSummary SummaryOf(const std::string& node, uint64_t window) {
  PeerSummary summary;
  summary.node = node;
  summary.boot_id = 1;
  summary.window = window;
  summary.window_end_unix_ms = window * 1000;
  summary.window_ticks = 4;
  summary.tick_ms = 1000;
  summary.io.dread_ms = 0.5f;
  summary.io.request_bytes_per_s = 1e6f;
  return summary;
}

// The window of the silent alarm on s2 when it loses every `lose_every`-th
// summary (0: none) until window 300 and then stops.
uint64_t SilentAlarmWindow(uint64_t lose_every, double* threshold) {
  AnalyzerConfig config;
  NameBook names;
  ClusterDiagnoser diagnoser(config, {}, {}, &names, "s0");
  diagnoser.KeepResults(false);
  for (uint64_t window = 1; window <= 400; ++window) {
    diagnoser.Add(SummaryOf("s0", window));
    diagnoser.Add(SummaryOf("s1", window));
    diagnoser.Add(SummaryOf("s3", window));
    bool lost = lose_every != 0 && window % lose_every == 0;
    if (window < 300 && !lost) diagnoser.Add(SummaryOf("s2", window));
    for (const Alarm& alarm : diagnoser.Analyze(window, window * 1000)) {
      if (alarm.kind != AlarmKind::kSilent) continue;
      EXPECT_EQ(alarm.server, "s2");
      *threshold = alarm.threshold;
      return window;
    }
  }
  return 0;
}

TEST(Silence, APeerOnALosslessLinkIsSilentAfterTheConfiguredWindows) {
  double threshold = 0;
  uint64_t window = SilentAlarmWindow(0, &threshold);
  EXPECT_EQ(window, 299u + AnalyzerConfig{}.peer_silence_windows);
  EXPECT_EQ(threshold, AnalyzerConfig{}.peer_silence_windows);
}

TEST(Silence, APeerOnALossyLinkIsGivenTheWindowsItsLossesExplain) {
  // One summary in 10 lost (and 1 in 3): five in a row happen by chance
  // (1e-5 per window, and 4e-3); the budget of one false alarm per 100
  // server-days over 3 peers is 4e-8 a window: 8 windows, and 16.
  double threshold = 0;
  uint64_t window = SilentAlarmWindow(10, &threshold);
  EXPECT_EQ(threshold, 8);
  EXPECT_EQ(window, 299u + 8);
  window = SilentAlarmWindow(3, &threshold);
  EXPECT_EQ(threshold, 16);
  EXPECT_EQ(window, 299u + 16);
}

// A server removed from the configuration (peer_membership.h) is forgotten:
// no silent alarm however long it stays away, and when it comes back it
// warms up like a new server. The same run without Forget alarms.
uint64_t SilentAlarmsWhenS2LeavesAndReturns(bool forget) {
  AnalyzerConfig config;
  NameBook names;
  ClusterDiagnoser diagnoser(config, {}, {}, &names, "s0");
  diagnoser.KeepResults(false);
  uint64_t silent = 0;
  for (uint64_t window = 1; window <= 400; ++window) {
    for (const char* server : {"s0", "s1", "s3"}) diagnoser.Add(SummaryOf(server, window));
    if (window < 200 || window >= 300) diagnoser.Add(SummaryOf("s2", window));
    if (window == 200 && forget) diagnoser.Forget("s2");
    for (const Alarm& alarm : diagnoser.Analyze(window, window * 1000)) silent += alarm.kind == AlarmKind::kSilent;
  }
  return silent;
}

TEST(Silence, AServerRemovedFromTheConfigurationIsForgottenNotSilent) {
  EXPECT_EQ(SilentAlarmsWhenS2LeavesAndReturns(true), 0u);
  EXPECT_EQ(SilentAlarmsWhenS2LeavesAndReturns(false), 1u);
}

// A server that restarts (a new boot id) starts over: its first windows are
// warm-up windows, scored but never anomalous, so a server slow while it
// starts (cold caches, a precreate pool to fill) is not indicted for them.
// The window of the first anomaly alarm on s2, slow (10x its peers' reads)
// from window 200 on, after 3 windows away, with a new boot id or the same.
uint64_t FirstAnomalyWhenS2ComesBackSlow(bool new_boot) {
  AnalyzerConfig config;
  NameBook names;
  ClusterDiagnoser diagnoser(config, {}, {}, &names, "s0");
  diagnoser.KeepResults(false);
  const uint64_t back = 200;
  for (uint64_t window = 1; window < back + 100; ++window) {
    for (const char* server : {"s0", "s1", "s3"}) diagnoser.Add(SummaryOf(server, window));
    if (window < back - 3 || window >= back) {
      PeerSummary summary = SummaryOf("s2", window);
      if (window >= back) {
        summary.boot_id = new_boot ? 2 : 1;
        summary.io.dread_ms *= 10;
      }
      diagnoser.Add(summary);
    }
    for (const Alarm& alarm : diagnoser.Analyze(window, window * 1000)) {
      EXPECT_NE(alarm.kind, AlarmKind::kSilent);
      if (alarm.kind == AlarmKind::kAnomaly && alarm.server == "s2") return window;
    }
  }
  return 0;
}

TEST(Silence, ARestartedServerWarmsUpAgain) {
  const uint64_t back = 200, warmup = AnalyzerConfig{}.warmup_windows;
  uint64_t restarted = FirstAnomalyWhenS2ComesBackSlow(true);
  uint64_t same_run = FirstAnomalyWhenS2ComesBackSlow(false);
  ASSERT_NE(same_run, 0u);
  EXPECT_GE(restarted, back + warmup);
  EXPECT_GT(restarted, same_run) << same_run;
}

}  // namespace
}  // namespace limpwatch::analyzer
