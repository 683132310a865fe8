// The cost of the interposed I/O calls, measured against the C library's own
// functions in the same process:
//   pread   4 KiB from a file in the page cache
//   write   64 bytes to a TCP socket over loopback (TCP_NODELAY; a thread
//           drains the other end with the C library's recv)
// "unhooked" calls libc's function found with dlopen("libc.so.6") + dlsym,
// "hooked" calls the program's pread / write, which liblimpwatch.so
// interposes. The two alternate in short batches, so drift on a shared
// machine hits both alike; printed are the median ns per call of each, the
// median of the per-round differences (added ns) and the ratio.
//
// One run measures both timing policies: the parent runs itself once with
// LIMPWATCH_IO_TIMING=adaptive (the default: calls under 10 us are timed one
// in 32) and once with LIMPWATCH_IO_TIMING=every (every call timed).
//
//   io_benchmark [--rounds N]
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

constexpr int kPreadBatch = 200;  // short batches: most of them see no preemption at all
constexpr int kWriteBatch = 200;
constexpr size_t kFileSize = 1 << 20;
constexpr size_t kReadSize = 4096;
constexpr size_t kMessage = 64;
constexpr double kTargetPercent = 2.0;

using PreadFunction = ssize_t (*)(int, void*, size_t, off_t);
using WriteFunction = ssize_t (*)(int, const void*, size_t);
using RecvFunction = ssize_t (*)(int, void*, size_t, int);

struct Libc {
  PreadFunction pread = nullptr;
  WriteFunction write = nullptr;
  RecvFunction recv = nullptr;
};

Libc FindLibc() {
  Libc libc;
  void* handle = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return libc;
  libc.pread = reinterpret_cast<PreadFunction>(dlsym(handle, "pread"));
  libc.write = reinterpret_cast<WriteFunction>(dlsym(handle, "write"));
  libc.recv = reinterpret_cast<RecvFunction>(dlsym(handle, "recv"));
  return libc;
}

double NowNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return double(now.tv_sec) * 1e9 + double(now.tv_nsec);
}

double Percentile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(fraction * double(values.size() - 1))];
}

struct Comparison {
  const char* name;
  std::vector<double> unhooked;  // ns per call, one value per batch
  std::vector<double> hooked;
};

// The added cost is the median of the per-round differences (hooked minus
// unhooked, measured back to back), which cancels drift that the medians of
// the two series alone would not.
void Report(const Comparison& comparison, const char* mode, bool checked) {
  std::vector<double> added;
  for (size_t i = 0; i < comparison.hooked.size(); ++i) added.push_back(comparison.hooked[i] - comparison.unhooked[i]);
  double base = Percentile(comparison.unhooked, 0.5);
  double hooked = Percentile(comparison.hooked, 0.5);
  double added_median = Percentile(added, 0.5);
  double percent = 100.0 * added_median / base;
  std::printf("%-26s unhooked %7.1f ns  hooked %7.1f ns  added %6.1f ns  ratio %.4f (%+.2f %%)", comparison.name, base,
              hooked, added_median, (base + added_median) / base, percent);
  if (checked) std::printf("  target <= %.0f %%: %s", kTargetPercent, percent <= kTargetPercent ? "met" : "NOT met");
  std::printf("\n%-26s added per round: p25 %6.1f ns  p75 %6.1f ns   [%s]\n", "", Percentile(added, 0.25),
              Percentile(added, 0.75), mode);
}

