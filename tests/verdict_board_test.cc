// Which analyzers hold an alarm open: the board of each analyzer's own
// verdicts and its peers' lists (verdict_board.h), and the agreement stored
// with an alarm in the segment's ring.
#include <gtest/gtest.h>
#include <unistd.h>

#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/analyzer/verdict_board.h"
#include "limpwatch/shm/name_hash.h"
#include "limpwatch/shm/segment.h"

namespace limpwatch::analyzer {
namespace {

constexpr uint64_t kOpenWindows = 30;
constexpr uint64_t kStaleWindows = 5;

Alarm DiskAlarm(const std::string& server, uint64_t window) {
  Alarm alarm;
  alarm.kind = AlarmKind::kAnomaly;
  alarm.server = server;
  alarm.resource = shm::Resource::kDisk;
  alarm.window = window;
  return alarm;
}

PeerSummary ListOf(const std::string& peer, uint64_t window, std::vector<OpenVerdict> verdicts) {
  PeerSummary summary;
  summary.node = peer;
  summary.window = window;
  summary.verdicts = std::move(verdicts);
  return summary;
}

OpenVerdict DiskVerdictOn(const std::string& server) {
  return {shm::FunctionNameHash(server), uint8_t(shm::Resource::kDisk), uint8_t(AlarmKind::kAnomaly)};
}

TEST(VerdictBoard, CountsTheAnalyzersThatHoldTheSameAlarmAmongThoseThatSpeak) {
  VerdictBoard board("s0", kOpenWindows, kStaleWindows);
  board.Opened(DiskAlarm("s2", 100));
  board.Heard(ListOf("s1", 100, {DiskVerdictOn("s2")}));
  board.Heard(ListOf("s2", 100, {DiskVerdictOn("s2")}));
  board.Heard(ListOf("s3", 100, {}));  // speaks, holds nothing
  Agreement agreement = board.On("s2", shm::Resource::kDisk, AlarmKind::kAnomaly);
  EXPECT_EQ(agreement.agreeing, (std::vector<std::string>{"s0", "s1", "s2"}));
  EXPECT_EQ(agreement.analyzers, 4u);
  // Another resource or kind is another alarm.
  EXPECT_EQ(board.On("s2", shm::Resource::kCpu, AlarmKind::kAnomaly).agreeing.size(), 0u);
  EXPECT_EQ(board.On("s2", shm::Resource::kDisk, AlarmKind::kErrors).agreeing.size(), 0u);
}

TEST(VerdictBoard, InALargerClusterOnlyTheServersScorersCount) {
  // s0's peers are s1..s4; s4 does not compare s2 (another group's member),
  // so its word on s2, agreeing or not, is not counted.
  VerdictBoard board("s0", kOpenWindows, kStaleWindows);
  board.Opened(DiskAlarm("s2", 100));
  board.Heard(ListOf("s1", 100, {DiskVerdictOn("s2")}));
  board.Heard(ListOf("s3", 100, {}));
  board.Heard(ListOf("s4", 100, {DiskVerdictOn("s2")}));
  Agreement agreement =
      board.On("s2", shm::Resource::kDisk, AlarmKind::kAnomaly, {"s0", "s1", "s2", "s3", "s9"});
  EXPECT_EQ(agreement.agreeing, (std::vector<std::string>{"s0", "s1"}));
  EXPECT_EQ(agreement.analyzers, 3u) << "s0, s1 and s3: s2 and s9 are not heard, s4 does not compare s2";
}

TEST(VerdictBoard, APeerThatLeftTheConfigurationNoLongerCounts) {
  VerdictBoard board("s0", kOpenWindows, kStaleWindows);
  board.Opened(DiskAlarm("s2", 100));
  board.Heard(ListOf("s1", 100, {DiskVerdictOn("s2")}));
  board.Heard(ListOf("s3", 100, {DiskVerdictOn("s2")}));
  EXPECT_EQ(board.On("s2", shm::Resource::kDisk, AlarmKind::kAnomaly).analyzers, 3u);
  board.Forget("s3");
  Agreement agreement = board.On("s2", shm::Resource::kDisk, AlarmKind::kAnomaly);
  EXPECT_EQ(agreement.agreeing, (std::vector<std::string>{"s0", "s1"}));
  EXPECT_EQ(agreement.analyzers, 2u);
}

TEST(VerdictBoard, APeerOfWireMinorZeroIsNotCountedAndASilentPeerDropsOut) {
  VerdictBoard board("s0", kOpenWindows, kStaleWindows);
  board.Opened(DiskAlarm("s2", 100));
  PeerSummary old = ListOf("s1", 100, {});
  old.carries_verdicts = false;
  board.Heard(old);
  board.Heard(ListOf("s3", 100, {DiskVerdictOn("s2")}));
  EXPECT_EQ(board.On("s2", shm::Resource::kDisk, AlarmKind::kAnomaly).analyzers, 2u);
  board.AdvanceTo(100 + kStaleWindows);
  EXPECT_EQ(board.On("s2", shm::Resource::kDisk, AlarmKind::kAnomaly).analyzers, 2u);
  board.AdvanceTo(100 + kStaleWindows + 1);  // s3 silent past the diagnoser's own bound
  Agreement agreement = board.On("s2", shm::Resource::kDisk, AlarmKind::kAnomaly);
  EXPECT_EQ(agreement.analyzers, 1u);
  EXPECT_EQ(agreement.agreeing, (std::vector<std::string>{"s0"}));
}

TEST(VerdictBoard, AVerdictStaysOpenWhileItsServerIsIndictedAndClosesAfterTheSuppressionPeriod) {
  VerdictBoard board("s0", kOpenWindows, kStaleWindows);
  board.Opened(DiskAlarm("s2", 100));
  board.Indicted({"s2"}, 120);
  board.AdvanceTo(120 + kOpenWindows);
  EXPECT_TRUE(board.HoldsOpen("s2", shm::Resource::kDisk, AlarmKind::kAnomaly));
  board.Indicted({"s1"}, 121 + kOpenWindows);  // s2 no longer indicted
  EXPECT_FALSE(board.HoldsOpen("s2", shm::Resource::kDisk, AlarmKind::kAnomaly));
  EXPECT_TRUE(board.OwnVerdicts().empty());
  // Indicted alone opens nothing: only an alarm does.
  EXPECT_FALSE(board.HoldsOpen("s1", shm::Resource::kDisk, AlarmKind::kAnomaly));
}

TEST(VerdictBoard, OwnVerdictsAreTheMostRecentlyRenewedUpToTheWireBound) {
  VerdictBoard board("s0", kOpenWindows, kStaleWindows);
  for (uint64_t i = 0; i < kMaxOpenVerdicts + 3; ++i) board.Opened(DiskAlarm("s" + std::to_string(i + 1), 100 + i));
  std::vector<OpenVerdict> own = board.OwnVerdicts();
  ASSERT_EQ(own.size(), kMaxOpenVerdicts);
  EXPECT_EQ(own.front(), DiskVerdictOn("s" + std::to_string(kMaxOpenVerdicts + 3)));
  EXPECT_EQ(own.back(), DiskVerdictOn("s4"));
}

TEST(VerdictBoard, ALateListOfAnOlderWindowDoesNotReplaceANewerOne) {
  VerdictBoard board("s0", kOpenWindows, kStaleWindows);
  board.Opened(DiskAlarm("s2", 100));
  board.Heard(ListOf("s1", 101, {DiskVerdictOn("s2")}));
  board.Heard(ListOf("s1", 99, {}));
  EXPECT_EQ(board.On("s2", shm::Resource::kDisk, AlarmKind::kAnomaly).agreeing.size(), 2u);
}

TEST(AlarmAgreement, IsStoredWithTheAlarmAndUpdatedInPlaceUntilTheRingOverwritesIt) {
  shm::OwnerInfo owner;
  owner.name = "agreementtest";
  owner.pid = getpid();
  shm::Geometry geometry;
  geometry.alarm_capacity = 4;
  std::string error;
  auto writer = shm::SegmentWriter::Create(shm::SegmentObjectName("agreementtest", getpid()), geometry, owner, &error);
  ASSERT_TRUE(writer) << error;
  struct Removed {
    shm::SegmentWriter* writer;
    ~Removed() { writer->Remove(); }
  } removed{writer.get()};
  Alarm alarm = DiskAlarm("s2", 100);
  alarm.agreeing = {"s0"};
  alarm.analyzers = 4;
  uint64_t sequence = PublishAlarm(writer->view(), alarm);
  uint64_t last = 0;
  std::vector<RingAlarm> read = ReadAlarmRing(writer->view(), 0, &last);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].reporters, 1u);
  EXPECT_EQ(read[0].analyzers, 4u);

