// `limpwatch analyze NAME`: the analyzer of a server, run beside it in a
// process of its own, on the server's live segment (read only: its alarms go
// to stdout and LIMPWATCH_ALARMS, not to the segment's ring).
#include <signal.h>
#include <time.h>


#include "args.h"
#include "commands.h"
#include "limpwatch/analyzer/analyzer_loop.h"
#include "limpwatch/analyzer/peer_table.h"
#include "limpwatch/analyzer/transport_exchange.h"
#include "limpwatch/shm/segment.h"
#include "output.h"
#include "stop_signals.h"
#include "usage.h"

namespace limpwatch::cli {
namespace {

constexpr OptionSpec kAnalyzeOptions[] = {
    {"--ticks", "-n", true},
    {"--help", "-h", false},
};

}  // namespace

int RunAnalyze(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  std::string error;
  if (!ParseArgs(args, kAnalyzeOptions, &parsed, &error)) return UsageError("analyze", error);
  if (parsed.Has("--help")) {
    WriteOut(CommandHelp("analyze"));
    return FinishOutput(kExitOk);
  }
  if (parsed.positional.size() != 1) return UsageError("analyze", "expected one segment NAME");
  uint64_t max_ticks = 0;
  if (const std::string* ticks = parsed.Value("--ticks"); ticks && !ParseUnsigned(*ticks, &max_ticks)) {
    return UsageError("analyze", "--ticks takes a whole number");
  }
  std::optional<std::string> object = shm::ResolveSegment(parsed.positional[0], &error);
  if (!object) return Fail(kExitFailure, error);
  std::unique_ptr<shm::SegmentReader> reader = shm::SegmentReader::Open(*object, &error);
  if (!reader) return Fail(kExitFailure, error);
  std::string node = reader->header().name[0] ? reader->header().name : *object;

  auto log = [](const std::string& line) {
    WriteOut(line + "\n");
    FlushOut();
  };
  analyzer::AnalyzerSetup setup = analyzer::AnalyzerSetupFromEnvironment(node, log);
  std::vector<std::string> problems;
  setup.exchange = analyzer::MakeExchangeFromEnvironment(log, &problems);
  for (const std::string& problem : problems) Warn(problem);
  if (!setup.exchange) {
    Warn("no peers configured (LIMPWATCH_PEERS, LIMPWATCH_PEERS_FILE or LIMPWATCH_PVFS_CONFIG): nothing to compare "
         "with");
  }
  analyzer::AnalyzerLoop loop(std::move(setup));
  StopSignals stop;
  log("analyzing " + *object + " as " + node + " every " + std::to_string(loop.setup().config.tick_ms) + " ms");
  while (max_ticks == 0 || loop.ticks() < max_ticks) {
    uint64_t now = analyzer::RealtimeNowMs();
    if (stop.Sleep(double(loop.NextTickUnixMs(now) - now) / 1000.0)) break;
    if (shm::SegmentLiveness(reader->header()) != shm::Liveness::kLive) {
      log("the owner of " + *object + " is no longer running");
      break;
    }
    loop.Tick(reader->view(), *object, false);
  }
  return FinishOutput(kExitOk);
}

}  // namespace limpwatch::cli
