// The node's shared sampling events, without the kernel's events: inboxes
// in real files, the node's lock, delivery by pid, losses, members that
// leave, a holder that hands over, and the exit flush across threads.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "sampler/node_sample_sharing.h"
#include "sampler/sample_inbox.h"

namespace limpwatch::runtime {
namespace {

constexpr uint32_t kRate = 997;
const std::string kScope = "0.4026531836";

class SharingDirectory : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/limpwatch-sharing-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    directory_ = pattern;
  }
  void TearDown() override {
    for (pid_t pid : live_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    std::filesystem::remove_all(directory_);
  }

  // A process that lives until the test ends (or Kill), whose pid stands
  // for a member: a holder is taken over when its pid is dead.
  pid_t LivePid() {
    pid_t pid = fork();
    if (pid == 0) {
      for (;;) pause();
    }
    live_.push_back(pid);
    return pid;
  }
  void Kill(pid_t pid) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    std::erase(live_, pid);
  }

  std::unique_ptr<NodeSampleSharing> JoinAs(pid_t pid, uint32_t capacity = kMinInboxCapacity) {
    std::string error;
    auto sharing = NodeSampleSharing::Join(directory_, kScope, kRate, pid, capacity, &error);
    EXPECT_NE(sharing, nullptr) << error;
    return sharing;
  }

  bool Exists(const std::string& name) const { return std::filesystem::exists(directory_ + "/" + name); }

  std::string directory_;
  std::vector<pid_t> live_;
};

std::vector<SharedSample> DrainAll(NodeSampleSharing& sharing, uint64_t* lost) {
  std::vector<SharedSample> samples;
  sharing.DrainInbox([&](const SharedSample& sample) { samples.push_back(sample); }, lost);
  return samples;
}

TEST(SampleInboxNames, OnlyAnInboxOfTheSameScopeAndRateGivesItsPid) {
  EXPECT_EQ(InboxFileName("0.77", 199, 4321), "limpwatch-samples.0.77.199.4321");
  EXPECT_EQ(InboxPid("limpwatch-samples.0.77.199.4321", "0.77", 199), 4321);
  EXPECT_FALSE(InboxPid("limpwatch-samples.0.77.199.4321", "0.77", 200));
  EXPECT_FALSE(InboxPid("limpwatch-samples.0.77.199.4321", "1000.77", 199));
  EXPECT_FALSE(InboxPid("limpwatch-samples.0.77.199.4321", "0.78", 199));  // another PID namespace
  EXPECT_FALSE(InboxPid("limpwatch-samples.0.77.199.4321.new", "0.77", 199));
  EXPECT_FALSE(InboxPid("limpwatch-samples.0.77.199.", "0.77", 199));
  EXPECT_FALSE(InboxPid("limpwatch-samples.0.77.199.0", "0.77", 199));
  EXPECT_FALSE(InboxPid("limpwatch.server1.4321", "0.77", 199));
}

TEST(SampleInboxNames, TheScopeIsThisUserInThisPidNamespace) {
  std::string scope = SharingScope();
  EXPECT_EQ(scope.substr(0, scope.find('.')), std::to_string(geteuid()));
  struct stat namespace_status {};
  ASSERT_EQ(stat("/proc/self/ns/pid", &namespace_status), 0);
  EXPECT_EQ(scope.substr(scope.find('.') + 1), std::to_string(namespace_status.st_ino));
}

TEST(SampleInboxNames, CapacityHoldsTwoSecondsOfEveryCpuAsAPowerOfTwo) {
  EXPECT_EQ(InboxCapacityFor(199, 2), 1024u);
  EXPECT_EQ(InboxCapacityFor(4000, 2), 16384u);
  EXPECT_EQ(InboxCapacityFor(1, 1), kMinInboxCapacity);
  EXPECT_EQ(InboxCapacityFor(10000, 1000), kMaxInboxCapacity);
}

TEST_F(SharingDirectory, OneProcessHoldsTheEventsUntilItReleasesThem) {
  auto first = JoinAs(LivePid());
  auto second = JoinAs(LivePid());
  ASSERT_TRUE(first && second);
  EXPECT_TRUE(first->TryTakeOver());
  EXPECT_FALSE(second->TryTakeOver());
  EXPECT_TRUE(first->TryTakeOver());  // already held
  first->Release();
  EXPECT_FALSE(first->holder());
  EXPECT_TRUE(second->TryTakeOver());
  EXPECT_FALSE(first->TryTakeOver());
}

