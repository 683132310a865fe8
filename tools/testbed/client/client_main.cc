// limpwatch-testbed-client: the test-bed's client (traced like the servers).
//
//   limpwatch-testbed-client --config FS.CONF [--timeout-ms 10000] COMMAND [flags]
//
// Workloads (JSON lines, one progress line per second):
//   ddw       [--size-mib 256] [--record-kib K] [--stripe-kib K] [--seconds S] [--file NAME] [--keep]
//   ddr       (same flags; writes the file first when it does not exist)
//   iozonew   (same flags; write then rewrite, fsync after each)
//   iozoner   (same flags; read then reread)
//   postmark  [--files 200] [--transactions 500] [--min-size 512] [--max-size 16384] [--seed 1]
// Fault helpers:
//   probe --server I [--size-mib 256] [--small-files 200] [--seconds 1.5]
//   hog-write --server I [--streams 2] [--seconds S]
//   hog-read  --server I [--streams 2] [--seconds S]
// Files:
//   put LOCAL NAME [--server I | --one-server] [--stripe-kib K] | get NAME LOCAL | stat NAME | rm NAME
//   ping [--server I]
//
// SIGINT / SIGTERM stop a workload at the next request; it removes what it
// created and prints its done line, so the process exits normally.
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "client/file_system.h"
#include "client/workloads.h"
#include "common/command_line.h"
#include "common/json_line.h"
#include "common/server_config.h"

namespace limpwatch::testbed::client {
namespace {

std::atomic<bool> interrupted{false};

void OnStopSignal(int) { interrupted.store(true); }

void InstallStopHandlers() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

constexpr const char* kUsage =
    "usage: limpwatch-testbed-client --config FS.CONF [--timeout-ms MS] COMMAND [flags]\n"
    "commands: ddw ddr iozonew iozoner postmark probe hog-write hog-read put get stat rm ping\n"
    "see tools/testbed/README.md\n";

int Usage(const std::string& error) {
  std::fprintf(stderr, "limpwatch-testbed-client: %s\n%s", error.c_str(), kUsage);
  return 2;
}

bool ReadSettings(CommandLine* flags, WorkloadSettings* settings, std::string* error) {
  uint64_t size_mib = 0, record_kib = 0, stripe_kib = 0, server = 0;
  bool ok = flags->GetUint("size-mib", 0, 1, 1 << 20, &size_mib, error) &&
            flags->GetUint("record-kib", 0, 4, 1 << 20, &record_kib, error) &&
            flags->GetUint("stripe-kib", 0, 64, 4096, &stripe_kib, error) &&
            flags->GetDouble("seconds", 0, 0, 86400, &settings->seconds, error) &&
            flags->GetUint("files", settings->files, 1, 1000000, &settings->files, error) &&
            flags->GetUint("transactions", settings->transactions, 0, 100000000, &settings->transactions, error) &&
            flags->GetUint("min-size", settings->min_size, 1, 4 << 20, &settings->min_size, error) &&
            flags->GetUint("max-size", settings->max_size, 1, 4 << 20, &settings->max_size, error) &&
            flags->GetUint("seed", settings->seed, 0, UINT64_MAX, &settings->seed, error) &&
            flags->GetUint("server", 0, 0, 1023, &server, error) &&
            flags->GetUint("streams", settings->streams, 1, 64, &settings->streams, error) &&
            flags->GetUint("small-files", settings->small_files, 0, 100000, &settings->small_files, error);
  if (!ok) return false;
  if (stripe_kib % 4 != 0) {
    *error = "--stripe-kib must be a multiple of 4";
    return false;
  }
  settings->size_bytes = size_mib << 20;
  settings->record_bytes = record_kib << 10;
  settings->stripe_size = static_cast<uint32_t>(stripe_kib << 10);
  settings->server = flags->Has("server") ? static_cast<int64_t>(server) : -1;
  settings->file = flags->GetString("file", "");
  settings->keep = flags->Has("keep");
  settings->one_server = flags->Has("one-server");
  return true;
}

uint64_t DefaultSizeMib(const std::string& command) {
  if (command == "probe") return 256;
  return 256;  // ddw / ddr / iozone: seconds on this machine's disk
}

int Main(int argc, char** argv) {
  if (AsksForHelp(argc, argv)) return AnswerHelp(kUsage);
  InstallStopHandlers();
  CommandLine flags;
  std::string error;
  if (!flags.Parse(argc, argv, 1, {"keep", "one-server"}, &error)) return Usage(error);
  std::string config_path = flags.GetString("config", "");
  uint64_t timeout_ms = 0;
  if (!flags.GetUint("timeout-ms", 10000, 100, 3600000, &timeout_ms, &error)) return Usage(error);
  if (config_path.empty()) return Usage("--config is required");
  if (flags.positional().empty()) return Usage("no command");
  std::string command = flags.positional()[0];
  WorkloadSettings settings;
  if (!ReadSettings(&flags, &settings, &error)) return Usage(error);
  settings.arguments.assign(flags.positional().begin() + 1, flags.positional().end());
  if (settings.size_bytes == 0) settings.size_bytes = DefaultSizeMib(command) << 20;
  if (command == "probe" && !flags.Has("seconds")) settings.seconds = 1.5;
  if (command == "probe" && !flags.Has("small-files")) settings.small_files = 200;
  if (std::string unread = flags.ReportUnread(command); !unread.empty()) return Usage(unread);

  TestbedConfig config;
  if (!LoadConfigFile(config_path, &config, &error)) return Usage(error);
  TestbedFileSystem fs(config, static_cast<int>(timeout_ms), &interrupted);
  WorkloadContext context{&fs, &interrupted, static_cast<int>(timeout_ms)};
  static const std::map<std::string, std::function<int(const WorkloadContext&, const WorkloadSettings&)>> commands = {
      {"ddw", RunDdw},
      {"ddr", RunDdr},
      {"iozonew", RunIozoneWrite},
      {"iozoner", RunIozoneRead},
      {"postmark", RunPostmark},
      {"probe", RunProbe},
      {"hog-write", RunWriteNetworkHog},
      {"hog-read", RunReadNetworkHog},
      {"put", RunPut},
      {"get", RunGet},
      {"stat", RunStat},
      {"rm", RunRemove},
      {"ping", RunPing},
  };
  auto found = commands.find(command);
  if (found == commands.end()) return Usage("unknown command " + command);
  return found->second(context, settings);
}

}  // namespace
}  // namespace limpwatch::testbed::client

int main(int argc, char** argv) { return limpwatch::testbed::client::Main(argc, argv); }
