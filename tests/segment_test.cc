// The segment format: layout, names, validation of untrusted segments,
// liveness, and consistent snapshots.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "limpwatch/shm/name_hash.h"
#include "limpwatch/shm/segment.h"
#include "limpwatch/shm/snapshot.h"

namespace limpwatch::shm {
namespace {

std::string TestObjectName(const char* tag) {
  return SegmentObjectName(std::string("segtest-") + tag + "-" + std::to_string(getpid()), getpid());
}

OwnerInfo SelfOwner() {
  OwnerInfo owner;
  owner.name = "segtest";
  owner.program = "segment_test";
  owner.pid = getpid();
  owner.parent_pid = getppid();
  owner.clock_source = ClockSource::kMonotonicRaw;
  owner.ns_per_tick = 1.0;
  return owner;
}

class WriterFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    object_ = TestObjectName(::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::string error;
    writer_ = SegmentWriter::Create(object_, Geometry{}, SelfOwner(), &error);
    ASSERT_TRUE(writer_) << error;
  }
  void TearDown() override {
    if (writer_) writer_->Remove();
  }
  std::string object_;
  std::unique_ptr<SegmentWriter> writer_;
};

TEST(LayoutTest, DefaultBudgetAndSixtyFourThreadsFitInSixtyFourMiB) {
  Layout layout;
  ASSERT_TRUE(ComputeLayout(Geometry{}, &layout));
  EXPECT_LE(layout.segment_size, 64ull << 20);
  Geometry geometry;
  geometry.max_threads = 64;
  geometry.max_functions = 4096;
  ASSERT_TRUE(ComputeLayout(geometry, &layout));
  EXPECT_LE(layout.segment_size, 64ull << 20);
  std::printf("segment for 64 threads x 4096 functions: %.2f MiB\n", double(layout.segment_size) / (1 << 20));
}

TEST(LayoutTest, RegionsDoNotOverlapAndAreInOrder) {
  Layout layout;
  ASSERT_TRUE(ComputeLayout(Geometry{1000, 7, 33, 5}, &layout));
  std::vector<RegionRef> regions{layout.function_index, layout.symbols, layout.threads,
                                 layout.retired, layout.node_metrics, layout.alarms};
  uint64_t end = kHeaderSize;
  for (const auto& region : regions) {
    EXPECT_GE(region.offset, end);
    end = region.offset + region.size;
  }
  EXPECT_LE(end, layout.segment_size);
  EXPECT_GE(layout.function_index_capacity, 2000u);
  EXPECT_EQ(layout.function_index_capacity & (layout.function_index_capacity - 1), 0u);
}

TEST(LayoutTest, OutOfBoundsGeometryIsRefused) {
  Layout layout;
  EXPECT_FALSE(ComputeLayout(Geometry{0, 1, 1, 1}, &layout));
  EXPECT_FALSE(ComputeLayout(Geometry{kMaxFunctionsLimit + 1, 1, 1, 1}, &layout));
  EXPECT_FALSE(ComputeLayout(Geometry{16, kMaxThreadsLimit + 1, 1, 1}, &layout));
  EXPECT_FALSE(ComputeLayout(Geometry{16, 1, 0, 1}, &layout));
}

TEST(NamingTest, ObjectNamesRoundTrip) {
  EXPECT_EQ(SegmentObjectName("", 42), "limpwatch.42");
  EXPECT_EQ(SegmentObjectName("pvfs-1", 42), "limpwatch.pvfs-1.42");
  auto parts = ParseSegmentObjectName("limpwatch.pvfs-1.42");
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->name, "pvfs-1");
  EXPECT_EQ(parts->pid, 42);
  parts = ParseSegmentObjectName("limpwatch.77");
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->name, "");
  EXPECT_FALSE(ParseSegmentObjectName("limpwatch.a b.7"));
  EXPECT_FALSE(ParseSegmentObjectName("other.7"));
  EXPECT_FALSE(ParseSegmentObjectName("limpwatch.x.notapid"));
  EXPECT_FALSE(IsValidSegmentName("123"));
  EXPECT_FALSE(IsValidSegmentName("a/b"));
  EXPECT_FALSE(IsValidSegmentName(std::string(64, 'a')));
  EXPECT_TRUE(IsValidSegmentName("server_3"));
  EXPECT_TRUE(IsValidSegmentName("node1.cluster"));  // PVFS aliases are often host names
  EXPECT_FALSE(IsValidSegmentName(".hidden"));
  auto dotted = ParseSegmentObjectName("limpwatch.node1.cluster.42");
  ASSERT_TRUE(dotted);
  EXPECT_EQ(dotted->name, "node1.cluster");
  EXPECT_EQ(dotted->pid, 42);
}

TEST(NameHashTest, IsStableAndNeverZero) {
  EXPECT_EQ(FunctionNameHash("dbpf_bstream_read_at"), FunctionNameHash(std::string("dbpf_bstream_read_at")));
  EXPECT_NE(FunctionNameHash("a"), FunctionNameHash("b"));
  EXPECT_NE(FunctionNameHash(""), 0u);
}