TEST_F(SharingDirectory, AHolderThatDiedIsTakenOverAtOnce) {
  pid_t holder_pid = LivePid();
  auto holder = JoinAs(holder_pid);
  auto member = JoinAs(LivePid());
  ASSERT_TRUE(holder && member);
  ASSERT_TRUE(holder->TryTakeOver());
  holder->EndRound();  // a fresh heartbeat: only its death frees the lease
  EXPECT_FALSE(member->TryTakeOver());
  Kill(holder_pid);
  EXPECT_TRUE(member->TryTakeOver());
}

TEST_F(SharingDirectory, AHolderThatDiedAndIsNotYetReapedIsTakenOverAtOnce) {
  // A zombie answers kill(pid, 0); a daemon's parent that died holding the
  // lease stays one while its own parent waits for the daemon.
  pid_t zombie = fork();
  ASSERT_GE(zombie, 0);
  if (zombie == 0) _exit(0);
  live_.push_back(zombie);  // reaped at the end
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto holder = JoinAs(zombie);
  auto member = JoinAs(LivePid());
  ASSERT_TRUE(holder && member);
  ASSERT_TRUE(holder->TryTakeOver());
  holder->EndRound();  // a fresh heartbeat
  EXPECT_TRUE(member->TryTakeOver());
}

TEST_F(SharingDirectory, AStalledHolderIsTakenOverAndThenServesNobody) {
  // A holder that stops renewing (SIGSTOP, a starved CPU) for longer than
  // kStaleLeaseNs loses the events to a member; when it runs again it finds
  // itself a member, delivers nothing, and its Release leaves the new
  // holder's lease alone.
  auto stalled = JoinAs(LivePid());
  auto member = JoinAs(LivePid());
  auto third = JoinAs(LivePid());
  ASSERT_TRUE(stalled && member && third);
  ASSERT_TRUE(stalled->TryTakeOver());
  stalled->BeginRound(10);
  stalled->EndRound();
  EXPECT_FALSE(member->TryTakeOver());
  std::this_thread::sleep_for(std::chrono::nanoseconds(kStaleLeaseNs) + std::chrono::milliseconds(100));
  EXPECT_TRUE(member->TryTakeOver());
  EXPECT_FALSE(stalled->StillHolder());
  EXPECT_FALSE(stalled->holder());
  EXPECT_FALSE(stalled->Deliver(0, SharedSample{}));
  EXPECT_EQ(stalled->member_count(), 0u);
  stalled->Release();
  member->EndRound();
  EXPECT_FALSE(third->TryTakeOver());
  EXPECT_TRUE(member->StillHolder());
}

TEST_F(SharingDirectory, TheHolderFilesEachMembersSamplesInItsOwnInboxAndNoOneElses) {
  auto holder = JoinAs(201);
  auto member_a = JoinAs(202);
  auto member_b = JoinAs(203);
  ASSERT_TRUE(holder && member_a && member_b);
  ASSERT_TRUE(holder->TryTakeOver());
  EXPECT_TRUE(holder->BeginRound(10).empty());  // the first round looks for members
  holder->EndRound();
  EXPECT_EQ(holder->member_count(), 2u);
  EXPECT_TRUE(holder->Deliver(202, SharedSample{0x1000, 0, 7, 0}));
  EXPECT_TRUE(holder->Deliver(203, SharedSample{0x2000, 0x3000, 8, 1}));
  EXPECT_TRUE(holder->Deliver(202, SharedSample{0x1004, 0, 9, 0}));
  EXPECT_FALSE(holder->Deliver(999, SharedSample{0x4000, 0, 1, 0}));  // no such member
  EXPECT_FALSE(holder->Deliver(201, SharedSample{0x5000, 0, 1, 0}));  // its own are counted directly
  uint64_t lost = 0;
  auto a = DrainAll(*member_a, &lost);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].ip, 0x1000u);
  EXPECT_EQ(a[0].tid, 7u);
  EXPECT_EQ(a[1].ip, 0x1004u);
  auto b = DrainAll(*member_b, &lost);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].user_ip, 0x3000u);
  EXPECT_EQ(b[0].in_kernel, 1u);
  EXPECT_EQ(lost, 0u);
  EXPECT_TRUE(DrainAll(*member_a, &lost).empty());  // read once
}

