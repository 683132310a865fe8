#include "dying_readers.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <vector>

#include "limpwatch/shm/snapshot.h"
#include "soak_clock.h"

namespace limpwatch::soak {

void RunDyingReader(ReaderKind kind, const std::string& cli_path, const std::string& self_path,
                    const std::string& name, const std::string& object, uint64_t max_life_ms,
                    std::mt19937_64& random, ReaderTally* tally) {
  std::vector<std::string> words;
  switch (kind) {
    case ReaderKind::kTop: words = {cli_path, "top", name}; break;
    case ReaderKind::kDumpJson: words = {cli_path, "dump", name, "--json"}; break;
    case ReaderKind::kSnapshotLoop: words = {self_path, "--snapshot-loop", object}; break;
  }
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    ++tally->failed_to_start;
    return;
  }
  pid_t child = fork();
  if (child < 0) {
    close(out[0]), close(out[1]);
    ++tally->failed_to_start;
    return;
  }
  if (child == 0) {
    int null = open("/dev/null", O_RDWR);
    dup2(null, STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  ++tally->started;
  // Read what it prints until its moment comes, so a full pipe never stops it first.
  uint64_t deadline = NowMs() + random() % (max_life_ms + 1);
  char buffer[4096];
  bool open_pipe = true;
  for (uint64_t now = NowMs(); now < deadline && open_pipe; now = NowMs()) {
    pollfd watched{out[0], POLLIN, 0};
    if (poll(&watched, 1, int(deadline - now)) > 0) open_pipe = read(out[0], buffer, sizeof buffer) > 0;
  }
  int status = 0;
  bool still_running = waitpid(child, &status, WNOHANG) == 0;
  kill(child, SIGKILL);
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  close(out[0]);
  ++(still_running ? tally->killed_while_reading : tally->finished_first);
}

int SnapshotLoop(const std::string& object) {
  std::string error;
  std::unique_ptr<shm::SegmentReader> reader = shm::SegmentReader::Open(object, &error);
  if (!reader) {
    std::fprintf(stderr, "limpwatch-soak: %s\n", error.c_str());
    return 1;
  }
  for (uint64_t taken = 0;; ++taken) {
    shm::Snapshot snapshot;
    shm::TakeSnapshot(*reader, &snapshot);
    if (taken % 64 == 0) std::printf("%llu\n", static_cast<unsigned long long>(taken));
  }
}

}  // namespace limpwatch::soak
