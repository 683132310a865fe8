// limpwatch-testbed: starts, drives and stops the test-bed, and injects and
// clears faults. Every command prints JSON lines on stdout.
//
//   limpwatch-testbed start --dir D [--servers 4] [--base-port P|0] [--name-prefix server]
//                           [--flow-buffer-kib 1024] [--flow-buffers 4] [--stripe-kib 1024]
//                           [--workers 4] [--storage-threads 2] [--buffered] [--no-sync-meta]
//                           [--keep] [--small-fs I:MIB] [--peer-source config|peers] [--foreground]
//                           [--server-program PATH] [--disk-images MIB] [--memory-groups]
//   limpwatch-testbed stop --dir D [--remove]
//   limpwatch-testbed status --dir D
//   limpwatch-testbed restart-server --dir D --server I
//   limpwatch-testbed run WORKLOAD --dir D [--clients K] [--keep-segments] [-- client flags]
//   limpwatch-testbed inject FAULT --dir D --server I [--for SECONDS] [--measure] [fault flags]
//   limpwatch-testbed clear [FAULT] --dir D [--server I] [--id N]
//   limpwatch-testbed clear-all [--dir D]
//   limpwatch-testbed faults
//   limpwatch-testbed probe --dir D --server I [--size-mib 256] [--small-files 200] [--seconds 1.5]
//
// Ctrl-C / SIGTERM: a command undoes what it set up before exiting (a
// foreground cluster stops its servers, `inject --for` clears its fault,
// `run` stops its clients).
#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "common/command_line.h"
#include "launcher/commands.h"
#include "launcher/stop_flag.h"

namespace limpwatch::testbed::launcher {
namespace {

constexpr const char* kUsage =
    "usage: limpwatch-testbed COMMAND [flags]\n"
    "commands: start stop status restart-server run inject clear clear-all faults probe\n"
    "see tools/testbed/README.md\n";

int Usage() {
  std::fputs(kUsage, stderr);
  return 2;
}

int Main(int argc, char** argv) {
  if (AsksForHelp(argc, argv)) return AnswerHelp(kUsage);
  InstallStopHandlers();
  CommandLine flags;
  std::string error;
  if (!flags.Parse(argc, argv, 1,
                   {"keep", "foreground", "buffered", "no-sync-meta", "remove", "measure", "keep-segments", "memory-groups"}, &error)) {
    std::fprintf(stderr, "limpwatch-testbed: %s\n", error.c_str());
    return Usage();
  }
  if (flags.positional().empty()) return Usage();
  static const std::map<std::string, std::function<int(CommandLine*)>> commands = {
      {"start", CommandStart},   {"stop", CommandStop},
      {"status", CommandStatus}, {"restart-server", CommandRestartServer},
      {"run", CommandRun},       {"inject", CommandInject},
      {"clear", CommandClear},   {"clear-all", CommandClearAll},
      {"faults", CommandFaults}, {"probe", CommandProbe},
  };
  auto command = commands.find(flags.positional()[0]);
  if (command == commands.end()) return Usage();
  return command->second(&flags);
}

}  // namespace
}  // namespace limpwatch::testbed::launcher

int main(int argc, char** argv) { return limpwatch::testbed::launcher::Main(argc, argv); }