TEST_F(SharingDirectory, AFullInboxDropsAndEveryMemberCountsTheKernelsLosses) {
  auto holder = JoinAs(301);
  auto member = JoinAs(302);
  ASSERT_TRUE(holder && member);
  ASSERT_TRUE(holder->TryTakeOver());
  holder->Rescan();
  for (uint32_t i = 0; i < kMinInboxCapacity + 5; ++i) holder->Deliver(302, SharedSample{i, 0, 1, 0});
  holder->DeliverLost(3);
  uint64_t lost = 0;
  auto samples = DrainAll(*member, &lost);
  ASSERT_EQ(samples.size(), kMinInboxCapacity);
  EXPECT_EQ(samples.back().ip, kMinInboxCapacity - 1);  // the oldest kept, the newest dropped
  EXPECT_EQ(lost, 5u + 3u);
  // Room again once read.
  EXPECT_TRUE(holder->Deliver(302, SharedSample{77, 0, 1, 0}));
  lost = 0;
  samples = DrainAll(*member, &lost);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(lost, 0u);  // losses are counted once
}

TEST_F(SharingDirectory, AMemberThatJoinsIsServedFromTheHoldersNextRound) {
  // Not at the next periodic look: the samples it has in the rings by then
  // would be dropped as nobody's.
  auto holder = JoinAs(351);
  ASSERT_TRUE(holder && holder->TryTakeOver());
  holder->BeginRound(1000);
  holder->EndRound();
  auto member = JoinAs(352);
  ASSERT_TRUE(member);
  holder->BeginRound(1000);
  EXPECT_TRUE(holder->Deliver(352, SharedSample{1, 0, 1, 0}));
  holder->EndRound();
}

size_t OpenDescriptors() {
  size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++count;
  return count;
}

TEST_F(SharingDirectory, TheHolderKeepsNoDescriptorPerMember) {
  // Its descriptors would otherwise grow with the node's traced processes
  // (the soak's check that descriptors stay flat caught it).
  auto holder = JoinAs(LivePid());
  ASSERT_TRUE(holder && holder->TryTakeOver());
  std::vector<std::unique_ptr<NodeSampleSharing>> members;
  for (int i = 0; i < 5; ++i) members.push_back(JoinAs(LivePid()));
  size_t before = OpenDescriptors();
  holder->Rescan();
  ASSERT_EQ(holder->member_count(), 5u);
  EXPECT_EQ(OpenDescriptors(), before);
  holder->Rescan();  // checking on the readers opens and closes
  EXPECT_EQ(holder->member_count(), 5u);
  EXPECT_EQ(OpenDescriptors(), before);
}

TEST_F(SharingDirectory, AMemberThatLeavesIsForgottenAndItsInboxRemoved) {
  auto holder = JoinAs(401);
  auto member = JoinAs(402);
  ASSERT_TRUE(holder && member);
  ASSERT_TRUE(holder->TryTakeOver());
  holder->Rescan();
  ASSERT_EQ(holder->member_count(), 1u);
  member.reset();
  EXPECT_FALSE(Exists(InboxFileName(kScope, kRate, 402)));
  holder->Rescan();
  EXPECT_EQ(holder->member_count(), 0u);
  EXPECT_FALSE(holder->Deliver(402, SharedSample{1, 0, 1, 0}));
}

TEST_F(SharingDirectory, TheInboxOfAProcessThatDiedIsRemovedByTheHolder) {
  // A real process creates its inbox and dies without removing it: its
  // lock goes with it, which is how the holder knows.
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string error;
    auto inbox = SampleInbox::Create(directory_, kScope, kRate, getpid(), kMinInboxCapacity, &error);
    _exit(inbox ? 0 : 1);  // no destructor: the file stays, the lock goes
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_TRUE(Exists(InboxFileName(kScope, kRate, child)));
  auto holder = JoinAs(501);
  ASSERT_TRUE(holder && holder->TryTakeOver());
  holder->Rescan();
  EXPECT_EQ(holder->member_count(), 0u);
  EXPECT_FALSE(Exists(InboxFileName(kScope, kRate, child)));
}

