// When the kernel refuses io_uring (here: a seccomp filter makes
// io_uring_setup fail with EPERM, as container runtimes do), the transport
// falls back to plain sockets on its own and still exchanges summaries.
// Runs in a forked child so the filter never touches the test runner.
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

#include "peer/loopback.h"
#include "peer/summary_builder.h"

namespace limpwatch::analyzer {
namespace {

#if defined(__x86_64__)
bool RefuseIoUringSetup() {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])), filter};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

// The child's verdict as its exit status: 0 passed, else the failed step.
int ExchangeWithIoUringRefused() {
  if (!RefuseIoUringSetup()) return 10;
  if (testing::IoUringAvailable()) return 11;  // the filter did not take
  std::string error;
  auto a = testing::OpenTransport(IoPreference::kAuto, "127.0.0.1:0", std::nullopt, &error);
  auto b = testing::OpenTransport(IoPreference::kAuto, "127.0.0.1:0", std::nullopt, &error);
  if (!a || !b) return 12;
  if (a->io_path() != IoPath::kPlainSockets || b->io_path() != IoPath::kPlainSockets) return 13;
  if (a->fallback_reason().find("io_uring_queue_init refused") == std::string::npos) return 14;
  if (!testing::ConnectAll({a.get(), b.get()})) return 15;
  a->Send(testing::MakeSummary({.node = "refused-a", .features = 20}));
  auto received = testing::PollUntil(*b, 1);
  if (received.size() != 1 || received[0].summary.node != "refused-a") return 16;
  if (a->counters().sends != 1 || b->counters().accepted != 1) return 17;
  return 0;
}
#endif

TEST(PeerTransportFallback, IoUringRefusedByTheKernelFallsBackToPlainSockets) {
#if defined(__x86_64__)
  if (!testing::IoUringAvailable()) GTEST_SKIP() << "io_uring is refused already; the fallback is tested elsewhere";
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(ExchangeWithIoUringRefused());
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child died with signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "failed step " << WEXITSTATUS(status) << " (see ExchangeWithIoUringRefused)";
#else
  GTEST_SKIP() << "the seccomp filter here is written for x86-64";
#endif
}

}  // namespace
}  // namespace limpwatch::analyzer
