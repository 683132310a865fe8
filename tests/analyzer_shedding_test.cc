// Where the in-process analyzer sheds work or refuses input, counted in the
// segment (shm::AnalyzerShedding, AnalyzerHealth) and shown by `limpwatch
// dump`, so that "no alarm" can be told from "could not look": alarms that
// could not reach their file, peer summaries too late to compare, ticks
// missed, and peer datagrams refused, by class.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "limpwatch/analyzer/analyzer_loop.h"
#include "limpwatch/analyzer/peer_status.h"
#include "limpwatch/analyzer/peer_transport.h"
#include "limpwatch/analyzer/peer_wire.h"
#include "limpwatch/shm/segment.h"
#include "limpwatch/shm/snapshot.h"
#include "peer/loopback.h"
#include "peer/summary_builder.h"
#include "peer/temp_dir.h"
#include "support/file_size_limit.h"
#include "support/traced_run.h"

namespace limpwatch::analyzer {
namespace {

using limpwatch::testing::RunProgram;
using limpwatch::testing::UniqueSegmentName;

// A segment of this test's own, removed at the end.
class TestSegment {
 public:
  TestSegment() {
    shm::OwnerInfo owner;
    owner.name = UniqueSegmentName("shedding");
    owner.program = "analyzer_shedding_test";
    owner.pid = getpid();
    owner.parent_pid = getppid();
    object_ = shm::SegmentObjectName(owner.name, owner.pid);
    shm::Geometry geometry;
    geometry.max_functions = 64;
    geometry.max_threads = 8;
    geometry.stack_depth = 16;
    geometry.alarm_capacity = 16;
    std::string error;
    writer_ = shm::SegmentWriter::Create(object_, geometry, owner, &error);
    EXPECT_NE(writer_, nullptr) << error;
  }
  ~TestSegment() {
    if (writer_) writer_->Remove();
  }
  const shm::SegmentView& view() const { return writer_->view(); }
  const std::string& object() const { return object_; }
  shm::Snapshot Snapshot() const {
    shm::Snapshot snapshot;
    shm::TakeSnapshot(view(), object_, &snapshot);
    return snapshot;
  }

 private:
  std::string object_;
  std::unique_ptr<shm::SegmentWriter> writer_;
};

// Peers that send back this server's own summaries under their names:
// "steady" every window, "fading" only the first `fading_windows`. When
// `late_at` summaries were sent, "steady" also sends the first one again,
// long after its window was compared.
class EchoExchange : public SummaryExchange {
 public:
  EchoExchange(size_t fading_windows, size_t late_at) : fading_windows_(fading_windows), late_at_(late_at) {}
  void Send(const PeerSummary& summary) override {
    if (sent_.empty()) first_ = summary;
    sent_.push_back(summary);
  }
  std::vector<PeerSummary> Receive() override {
    std::vector<PeerSummary> received;
    if (sent_.empty()) return received;
    auto as = [](PeerSummary summary, const std::string& node) {
      summary.node = node;
      return summary;
    };
    received.push_back(as(sent_.back(), "steady"));
    if (sent_.size() <= fading_windows_) received.push_back(as(sent_.back(), "fading"));
    // At or after: a tick that comes late completes two windows at once.
    if (late_at_ != 0 && !late_sent_ && sent_.size() >= late_at_) {
      received.push_back(as(first_, "steady"));
      late_sent_ = true;
    }
    return received;
  }
  PeerSummary AsReceived(const PeerSummary& summary) const override { return summary; }

