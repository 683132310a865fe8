// The interposed I/O calls: exact calls and bytes per fd kind and operation,
// the fd table (reuse, dup, accept/connect roles), threads and POSIX AIO.
// Every scenario runs in the traced io_calls program (tests/programs).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cerrno>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "support/io_run.h"

namespace limpwatch::testing {
namespace {

using shm::FdKind;
using shm::IoOperation;
using shm::SocketRole;

constexpr uint64_t kCount = 10;

const shm::IoValues& Role(const shm::Snapshot& snapshot, SocketRole role) {
  return snapshot.io.socket_reads[static_cast<uint32_t>(role)];
}

std::string DeviceOf(const std::string& path) {
  struct stat status {};
  stat(path.c_str(), &status);
  return std::to_string(major(status.st_dev)) + ":" + std::to_string(minor(status.st_dev));
}

TEST(IoHooksTest, FileCallsAndBytesAreExact) {
  ScratchDirectory directory;
  ASSERT_FALSE(directory.path().empty());
  constexpr uint64_t kSize = 1000;
  IoRun io = RunIoCalls({"files", directory.path(), std::to_string(kCount), std::to_string(kSize)});
  SegmentCleanup cleanup(io.name);
  const shm::Snapshot& s = io.snapshot;
  // Six forms each of write and read, kCount calls of kSize bytes each.
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kWrite).calls, 6 * kCount);
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kWrite).bytes, 6 * kCount * kSize);
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kRead).calls, 6 * kCount);
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kRead).bytes, 6 * kCount * kSize);
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kSync).calls, 3u);  // fsync, fdatasync, sync_file_range
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kOpen).calls, 3u);  // open, creat, openat
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kClose).calls, 3u);
  for (IoOperation operation : {IoOperation::kRead, IoOperation::kWrite, IoOperation::kSync}) {
    EXPECT_EQ(Io(s, FdKind::kFile, operation).errors, 0u);
    EXPECT_GT(Io(s, FdKind::kFile, operation).ticks, 0u) << "service time measured";
  }
  EXPECT_EQ(CallsOutside(s, {{FdKind::kFile, IoOperation::kWrite},
                             {FdKind::kFile, IoOperation::kRead},
                             {FdKind::kFile, IoOperation::kSync},
                             {FdKind::kFile, IoOperation::kOpen},
                             {FdKind::kFile, IoOperation::kClose}}),
            0u);
  EXPECT_TRUE(s.io.errnos.empty());
  EXPECT_EQ(s.io.untimed_calls, 0u);
  EXPECT_EQ(LineAfter(io.run.output, "file"), "file dev " + DeviceOf(directory.path()));
}

TEST(IoHooksTest, TcpOverLoopbackIsCountedPerSideOfTheConnection) {
  constexpr uint64_t kSize = 100;
  IoRun io = RunIoCalls({"tcp", std::to_string(kCount), std::to_string(kSize)});
  SegmentCleanup cleanup(io.name);
  const shm::Snapshot& s = io.snapshot;
  // The client writes five forms, the server reads five forms and answers once
  // per round; one MSG_PEEK receive is a read call without bytes.
  EXPECT_EQ(Io(s, FdKind::kTcp, IoOperation::kWrite).calls, 6 * kCount);
  EXPECT_EQ(Io(s, FdKind::kTcp, IoOperation::kWrite).bytes, 6 * kCount * kSize);
  EXPECT_EQ(Io(s, FdKind::kTcp, IoOperation::kRead).calls, 6 * kCount + 1);
  EXPECT_EQ(Io(s, FdKind::kTcp, IoOperation::kRead).bytes, 6 * kCount * kSize);
  EXPECT_EQ(Io(s, FdKind::kTcp, IoOperation::kOpen).calls, 2u);
  EXPECT_EQ(Io(s, FdKind::kTcp, IoOperation::kConnect).calls, 1u);
  EXPECT_EQ(Io(s, FdKind::kTcp, IoOperation::kAccept).calls, 1u);
  EXPECT_EQ(Io(s, FdKind::kTcp, IoOperation::kClose).calls, 3u);
  // Reads on the accepted socket are the server's (nsread), on the connected one the client's (ncread).
  EXPECT_EQ(Role(s, SocketRole::kAccepted).calls, 5 * kCount);
  EXPECT_EQ(Role(s, SocketRole::kAccepted).bytes, 5 * kCount * kSize);
  EXPECT_EQ(Role(s, SocketRole::kConnected).calls, kCount);
  EXPECT_EQ(Role(s, SocketRole::kConnected).bytes, kCount * kSize);
  EXPECT_GT(Role(s, SocketRole::kAccepted).ticks, 0u);
  EXPECT_EQ(CallsOutside(s, {{FdKind::kTcp, IoOperation::kWrite},
                             {FdKind::kTcp, IoOperation::kRead},
                             {FdKind::kTcp, IoOperation::kOpen},
                             {FdKind::kTcp, IoOperation::kConnect},
                             {FdKind::kTcp, IoOperation::kAccept},
                             {FdKind::kTcp, IoOperation::kClose}}),
            0u);
  std::string port = LineAfter(io.run.output, "port");
  ASSERT_FALSE(port.empty());
  // Local and peer addresses: the server's local port is the listener's.
  EXPECT_TRUE(std::regex_match(LineAfter(io.run.output, "server"),
                               std::regex("tcp accepted local 127\\.0\\.0\\.1:" + port + " peer 127\\.0\\.0\\.1:[0-9]+")))
      << io.run.output;
  EXPECT_TRUE(std::regex_match(LineAfter(io.run.output, "client"),
                               std::regex("tcp connected local 127\\.0\\.0\\.1:[0-9]+ peer 127\\.0\\.0\\.1:" + port)))
      << io.run.output;
}

