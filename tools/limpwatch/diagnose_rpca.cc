#include "diagnose_rpca.h"

#include <map>

#include "commands.h"
#include "format.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "limpwatch/analyzer/rpca_detector.h"
#include "output.h"
#include "recordings.h"

namespace limpwatch::cli {
namespace {

constexpr size_t kRankedShown = 10;

std::string StepLine(const analyzer::RpcaStep& step, const analyzer::NameBook& names) {
  std::string line = "tick " + std::to_string(step.index) + ": " + std::to_string(step.servers) + " servers, " +
                     std::to_string(step.columns) + " functions, rank " + std::to_string(step.rank);
  for (const std::string& server : step.indicted) line += ", indicts " + server;
  for (const auto& [server, functions] : step.votes) {
    line += "; " + server + " slow in";
    for (uint32_t key : functions) line += " " + names.NameOfKey(key);
  }
  return line + "\n";
}

}  // namespace

int DiagnoseRpca(const RpcaCommand& command) {
  std::vector<std::string> problems;
  analyzer::ResourceManifest manifest;
  if (command.manifest != nullptr && !manifest.Load(*command.manifest, &problems)) {
    return Fail(kExitFailure, "manifest '" + *command.manifest + "': cannot read");
  }
  LoadedRun run;
  std::string error;
  if (!LoadRun(command.paths, &run, &error)) return Fail(kExitFailure, error);
  if (run.from_csv) return Fail(kExitUsage, "--rpca reads recordings, not CSV");
  for (const std::string& problem : run.problems) problems.push_back(problem);
  for (const std::string& problem : problems) Warn(problem);
  analyzer::AnalyzerConfig config = command.config;
  config.tick_ms = run.tick_ms;

  analyzer::RpcaReplay replay = analyzer::ReplayRpca(config, run.ticks, manifest, run.names);
  if (command.steps) {
    for (const analyzer::RpcaStep& step : replay.steps) WriteOut(StepLine(step, run.names));
  }
  for (const analyzer::Alarm& alarm : replay.alarms) {
    WriteOut((command.json ? analyzer::AlarmToJson(alarm) : analyzer::AlarmToLogLine(alarm)) + "\n");
  }
  if (command.json) return FinishOutput(kExitOk);
  std::map<std::string, size_t> indicted_steps;
  for (const analyzer::RpcaStep& step : replay.steps) {
    for (const std::string& server : step.indicted) ++indicted_steps[server];
  }
  std::string summary = "\nfunctions most often anomalous (CloudDiag's ranking: steps anomalous, of them naming one server):\n";
  for (size_t i = 0; i < replay.ranking.size() && i < kRankedShown; ++i) {
    const analyzer::RankedFunction& ranked = replay.ranking[i];
    summary += "  " + std::to_string(ranked.times_anomalous) + " / " + std::to_string(ranked.times_voting) + "  " +
               ranked.name + "\n";
  }
  if (replay.ranking.empty()) summary += "  none\n";
  summary += std::to_string(replay.steps.size()) + " steps of " + std::to_string(run.ticks.size()) +
             " servers analyzed (rpca, no training), " + std::to_string(replay.alarms.size()) + " alarm(s)";
  for (const auto& [server, count] : indicted_steps) {
    summary += "; " + server + " indicted in " + std::to_string(count) + " step(s)";
  }
  WriteOut(summary + "\n");
  return FinishOutput(kExitOk);
}

}  // namespace limpwatch::cli
