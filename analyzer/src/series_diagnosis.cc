#include "limpwatch/analyzer/series_diagnosis.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "limpwatch/analyzer/peer_summary.h"
#include "limpwatch/analyzer/statistics.h"
#include "limpwatch/shm/name_hash.h"

namespace limpwatch::analyzer {

SeriesDiagnosis::SeriesDiagnosis(const SeriesSettings& series, DecisionSettings decision,
                                 std::vector<DecisionMetric> columns)
    : series_(series), decision_([&] {
        decision.window_shift_s = series.tick_s * std::max<uint32_t>(series.shift_ticks, 1);
        decision.overlap = double(std::max(series.window_ticks, series.shift_ticks)) /
                           double(std::max<uint32_t>(series.shift_ticks, 1));
        return decision;
      }(), std::move(columns)) {
  series_.window_ticks = std::max<uint32_t>(series_.window_ticks, 1);
  series_.shift_ticks = std::clamp<uint32_t>(series_.shift_ticks, 1, series_.window_ticks);
}

std::vector<Alarm> SeriesDiagnosis::AddTick(uint64_t tick, const std::vector<std::string>& peers,
                                            const std::vector<std::vector<double>>& values) {
  std::vector<Alarm> alarms;
  if (have_tick_ && tick <= last_tick_) return alarms;  // out of order: the caller reports it
  // Windows that ended in a stretch without any row are complete now.
  if (have_tick_) {
    for (uint64_t skipped = last_tick_ + 1; skipped < tick; ++skipped) {
      if ((skipped + 1) % series_.shift_ticks != 0) continue;
      for (Alarm& alarm : CompleteWindow(skipped)) alarms.push_back(std::move(alarm));
    }
  }
  for (size_t index = 0; index < peers.size(); ++index) {
    PeerSeries& peer = peers_[peers[index]];
    peer.recent.emplace_back(tick, values[index]);
  }
  have_tick_ = true;
  last_tick_ = tick;
  if ((tick + 1) % series_.shift_ticks == 0) {
    for (Alarm& alarm : CompleteWindow(tick)) alarms.push_back(std::move(alarm));
  }
  return alarms;
}

std::vector<Alarm> SeriesDiagnosis::CompleteWindow(uint64_t last_tick) {
  std::vector<Alarm> alarms;
  const uint64_t first_tick = last_tick + 1 >= series_.window_ticks ? last_tick + 1 - series_.window_ticks : 0;
  const size_t columns = decision_.metrics().size();
  std::vector<std::string> names;
  std::vector<std::vector<double>> values;
  std::vector<bool> warming;
  std::vector<PeerSeries*> present;
  std::vector<double> column;
  for (auto& [name, peer] : peers_) {
    while (!peer.recent.empty() && peer.recent.front().first < first_tick) peer.recent.pop_front();
    if (peer.recent.empty()) continue;
    std::vector<double> medians(columns, std::numeric_limits<double>::quiet_NaN());
    for (size_t c = 0; c < columns; ++c) {
      column.clear();
      for (const auto& [tick, row] : peer.recent) {
        if (tick <= last_tick && c < row.size() && std::isfinite(row[c])) column.push_back(row[c]);
      }
      if (!column.empty()) medians[c] = MedianInPlace(column);
    }
    names.push_back(name);
    values.push_back(std::move(medians));
    warming.push_back(peer.windows_seen < decision_.settings().warmup_windows);
    present.push_back(&peer);
  }
  uint64_t window = (last_tick + 1) / series_.shift_ticks;
  ++windows_;
  if (names.empty()) return alarms;
  DecisionWindow result = decision_.Observe(window, names, values, warming);
  if (observer_) observer_(result);
  uint64_t suppression_windows =
      uint64_t(std::ceil(series_.suppression_s / std::max(decision_.settings().window_shift_s, 1e-3)));
  for (size_t index = 0; index < present.size(); ++index) {
    PeerSeries& peer = *present[index];
    ++peer.windows_seen;
    const ServerEvidence& evidence = result.servers[index];
    // One alarm an episode: when a peer is first seen limping, and again only
    // once it has been clear of indictment for the suppression period.
    bool was_indicted = peer.indicted;
    peer.indicted = evidence.indicted;
    if (evidence.indicted) peer.last_indicted_window = window;
    if (!evidence.limping_now || was_indicted) continue;
    if (peer.alarmed && window - peer.last_alarm_window < suppression_windows) continue;
    peer.alarmed = true;
    peer.last_alarm_window = window;
    Alarm alarm = BuildAlarm(evidence, window, last_tick);
    alarms_by_server_[alarm.server].push_back(alarm);
    alarms.push_back(std::move(alarm));
  }
  return alarms;
}

Alarm SeriesDiagnosis::BuildAlarm(const ServerEvidence& evidence, uint64_t window, uint64_t last_tick) const {
  const auto& metrics = decision_.metrics();
  Alarm alarm;
  alarm.kind = AlarmKind::kAnomaly;
  alarm.window = window;
  alarm.time_unix_ms = series_.first_unix_ms + uint64_t(std::llround(double(last_tick + 1) * series_.tick_s * 1000.0));
  alarm.raised_unix_ms = alarm.time_unix_ms;
  alarm.reporter = "offline";
  alarm.server = evidence.server;
  alarm.threshold = decision_.threshold();
  std::vector<size_t> order;
  for (size_t m = 0; m < metrics.size(); ++m) {
    if (metrics[m].kind != EvidenceKind::kLoad && evidence.metrics[m].compared && evidence.metrics[m].statistic > 0) {
      order.push_back(m);
    }
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return evidence.metrics[a].statistic > evidence.metrics[b].statistic;
  });
  for (size_t m : order) {
    const MetricEvidence& metric = evidence.metrics[m];
    if (metric.statistic >= 1.0) alarm.metrics.push_back(metrics[m].name);
    alarm.evidence.push_back({metrics[m].name, std::exp(metric.log_ratio), metric.statistic, metrics[m].resource});
    RootCauseFunction cause;
    cause.name = metrics[m].name;
    cause.name_hash = shm::FunctionNameHash(cause.name);
    cause.key = FoldNameHash(cause.name_hash);
    cause.score = metric.statistic;
    cause.resource = metrics[m].resource;
    alarm.top_functions.push_back(std::move(cause));
  }
  if (!order.empty()) {
    const MetricEvidence& strongest = evidence.metrics[order.front()];
    alarm.score = strongest.statistic * decision_.threshold();
    alarm.resource = metrics[order.front()].resource;
    char text[160];
    std::snprintf(text, sizeof text, "%s %.2fx its peers' median, evidence %.1fx the threshold",
                  metrics[order.front()].name.c_str(), std::exp(strongest.log_ratio), strongest.statistic);
    alarm.reason = text;
  }
  return alarm;
}

}  // namespace limpwatch::analyzer