TEST(IoHooksTest, PipesAreCountedAsPipes) {
  constexpr uint64_t kSize = 100;
  IoRun io = RunIoCalls({"pipes", std::to_string(kCount), std::to_string(kSize)});
  SegmentCleanup cleanup(io.name);
  const shm::Snapshot& s = io.snapshot;
  EXPECT_EQ(Io(s, FdKind::kPipe, IoOperation::kOpen).calls, 2u);  // pipe, pipe2
  EXPECT_EQ(Io(s, FdKind::kPipe, IoOperation::kWrite).calls, 2 * kCount);
  EXPECT_EQ(Io(s, FdKind::kPipe, IoOperation::kWrite).bytes, 2 * kCount * kSize);
  EXPECT_EQ(Io(s, FdKind::kPipe, IoOperation::kRead).calls, 2 * kCount);
  EXPECT_EQ(Io(s, FdKind::kPipe, IoOperation::kRead).bytes, 2 * kCount * kSize);
  EXPECT_EQ(Io(s, FdKind::kPipe, IoOperation::kClose).calls, 4u);
  EXPECT_EQ(CallsOutside(s, {{FdKind::kPipe, IoOperation::kOpen},
                             {FdKind::kPipe, IoOperation::kWrite},
                             {FdKind::kPipe, IoOperation::kRead},
                             {FdKind::kPipe, IoOperation::kClose}}),
            0u);
  EXPECT_EQ(LineAfter(io.run.output, "pipe"), "pipe");
}

TEST(IoHooksTest, AnFdReusedAfterCloseIsCountedUnderItsNewKind) {
  ScratchDirectory directory;
  ASSERT_FALSE(directory.path().empty());
  IoRun io = RunIoCalls({"reuse", directory.path()});
  SegmentCleanup cleanup(io.name);
  const shm::Snapshot& s = io.snapshot;
  // Rounds of open, pread, close, then socket() or eventfd() until the number
  // came back (the runtime's own thread may take it in between).
  uint64_t socket_rounds = std::stoull("0" + LineAfter(io.run.output, "attempts-socket"));
  uint64_t eventfd_rounds = std::stoull("0" + LineAfter(io.run.output, "attempts-eventfd"));
  ASSERT_GE(socket_rounds, 1u) << io.run.output;
  ASSERT_GE(eventfd_rounds, 1u) << io.run.output;
  EXPECT_EQ(LineAfter(io.run.output, "before").rfind("file dev ", 0), 0u) << io.run.output;
  EXPECT_EQ(LineAfter(io.run.output, "after").rfind("tcp connected ", 0), 0u) << io.run.output;
  EXPECT_EQ(LineAfter(io.run.output, "eventfd"), "other") << io.run.output;
  // The file's preads (one per round) and its one pwrite, nothing more.
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kRead).calls, socket_rounds + eventfd_rounds);
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kRead).bytes, 10 * (socket_rounds + eventfd_rounds));
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kWrite).calls, 1u);
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kWrite).bytes, 10u);
  // The same number as a TCP socket: its write and the server's read.
  EXPECT_EQ(Io(s, FdKind::kTcp, IoOperation::kWrite).calls, 1u);
  EXPECT_EQ(Io(s, FdKind::kTcp, IoOperation::kWrite).bytes, 10u);
  EXPECT_EQ(Io(s, FdKind::kTcp, IoOperation::kRead).calls, 1u);
  EXPECT_EQ(Io(s, FdKind::kTcp, IoOperation::kConnect).calls, 1u);
  // Closed by fclose, reused by eventfd (not interposed): classified anew.
  EXPECT_EQ(Io(s, FdKind::kOther, IoOperation::kWrite).calls, 1u);
  EXPECT_EQ(Io(s, FdKind::kOther, IoOperation::kRead).calls, 1u);
  EXPECT_EQ(Io(s, FdKind::kOther, IoOperation::kRead).bytes, 8u);
}

