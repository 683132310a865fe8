// Replay protection: windows rise per boot, new boots start new streams,
// old boots stay dead, memory stays bounded.
#include <gtest/gtest.h>

#include "limpwatch/analyzer/peer_replay.h"

namespace limpwatch::analyzer {
namespace {

using Verdict = ReplayGuard::Verdict;

PeerSummary Window(const std::string& node, uint64_t boot, uint64_t window, uint64_t end_ms) {
  PeerSummary summary;
  summary.node = node;
  summary.boot_id = boot;
  summary.window = window;
  summary.window_end_unix_ms = end_ms;
  return summary;
}

TEST(ReplayGuard, RisingWindowsAreAcceptedAndRepeatsOrOlderAreReplays) {
  ReplayGuard guard;
  EXPECT_EQ(guard.Admit(Window("a", 1, 10, 10'000)), Verdict::kNewStream);
  EXPECT_EQ(guard.Admit(Window("a", 1, 11, 11'000)), Verdict::kAccepted);
  EXPECT_EQ(guard.Admit(Window("a", 1, 11, 11'000)), Verdict::kReplayed);  // the same datagram again
  EXPECT_EQ(guard.Admit(Window("a", 1, 5, 5'000)), Verdict::kReplayed);    // an older window
  EXPECT_EQ(guard.Admit(Window("a", 1, 13, 13'000)), Verdict::kAccepted);  // a gap is fine (loss)
  EXPECT_EQ(guard.Admit(Window("a", 1, 12, 12'000)), Verdict::kReplayed);  // late, lost the race
  EXPECT_EQ(RejectionOf(Verdict::kReplayed), DecodeError::kReplayed);
  EXPECT_EQ(RejectionOf(Verdict::kAccepted), DecodeError::kNone);
}

TEST(ReplayGuard, NodesAreIndependent) {
  ReplayGuard guard;
  EXPECT_EQ(guard.Admit(Window("a", 1, 10, 10'000)), Verdict::kNewStream);
  EXPECT_EQ(guard.Admit(Window("b", 1, 10, 10'000)), Verdict::kNewStream);
  EXPECT_EQ(guard.Admit(Window("b", 1, 10, 10'000)), Verdict::kReplayed);
  EXPECT_EQ(guard.tracked_senders(), 2u);
}

TEST(ReplayGuard, ARestartStartsANewStreamFromWindowZero) {
  ReplayGuard guard;
  EXPECT_EQ(guard.Admit(Window("a", 1, 500, 500'000)), Verdict::kNewStream);
  EXPECT_EQ(guard.Admit(Window("a", 2, 0, 510'000)), Verdict::kNewStream);
  EXPECT_EQ(guard.Admit(Window("a", 2, 1, 511'000)), Verdict::kAccepted);
  EXPECT_EQ(guard.Admit(Window("a", 2, 1, 511'000)), Verdict::kReplayed);
}

TEST(ReplayGuard, TheReplacedBootIsStale) {
  ReplayGuard guard;
  EXPECT_EQ(guard.Admit(Window("a", 1, 500, 500'000)), Verdict::kNewStream);
  EXPECT_EQ(guard.Admit(Window("a", 2, 0, 510'000)), Verdict::kNewStream);
  // A later window of the dead boot, even with a later time: stale.
  EXPECT_EQ(guard.Admit(Window("a", 1, 501, 520'000)), Verdict::kStaleBoot);
  EXPECT_EQ(RejectionOf(Verdict::kStaleBoot), DecodeError::kStaleBoot);
  // The live stream is untouched.
  EXPECT_EQ(guard.Admit(Window("a", 2, 1, 511'000)), Verdict::kAccepted);
}

TEST(ReplayGuard, ABootOlderThanTheLiveStreamCannotDisplaceIt) {
  ReplayGuard guard;
  EXPECT_EQ(guard.Admit(Window("a", 7, 100, 900'000)), Verdict::kNewStream);
  // A recorded boot never seen here (beyond the retired list), windows ending
  // before the live stream's last: refused.
  EXPECT_EQ(guard.Admit(Window("a", 3, 999, 899'000)), Verdict::kStaleBoot);
  EXPECT_EQ(guard.Admit(Window("a", 3, 999, 900'000)), Verdict::kStaleBoot);
  EXPECT_EQ(guard.Admit(Window("a", 7, 101, 901'000)), Verdict::kAccepted);
}

TEST(ReplayGuard, RetiredBootsAreRememberedUpToTheLimit) {
  ReplayGuard guard;
  uint64_t time = 1'000;
  for (uint64_t boot = 1; boot <= ReplayGuard::kRetiredBootsPerNode + 1; ++boot) {
    EXPECT_EQ(guard.Admit(Window("a", boot, 0, time += 1'000)), Verdict::kNewStream) << boot;
  }
  for (uint64_t boot = 1; boot <= ReplayGuard::kRetiredBootsPerNode; ++boot) {
    EXPECT_EQ(guard.Admit(Window("a", boot, 50, time + 10'000)), Verdict::kStaleBoot) << boot;
  }
}

TEST(ReplayGuard, MemoryIsBoundedByEvictingTheLeastRecentSender) {
  ReplayGuard guard(3);
  EXPECT_EQ(guard.Admit(Window("a", 1, 1, 1'000)), Verdict::kNewStream);
  EXPECT_EQ(guard.Admit(Window("b", 1, 1, 1'000)), Verdict::kNewStream);
  EXPECT_EQ(guard.Admit(Window("c", 1, 1, 1'000)), Verdict::kNewStream);
  EXPECT_EQ(guard.Admit(Window("a", 1, 2, 2'000)), Verdict::kAccepted);  // a is now the most recent
  EXPECT_EQ(guard.Admit(Window("d", 1, 1, 1'000)), Verdict::kNewStream);  // evicts b
  EXPECT_EQ(guard.tracked_senders(), 3u);
  EXPECT_EQ(guard.evictions(), 1u);
  // a, c and d are still protected; b was forgotten, so it starts over.
  EXPECT_EQ(guard.Admit(Window("a", 1, 2, 2'000)), Verdict::kReplayed);
  EXPECT_EQ(guard.Admit(Window("c", 1, 1, 1'000)), Verdict::kReplayed);
  EXPECT_EQ(guard.Admit(Window("d", 1, 1, 1'000)), Verdict::kReplayed);
  EXPECT_EQ(guard.Admit(Window("b", 1, 1, 1'000)), Verdict::kNewStream);
  EXPECT_EQ(guard.tracked_senders(), 3u);
}

}  // namespace
}  // namespace limpwatch::analyzer