// A connected loopback pair; returns the writing end, and the reading end in *reader.
int LoopbackPair(int* reader) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address);
  listen(listener, 1);
  socklen_t length = sizeof address;
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  int writer = socket(AF_INET, SOCK_STREAM, 0);
  int yes = 1;
  setsockopt(writer, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  if (connect(writer, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return -1;
  *reader = accept(listener, nullptr, nullptr);
  close(listener);
  return writer;
}

int Measure(int rounds, const char* mode) {
  Libc libc = FindLibc();
  if (libc.pread == nullptr || libc.write == nullptr || libc.recv == nullptr) {
    std::fprintf(stderr, "io_benchmark: cannot find the C library's pread/write/recv\n");
    return 1;
  }
  if (libc.pread == &pread) {
    std::fprintf(stderr, "io_benchmark: pread is not interposed: is liblimpwatch.so linked?\n");
    return 1;
  }

  char path[] = "/tmp/limpwatch-io-benchmark-XXXXXX";
  int file = mkstemp(path);
  if (file < 0) {
    std::perror("io_benchmark: mkstemp");
    return 1;
  }
  unlink(path);
  std::vector<char> content(kFileSize, 'c');
  libc.write(file, content.data(), content.size());
  char buffer[kReadSize];
  for (size_t offset = 0; offset < kFileSize; offset += kReadSize) libc.pread(file, buffer, kReadSize, off_t(offset));

  int reader = -1;
  int writer = LoopbackPair(&reader);
  if (writer < 0 || reader < 0) {
    std::fprintf(stderr, "io_benchmark: no loopback connection\n");
    return 1;
  }
  std::atomic<bool> draining{true};
  std::thread drain([&] {
    std::vector<char> sink(1 << 16);
    while (draining.load(std::memory_order_relaxed)) {
      if (libc.recv(reader, sink.data(), sink.size(), 0) <= 0) break;
    }
  });

  Comparison preads{"pread 4 KiB, page cache", {}, {}};
  Comparison writes{"write 64 B, TCP loopback", {}, {}};
  auto time_preads = [&](PreadFunction function) {
    double start = NowNs();
    for (int i = 0; i < kPreadBatch; ++i) function(file, buffer, kReadSize, off_t((i * kReadSize) % kFileSize));
    return (NowNs() - start) / kPreadBatch;
  };
  auto time_writes = [&](WriteFunction function) {
    double start = NowNs();
    for (int i = 0; i < kWriteBatch; ++i) function(writer, buffer, kMessage);
    return (NowNs() - start) / kWriteBatch;
  };
  PreadFunction hooked_pread = &pread;
  WriteFunction hooked_write = &write;
  time_preads(hooked_pread);  // warm up: attach the thread, classify the fds
  time_writes(hooked_write);
  for (int round = 0; round < rounds; ++round) {
    // Alternate which goes first, so neither always runs on a warmer cache.
    if (round % 2 == 0) {
      preads.unhooked.push_back(time_preads(libc.pread));
      preads.hooked.push_back(time_preads(hooked_pread));
      writes.unhooked.push_back(time_writes(libc.write));
      writes.hooked.push_back(time_writes(hooked_write));
    } else {
      preads.hooked.push_back(time_preads(hooked_pread));
      preads.unhooked.push_back(time_preads(libc.pread));
      writes.hooked.push_back(time_writes(hooked_write));
      writes.unhooked.push_back(time_writes(libc.write));
    }
  }
  draining.store(false);
  shutdown(writer, SHUT_RDWR);
  drain.join();
  close(writer);
  close(reader);
  close(file);

  Report(preads, mode, true);
  Report(writes, mode, false);
  return 0;
}

// Runs this program again as `--measure` with LIMPWATCH_IO_TIMING=policy.
int RunMode(const char* self, const char* policy, int rounds) {
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, "LIMPWATCH_IO_TIMING=", 20) != 0) environment.emplace_back(*entry);
  }
  environment.push_back(std::string("LIMPWATCH_IO_TIMING=") + policy);
  std::vector<char*> envp;
  for (auto& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::string rounds_text = std::to_string(rounds);
  std::string mode = std::string("LIMPWATCH_IO_TIMING=") + policy;
  char* argv[] = {const_cast<char*>(self), const_cast<char*>("--measure"), rounds_text.data(), mode.data(), nullptr};
  pid_t pid = -1;
  if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, envp.data()) != 0) return 1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--measure") == 0) return Measure(std::atoi(argv[2]), argv[3]);
  int rounds = 3000;
  if (argc == 3 && std::strcmp(argv[1], "--rounds") == 0) rounds = std::max(10, std::atoi(argv[2]));
  std::printf("interposed I/O calls vs the C library's, %d interleaved batches each (%d preads / %d writes)\n",
              rounds, kPreadBatch, kWriteBatch);
  std::printf("\nadaptive timing (the default: transfers under 10 us timed one in 32, weighted 32):\n");
  std::fflush(stdout);
  int status = RunMode(argv[0], "adaptive", rounds);
  std::printf("\nevery call timed (LIMPWATCH_IO_TIMING=every):\n");
  std::fflush(stdout);
  status |= RunMode(argv[0], "every", rounds);
  return status;
}