TEST(IoHooksTest, DuplicatedFdsCountUnderTheKindTheyDuplicate) {
  ScratchDirectory directory;
  ASSERT_FALSE(directory.path().empty());
  IoRun io = RunIoCalls({"dups", directory.path()});
  SegmentCleanup cleanup(io.name);
  const shm::Snapshot& s = io.snapshot;
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kOther).calls, 5u);  // dup, dup2, dup3, F_DUPFD, F_DUPFD_CLOEXEC
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kRead).calls, 5u);   // one pread through each copy
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kRead).bytes, 50u);
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kClose).calls, 5u);
  // dup2 of a Unix socket over a copy of the file: that number is a socket now.
  EXPECT_EQ(Io(s, FdKind::kUnix, IoOperation::kOpen).calls, 1u);
  EXPECT_EQ(Io(s, FdKind::kUnix, IoOperation::kOther).calls, 1u);
  EXPECT_EQ(Io(s, FdKind::kUnix, IoOperation::kWrite).calls, 1u);
  EXPECT_EQ(Io(s, FdKind::kUnix, IoOperation::kWrite).bytes, 7u);
  EXPECT_EQ(Io(s, FdKind::kUnix, IoOperation::kRead).bytes, 7u);
  EXPECT_EQ(Io(s, FdKind::kUnix, IoOperation::kClose).calls, 3u);
  EXPECT_EQ(LineAfter(io.run.output, "dup").rfind("file dev ", 0), 0u) << io.run.output;
  EXPECT_EQ(LineAfter(io.run.output, "over").rfind("unix ", 0), 0u) << io.run.output;
}

TEST(IoHooksTest, FdsBeyondTheTableAreClassifiedOnEachCall) {
  ScratchDirectory directory;
  ASSERT_FALSE(directory.path().empty());
  // A table of 1024 entries, and fds 1100 and 1101.
  IoRun io = RunIoCalls({"beyond", directory.path()}, {"LIMPWATCH_FD_TABLE_SIZE=1024"});
  SegmentCleanup cleanup(io.name);
  std::string skipped = LineAfter(io.run.output, "skip");
  if (!skipped.empty()) GTEST_SKIP() << skipped;
  const shm::Snapshot& s = io.snapshot;
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kRead).calls, 3u);  // through fd 1100
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kRead).bytes, 30u);
  EXPECT_EQ(Io(s, FdKind::kUnix, IoOperation::kWrite).calls, 1u);  // through fd 1101
  EXPECT_EQ(Io(s, FdKind::kUnix, IoOperation::kRead).calls, 1u);
  EXPECT_EQ(LineAfter(io.run.output, "beyond").rfind("unix ", 0), 0u) << io.run.output;
}

TEST(IoHooksTest, SixteenThreadsAreEachCountedAndFoldedWhenTheyExit) {
  ScratchDirectory directory;
  ASSERT_FALSE(directory.path().empty());
  constexpr uint64_t kThreads = 16, kCalls = 200, kSize = 512;
  IoRun io = RunIoCalls(
      {"threads", directory.path(), std::to_string(kThreads), std::to_string(kCalls), std::to_string(kSize)});
  SegmentCleanup cleanup(io.name);
  const shm::Snapshot& s = io.snapshot;
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kWrite).calls, kThreads * kCalls);
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kWrite).bytes, kThreads * kCalls * kSize);
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kRead).calls, kThreads * kCalls);
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kRead).bytes, kThreads * kCalls * kSize);
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kOpen).calls, kThreads);
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kClose).calls, kThreads);
  EXPECT_EQ(s.retired_threads, kThreads);
  // Only main is live at the end, and it made none of these calls itself.
  for (const auto& thread : s.threads) EXPECT_EQ(thread.io.at(FdKind::kFile, IoOperation::kWrite).calls, 0u);
}

