// `limpwatch diagnose FILES...`: the online analysis, replayed over the
// recordings of several servers (or a CSV of per-peer time series).
#include <map>

#include "args.h"
#include "commands.h"
#include "format.h"
#include "limpwatch/analyzer/cluster_replay.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "limpwatch/analyzer/thresholds.h"
#include "limpwatch/analyzer/transport_exchange.h"
#include "output.h"
#include "progress_bar.h"
#include "recordings.h"
#include "usage.h"

namespace limpwatch::cli {
namespace {

constexpr OptionSpec kDiagnoseOptions[] = {
    {"--thresholds", "-t", true},
    {"--manifest", "-m", true},
    {"--json", "", false},
    {"--windows", "", false},
    {"--scores", "", false},
    {"--help", "-h", false},
};

}  // namespace

int RunDiagnose(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  std::string error;
  if (!ParseArgs(args, kDiagnoseOptions, &parsed, &error)) return UsageError("diagnose", error);
  if (parsed.Has("--help")) {
    WriteOut(CommandHelp("diagnose"));
    return FinishOutput(kExitOk);
  }
  if (parsed.positional.empty()) return UsageError("diagnose", "missing recordings or CSV files (FILES...)");

  std::vector<std::string> problems;
  analyzer::Thresholds thresholds;
  if (const std::string* path = parsed.Value("--thresholds")) {
    if (!thresholds.Load(*path, &problems)) return Fail(kExitFailure, "thresholds '" + *path + "': cannot read");
  }
  analyzer::ResourceManifest manifest;
  if (const std::string* path = parsed.Value("--manifest")) {
    if (!manifest.Load(*path, &problems)) return Fail(kExitFailure, "manifest '" + *path + "': cannot read");
  }
  LoadedRun run;
  if (!LoadRun(parsed.positional, &run, &error)) return Fail(kExitFailure, error);
  for (const std::string& problem : run.problems) problems.push_back(problem);
  analyzer::AnalyzerConfig config = analyzer::ReadAnalyzerConfigFromEnvironment(&problems);
  for (const std::string& problem : problems) Warn(problem);
  config.tick_ms = run.tick_ms;
  if (run.from_csv) config.min_feature_time_ms = 0;  // every CSV column is a feature

  ProgressBar progress("diagnosing");
  analyzer::ReplayResult result =
      analyzer::ReplayCluster(config, run.ticks, thresholds, manifest, run.names, analyzer::WireRoundTrip,
                              [&progress](size_t done, size_t total) { progress.Update(done, total); });
  progress.Finish();

  bool json = parsed.Has("--json");
  if (parsed.Has("--windows") || parsed.Has("--scores")) {
    for (const analyzer::WindowResult& window : result.windows) {
      std::string line = "window " + std::to_string(window.window) + ": " + std::to_string(window.servers.size()) +
                         " servers";
      for (const std::string& server : window.indicted) line += ", indicts " + server;
      // Why: every score over its threshold (all of them with --scores),
      // indicting or not (k of 2k-1 decides).
      bool every_score = parsed.Has("--scores");
      for (const analyzer::MetricScore& score : window.scores) {
        if (!score.anomalous && !every_score) continue;
        line += "; " + score.server + " " + analyzer::ComparedMetricName(score.metric) + " " +
                FormatFixed(score.score, 2) + (score.anomalous ? " > " : " <= ") +
                FormatFixed(score.threshold, 2) + (score.warming_up ? " (warming up)" : "");
      }
      WriteOut(line + "\n");
    }
  }
  for (const analyzer::Alarm& alarm : result.alarms) {
    WriteOut((json ? analyzer::AlarmToJson(alarm) : analyzer::AlarmToLogLine(alarm)) + "\n");
  }
  if (!json) {
    std::map<std::string, size_t> indicted_windows;
    for (const auto& window : result.windows) {
      for (const auto& server : window.indicted) ++indicted_windows[server];
    }
    std::string summary = std::to_string(result.windows.size()) + " windows of " + std::to_string(run.ticks.size()) +
                          " servers analyzed, " + std::to_string(result.alarms.size()) + " alarm(s)";
    for (const auto& [server, count] : indicted_windows) {
      summary += "; " + server + " indicted in " + std::to_string(count) + " window(s)";
    }
    WriteOut(summary + "\n");
  }
  return FinishOutput(kExitOk);
}

}  // namespace limpwatch::cli
