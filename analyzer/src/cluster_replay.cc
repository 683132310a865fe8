#include "limpwatch/analyzer/cluster_replay.h"

#include <algorithm>
#include <memory>

#include "limpwatch/shm/name_hash.h"

namespace limpwatch::analyzer {

ReplayResult ReplayCluster(const AnalyzerConfig& config, const std::map<std::string, std::vector<TickRecord>>& ticks,
                           const Thresholds& thresholds, const ResourceManifest& manifest, const NameBook& names,
                           const SummaryTransform& transform, const std::function<void(size_t, size_t)>& progress) {
  ReplayResult result;
  // Every server's ticks, merged in time order.
  struct Event {
    uint64_t tick;
    const std::string* server;
    const TickRecord* record;
  };
  std::vector<Event> events;
  for (const auto& [server, records] : ticks) {
    for (const auto& record : records) events.push_back({record.tick, &server, &record});
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.tick < b.tick; });

  // Each recording of a server after its first (two runs of one cluster,
  // replayed together) is a new start of that server: a new boot, with
  // windows and a warm-up of its own.
  std::map<std::string, std::unique_ptr<NodePipeline>> pipelines;
  std::map<std::string, uint64_t> boots;
  auto start_pipeline = [&](const std::string& server) {
    uint64_t boot_id = shm::FunctionNameHash(server) + boots[server]++;
    pipelines[server] = std::make_unique<NodePipeline>(config, boot_id);
  };
  for (const auto& [server, records] : ticks) start_pipeline(server);
  ClusterDiagnoser diagnoser(config, thresholds, manifest, &names, "offline");
  diagnoser.KeepVerdicts(true);

  // Online, the summaries of window w cross between servers within the tick
  // that completes w, and every server learns its peers' features before it
  // summarises w + 1. The replay does the same: after all servers' tick T,
  // every window that ends at T is exchanged and analyzed.
  std::map<uint64_t, std::vector<PeerSummary>> produced;
  auto flush = [&](uint64_t window) {
    auto found = produced.find(window);
    if (found == produced.end()) return;
    for (const PeerSummary& summary : found->second) {
      for (auto& [server, pipeline] : pipelines) {
        if (server != summary.node) pipeline->LearnFromPeer(summary);
      }
      diagnoser.Add(summary);
    }
    // The window's nominal end, as the online analyzer computes it.
    uint64_t window_end_ms = window * config.shift_ticks * uint64_t(config.tick_ms);
    for (Alarm& alarm : diagnoser.Analyze(window, window_end_ms)) result.alarms.push_back(std::move(alarm));
    result.summaries[window] = std::move(found->second);
    produced.erase(found);
  };

  for (size_t index = 0; index < events.size();) {
    uint64_t tick = events[index].tick;
    for (; index < events.size() && events[index].tick == tick; ++index) {
      const Event& event = events[index];
      if (event.record->starts_recording && event.record != &ticks.at(*event.server).front()) {
        start_pipeline(*event.server);
      }
      for (const PeerSummary& summary : pipelines[*event.server]->AddTick(*event.record)) {
        produced[summary.window].push_back(transform ? transform(summary) : summary);
      }
    }
    while (!produced.empty() && produced.begin()->first * config.shift_ticks <= tick + 1) flush(produced.begin()->first);
    if (progress) progress(index, events.size());
  }
  while (!produced.empty()) flush(produced.begin()->first);
  result.windows = diagnoser.results();
  if (const CalibratedDecision* decision = diagnoser.calibrated()) {
    result.verdicts = decision->Verdicts();
    for (int index = 0; index < kComparedMetricCount; ++index) {
      // The spread the servers' last windows show, learnt over every window
      // the replay compared them in (each restart of a server starts its
      // history again, not the cluster's knowledge of its noise).
      const MetricNoise& noise = decision->noise(size_t(index));
      double windows = 0;
      for (const ServerVerdict& verdict : result.verdicts) windows += double(verdict.metrics[size_t(index)].compared);
      if (noise.measured_windows() > 0 && windows > 0) {
        result.learnt.SetSpread(static_cast<ComparedMetric>(index), {noise.measured_sigma(), windows});
      }
      if (decision->metrics()[size_t(index)].kind != EvidenceKind::kLogRatio) continue;
      for (const ServerVerdict& verdict : result.verdicts) {
        double usual = 0;
        if (decision->RatioSoFar(verdict.server, size_t(index), &usual)) {
          result.learnt.SetUsual(verdict.server, static_cast<ComparedMetric>(index), usual);
        }
      }
    }
  }
  return result;
}

}  // namespace limpwatch::analyzer
