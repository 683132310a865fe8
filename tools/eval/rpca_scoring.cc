#include "rpca_scoring.h"

#include <algorithm>
#include <map>

#include "limpwatch/analyzer/resource_manifest.h"
#include "limpwatch/analyzer/rpca_detector.h"
#include "limpwatch/analyzer/trace_file.h"
#include "list_files.h"

namespace limpwatch::eval {

std::vector<Experiment> RpcaExperiments(const std::vector<Experiment>& experiments, const std::string& out,
                                        const std::string& manifest_path, std::vector<std::string>* problems) {
  analyzer::ResourceManifest manifest;
  if (!manifest_path.empty()) manifest.Load(manifest_path, problems);
  analyzer::AnalyzerConfig config;
  std::vector<Experiment> scored;
  for (size_t index = 0; index < experiments.size(); ++index) {
    Experiment experiment = experiments[index];
    experiment.alarms.clear();
    std::map<std::string, std::vector<analyzer::TickRecord>> ticks;
    analyzer::NameBook names;
    std::vector<std::string> recordings = ListFiles(out + "/experiment-" + std::to_string(index), ".lwtrace");
    std::sort(recordings.begin(), recordings.end());
    for (const std::string& path : recordings) {
      analyzer::Trace trace;
      std::string error;
      if (!analyzer::ReadTrace(path, &trace, &error)) {
        problems->push_back(error);
        continue;
      }
      config.tick_ms = trace.tick_ms;
      names.Add(trace.names);
      auto& series = ticks[trace.node];
      series.insert(series.end(), trace.ticks.begin(), trace.ticks.end());
    }
    analyzer::RpcaReplay replay = analyzer::ReplayRpca(config, ticks, manifest, names);
    for (const analyzer::Alarm& alarm : replay.alarms) {
      ObservedAlarm observed;
      observed.kind = analyzer::AlarmKindName(alarm.kind);
      observed.reporter = alarm.reporter;
      observed.server = alarm.server;
      observed.metrics = alarm.metrics;
      observed.resource = analyzer::ResourceName(alarm.resource);
      observed.time_unix_ms = alarm.time_unix_ms;
      experiment.alarms.push_back(std::move(observed));
    }
    scored.push_back(std::move(experiment));
  }
  return scored;
}

}  // namespace limpwatch::eval
