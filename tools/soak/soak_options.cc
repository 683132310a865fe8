#include "soak_options.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "common/command_line.h"

namespace limpwatch::soak {
namespace {

constexpr char kUsage[] =
    "usage: limpwatch-soak [--minutes M | --seconds S] [--seed N] [--peers N] [--clients N]\n"
    "                      [--short-threads N] [--warm-up-seconds S] [--work-dir DIR] [--keep] [--verbose]\n"
    "                      [--server PATH] [--cli PATH]\n"
    "  Runs a traced server (limpwatch-soak-server, with its analyzer, a recording and an alarms file)\n"
    "  under a mixed load among peer servers for M minutes (default 30) while injecting faults at\n"
    "  random: peers killed and restarted; peer datagrams dropped, duplicated, reordered, delayed,\n"
    "  replayed and forged; the recording's disk filled; the alarms file made unwritable; short\n"
    "  threads churned; children forked that exec; signals delivered; readers killed mid-read.\n"
    "  Then it checks that the server answered every request, that its counters equal what the\n"
    "  workload did, that its RSS and descriptors stayed flat, that no limpwatch thread died and that\n"
    "  every refused input was counted, prints the figures and exits 0 (all held) or 1.\n"
    "  The mounts need root; without it those faults are skipped and the summary says so.\n"
    "  --seed N replays a run's choices (its seed is printed at start).\n"
    "  --server and --cli default to the programs built beside this one.\n";

}  // namespace

bool ParseSoakOptions(int argc, char** argv, SoakOptions* options, int* exit_status) {
  if (testbed::AsksForHelp(argc, argv)) {
    *exit_status = testbed::AnswerHelp(kUsage);
    return false;
  }
  testbed::CommandLine flags;
  std::string error;
  auto usage_error = [&](const std::string& message) {
    std::fprintf(stderr, "limpwatch-soak: %s\n%s", message.c_str(), kUsage);
    *exit_status = 2;
    return false;
  };
  if (!flags.Parse(argc, argv, 1, {"keep", "verbose"}, &error)) return usage_error(error);
  if (!flags.positional().empty()) return usage_error("unexpected argument '" + flags.positional().front() + "'");
  if (flags.Has("minutes") && flags.Has("seconds")) return usage_error("give --minutes or --seconds, not both");
  uint64_t minutes = 0;
  uint64_t peers = 0;
  uint64_t clients = 0;
  if (!flags.GetUint("minutes", 30, 1, 7 * 24 * 60, &minutes, &error) ||
      !flags.GetUint("seconds", minutes * 60, 30, 7 * 24 * 3600, &options->seconds, &error) ||
      !flags.GetUint("seed", 0, 1, UINT64_MAX, &options->seed, &error) ||
      !flags.GetUint("peers", 3, 1, 8, &peers, &error) || !flags.GetUint("clients", 4, 1, 32, &clients, &error) ||
      !flags.GetUint("short-threads", 0, 0, 10'000'000, &options->short_threads, &error) ||
      !flags.GetUint("warm-up-seconds", 0, 0, 24 * 3600, &options->warm_up_seconds, &error)) {
    return usage_error(error);
  }
  options->peers = uint32_t(peers);
  options->clients = uint32_t(clients);
  options->work_dir = flags.GetString("work-dir", "");
  options->server_path = flags.GetString("server", options->server_path);
  options->cli_path = flags.GetString("cli", options->cli_path);
  options->keep = flags.Has("keep");
  options->verbose = flags.Has("verbose");
  if (std::string unread = flags.ReportUnread("limpwatch-soak"); !unread.empty()) return usage_error(unread);
  if (options->warm_up_seconds == 0) options->warm_up_seconds = std::min<uint64_t>(options->seconds / 5, 300);
  if (options->warm_up_seconds >= options->seconds) {
    return usage_error("--warm-up-seconds must be shorter than the run");
  }
  if (options->short_threads == 0) options->short_threads = std::max<uint64_t>(500, 10000 * options->seconds / 1800);
  for (const std::string* program : {&options->server_path, &options->cli_path}) {
    if (access(program->c_str(), X_OK) != 0) return usage_error("cannot run '" + *program + "'");
  }
  return true;
}

}  // namespace limpwatch::soak
