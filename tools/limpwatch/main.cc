// limpwatch: the command-line reader of limpwatch segments.
//
// Dispatches to one sub-command per file. The tool only ever reads segments
// (clean unlinks them); it never writes into one, so it is safe to point at a
// production server.
#include <signal.h>

#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "output.h"
#include "usage.h"

#ifndef LIMPWATCH_VERSION
#define LIMPWATCH_VERSION "unknown"
#endif

namespace limpwatch::cli {
namespace {

struct Command {
  std::string_view name;
  int (*run)(const std::vector<std::string>& args);
};

constexpr Command kCommands[] = {
    {"list", RunList},
    {"top", RunTop},
    {"dump", RunDump},
    {"clean", RunClean},
    {"alarms", RunAlarms},
    {"analyze", RunAnalyze},
    {"train", RunTrain},
    {"diagnose", RunDiagnose},
    {"report", RunReport},
    {"export", RunExport},
    {"compare", RunCompare},
    {"flows", RunFlows},
    {"select", RunSelect},
    {"serve", RunServe},
};

int RunHelp(const std::vector<std::string>& args) {
  if (args.empty()) {
    WriteOut(FullHelp());
    return FinishOutput(kExitOk);
  }
  std::string help = CommandHelp(args[0]);
  if (help.empty()) return Fail(kExitUsage, "help: unknown command '" + args[0] + "' (see 'limpwatch help')");
  WriteOut(help);
  return FinishOutput(kExitOk);
}

int RunVersion() {
  WriteOut("limpwatch " LIMPWATCH_VERSION "\n");
  return FinishOutput(kExitOk);
}

int Main(const std::vector<std::string>& words) {
  if (words.empty()) return Fail(kExitUsage, "no command given: try list, top, dump, alarms, analyze, train, diagnose, report, export, compare, serve, clean or help");
  const std::string& command = words[0];
  std::vector<std::string> args(words.begin() + 1, words.end());
  if (command == "help" || command == "--help" || command == "-h") return RunHelp(args);
  if (command == "version" || command == "--version") return RunVersion();
  for (const auto& candidate : kCommands) {
    if (candidate.name == command) return candidate.run(args);
  }
  return Fail(kExitUsage, "unknown command '" + command + "' (see 'limpwatch help')");
}

}  // namespace
}  // namespace limpwatch::cli

int main(int argc, char** argv) {
  // A closed pipe shows up as EPIPE from write() and ends the command quietly
  // (see FinishOutput) instead of killing it mid-line.
  signal(SIGPIPE, SIG_IGN);
  try {
    return limpwatch::cli::Main(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    // Nothing is expected to throw; if something does, still one line, no abort.
    return limpwatch::cli::Fail(limpwatch::cli::kExitFailure, std::string("internal error: ") + e.what());
  }
}