TEST_F(WriterFixture, ReaderAcceptsAFreshSegment) {
  std::string error;
  auto reader = SegmentReader::Open(object_, &error);
  ASSERT_TRUE(reader) << error;
  EXPECT_EQ(reader->header().owner_pid, uint32_t(getpid()));
  EXPECT_EQ(SegmentLiveness(reader->header()), Liveness::kLive);
  EXPECT_EQ(std::string(reader->header().name), "segtest");
}

TEST_F(WriterFixture, CreatingTheSameNameTwiceFails) {
  std::string error;
  auto second = SegmentWriter::Create(object_, Geometry{}, SelfOwner(), &error);
  EXPECT_FALSE(second);
  EXPECT_NE(error.find(object_), std::string::npos);
}

// Corrupts a copy of a valid segment and checks the validator's verdict.
class ValidationTest : public WriterFixture {
 protected:
  std::string ValidateCorrupted(void (*corrupt)(SegmentHeader*), uint64_t size_delta = 0) {
    std::vector<uint8_t> copy(writer_->size());
    std::memcpy(copy.data(), writer_->view().base(), copy.size());
    corrupt(reinterpret_cast<SegmentHeader*>(copy.data()));
    return ValidateSegment(copy.data(), copy.size() - size_delta);
  }
};

TEST_F(ValidationTest, IntactSegmentIsValid) {
  EXPECT_EQ(ValidateCorrupted([](SegmentHeader*) {}), "");
}

TEST_F(ValidationTest, EachCorruptionIsNamed) {
  EXPECT_NE(ValidateCorrupted([](SegmentHeader* h) { h->magic ^= 1; }).find("bad magic"), std::string::npos);
  EXPECT_NE(ValidateCorrupted([](SegmentHeader* h) { h->version_major = 99; }).find("version 99"), std::string::npos);
  EXPECT_NE(ValidateCorrupted([](SegmentHeader* h) { h->endian_mark = 0x0201; }).find("byte order"),
            std::string::npos);
  EXPECT_NE(ValidateCorrupted([](SegmentHeader* h) { h->sizeof_stack_frame = 8; }).find("record sizes"),
            std::string::npos);
  EXPECT_NE(ValidateCorrupted([](SegmentHeader* h) { h->threads.offset += 64; }).find("region table"),
            std::string::npos);
  EXPECT_NE(ValidateCorrupted([](SegmentHeader* h) { h->max_threads = 1u << 30; }).find("geometry"),
            std::string::npos);
  EXPECT_NE(ValidateCorrupted([](SegmentHeader* h) { h->ns_per_tick = -1; }).find("clock factor"),
            std::string::npos);
  EXPECT_NE(ValidateCorrupted([](SegmentHeader* h) { h->name[kNameSize - 1] = 'x'; }).find("unterminated"),
            std::string::npos);
  EXPECT_NE(ValidateCorrupted([](SegmentHeader*) {}, 4096).find("truncated"), std::string::npos);
  std::vector<uint8_t> tiny(100);
  EXPECT_NE(ValidateSegment(tiny.data(), tiny.size()).find("truncated"), std::string::npos);
}

TEST(ReaderTest, GarbageObjectIsRejectedWithOneLine) {
  std::string object = TestObjectName("garbage");
  int fd = shm_open(("/" + object).c_str(), O_CREAT | O_RDWR, 0600);
  ASSERT_GE(fd, 0);
  std::vector<char> junk(8192, 'x');
  ASSERT_EQ(write(fd, junk.data(), junk.size()), ssize_t(junk.size()));
  close(fd);
  std::string error;
  EXPECT_FALSE(SegmentReader::Open(object, &error));
  EXPECT_NE(error.find("bad magic"), std::string::npos);
  EXPECT_EQ(error.find('\n'), std::string::npos);
  shm_unlink(("/" + object).c_str());
}

TEST(ReaderTest, MissingObjectIsAnError) {
  std::string error;
  EXPECT_FALSE(SegmentReader::Open("limpwatch.no-such-segment.1", &error));
  EXPECT_NE(error.find("no-such-segment"), std::string::npos);
}

TEST(LivenessTest, SegmentOfADeadOwnerIsStale) {
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  OwnerInfo owner = SelfOwner();
  owner.pid = child;  // exited and reaped: no such process
  std::string object = SegmentObjectName("segtest-stale-" + std::to_string(getpid()), child);
  std::string error;
  auto writer = SegmentWriter::Create(object, Geometry{}, owner, &error);
  ASSERT_TRUE(writer) << error;
  EXPECT_EQ(SegmentLiveness(*writer->view().header()), Liveness::kStale);
  bool listed_stale = false;
  for (const auto& listing : ListSegments()) {
    if (listing.object_name == object) listed_stale = listing.liveness == Liveness::kStale;
  }
  EXPECT_TRUE(listed_stale);
  writer->Remove();
}

