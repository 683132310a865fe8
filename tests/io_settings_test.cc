// The I/O interposers' settings (hooks/src/io_settings.h): bounds, words,
// defaults, and one problem per bad value, naming its variable.
#include "io_settings.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace limpwatch::hooks {
namespace {

constexpr uint32_t kEntries = 65536;

class IoSettingsTest : public ::testing::Test {
 protected:
  void SetUp() override { Clear(); }
  void TearDown() override { Clear(); }
  static void Clear() {
    unsetenv("LIMPWATCH_FD_TABLE_SIZE");
    unsetenv("LIMPWATCH_IO_TIMING");
  }
};

TEST_F(IoSettingsTest, UnsetMeansTheWholeTableAndAdaptiveTiming) {
  std::vector<std::string> problems;
  IoSettings settings = ReadIoSettings(kEntries, &problems);
  EXPECT_EQ(settings.fd_table_size, kEntries);
  EXPECT_FALSE(settings.time_every_call);
  EXPECT_TRUE(problems.empty());
}

TEST_F(IoSettingsTest, ValuesWithinBoundsAreTaken) {
  setenv("LIMPWATCH_FD_TABLE_SIZE", "16", 1);
  setenv("LIMPWATCH_IO_TIMING", "every", 1);
  std::vector<std::string> problems;
  IoSettings settings = ReadIoSettings(kEntries, &problems);
  EXPECT_EQ(settings.fd_table_size, 16u);
  EXPECT_TRUE(settings.time_every_call);
  EXPECT_TRUE(problems.empty());
  setenv("LIMPWATCH_FD_TABLE_SIZE", "65536", 1);
  setenv("LIMPWATCH_IO_TIMING", "adaptive", 1);
  settings = ReadIoSettings(kEntries, &problems);
  EXPECT_EQ(settings.fd_table_size, kEntries);
  EXPECT_FALSE(settings.time_every_call);
  EXPECT_TRUE(problems.empty());
}

TEST_F(IoSettingsTest, EachBadValueIsOneProblemAndItsDefaultIsKept) {
  for (const char* bad : {"15", "65537", "-1", "+64", " 64", "64k", "99999999999999999999999", "0x40"}) {
    setenv("LIMPWATCH_FD_TABLE_SIZE", bad, 1);
    setenv("LIMPWATCH_IO_TIMING", "sometimes", 1);
    std::vector<std::string> problems;
    IoSettings settings = ReadIoSettings(kEntries, &problems);
    EXPECT_EQ(settings.fd_table_size, kEntries) << bad;
    EXPECT_FALSE(settings.time_every_call);
    ASSERT_EQ(problems.size(), 2u) << bad;
    EXPECT_EQ(problems[0], "LIMPWATCH_FD_TABLE_SIZE='" + std::string(bad) +
                               "': expected 16 to 65536; the table has 65536 entries");
    EXPECT_EQ(problems[1], "LIMPWATCH_IO_TIMING='sometimes': expected adaptive or every; using adaptive");
  }
}

}  // namespace
}  // namespace limpwatch::hooks
