// The analyzer's file appender (analyzer/src/file_appender.h): appends land
// in order with and without io_uring, a file that cannot take the bytes
// does not hold up the caller, and a write torn by a full disk spoils
// nothing that follows it.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iterator>
#include <string>

#include "file_appender.h"
#include "limpwatch/analyzer/trace_file.h"
#include "peer/temp_dir.h"
#include "support/file_size_limit.h"

namespace limpwatch::analyzer {
namespace {

std::vector<uint8_t> Bytes(const std::string& text) { return std::vector<uint8_t>(text.begin(), text.end()); }

std::string ReadAll(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

TEST(FileAppenderTest, AppendsLandInOrderWithAndWithoutIoUringAndAReopenedFileGrows) {
  testing::TempDir directory;
  for (const char* setting : {"1", "0"}) {
    setenv("LIMPWATCH_IO_URING", setting, 1);
    std::string path = directory.File(std::string("lines") + setting);
    std::string expected;
    for (int round = 0; round < 2; ++round) {
      std::string error;
      auto file = FileAppender::Open(path, &error);
      ASSERT_TRUE(file) << error;
      EXPECT_EQ(file->uses_io_uring(), std::string(setting) == "1");
      EXPECT_EQ(file->size(), expected.size());
      for (int line = 0; line < 300; ++line) {
        std::string text = "round " + std::to_string(round) + " line " + std::to_string(line) + "\n";
        ASSERT_TRUE(file->Append(Bytes(text)));
        expected += text;
      }
      EXPECT_TRUE(file->Flush());
      EXPECT_EQ(file->writes_pending(), 0u);
      EXPECT_EQ(file->failed_writes(), 0u);
    }
    EXPECT_EQ(ReadAll(path), expected);
  }
  unsetenv("LIMPWATCH_IO_URING");
}

// Two servers given one LIMPWATCH_ALARMS path: every line of both lands
// whole, none over another.
TEST(FileAppenderTest, TwoAppendersOnOneFileLoseNoLine) {
  testing::TempDir directory;
  std::string path = directory.File("shared");
  for (const char* setting : {"1", "0"}) {
    setenv("LIMPWATCH_IO_URING", setting, 1);
    std::string error;
    auto first = FileAppender::Open(path, &error);
    auto second = FileAppender::Open(path, &error);
    ASSERT_TRUE(first && second) << error;
    for (int line = 0; line < 200; ++line) {
      FileAppender& file = line % 2 == 0 ? *first : *second;
      ASSERT_TRUE(file.Append(Bytes(std::string(setting) + " line " + std::to_string(line) + "\n")));
    }
    EXPECT_TRUE(first->Flush());
    EXPECT_TRUE(second->Flush());
  }
  unsetenv("LIMPWATCH_IO_URING");
  std::string text = ReadAll(path);
  for (const char* setting : {"1", "0"}) {
    for (int line = 0; line < 200; ++line) {
      std::string expected = std::string(setting) + " line " + std::to_string(line) + "\n";
      EXPECT_NE(text.find(expected), std::string::npos) << expected;
    }
  }
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 400);
}

TEST(FileAppenderTest, AMissingDirectoryIsOneLineNamingThePath) {
  std::string error;
  EXPECT_FALSE(FileAppender::Open("/nonexistent-limpwatch-dir/alarms", &error));
  EXPECT_NE(error.find("/nonexistent-limpwatch-dir/alarms"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

// A pipe nobody reads stands for a disk that takes nothing: a plain write
// would wait until someone reads; the appender returns at once and the
// bytes follow once the reader drains the pipe.
TEST(FileAppenderTest, AFileThatCannotTakeTheBytesDoesNotHoldUpTheCaller) {
  testing::TempDir directory;
  std::string path = directory.File("stalled");
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  int reader = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  std::string error;
  auto file = FileAppender::Open(path, &error);
  ASSERT_TRUE(file) << error;
  if (!file->uses_io_uring()) {
    close(reader);
    GTEST_SKIP() << "the kernel refused io_uring; the appender writes with pwrite()";
  }
  // A small pipe, so that the writes beyond it stay well within the ring.
  int capacity = fcntl(reader, F_SETPIPE_SZ, 16384);
  ASSERT_GT(capacity, 0);
  ASSERT_LE(capacity, 65536);
  constexpr size_t kChunk = 4096;  // atomic on a pipe: never a short write
  size_t chunks = size_t(capacity) / kChunk + 8;
  // The appending thread then flushes, which moves the queue on as the pipe
  // drains; it stays until its writes are done, since io_uring cancels the
  // requests of a thread that exits (the analyzer's thread lives as long as
  // the server).
  std::promise<bool> appended;
  auto appending = std::async(std::launch::async, [&] {
    bool queued = true;
    for (size_t chunk = 0; chunk < chunks; ++chunk) {
      queued = queued && file->Append(std::vector<uint8_t>(kChunk, uint8_t('a' + chunk % 26)));
    }
    size_t in_flight = file->writes_pending();
    appended.set_value(queued && in_flight > 0);
    return file->Flush();
  });
  auto appended_future = appended.get_future();
  bool returned = appended_future.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  EXPECT_TRUE(returned) << "Append waited for the pipe to be read";
  if (returned) {
    EXPECT_TRUE(appended_future.get()) << "nothing was left in flight, or a write could not be queued";
  }
  // Drain: the queued writes complete, in order.
  std::string received;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (received.size() < chunks * kChunk && std::chrono::steady_clock::now() < deadline) {
    pollfd readable{reader, POLLIN, 0};
    poll(&readable, 1, 100);
    char buffer[65536];
    ssize_t got = read(reader, buffer, sizeof buffer);
    if (got > 0) received.append(buffer, size_t(got));
  }
  EXPECT_TRUE(appending.get());
  ASSERT_EQ(received.size(), chunks * kChunk);
  for (size_t chunk = 0; chunk < chunks; ++chunk) {
    ASSERT_EQ(received[chunk * kChunk], char('a' + chunk % 26)) << chunk;
  }
  file.reset();
  close(reader);
}

using limpwatch::testing::FileSizeLimit;

off_t FileSize(const std::string& path) {
  struct stat status{};
  return stat(path.c_str(), &status) == 0 ? status.st_size : -1;
}

// The alarms file: a line cut by the full disk stays a line of its own, and
// the first line appended once there is room again lands whole.
TEST(FileAppenderTest, ALineTornByAFullDiskEndsThereAndTheNextLineLandsWhole) {
  testing::TempDir directory;
  for (const char* setting : {"1", "0"}) {
    setenv("LIMPWATCH_IO_URING", setting, 1);
    std::string path = directory.File(std::string("alarms") + setting);
    std::string error;
    auto file = FileAppender::Open(path, &error);
    ASSERT_TRUE(file) << error;
    ASSERT_TRUE(file->Append(Bytes("first line\n")));
    ASSERT_TRUE(file->Flush());
    {
      FileSizeLimit full;
      ASSERT_TRUE(full.Set(FileSize(path) + 6));
      file->Append(Bytes("second line, cut by the full disk\n"));
      EXPECT_FALSE(file->Flush());
      file->Append(Bytes("third line, refused whole\n"));
      EXPECT_FALSE(file->Flush());
    }
    ASSERT_TRUE(file->Append(Bytes("fourth line\n")));
    EXPECT_TRUE(file->Flush());
    EXPECT_EQ(file->failed_writes(), 2u);
    EXPECT_EQ(ReadAll(path), "first line\nsecond\nfourth line\n") << "with io_uring " << setting;
  }
  unsetenv("LIMPWATCH_IO_URING");
}

// The recording: a record cut by the full disk is cut off again, so every
// record appended once there is room again reads back.
TEST(FileAppenderTest, ARecordTornByAFullDiskIsCutOffAndTheRecordingReadsBack) {
  testing::TempDir directory;
  for (const char* setting : {"1", "0"}) {
    setenv("LIMPWATCH_IO_URING", setting, 1);
    std::string path = directory.File(std::string("recording") + setting);
    std::string error;
    auto writer = TraceWriter::Open(path, "server1", 1000, &error);
    ASSERT_TRUE(writer) << error;
    auto tick = [](uint64_t number) {
      TickRecord record;
      record.node = "server1";
      record.tick = number;
      record.unix_ms = number * 1000;
      record.functions.push_back({0x1234, 5 * number, 2.5, 3});
      return EncodeTickRecord(record);
    };
    ASSERT_TRUE(writer->Append(TraceRecordType::kTick, tick(1)));
    ASSERT_TRUE(writer->Append(TraceRecordType::kTick, tick(2)));
    ASSERT_TRUE(writer->Flush());
    {
      FileSizeLimit full;
      ASSERT_TRUE(full.Set(FileSize(path) + kTraceRecordHeaderSize + 5));
      writer->Append(TraceRecordType::kTick, tick(3));
      EXPECT_FALSE(writer->Flush());
    }
    ASSERT_TRUE(writer->Append(TraceRecordType::kTick, tick(4)));
    ASSERT_TRUE(writer->Append(TraceRecordType::kTick, tick(5)));
    EXPECT_TRUE(writer->Flush());
    EXPECT_EQ(writer->failed_writes(), 1u);
    Trace trace;
    ASSERT_TRUE(ReadTrace(path, &trace, &error)) << error;
    EXPECT_TRUE(trace.problems.empty()) << trace.problems.front();
    std::vector<uint64_t> read;
    for (const TickRecord& record : trace.ticks) read.push_back(record.tick);
    EXPECT_EQ(read, (std::vector<uint64_t>{1, 2, 4, 5})) << "with io_uring " << setting;
  }
  unsetenv("LIMPWATCH_IO_URING");
}

}  // namespace
}  // namespace limpwatch::analyzer
