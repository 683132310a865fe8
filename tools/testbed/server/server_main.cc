// limpwatch-testbed-server: one combined I/O and metadata server of the
// test-bed file system, built with -finstrument-functions and linked with
// liblimpwatch.so.
//
//   limpwatch-testbed-server --config FS.CONF --alias server0 [--listen-fd N]
//
// With --listen-fd the server takes over a socket already listening on its
// port (the launcher's, so that the port is never free between its choice and
// the server's start); without it, it binds the port itself.
//
// Threads: the poll thread (bmi), WorkerThreads request workers (job),
// StorageThreads storage threads (trove), and this main thread, which waits
// for SIGTERM / SIGINT and then shuts the layers down in order so the process
// exits normally (and liblimpwatch removes or keeps its segment as asked).
// SIGUSR1 makes it read the slow-path fault's control file again
// (slow_path_switch.h).
// Prints one JSON line {"event":"ready",...} on stdout once it accepts
// requests.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "common/command_line.h"
#include "common/json_line.h"
#include "common/server_config.h"
#include "common/socket_util.h"
#include "server/bmi_poll_loop.h"
#include "server/bstream_store.h"
#include "server/job_queue.h"
#include "server/keyval_store.h"
#include "server/object_space.h"
#include "server/request_state_machine.h"
#include "server/server_context.h"
#include "server/server_log.h"
#include "server/slow_path_switch.h"
#include "server/storage_pool.h"

namespace limpwatch::testbed {
namespace {

struct ServerArguments {
  std::string config_path;
  std::string alias;
  int listen_fd = -1;
};

constexpr const char* kUsage = "usage: limpwatch-testbed-server --config FS.CONF --alias NAME [--listen-fd N]\n";

void PrintUsage() { std::fputs(kUsage, stderr); }

bool ParseArguments(int argc, char** argv, ServerArguments* arguments) {
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if ((flag == "--config" || flag == "--alias") && i + 1 < argc) {
      (flag == "--config" ? arguments->config_path : arguments->alias) = argv[++i];
    } else if (flag == "--listen-fd" && i + 1 < argc) {
      char* end = nullptr;
      long fd = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || fd < 3 || fd > 1 << 20) return false;
      arguments->listen_fd = static_cast<int>(fd);
    } else {
      return false;
    }
  }
  return !arguments->config_path.empty() && !arguments->alias.empty();
}

// Blocks the stop signals and the slow-path switch's SIGUSR1 in every thread
// (the threads created later inherit the mask); the main thread then takes
// them with sigwait.
sigset_t BlockStopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return stop_signals;
}

// The inherited socket must be a TCP socket listening on the configured port.
int AdoptListeningSocket(int fd, uint16_t port, std::string* error) {
  int listening = 0;
  socklen_t length = sizeof listening;
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) != 0 || listening == 0) {
    *error = "--listen-fd " + std::to_string(fd) + " is not a listening socket";
    return -1;
  }
  if (LocalPort(fd) != port) {
    *error = "--listen-fd " + std::to_string(fd) + " listens on port " + std::to_string(LocalPort(fd)) +
             ", not the configured " + std::to_string(port);
    return -1;
  }
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  return fd;
}