TEST(IoHooksTest, ThreadsWithoutASlotStillHaveTheirIoCounted) {
  ScratchDirectory directory;
  ASSERT_FALSE(directory.path().empty());
  constexpr uint64_t kThreads = 16, kCalls = 500, kSize = 256;
  // Two slots for main and 16 workers at once: most workers get none.
  IoRun io = RunIoCalls(
      {"threads", directory.path(), std::to_string(kThreads), std::to_string(kCalls), std::to_string(kSize)},
      {"LIMPWATCH_MAX_THREADS=2"});
  SegmentCleanup cleanup(io.name);
  const shm::Snapshot& s = io.snapshot;
  EXPECT_GT(s.threads_without_slot, 0u);
  // Their calls went to the process totals: none is lost.
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kWrite).calls, kThreads * kCalls);
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kWrite).bytes, kThreads * kCalls * kSize);
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kRead).calls, kThreads * kCalls);
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kOpen).calls, kThreads);
}

TEST(IoHooksTest, PosixAioRequestsAreCountedWhenReaped) {
  ScratchDirectory directory;
  ASSERT_FALSE(directory.path().empty());
  IoRun io = RunIoCalls({"aio", directory.path()});
  SegmentCleanup cleanup(io.name);
  const shm::Snapshot& s = io.snapshot;
  // glibc serves AIO with pread/pwrite inside the C library: only the AIO hooks see it.
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kRead).calls, 4u + 2u);
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kRead).bytes, 4u * 512u);
  EXPECT_GT(Io(s, FdKind::kFile, IoOperation::kRead).ticks, 0u);
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kWrite).calls, 2u);  // the setup pwrite and one aio_write
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kWrite).bytes, 2048u + 300u);
  EXPECT_EQ(s.io.untimed_calls, 0u);
  // And two reads that failed, counted once each, whether reaped or only asked aio_error().
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kRead).errors, 2u);
  EXPECT_EQ(ErrnoCount(s, FdKind::kFile, IoOperation::kRead, EBADF), 2u);
}

double TotalMs(const shm::Snapshot& snapshot, FdKind kind, IoOperation operation) {
  return snapshot.TicksToNs(Io(snapshot, kind, operation).ticks) / 1e6;
}

