// Bugs the fuzz targets (tests/fuzz/) found, each kept by a test that failed
// before its fix. The inputs that found them are replayed by the
// <target>_fuzz_regressions tests, from tests/fuzz/regressions/<target>/.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <set>
#include <string>

#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/analyzer/name_book.h"
#include "limpwatch/analyzer/series_table.h"
#include "limpwatch/shm/name_hash.h"
#include "limpwatch/shm/segment.h"

namespace limpwatch::analyzer {
namespace {

bool ReadCsv(const std::string& text, SeriesTable* table, std::string* error) {
  SeriesReadOptions options;
  return ReadSeriesCsv(text, "export.csv", options, table, error) && FinishSeriesTable(options, table, error);
}

// series_csv: two columns of one name were one feature, their values summed
// (regressions/series_csv/repeated-column-name.csv).
TEST(FuzzRegressionTest, ColumnsOfOneNameStayTwoFeatures) {
  SeriesTable table;
  std::string error;
  ASSERT_TRUE(ReadCsv("timestamp,peer,latency,latency\n"
                      "1700000000,a,10,2000\n"
                      "1700000000,b,11,2100\n"
                      "1700000001,a,12,1900\n",
                      &table, &error))
      << error;
  ASSERT_EQ(table.columns.size(), 2u);
  EXPECT_EQ(table.columns[0], "latency");
  EXPECT_EQ(table.columns[1], "latency (column 4)");
  bool said = false;
  for (const std::string& problem : table.problems) {
    said = said || problem.find("repeats the name 'latency'") != std::string::npos;
  }
  EXPECT_TRUE(said);

  NameBook names;
  auto ticks = SeedRuleTicks(table, &names);
  ASSERT_EQ(ticks["a"].size(), 2u);
  const TickRecord& first = ticks["a"][0];
  ASSERT_EQ(first.functions.size(), 2u);
  EXPECT_NE(first.functions[0].name_hash, first.functions[1].name_hash);
  std::set<uint64_t> hashes = {shm::FunctionNameHash("latency"), shm::FunctionNameHash("latency (column 4)")};
  EXPECT_TRUE(hashes.count(first.functions[0].name_hash) && hashes.count(first.functions[1].name_hash));
}

// series_csv: a date before 1970 (or a number beyond year 9999) was taken,
// and made the seed rule's tick an out-of-range conversion
// (regressions/series_csv/date-before-1970.csv).
TEST(FuzzRegressionTest, TimestampsOutsideTheUnixEraAreBad) {
  double seconds = -1;
  EXPECT_FALSE(ParseTimestamp("0042-05-01T12:05:45.500", &seconds));
  EXPECT_FALSE(ParseTimestamp("1969-12-31T23:59:59Z", &seconds));
  EXPECT_FALSE(ParseTimestamp("1970-01-01T00:30:00+01:00", &seconds));
  EXPECT_FALSE(ParseTimestamp("1e300", &seconds));
  EXPECT_TRUE(ParseTimestamp("1970-01-01T00:00:00Z", &seconds));
  EXPECT_EQ(seconds, 0);
  EXPECT_TRUE(ParseTimestamp("9999-12-31T23:59:59Z", &seconds));
  EXPECT_EQ(seconds, 253402300799);

  SeriesTable table;
  std::string error;
  ASSERT_TRUE(ReadCsv("timestamp,peer,latency\n"
                      "1700000000,a,10\n"
                      "0042-05-01T12:05:45,a,11\n"
                      "1700000001,a,12\n",
                      &table, &error))
      << error;
  EXPECT_EQ(table.skipped_rows, 1u);
  EXPECT_EQ(table.rows.size(), 2u);
}

// segment: a ring whose newest sequence is the largest there is made the
// reader loop forever (`limpwatch alarms` and `serve` hung on such a
// segment; regressions/segment/alarm-ring-sequence-at-the-top.bin).
TEST(FuzzRegressionTest, AnAlarmRingAtTheTopOfItsSequencesIsReadOnce) {
  shm::OwnerInfo owner;
  owner.name = "fuzzregression";
  owner.pid = getpid();
  shm::Geometry geometry;
  geometry.alarm_capacity = 2;
  std::string error;
  auto writer = shm::SegmentWriter::Create(shm::SegmentObjectName("fuzzregression", getpid()), geometry, owner, &error);
  ASSERT_TRUE(writer) << error;
  writer->Remove();  // the mapping stays
  const shm::SegmentView& view = writer->view();
  constexpr uint64_t kTop = std::numeric_limits<uint64_t>::max();
  view.alarm_ring()->next_sequence.store(kTop - 2);
  for (const char* server : {"server1", "server2"}) {
    Alarm alarm;
    alarm.server = server;
    alarm.metrics = {"time"};
    PublishAlarm(view, alarm);
  }
  ASSERT_EQ(view.alarm_ring()->next_sequence.load(), kTop);

  // In a child first, so that a reader that loops fails this test (killed
  // by its alarm clock) instead of hanging the suite.
  ASSERT_EXIT(
      {
        alarm(10);
        uint64_t last = 0;
        std::_Exit(ReadAlarmRing(view, 0, &last).size() == 2 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  uint64_t last = 0;
  auto alarms = ReadAlarmRing(view, 0, &last);
  ASSERT_EQ(alarms.size(), 2u);
  EXPECT_EQ(alarms[0].sequence, kTop - 1);
  EXPECT_EQ(alarms[0].server, "server1");
  EXPECT_EQ(alarms[1].sequence, kTop);
  EXPECT_EQ(alarms[1].server, "server2");
  EXPECT_EQ(last, kTop);
  EXPECT_TRUE(ReadAlarmRing(view, last, &last).empty());
  EXPECT_EQ(last, kTop);
}

}  // namespace
}  // namespace limpwatch::analyzer