// A server killed a moment ago, not yet reaped by its parent, still answers
// kill(pid, 0); `stop` and `clean` must see its segment as stale anyway.
TEST(LivenessTest, SegmentOfAZombieOwnerIsStale) {
  pid_t child = fork();
  if (child == 0) _exit(0);
  std::string stat_path = "/proc/" + std::to_string(child) + "/stat";
  std::optional<char> state;
  for (int attempt = 0; attempt < 2000 && state != 'Z'; ++attempt) {
    std::ifstream stat(stat_path);
    std::string line;
    std::getline(stat, line);
    state = ProcStatState(line);
    if (state != 'Z') usleep(1000);
  }
  ASSERT_EQ(state, 'Z') << "the child never became a zombie";
  ASSERT_EQ(kill(child, 0), 0) << "a zombie answers kill(pid, 0)";
  OwnerInfo owner = SelfOwner();
  owner.pid = child;
  std::string object = SegmentObjectName("segtest-zombie-" + std::to_string(getpid()), child);
  std::string error;
  auto writer = SegmentWriter::Create(object, Geometry{}, owner, &error);
  ASSERT_TRUE(writer) << error;
  EXPECT_NE(writer->view().header()->owner_start_time, 0u);
  EXPECT_EQ(SegmentLiveness(*writer->view().header()), Liveness::kStale);
  writer->Remove();
  waitpid(child, nullptr, 0);
}

TEST(LivenessTest, StateLetterIsReadAfterTheCommandName) {
  EXPECT_EQ(ProcStatState("42 (a) b) S 1 42"), 'S');
  EXPECT_EQ(ProcStatState("42 (srv) Z 1 42"), 'Z');
  EXPECT_EQ(ProcStatState("42 (srv)"), std::nullopt);
  EXPECT_EQ(ProcStatState(""), std::nullopt);
}

TEST_F(WriterFixture, PidReuseIsNotMistakenForTheOwner) {
  writer_->view().header()->owner_start_time += 12345;  // our pid, but another process's start time
  EXPECT_EQ(SegmentLiveness(*writer_->view().header()), Liveness::kStale);
}

// Live slots and retired totals add up; while a thread retires its counts
// may be in both places, and the reader must not take that copy.
TEST_F(WriterFixture, SnapshotAddsSlotsAndRetiredTotalsButNotDuringARetirement) {
  const SegmentView& view = writer_->view();
  SegmentHeader* header = view.header();
  header->next_function_id.store(2);
  for (uint32_t id = 0; id < 2; ++id) view.symbols()[id].state.store(uint32_t(SymbolState::kRegistered));
  ThreadSlotHeader* slot = view.slot(3);
  slot->state.store(uint32_t(SlotState::kActive));
  slot->tid.store(4242);
  view.counters(3)[1].calls.store(7);
  view.counters(3)[1].self_ticks.store(70);
  view.retired_counters()[1].calls.store(5);
  view.retired_counters()[0].total_ticks.store(9);

  std::string error;
  auto reader = SegmentReader::Open(object_, &error);
  ASSERT_TRUE(reader) << error;
  Snapshot snapshot;
  TakeSnapshot(*reader, &snapshot);
  ASSERT_TRUE(snapshot.consistent);
  ASSERT_EQ(snapshot.functions.size(), 2u);
  EXPECT_EQ(snapshot.functions[1].counters.calls, 12u);
  EXPECT_EQ(snapshot.functions[1].counters.self_ticks, 70u);
  EXPECT_EQ(snapshot.functions[0].counters.total_ticks, 9u);
  ASSERT_EQ(snapshot.threads.size(), 1u);
  EXPECT_EQ(snapshot.threads[0].tid, 4242u);
  EXPECT_EQ(snapshot.threads[0].calls, 7u);

  // Mid-retirement (the counts are being moved), no copy is trusted.
  header->retiring_now.store(1);
  TakeSnapshot(*reader, &snapshot);
  EXPECT_FALSE(snapshot.consistent);
  header->retiring_now.store(0);
  TakeSnapshot(*reader, &snapshot);
  EXPECT_TRUE(snapshot.consistent);
}

TEST_F(WriterFixture, UnresolvedFunctionsAreShownByAddress) {
  const SegmentView& view = writer_->view();
  view.header()->next_function_id.store(1);
  view.symbols()[0].address.store(0x401234);
  view.symbols()[0].state.store(uint32_t(SymbolState::kRegistered));
  std::string error;
  auto reader = SegmentReader::Open(object_, &error);
  ASSERT_TRUE(reader) << error;
  Snapshot snapshot;
  TakeSnapshot(*reader, &snapshot);
  ASSERT_EQ(snapshot.functions.size(), 1u);
  EXPECT_EQ(snapshot.functions[0].name, "0x401234");
  EXPECT_EQ(snapshot.functions[0].name_hash, 0u);
}

}  // namespace
}  // namespace limpwatch::shm