 private:
  size_t fading_windows_;
  size_t late_at_;
  bool late_sent_ = false;
  std::vector<PeerSummary> sent_;
  PeerSummary first_;
};

AnalyzerSetup FastSetup(std::unique_ptr<SummaryExchange> exchange, const std::string& alarms_path) {
  AnalyzerSetup setup;
  setup.node = "self";
  setup.config.tick_ms = 50;
  setup.alarms_path = alarms_path;
  setup.log = [](const std::string&) {};
  setup.exchange = std::move(exchange);
  setup.announce = false;
  return setup;
}

void TickFor(AnalyzerLoop& loop, const TestSegment& segment, int ticks) {
  for (int tick = 0; tick < ticks; ++tick) {
    loop.Tick(segment.view(), segment.object(), true);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// A peer that falls silent raises an alarm; its file cannot be opened (its
// directory does not exist): the alarm is counted lost, as a failed write
// would be. The first summary sent again long after is counted late.
TEST(AnalyzerSheddingTest, AlarmsThatCannotReachTheirFileAndLateSummariesAreCounted) {
  TestSegment segment;
  AnalyzerLoop loop(FastSetup(std::make_unique<EchoExchange>(4, 12), "/nonexistent-limpwatch-dir/alarms.jsonl"));
  TickFor(loop, segment, 30);
  uint64_t raised = segment.view().alarm_ring()->next_sequence.load();
  ASSERT_GE(raised, 1u) << "the fading peer raised no alarm";
  shm::Snapshot snapshot = segment.Snapshot();
  EXPECT_EQ(snapshot.analyzer_health.alarms_failed_writes, raised);
  EXPECT_EQ(snapshot.analyzer_shedding.summaries_late, 1u);
}

// An alarm line the disk refuses is counted lost at the next tick, not only
// once another alarm follows it (which may be never).
TEST(AnalyzerSheddingTest, AnAlarmLineTheDiskRefusesIsCountedLostAtTheNextTick) {
  if (!testing::IoUringAvailable()) GTEST_SKIP() << "the kernel refuses io_uring: alarms are written at once";
  testing::TempDir directory;
  TestSegment segment;
  AnalyzerLoop loop(FastSetup(std::make_unique<EchoExchange>(4, 0), directory.File("alarms.jsonl")));
  limpwatch::testing::FileSizeLimit full;
  ASSERT_TRUE(full.Set(0));
  TickFor(loop, segment, 30);
  uint64_t raised = segment.view().alarm_ring()->next_sequence.load();
  ASSERT_GE(raised, 1u) << "the fading peer raised no alarm";
  EXPECT_EQ(segment.Snapshot().analyzer_health.alarms_failed_writes, raised);
}

// Ticks that cannot run on time (the previous one, or the process, ran late)
// are counted, one per tick boundary passed.
TEST(AnalyzerSheddingTest, TicksMissedAreCounted) {
  TestSegment segment;
  AnalyzerLoop loop(FastSetup(nullptr, ""));
  TickFor(loop, segment, 3);
  uint64_t before = segment.Snapshot().analyzer_shedding.ticks_missed;
  std::this_thread::sleep_for(std::chrono::milliseconds(5 * 50));  // five boundaries or more pass
  loop.Tick(segment.view(), segment.object(), true);
  EXPECT_GE(segment.Snapshot().analyzer_shedding.ticks_missed - before, 4u);
}

// Datagrams refused by a keyed transport reach the segment each in its class,
// and `limpwatch dump` (text and JSON) shows them.
TEST(AnalyzerSheddingTest, RefusedDatagramsAreCountedByClassAndShownByDump) {
  std::string error;
  std::vector<uint8_t> key_bytes(32, 7);
  std::optional<PeerKey> key = PeerKey::FromBytes(key_bytes, &error);
  ASSERT_TRUE(key) << error;
  auto receiver = testing::OpenTransport(IoPreference::kAuto, "127.0.0.1:0", key);
  ASSERT_TRUE(receiver);
  testing::RawSocket configured, stranger;
  ASSERT_TRUE(receiver->SetPeers({testing::Endpoint("peer", configured.address())}, &error)) << error;

  PeerSummary summary = testing::MakeSummary({.node = "peer", .features = 20});
  std::vector<uint8_t> tagged, untagged;
  ASSERT_EQ(EncodeSummary(summary, &*key, &tagged), EncodeError::kNone);
  ASSERT_EQ(EncodeSummary(summary, nullptr, &untagged), EncodeError::kNone);
  std::vector<uint8_t> foreign(tagged);
  foreign[0] = 'X';
  std::vector<uint8_t> cut(tagged.begin(), tagged.begin() + 40);
  const PeerAddress& to = receiver->local_address();
  for (const std::vector<uint8_t>* datagram : {&tagged, &tagged, &tagged, &untagged, &foreign, &foreign, &cut}) {
    ASSERT_TRUE(configured.SendTo(to, *datagram));
  }
  ASSERT_TRUE(stranger.SendTo(to, tagged));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (receiver->counters().received < 8 && std::chrono::steady_clock::now() < deadline) {
    receiver->Poll(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(receiver->counters().received, 8u);

  TestSegment segment;
  PublishExchangeShedding(segment.view(), receiver->counters(), receiver->io_uring_refused());
  segment.view().analyzer_health()->ticks.store(1);  // dump shows the section of an analyzer that ticked
  const shm::AnalyzerSheddingValues& shed = segment.Snapshot().analyzer_shedding;
  auto rejected = [&](DecodeError error) { return shed.datagrams_rejected[size_t(error)]; };
  EXPECT_EQ(rejected(DecodeError::kReplayed), 2u);
  EXPECT_EQ(rejected(DecodeError::kUnauthenticated), 1u);
  EXPECT_EQ(rejected(DecodeError::kBadMagic), 2u);
  EXPECT_EQ(rejected(DecodeError::kTruncated), 1u);
  EXPECT_EQ(rejected(DecodeError::kUnknownSender), 1u);
  EXPECT_EQ(rejected(DecodeError::kBadAuthentication), 0u);

  limpwatch::testing::ProgramRun text = RunProgram(LIMPWATCH_CLI_PATH, {"dump", segment.object()}, {});
  EXPECT_EQ(text.exit_status, 0);
  EXPECT_NE(text.output.find("truncated 1, bad_magic 2, unauthenticated 1, replayed 2, unknown_sender 1"),
            std::string::npos)
      << text.output;
  limpwatch::testing::ProgramRun json = RunProgram(LIMPWATCH_CLI_PATH, {"dump", segment.object(), "--json"}, {});
  EXPECT_EQ(json.exit_status, 0);
  for (const char* field : {"\"bad_magic\": 2", "\"replayed\": 2", "\"unknown_sender\": 1", "\"bad_count\": 0",
                            "\"summaries_late\": 0", "\"ticks_missed\": 0"}) {
    EXPECT_NE(json.output.find(field), std::string::npos) << field << " in " << json.output;
  }
}

}  // namespace
}  // namespace limpwatch::analyzer
