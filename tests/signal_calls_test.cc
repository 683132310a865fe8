// A signal handler that interrupts one of limpwatch's hooks (the thread it
// lands on was counting a call) runs the program's code while limpwatch is
// at work on that thread: its calls are counted all the same, in the
// process totals (ProcessCounters::calls_during_hooks), its traced calls
// without a frame or a time and its I/O in full, never dropped silently.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "support/traced_run.h"

namespace limpwatch::testing {
namespace {

TEST(SignalCallsTest, AHandlerThatInterruptsTheHooksHasEveryCallCounted) {
  std::string name = UniqueSegmentName("signals");
  SegmentCleanup cleanup(name);
  ProgramRun run = RunProgram(TestProgram("signal_calls"), {"20000"}, {"LIMPWATCH_NAME=" + name, "LIMPWATCH_KEEP=1"});
  ASSERT_EQ(run.exit_status, 0) << run.output;
  unsigned long handled = 0, writes = 0, bytes = 0;
  ASSERT_EQ(std::sscanf(run.output.c_str(), "handled %lu writes %lu bytes %lu", &handled, &writes, &bytes), 3)
      << run.output;
  shm::Snapshot snapshot = ReadSegment(name, run.pid);
  auto counters = CountersByName(snapshot);
  EXPECT_EQ(counters["on_signal"].calls, handled);
  EXPECT_EQ(counters["in_handler"].calls, handled);
  const shm::IoValues& pipe_writes = snapshot.io.at(shm::FdKind::kPipe, shm::IoOperation::kWrite);
  EXPECT_EQ(pipe_writes.calls, writes);
  EXPECT_EQ(pipe_writes.bytes, bytes);
  EXPECT_GT(snapshot.calls_during_hooks, 0u) << "no signal landed in a hook: nothing was shown";
  EXPECT_EQ(snapshot.calls_during_hooks_lost, 0u);
}

}  // namespace
}  // namespace limpwatch::testing
