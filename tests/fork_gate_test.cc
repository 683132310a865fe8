// The fork gate (runtime/src/fork_gate.h): a fork waits for the library's
// threads to finish the work they are in, keeps them out while it runs, is
// not held up for longer than the bound by a thread that never leaves, and
// leaves the child's gate open.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "fork_gate.h"

namespace limpwatch::runtime {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

std::atomic<uint32_t> g_busy_reports{0};
std::atomic<uint32_t> g_last_busy_count{0};

// Fork handlers registered before the gate's: their prepare runs after the
// gate has closed, their parent handler before it opens (pthread_atfork
// order), so they see the window in which the gate must stay shut.
std::atomic<bool> g_watch_window{false};
std::atomic<bool> g_window_open{false};
std::atomic<bool> g_entered_in_window{false};
std::atomic<bool> g_entered{false};

void WindowOpens() {
  if (!g_watch_window.load()) return;
  g_window_open.store(true);
  std::this_thread::sleep_for(milliseconds(200));  // time for a thread to slip in
  if (g_entered.load()) g_entered_in_window.store(true);
}

void WindowClosesInParent() {
  if (!g_watch_window.load()) return;
  if (g_entered.load()) g_entered_in_window.store(true);
}

void RecordBusyFork(uint32_t inside) {
  g_last_busy_count.store(inside);
  g_busy_reports.fetch_add(1);
}

[[gnu::constructor]] void InstallHandlers() {
  pthread_atfork(WindowOpens, WindowClosesInParent, nullptr);
  InstallForkGate(RecordBusyFork);
}

// Forks; the child exits with what `child` returns. Returns the child's
// exit status, or -1 if it did not exit normally.
template <typename Child>
int ForkAndWait(Child child) {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(10);  // a child stuck at a closed gate fails instead of hanging
    _exit(child());
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ForkGateTest, ForkWaitsUntilAThreadAtWorkHasFinished) {
  std::atomic<bool> at_work{false};
  std::atomic<int> finished{0};
  std::thread worker([&] {
    ForkGateScope gate;
    at_work.store(true);
    std::this_thread::sleep_for(milliseconds(300));
    finished.store(1);
  });
  while (!at_work.load()) std::this_thread::yield();
  uint32_t reports_before = g_busy_reports.load();
  // The child sees the state the worker left when it left the gate.
  int child_status = ForkAndWait([&] { return finished.load() == 1 ? 0 : 1; });
  worker.join();
  EXPECT_EQ(child_status, 0) << "the fork copied the worker's memory in the middle of its work";
  EXPECT_EQ(g_busy_reports.load(), reports_before);
}

TEST(ForkGateTest, AThreadWaitsAtTheGateWhileAForkIsUnderWay) {
  g_entered.store(false);
  g_window_open.store(false);
  g_entered_in_window.store(false);
  g_watch_window.store(true);
  std::thread late([] {
    while (!g_window_open.load()) std::this_thread::yield();
    EnterForkGate();
    g_entered.store(true);
    LeaveForkGate();
  });
  int child_status = ForkAndWait([] { return 0; });
  g_watch_window.store(false);
  late.join();
  EXPECT_EQ(child_status, 0);
  EXPECT_TRUE(g_entered.load());
  EXPECT_FALSE(g_entered_in_window.load()) << "a thread entered the gate while the fork was under way";
}

TEST(ForkGateTest, AThreadThatNeverLeavesHoldsTheForkUpOnlyUntilTheBoundAndIsReported) {
  std::atomic<bool> at_work{false};
  std::atomic<bool> release{false};
  std::thread stuck([&] {
    ForkGateScope gate;
    at_work.store(true);
    while (!release.load()) std::this_thread::sleep_for(milliseconds(5));
  });
  while (!at_work.load()) std::this_thread::yield();
  uint32_t reports_before = g_busy_reports.load();
  auto start = steady_clock::now();
  int child_status = ForkAndWait([] { return 0; });
  auto waited = steady_clock::now() - start;
  release.store(true);
  stuck.join();
  EXPECT_EQ(child_status, 0);
  EXPECT_GE(waited, milliseconds(kForkGateWaitMs));
  EXPECT_EQ(g_busy_reports.load(), reports_before + 1);
  EXPECT_EQ(g_last_busy_count.load(), 1u);
}

TEST(ForkGateTest, TheChildsGateIsOpenForTheThreadsItStarts) {
  std::atomic<bool> at_work{false};
  std::atomic<bool> release{false};
  std::thread other([&] {
    ForkGateScope gate;
    at_work.store(true);
    while (!release.load()) std::this_thread::sleep_for(milliseconds(5));
  });
  while (!at_work.load()) std::this_thread::yield();
  // The parent's thread is still inside when the fork goes ahead (after the
  // bound); the child has no such thread, and its own enter at once.
  int child_status = ForkAndWait([] {
    std::atomic<bool> entered{false};
    std::thread child_thread([&] {
      ForkGateScope gate;
      entered.store(true);
    });
    child_thread.join();
    return entered.load() ? 0 : 1;
  });
  release.store(true);
  other.join();
  EXPECT_EQ(child_status, 0);
}

TEST(ForkGateTest, AThreadForkingFromInsideTheGateDoesNotWaitForItself) {
  ForkGateScope gate;
  uint32_t reports_before = g_busy_reports.load();
  int child_status = ForkAndWait([] { return InsideForkGate() ? 0 : 1; });
  EXPECT_EQ(child_status, 0);
  EXPECT_EQ(g_busy_reports.load(), reports_before) << "the fork waited for the thread that called it";
}

}  // namespace
}  // namespace limpwatch::runtime