TEST_F(SharingDirectory, ACorruptInboxIsRefusedInOneLineAndTheOthersStillServed) {
  auto holder = JoinAs(601);
  auto member = JoinAs(602);
  ASSERT_TRUE(holder && member);
  std::string bad = directory_ + "/" + InboxFileName(kScope, kRate, 603);
  {
    std::ofstream file(bad, std::ios::binary);
    file << std::string(4096, 'x');
  }
  ASSERT_TRUE(holder->TryTakeOver());
  std::vector<std::string> problems = holder->Rescan();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find(bad), std::string::npos) << problems[0];
  EXPECT_NE(problems[0].find("no valid header"), std::string::npos) << problems[0];
  EXPECT_TRUE(holder->Rescan().empty());  // said once
  EXPECT_EQ(holder->member_count(), 1u);
  EXPECT_TRUE(holder->Deliver(602, SharedSample{1, 0, 1, 0}));
}

TEST_F(SharingDirectory, TheLastProcessToLeaveRemovesTheControlFile) {
  // Nothing stays in /dev/shm once no traced process samples at that rate.
  const std::string control = SharingControlFileName(kScope, kRate);
  auto first = JoinAs(LivePid());
  auto second = JoinAs(LivePid());
  ASSERT_TRUE(first && second);
  EXPECT_TRUE(Exists(control));
  first.reset();
  EXPECT_TRUE(Exists(control));  // the second still takes part
  second.reset();
  EXPECT_FALSE(Exists(control));
  EXPECT_TRUE(std::filesystem::is_empty(directory_));
  // The next to come creates it again, and the one after shares it.
  auto third = JoinAs(LivePid());
  auto fourth = JoinAs(LivePid());
  ASSERT_TRUE(third && fourth);
  ASSERT_TRUE(third->TryTakeOver());
  EXPECT_FALSE(fourth->TryTakeOver());
}

TEST_F(SharingDirectory, AControlFileThatIsNotOursIsRefused) {
  std::string control = directory_ + "/" + SharingControlFileName(kScope, kRate);
  {
    std::ofstream file(control, std::ios::binary);
    file << std::string(4096, '\x7f');
  }
  std::string error;
  EXPECT_EQ(NodeSampleSharing::Join(directory_, kScope, kRate, 701, kMinInboxCapacity, &error), nullptr);
  EXPECT_NE(error.find("not a sampling control file"), std::string::npos) << error;
  EXPECT_TRUE(Exists(SharingControlFileName(kScope, kRate)));  // refused, not removed
}

TEST_F(SharingDirectory, AMemberExitingGetsItsLastSamplesFromTheHoldersNextRead) {
  auto holder = JoinAs(801);
  auto member = JoinAs(802);
  ASSERT_TRUE(holder && member);
  ASSERT_TRUE(holder->TryTakeOver());
  holder->BeginRound(10);
  holder->EndRound();
  // The holder's reader: waits up to 10 s between reads, so only the
  // member's request can make it read within the member's time limit.
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    for (;;) {
      holder->Wait(10'000'000'000);
      if (stop.load()) break;
      holder->BeginRound(10);
      holder->Deliver(802, SharedSample{0xabc, 0, 1, 0});
      holder->EndRound();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the reader is waiting
  auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(member->RequestFlush(5'000'000'000));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(4));
  uint64_t lost = 0;
  auto samples = DrainAll(*member, &lost);
  ASSERT_FALSE(samples.empty());
  EXPECT_EQ(samples.back().ip, 0xabcu);
  stop = true;
  member->RequestFlush(100'000'000);  // wakes the reader, which stops without serving it
  reader.join();
}

TEST_F(SharingDirectory, WithoutAHolderAFlushIsNotWaitedFor) {
  auto member = JoinAs(901);
  ASSERT_TRUE(member);
  auto started = std::chrono::steady_clock::now();
  EXPECT_FALSE(member->RequestFlush(5'000'000'000));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
}

TEST_F(SharingDirectory, AHolderThatReleasesWakesAWaitingMember) {
  auto holder = JoinAs(1001);
  auto member = JoinAs(1002);
  ASSERT_TRUE(holder && member);
  ASSERT_TRUE(holder->TryTakeOver());
  std::atomic<bool> took_over{false};
  std::thread waiting([&] {
    member->Wait(10'000'000'000);
    took_over = member->TryTakeOver();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto released = std::chrono::steady_clock::now();
  holder.reset();
  waiting.join();
  EXPECT_TRUE(took_over.load());
  EXPECT_LT(std::chrono::steady_clock::now() - released, std::chrono::seconds(4));
}

}  // namespace
}  // namespace limpwatch::runtime
