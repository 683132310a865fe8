// Reading per-peer time series as real exports write them (series_table.h).
#include <gtest/gtest.h>

#include <cmath>

#include "limpwatch/analyzer/series_table.h"

namespace limpwatch::analyzer {
namespace {

SeriesTable Read(const std::string& text, double tick_s = 0, std::string* error_out = nullptr) {
  SeriesTable table;
  SeriesReadOptions options;
  options.tick_s = tick_s;
  std::string error;
  bool read = ReadSeriesCsv(text, "export.csv", options, &table, &error) && FinishSeriesTable(options, &table, &error);
  if (error_out) *error_out = error;
  if (!read && !error_out) ADD_FAILURE() << error;
  return table;
}

size_t ProblemsMentioning(const SeriesTable& table, const std::string& text) {
  size_t count = 0;
  for (const std::string& problem : table.problems) count += problem.find(text) != std::string::npos;
  return count;
}

TEST(SeriesTableTest, QuotedHeadersAndValuesWithCommas) {
  SeriesTable table = Read(
      "\"timestamp\",\"peer\",\"latency, ms\",\"a \"\"quoted\"\" one\"\n"
      "1700000000,\"host-1, rack 2\",\"12.5\",3\n"
      "1700000000,host-2,13,4\n"
      "1700000001,\"host-1, rack 2\",12,3\n");
  ASSERT_EQ(table.columns.size(), 2u);
  EXPECT_EQ(table.columns[0], "latency, ms");
  EXPECT_EQ(table.columns[1], "a \"quoted\" one");
  ASSERT_EQ(table.peers.size(), 2u);
  EXPECT_EQ(table.peers[0], "host-1, rack 2");
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_DOUBLE_EQ(table.rows[0].values[0], 12.5);
}

TEST(SeriesTableTest, MissingCellsAreCountedOnceAColumn) {
  std::string text = "timestamp,peer,latency,throughput\n";
  for (int second = 0; second < 100; ++second) {
    for (const char* peer : {"a", "b", "c"}) {
      std::string latency = second % 10 == 0 ? "NA" : second % 10 == 1 ? "" : second % 10 == 2 ? "null" : "10";
      text += std::to_string(1700000000 + second) + "," + peer + "," + latency + ",5\n";
    }
  }
  SeriesTable table = Read(text);
  EXPECT_EQ(table.missing[0], 90u);  // 30 NA, 30 empty, 30 null
  EXPECT_EQ(table.missing[1], 0u);
  // One line for the column, not one per row.
  EXPECT_EQ(ProblemsMentioning(table, "latency"), 1u);
  EXPECT_EQ(ProblemsMentioning(table, "throughput"), 0u);
  EXPECT_TRUE(std::isnan(table.rows[0].values[0]));
}

TEST(SeriesTableTest, TheSampleIntervalIsFoundAndGapsStayGaps) {
  // Every 15 s with a little jitter, and an hour missing in the middle.
  std::string text = "time,drive,latency\n";
  for (int sample = 0; sample < 400; ++sample) {
    if (sample >= 100 && sample < 340) continue;
    double time = 1700000000.0 + sample * 15 + (sample % 3 == 0 ? 0.4 : sample % 3 == 1 ? -0.3 : 0);
    for (const char* drive : {"sda", "sdb", "sdc"}) text += std::to_string(time) + "," + drive + ",8\n";
  }
  SeriesTable table = Read(text);
  EXPECT_TRUE(table.tick_detected);
  EXPECT_NEAR(table.tick_s, 15.0, 0.5);
  ASSERT_FALSE(table.rows.empty());
  EXPECT_EQ(table.rows.back().tick, 399u);  // on the grid across the gap
  EXPECT_EQ(table.rows.size(), 160u * 3u);
  // Given, the interval is used as it is.
  SeriesTable given = Read(text, 30);
  EXPECT_DOUBLE_EQ(given.tick_s, 30.0);
  EXPECT_FALSE(given.tick_detected);
}

TEST(SeriesTableTest, IsoDatesMillisecondsAndColumnsAnywhere) {
  SeriesTable table = Read(
      "latency,host,date\n"
      "5,h1,2024-05-01T12:00:00Z\n"
      "6,h2,2024-05-01 12:00:00\n"
      "5,h1,2024-05-01T14:00:15+02:00\n");
  ASSERT_EQ(table.peers.size(), 2u);
  EXPECT_EQ(table.columns, std::vector<std::string>{"latency"});
  EXPECT_DOUBLE_EQ(table.first_time_s, 1714564800.0);
  EXPECT_DOUBLE_EQ(table.tick_s, 15.0);
  double seconds = 0;
  ASSERT_TRUE(ParseTimestamp("1714564800123", &seconds));  // milliseconds
  EXPECT_DOUBLE_EQ(seconds, 1714564800.123);
  EXPECT_FALSE(ParseTimestamp("yesterday", &seconds));
  EXPECT_FALSE(ParseTimestamp("2024-13-01", &seconds));
}

TEST(SeriesTableTest, BadRowsAreSkippedAndNamedAColumnWithoutNumbersIsLeftOut) {
  SeriesTable table = Read(
      "timestamp,peer,latency,rack\n"
      "1700000000,a,5,r1\n"
      "1700000000,b,6\n"
      "not-a-time,b,6,r1\n"
      "1700000000,a,7,r1\n"
      "1700000001,b,6,r1\n");
  EXPECT_EQ(table.skipped_rows, 2u);
  EXPECT_EQ(ProblemsMentioning(table, "expected 4 fields"), 1u);
  EXPECT_EQ(ProblemsMentioning(table, "bad timestamp"), 1u);
  EXPECT_EQ(ProblemsMentioning(table, "repeat a peer's sample"), 1u);  // a's second row at 1700000000
  EXPECT_EQ(ProblemsMentioning(table, "'rack' holds no number"), 1u);
  EXPECT_EQ(table.columns, std::vector<std::string>{"latency"});
  EXPECT_DOUBLE_EQ(table.rows[0].values[0], 5.0);  // the first of a repeated sample is kept
}

TEST(SeriesTableTest, AFileWithNothingUsableIsAnError) {
  std::string error;
  Read("", 0, &error);
  EXPECT_NE(error.find("empty"), std::string::npos);
  Read("timestamp,peer,latency\nx,y,z\n", 0, &error);
  EXPECT_NE(error.find("no usable rows"), std::string::npos) << error;
  Read("timestamp,peer\n1,a\n", 0, &error);
  EXPECT_NE(error.find("header"), std::string::npos) << error;
}

}  // namespace
}  // namespace limpwatch::analyzer
