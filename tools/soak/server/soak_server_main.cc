// limpwatch-soak-server: the traced server of the soak (tools/soak/README
// in docs/soak.md). It serves the soak driver's requests on a TCP port and
// a Unix socket, one thread per connection, keeps a storage file, runs
// short threads and forks children that exec when asked, handles SIGUSR1,
// SIGUSR2 and SIGHUP through a self-pipe, and stops on SIGTERM: it then
// joins every thread and writes its own tally (server_tally.h) to stdout.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <list>
#include <memory>
#include <string>
#include <thread>

#include "common/command_line.h"
#include "server/counted_io.h"
#include "server/request_handlers.h"
#include "server/server_tally.h"

namespace limpwatch::soak {
namespace {

constexpr char kUsage[] =
    "usage: limpwatch-soak-server --tcp-port PORT --unix-socket PATH --storage FILE\n"
    "  The traced server of limpwatch-soak: serves its requests on 127.0.0.1:PORT and PATH,\n"
    "  keeps FILE (64 MiB) as its storage, handles SIGUSR1, SIGUSR2 and SIGHUP, and on\n"
    "  SIGTERM joins its threads, writes its own tally to stdout and exits 0.\n";
constexpr uint64_t kStorageBytes = 64ull << 20;

struct Connection {
  std::thread thread;
  std::atomic<bool> done{false};
  int fd = -1;
};

int Fail(const std::string& message) {
  std::fprintf(stderr, "limpwatch-soak-server: %s\n", message.c_str());
  return 1;
}

int ListenTcp(uint16_t port, std::string* error) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || listen(fd, 64) != 0) {
    *error = "cannot listen on 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(errno);
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

int ListenUnix(const std::string& path, std::string* error) {
  sockaddr_un address{};
  if (path.size() >= sizeof address.sun_path) {
    *error = "unix socket path too long: " + path;
    return -1;
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  unlink(path.c_str());
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || listen(fd, 64) != 0) {
    *error = "cannot listen on " + path + ": " + std::strerror(errno);
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

// SIGHUP without SA_RESTART: the server's blocking calls see EINTR too.
bool InstallSignalHandlers(std::string* error) {
  struct sigaction ignore{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, nullptr);
  for (int number : {SIGUSR1, SIGUSR2, SIGHUP, SIGTERM}) {
    struct sigaction action{};
    action.sa_handler = soak_on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = number == SIGHUP ? 0 : SA_RESTART;
    if (sigaction(number, &action, nullptr) != 0) {
      *error = std::string("sigaction: ") + std::strerror(errno);
      return false;
    }
  }
  return true;
}

void Reap(std::list<std::unique_ptr<Connection>>* connections, bool all) {
  for (auto it = connections->begin(); it != connections->end();) {
    if (!all && !(*it)->done.load(std::memory_order_acquire)) {
      ++it;
      continue;
    }
    (*it)->thread.join();
    it = connections->erase(it);
  }
}

void Accept(int listener, CountedKind kind, std::list<std::unique_ptr<Connection>>* connections) {
  int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  CountEvent(ServerEvent::kConnections);
  auto connection = std::make_unique<Connection>();
  connection->fd = fd;
  Connection* raw = connection.get();
  connection->thread = std::thread([raw, kind] {
    soak_serve_connection(raw->fd, static_cast<uint32_t>(kind));
    raw->done.store(true, std::memory_order_release);
  });
  connections->push_back(std::move(connection));
}

// Reads the self-pipe; true once SIGTERM was seen.
bool DrainSignals(int read_fd) {
  bool stop = false;
  uint8_t bytes[64];
  for (;;) {
    ssize_t got = CountedRead(CountedKind::kPipe, read_fd, bytes, sizeof bytes);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    for (ssize_t index = 0; index < got; ++index) {
      if (bytes[index] == SIGTERM) stop = true;
      soak_signal_seen(bytes[index]);
    }
  }
  return stop;
}

int Serve(int argc, char** argv) {
  testbed::CommandLine flags;
  std::string error;
  uint64_t port = 0;
  if (!flags.Parse(argc, argv, 1, {}, &error) || !flags.GetUint("tcp-port", 0, 1, 65535, &port, &error)) {
    std::fprintf(stderr, "limpwatch-soak-server: %s\n%s", error.c_str(), kUsage);
    return 2;
  }
  std::string unix_path = flags.GetString("unix-socket", "");
  std::string storage_path = flags.GetString("storage", "");
  if (std::string unread = flags.ReportUnread("limpwatch-soak-server"); !unread.empty() || unix_path.empty() ||
                                                                       storage_path.empty()) {
    std::fprintf(stderr, "limpwatch-soak-server: %s\n%s",
                 unread.empty() ? "--unix-socket and --storage are required" : unread.c_str(), kUsage);
    return 2;
  }

  int storage = open(storage_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (storage < 0 || ftruncate(storage, off_t(kStorageBytes)) != 0) {
    return Fail("cannot open the storage file " + storage_path + ": " + std::strerror(errno));
  }
  SetStorage({storage, kStorageBytes});
  int signal_pipe[2];
  if (pipe2(signal_pipe, O_NONBLOCK | O_CLOEXEC) != 0) return Fail(std::string("pipe2: ") + std::strerror(errno));
  SetSignalPipe(signal_pipe[1]);
  if (!InstallSignalHandlers(&error)) return Fail(error);
  int tcp = ListenTcp(uint16_t(port), &error);
  if (tcp < 0) return Fail(error);
  int unix_listener = ListenUnix(unix_path, &error);
  if (unix_listener < 0) return Fail(error);

  std::list<std::unique_ptr<Connection>> connections;
  bool stop = false;
  while (!stop) {
    pollfd watched[3] = {{tcp, POLLIN, 0}, {unix_listener, POLLIN, 0}, {signal_pipe[0], POLLIN, 0}};
    int ready = poll(watched, 3, 200);
    if (ready > 0) {
      if (watched[0].revents & POLLIN) Accept(tcp, CountedKind::kTcp, &connections);
      if (watched[1].revents & POLLIN) Accept(unix_listener, CountedKind::kUnix, &connections);
      if (watched[2].revents & POLLIN) stop = DrainSignals(signal_pipe[0]);
    }
    Reap(&connections, false);
  }
  close(tcp);
  close(unix_listener);
  unlink(unix_path.c_str());
  for (const auto& connection : connections) {
    if (!connection->done.load(std::memory_order_acquire)) shutdown(connection->fd, SHUT_RDWR);
  }
  Reap(&connections, true);
  // Signals still arriving are ignored from here on: the tally is final.
  struct sigaction ignore{};
  ignore.sa_handler = SIG_IGN;
  for (int number : {SIGUSR1, SIGUSR2, SIGHUP, SIGTERM}) sigaction(number, &ignore, nullptr);
  DrainSignals(signal_pipe[0]);
  if (!WriteFinalTally(STDOUT_FILENO)) return Fail(std::string("cannot write the tally: ") + std::strerror(errno));
  return 0;
}

}  // namespace
}  // namespace limpwatch::soak

int main(int argc, char** argv) {
  if (limpwatch::testbed::AsksForHelp(argc, argv)) return limpwatch::testbed::AnswerHelp(limpwatch::soak::kUsage);
  return limpwatch::soak::Serve(argc, argv);
}