// The default (adaptive) timing: a transfer, open or close whose kind took
// 10 us or more last time is always timed; faster ones are timed one in 32
// and weighted 32, so their total matches timing every call.
TEST(IoTimingTest, SlowCallsAreAllTimedAndFastCallsAreWeighted) {
  ScratchDirectory directory;
  ASSERT_FALSE(directory.path().empty());
  constexpr uint64_t kFast = 20000, kSlow = 20;
  std::vector<std::string> args{"timing", directory.path(), std::to_string(kFast), std::to_string(kSlow)};
  // Three runs of each policy: one preemption inside a timed call moves a
  // run's total a lot on a busy machine, the median of three much less.
  constexpr int kRuns = 3;
  constexpr uint64_t kReopened = kFast / 10;
  const std::vector<std::pair<FdKind, IoOperation>> kFastCalls{
      {FdKind::kFile, IoOperation::kRead}, {FdKind::kFile, IoOperation::kOpen}, {FdKind::kFile, IoOperation::kClose}};
  std::vector<std::vector<double>> sampled(kFastCalls.size()), exact(kFastCalls.size());
  for (int run = 0; run < kRuns; ++run) {
    IoRun adaptive = RunIoCalls(args);
    SegmentCleanup adaptive_cleanup(adaptive.name);
    IoRun every = RunIoCalls(args, {"LIMPWATCH_IO_TIMING=every"});
    SegmentCleanup every_cleanup(every.name);
    for (const IoRun* io : {&adaptive, &every}) {
      EXPECT_EQ(Io(io->snapshot, FdKind::kFile, IoOperation::kRead).calls, kFast);
      EXPECT_EQ(Io(io->snapshot, FdKind::kUdp, IoOperation::kRead).calls, kSlow);
      EXPECT_EQ(Io(io->snapshot, FdKind::kUdp, IoOperation::kRead).errors, kSlow);
      EXPECT_EQ(Io(io->snapshot, FdKind::kFile, IoOperation::kOpen).calls, kReopened + 1);
      EXPECT_EQ(Io(io->snapshot, FdKind::kFile, IoOperation::kClose).calls, kReopened + 1);
    }
    // Each receive waits for its 2 ms timeout (8 ms here: the kernel rounds
    // to timer ticks): all of them timed, none weighted (one weighted by 32
    // alone would pass a second).
    EXPECT_GE(TotalMs(adaptive.snapshot, FdKind::kUdp, IoOperation::kRead), kSlow * 2.0);
    EXPECT_LT(TotalMs(adaptive.snapshot, FdKind::kUdp, IoOperation::kRead), 1000.0);
    for (size_t call = 0; call < kFastCalls.size(); ++call) {
      sampled[call].push_back(TotalMs(adaptive.snapshot, kFastCalls[call].first, kFastCalls[call].second));
      exact[call].push_back(TotalMs(every.snapshot, kFastCalls[call].first, kFastCalls[call].second));
    }
  }
  // The sampled fast calls estimate the same total as timing each one
  // (unweighted, the estimate would be 32 times too small; untimed, zero).
  for (size_t call = 0; call < kFastCalls.size(); ++call) {
    std::sort(sampled[call].begin(), sampled[call].end());
    std::sort(exact[call].begin(), exact[call].end());
    double sampled_median = sampled[call][kRuns / 2], exact_median = exact[call][kRuns / 2];
    std::string what = "operation " + std::to_string(static_cast<int>(kFastCalls[call].second)) + ": sampled " +
                       std::to_string(sampled_median) + " ms, every call " + std::to_string(exact_median);
    EXPECT_GT(sampled_median, exact_median / 4) << what;
    EXPECT_LT(sampled_median, exact_median * 4) << what;
  }
}

TEST(IoErrnoTest, EbadfIsCountedAndErrnoIsPreserved) {
  IoRun io = RunIoCalls({"ebadf"});  // exits non-zero if errno differs from the C library's
  SegmentCleanup cleanup(io.name);
  const shm::Snapshot& s = io.snapshot;
  EXPECT_EQ(ErrnoCount(s, FdKind::kOther, IoOperation::kRead, EBADF), 1u);
  EXPECT_EQ(ErrnoCount(s, FdKind::kOther, IoOperation::kWrite, EBADF), 1u);
  EXPECT_EQ(ErrnoCount(s, FdKind::kOther, IoOperation::kClose, EBADF), 1u);
  EXPECT_EQ(Io(s, FdKind::kOther, IoOperation::kRead).errors, 1u);
  EXPECT_EQ(Io(s, FdKind::kPipe, IoOperation::kWrite).calls, 1u);
  EXPECT_EQ(Io(s, FdKind::kPipe, IoOperation::kWrite).errors, 0u);
  EXPECT_EQ(s.io.errno_overflow, 0u);
}

TEST(IoErrnoTest, EmfileIsCountedForOpenAndSocket) {
  IoRun io = RunIoCalls({"emfile"});  // lowers its own RLIMIT_NOFILE to 16
  SegmentCleanup cleanup(io.name);
  const shm::Snapshot& s = io.snapshot;
  uint64_t opened = std::stoull("0" + LineAfter(io.run.output, "opened"));
  ASSERT_GT(opened, 0u) << io.run.output;
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kOpen).calls, opened + 1);
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kOpen).errors, 1u);
  EXPECT_EQ(ErrnoCount(s, FdKind::kFile, IoOperation::kOpen, EMFILE), 1u);
  uint64_t sockets = std::stoull("0" + LineAfter(io.run.output, "sockets"));  // usually 0
  EXPECT_EQ(Io(s, FdKind::kTcp, IoOperation::kOpen).calls, sockets + 1);
  EXPECT_EQ(ErrnoCount(s, FdKind::kTcp, IoOperation::kOpen, EMFILE), 1u);
  EXPECT_EQ(Io(s, FdKind::kFile, IoOperation::kClose).calls, opened);
  EXPECT_EQ(Io(s, FdKind::kTcp, IoOperation::kClose).calls, sockets);
}

}  // namespace
}  // namespace limpwatch::testing
