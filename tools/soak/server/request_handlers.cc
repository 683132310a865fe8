#include "server/request_handlers.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "server/counted_io.h"
#include "server/server_tally.h"
#include "soak_protocol.h"

namespace limpwatch::soak {

// One request being served: where it came from and its header.
struct Request {
  CountedKind kind;
  int fd;
  RequestHeader header;
};

namespace {

constinit Storage g_storage{};
constinit int g_signal_pipe = -1;
volatile uint64_t g_sink = 0;

bool Reply(const Request& request, uint32_t status, const void* payload, uint32_t length) {
  ReplyHeader reply{kReplyMagic, status, length, 0};
  return WriteReply(request.kind, request.fd, &reply, sizeof reply, payload, length);
}

// A block offset inside the storage file that leaves room for `length`.
off_t StorageOffset(uint32_t block, uint32_t length) {
  uint64_t room = g_storage.size > length ? g_storage.size - length : 0;
  return off_t(room == 0 ? 0 : (uint64_t(block) * 4096) % room);
}

}  // namespace

void SetStorage(Storage storage) { g_storage = storage; }
void SetSignalPipe(int write_fd) { g_signal_pipe = write_fd; }

}  // namespace limpwatch::soak

using namespace limpwatch::soak;

extern "C" {

[[gnu::noinline]] bool soak_handle_echo(const Request& request, std::vector<uint8_t>& buffer) {
  CountCall(KnownFunction::kHandleEcho);
  buffer.resize(request.header.length);
  if (!ReadFull(request.kind, request.fd, buffer.data(), buffer.size())) return false;
  return Reply(request, 0, buffer.data(), uint32_t(buffer.size()));
}

[[gnu::noinline]] bool soak_handle_store(const Request& request, std::vector<uint8_t>& buffer) {
  CountCall(KnownFunction::kHandleStore);
  buffer.resize(request.header.length);
  if (!ReadFull(request.kind, request.fd, buffer.data(), buffer.size())) return false;
  off_t offset = StorageOffset(request.header.argument, request.header.length);
  size_t done = 0;
  uint32_t status = 0;
  while (done < buffer.size()) {
    ssize_t wrote = CountedPwrite(g_storage.fd, buffer.data() + done, buffer.size() - done, offset + off_t(done));
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) {
      status = wrote < 0 ? uint32_t(errno) : uint32_t(EIO);
      break;
    }
    done += size_t(wrote);
  }
  return Reply(request, status, nullptr, 0);
}

[[gnu::noinline]] bool soak_handle_load(const Request& request, std::vector<uint8_t>& buffer) {
  CountCall(KnownFunction::kHandleLoad);
  uint32_t length = std::min(request.header.argument, kMaxPayloadBytes);
  buffer.resize(length);
  off_t offset = StorageOffset(length, length);
  size_t done = 0;
  while (done < buffer.size()) {
    ssize_t got = CountedPread(g_storage.fd, buffer.data() + done, buffer.size() - done, offset + off_t(done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += size_t(got);
  }
  if (done < buffer.size()) std::memset(buffer.data() + done, 0, buffer.size() - done);  // past the end: zeros
  return Reply(request, 0, buffer.data(), length);
}

[[gnu::noinline]] bool soak_handle_sync(const Request& request) {
  CountCall(KnownFunction::kHandleSync);
  CountEvent(ServerEvent::kFileSyncs);
  uint32_t status = fdatasync(g_storage.fd) == 0 ? 0 : uint32_t(errno);
  return Reply(request, status, nullptr, 0);
}

[[gnu::noinline]] void soak_thread_work(uint32_t round) {
  CountCall(KnownFunction::kThreadWork);
  for (uint32_t step = 0; step < 64; ++step) g_sink = g_sink + step * (round | 1);
}

void soak_thread_body(uint32_t calls) {
  for (uint32_t round = 0; round < calls; ++round) soak_thread_work(round);
}

[[gnu::noinline]] bool soak_handle_threads(const Request& request) {
  CountCall(KnownFunction::kHandleThreads);
  ThreadsRequest what{};
  if (request.header.length != sizeof what || !ReadFull(request.kind, request.fd, &what, sizeof what)) return false;
  uint32_t failed = 0;
  for (uint32_t started = 0; started < what.threads;) {
    std::vector<std::thread> wave;
    for (uint32_t index = 0; index < kThreadWave && started < what.threads; ++index, ++started) {
      try {
        wave.emplace_back(soak_thread_body, what.calls_each);
        CountEvent(ServerEvent::kThreadsStarted);
      } catch (const std::system_error&) {
        CountEvent(ServerEvent::kThreadsFailed);
        ++failed;
      }
    }
    for (std::thread& thread : wave) thread.join();
  }
  return Reply(request, failed == 0 ? 0 : uint32_t(EAGAIN), nullptr, 0);
}

// In the child, between fork and exec: its calls are the child's own.
[[gnu::noinline]] void soak_child_work(uint32_t round) {
  CountCall(KnownFunction::kChildWork);
  g_sink = g_sink + round;
}

[[gnu::noinline]] bool soak_handle_fork_exec(const Request& request) {
  CountCall(KnownFunction::kHandleForkExec);
  uint32_t failed = 0;
  for (uint32_t child = 0; child < request.header.argument; ++child) {
    pid_t pid = fork();
    if (pid == 0) {
      for (uint32_t round = 0; round < 3; ++round) soak_child_work(round);
      execl("/bin/true", "true", static_cast<char*>(nullptr));
      _exit(127);
    }
    if (pid < 0) {
      ++failed;
      continue;
    }
    CountEvent(ServerEvent::kForks);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      CountEvent(ServerEvent::kChildrenFailed);
      ++failed;
    }
  }
  return Reply(request, failed == 0 ? 0 : uint32_t(ECHILD), nullptr, 0);
}

void soak_serve_connection(int fd, uint32_t kind) {
  CountCall(KnownFunction::kServeConnection);
  std::vector<uint8_t> buffer;
  for (;;) {
    Request request{static_cast<CountedKind>(kind), fd, {}};
    if (!ReadFull(request.kind, fd, &request.header, sizeof request.header)) break;
    if (request.header.magic != kRequestMagic || request.header.length > kMaxPayloadBytes) break;
    bool served = false;
    switch (static_cast<RequestType>(request.header.type)) {
      case RequestType::kEcho: served = soak_handle_echo(request, buffer); break;
      case RequestType::kStore: served = soak_handle_store(request, buffer); break;
      case RequestType::kLoad: served = soak_handle_load(request, buffer); break;
      case RequestType::kSync: served = soak_handle_sync(request); break;
      case RequestType::kThreads: served = soak_handle_threads(request); break;
      case RequestType::kForkExec: served = soak_handle_fork_exec(request); break;
    }
    if (!served) break;
  }
  close(fd);
}

void soak_on_signal(int signal_number) {
  int saved_errno = errno;
  CountCall(KnownFunction::kOnSignal);
  CountEvent(ServerEvent::kSignalsHandled);
  uint8_t byte = uint8_t(signal_number);
  if (CountedWrite(CountedKind::kPipe, g_signal_pipe, &byte, 1) != 1) CountEvent(ServerEvent::kSignalBytesLost);
  errno = saved_errno;
}

void soak_signal_seen(int signal_number) {
  CountCall(KnownFunction::kSignalSeen);
  g_sink = g_sink + uint64_t(signal_number);
}

}  // extern "C"