  ASSERT_TRUE(UpdateAlarmAgreement(writer->view(), sequence, 4, 4));
  uint32_t reporters = 0;
  uint32_t analyzers = 0;
  ASSERT_TRUE(ReadAlarmAgreement(writer->view(), sequence, &reporters, &analyzers));
  EXPECT_EQ(reporters, 4u);
  EXPECT_EQ(analyzers, 4u);
  EXPECT_EQ(ReadAlarmRing(writer->view(), 0, &last)[0].reporters, 4u);

  // An alarm raised offline knows no agreement: recorded as none.
  Alarm offline = DiskAlarm("s3", 101);
  for (int i = 0; i < 4; ++i) PublishAlarm(writer->view(), offline);
  EXPECT_FALSE(UpdateAlarmAgreement(writer->view(), sequence, 3, 4));
  EXPECT_FALSE(ReadAlarmAgreement(writer->view(), sequence, &reporters, &analyzers));
  EXPECT_EQ(ReadAlarmRing(writer->view(), 0, &last).back().analyzers, 0u);
}

TEST(AlarmAgreement, TheLogLineAndTheJsonNameTheAnalyzersThatAgree) {
  Alarm alarm = DiskAlarm("s2", 100);
  alarm.reporter = "s0";
  alarm.agreeing = {"s0", "s1", "s3"};
  alarm.analyzers = 4;
  EXPECT_NE(AlarmToLogLine(alarm).find("held by 3 of 4 analyzers: s0 s1 s3"), std::string::npos)
      << AlarmToLogLine(alarm);
  EXPECT_NE(AlarmToJson(alarm).find("\"agreeing\":[\"s0\",\"s1\",\"s3\"],\"analyzers\":4"), std::string::npos)
      << AlarmToJson(alarm);
  alarm.analyzers = 0;  // not known (offline): nothing said
  EXPECT_EQ(AlarmToLogLine(alarm).find("held by"), std::string::npos);
  EXPECT_EQ(AlarmToJson(alarm).find("agreeing"), std::string::npos);
}

}  // namespace
}  // namespace limpwatch::analyzer
