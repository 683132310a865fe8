// `limpwatch train FILES... -o THRESHOLDS`: what fault-free recordings teach.
// For the calibrated rule, which needs none of it: each metric's noise and
// the windows it was learnt over (a narrower start), and each server's usual
// profile ratios. For the seed rule: per-server, per-metric thresholds (seed
// 000: the smallest threshold that removes every anomaly, by binary search,
// doubled).
#include <algorithm>
#include <map>

#include "args.h"
#include "commands.h"
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

constexpr OptionSpec kTrainOptions[] = {
    {"--output", "-o", true},
    {"--manifest", "-m", true},
    {"--pooled", "", false},
    {"--help", "-h", false},
};

}  // namespace

int RunTrain(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  std::string error;
  if (!ParseArgs(args, kTrainOptions, &parsed, &error)) return UsageError("train", error);
  if (parsed.Has("--help")) {
    WriteOut(CommandHelp("train"));
    return FinishOutput(kExitOk);
  }
  if (parsed.positional.empty()) return UsageError("train", "missing recordings (FILES...)");
  const std::string* output = parsed.Value("--output");
  if (output == nullptr) return UsageError("train", "missing -o THRESHOLDS (where to write them)");

  std::vector<std::string> problems;
  analyzer::ResourceManifest manifest;
  if (const std::string* path = parsed.Value("--manifest")) {
    if (!manifest.Load(*path, &problems)) return Fail(kExitFailure, "manifest '" + *path + "': cannot read");
  }
  LoadedRun run;
  if (!LoadRun(parsed.positional, &run, &error)) return Fail(kExitFailure, error);
  for (const std::string& problem : run.problems) Warn(problem);
  std::vector<std::string> settings_problems;
  analyzer::AnalyzerConfig config = analyzer::ReadAnalyzerConfigFromEnvironment(&settings_problems);
  if (!settings_problems.empty()) return UsageError("train", settings_problems.front());
  for (const std::string& problem : problems) Warn(problem);
  config.tick_ms = run.tick_ms;
  if (run.from_csv) config.min_feature_time_ms = 0;

  // The seed rule's scores, then what the calibrated rule learns from the
  // same windows.
  ProgressBar progress("training");
  config.decision_rule = analyzer::DecisionRule::kSeed;
  analyzer::ReplayResult result =
      analyzer::ReplayCluster(config, run.ticks, {}, manifest, run.names, analyzer::WireRoundTrip,
                              [&progress](size_t done, size_t total) { progress.Update(done / 2, total); });
  config.decision_rule = analyzer::DecisionRule::kCalibrated;
  analyzer::ReplayResult calibrated =
      analyzer::ReplayCluster(config, run.ticks, {}, manifest, run.names, analyzer::WireRoundTrip,
                              [&progress](size_t done, size_t total) { progress.Update(total / 2 + done / 2, total); });
  progress.Finish();

  std::map<std::pair<std::string, analyzer::ComparedMetric>, std::vector<double>> scores;
  for (const analyzer::WindowResult& window : result.windows) {
    for (const analyzer::MetricScore& score : window.scores) {
      // A server's start-up never alarms, so it does not raise the bar either.
      if (analyzer::IsTrainedMetric(score.metric) && !score.warming_up) {
        scores[{score.server, score.metric}].push_back(score.score);
      }
    }
  }
  analyzer::Thresholds thresholds;
  std::map<analyzer::ComparedMetric, double> largest;
  bool pooled = parsed.Has("--pooled");
  for (const auto& [key, values] : scores) {
    double threshold = analyzer::TrainMetricThreshold(key.second, values);
    if (!pooled) thresholds.Set(key.first, key.second, threshold);
    largest[key.second] = std::max(largest[key.second], threshold);
  }
  // Servers absent from training get the most tolerant threshold seen; with
  // --pooled, every server does.
  for (const auto& [metric, threshold] : largest) thresholds.Set("*", metric, threshold);
  size_t spreads = 0;
  for (int index = 0; index < analyzer::kComparedMetricCount; ++index) {
    auto metric = static_cast<analyzer::ComparedMetric>(index);
    if (auto spread = calibrated.learnt.GetSpread(metric)) {
      thresholds.SetSpread(metric, *spread);
      ++spreads;
    }
  }
  for (const auto& [key, log_ratio] : calibrated.learnt.usual()) thresholds.SetUsual(key.first, key.second, log_ratio);
  if (!thresholds.Save(*output, &error)) return Fail(kExitFailure, error);
  WriteOut("trained " + std::to_string(scores.size()) + " thresholds (seed rule), " + std::to_string(spreads) +
           " noise spreads and " + std::to_string(calibrated.learnt.usual().size()) +
           " usual ratios (calibrated rule) over " + std::to_string(result.windows.size()) + " windows of " +
           std::to_string(run.ticks.size()) + " servers into " + *output + "\n");
  WriteOut(thresholds.Format());
  return FinishOutput(kExitOk);
}

}  // namespace limpwatch::cli