int RunServer(const ServerArguments& arguments) {
  sigset_t stop_signals = BlockStopSignals();
  TestbedConfig config;
  std::string error;
  if (!LoadConfigFile(arguments.config_path, &config, &error)) {
    std::fprintf(stderr, "limpwatch-testbed-server: %s\n", error.c_str());
    return 2;
  }
  int index = config.FindServer(arguments.alias);
  if (index < 0) {
    std::fprintf(stderr, "limpwatch-testbed-server: no alias %s in %s\n", arguments.alias.c_str(),
                 arguments.config_path.c_str());
    return 2;
  }
  const ServerAlias& self = config.servers[static_cast<size_t>(index)];
  SetLogName(self.name);
  if (mkdir(self.storage_space.c_str(), 0755) != 0 && errno != EEXIST) {
    LogLine("cannot create storage space " + self.storage_space + ": " + strerror(errno));
    return 1;
  }

  trove::BstreamStore bstreams;
  trove::KeyvalStore keyval;
  if (!bstreams.Open(self.storage_space, config.direct_io, &error) ||
      !keyval.Open(self.storage_space, config.sync_metadata, &error)) {
    LogLine("storage: " + error);
    return 1;
  }
  trove::ObjectSpace objects(static_cast<uint32_t>(index), &keyval, &bstreams);
  if (!objects.Load(&error)) {
    LogLine("storage: " + error);
    return 1;
  }
  int listen_fd = arguments.listen_fd >= 0 ? AdoptListeningSocket(arguments.listen_fd, self.port, &error)
                                           : ListenTcp(self.host, self.port, &error);
  if (listen_fd < 0) {
    LogLine("bmi: " + error);
    return 1;
  }

  trove::StoragePool storage(&bstreams);
  job::JobQueue jobs;
  SlowPathSwitch slow_path(self.storage_space);
  ServerContext context;
  context.server_index = static_cast<uint32_t>(index);
  context.server_count = static_cast<uint32_t>(config.servers.size());
  context.flow_settings.buffer_size = config.flow_buffer_size;
  context.flow_settings.buffers_per_flow = config.flow_buffers_per_flow;
  context.bstreams = &bstreams;
  context.keyval = &keyval;
  context.objects = &objects;
  context.storage = &storage;
  context.jobs = &jobs;
  context.slow_path = &slow_path;

  bmi::PollLoop poll_loop;
  auto on_request = [&context](const std::shared_ptr<bmi::Connection>& connection, const FrameHeader& header,
                               std::vector<uint8_t> payload) {
    context.jobs->Post(
        std::make_shared<request::RequestStateMachine>(&context, connection, header, std::move(payload)));
  };
  if (!poll_loop.Open(listen_fd, on_request, &error)) {
    LogLine("bmi: " + error);
    return 1;
  }
  storage.Start(config.storage_threads);
  jobs.StartWorkers(config.worker_threads);
  std::thread poll_thread([&poll_loop] { poll_loop.Run(); });

  EmitJsonLine(JsonLine()
                   .Add("event", "ready")
                   .Add("alias", self.name)
                   .Add("index", index)
                   .Add("pid", static_cast<int64_t>(getpid()))
                   .Add("address", self.host + ":" + std::to_string(self.port))
                   .Add("direct_io", bstreams.direct_io())
                   .Add("keyval_entries", static_cast<uint64_t>(keyval.size())));
  LogLine("serving " + self.host + ":" + std::to_string(self.port) + " from " + self.storage_space +
          (bstreams.direct_io() ? " (O_DIRECT)" : " (buffered)"));

  int signal_number = 0;
  while (sigwait(&stop_signals, &signal_number) == 0 && signal_number == SIGUSR1) slow_path.Reload();
  LogLine(std::string("stopping on ") + strsignal(signal_number));
  // Network first (no new requests; open flows see their connection close),
  // then the workers finish what is queued, then the disk threads.
  poll_loop.Stop();
  poll_thread.join();
  jobs.Shutdown();
  storage.Shutdown();
  LogLine("stopped");
  return 0;
}

}  // namespace
}  // namespace limpwatch::testbed

int main(int argc, char** argv) {
  if (limpwatch::testbed::AsksForHelp(argc, argv)) return limpwatch::testbed::AnswerHelp(limpwatch::testbed::kUsage);
  limpwatch::testbed::ServerArguments arguments;
  if (!limpwatch::testbed::ParseArguments(argc, argv, &arguments)) {
    limpwatch::testbed::PrintUsage();
    return 2;
  }
  return limpwatch::testbed::RunServer(arguments);
}
