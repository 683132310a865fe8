#include "limpwatch/analyzer/calibrated_decision.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "limpwatch/analyzer/false_alarm_budget.h"
#include "limpwatch/analyzer/statistics.h"

namespace limpwatch::analyzer {
namespace {

// The load fit forgets with a time constant of about a thousand windows: a
// cluster's mix of work changes over the day.
constexpr double kLoadFitMemory = 1.0 - 1.0 / 1024.0;

// Log ratios kept for the per-server median: 0.01 wide, -4 to +4.
constexpr int kRatioBins = 800;
constexpr double kRatioBinWidth = 0.01;

double MedianWithoutOne(const std::vector<double>& sorted, double value) {
  size_t removed = size_t(std::lower_bound(sorted.begin(), sorted.end(), value) - sorted.begin());
  size_t size = sorted.size() - 1;
  if (size == 0) return value;
  auto at = [&](size_t index) { return sorted[index < removed ? index : index + 1]; };
  return size % 2 == 1 ? at(size / 2) : (at(size / 2 - 1) + at(size / 2)) / 2.0;
}

bool IsSymptom(const DecisionMetric& metric) { return metric.kind != EvidenceKind::kLoad; }

}  // namespace

struct CalibratedDecision::Track {
  Track(const std::vector<double>* limp_logs, double tolerated_log) : detector(limp_logs, tolerated_log) {}
  ResidualHistory history;
  ShiftDetector detector;
  double usual = 0;
  bool usual_known = false;
  MetricVerdict verdict;
  std::vector<uint32_t> ratio_bins;  // keep_verdicts only
};

struct CalibratedDecision::ServerState {
  std::vector<Track> tracks;
  ServerVerdict verdict;
  // The load it usually carries over its peers: the load fit's instrument.
  double usual_load = 0;
  size_t load_windows = 0;
};

void CalibratedDecision::CountRatio(Track& track, double log_ratio) {
  ++track.verdict.compared;
  if (track.ratio_bins.empty()) track.ratio_bins.assign(kRatioBins, 0);
  int bin = int(std::floor(log_ratio / kRatioBinWidth)) + kRatioBins / 2;
  track.ratio_bins[std::clamp(bin, 0, kRatioBins - 1)]++;
}


CalibratedDecision::CalibratedDecision(const DecisionSettings& settings, std::vector<DecisionMetric> metrics)
    : settings_(settings), metrics_(std::move(metrics)) {
  for (double limp : settings_.limps) limp_logs_.push_back(std::log(std::max(limp, 1.0001)));
  std::sort(limp_logs_.begin(), limp_logs_.end());
  tolerated_log_ = std::log(std::max(settings_.tolerated_ratio, 1.0));
  size_t symptoms = std::count_if(metrics_.begin(), metrics_.end(), IsSymptom);
  FalseAlarmBudget budget;
  budget.server_days_per_false_alarm = settings_.server_days_per_false_alarm;
  budget.window_shift_s = settings_.window_shift_s;
  budget.charts = std::max<size_t>(symptoms, 1) * limp_logs_.size();
  threshold_ = budget.Threshold();
  noise_.resize(metrics_.size());
  load_zy_.assign(metrics_.size(), 0.0);
  load_zx_.assign(metrics_.size(), 0.0);
}

CalibratedDecision::~CalibratedDecision() = default;

CalibratedDecision::ServerState& CalibratedDecision::StateOf(const std::string& server) {
  auto& state = servers_[server];
  if (!state) {
    state = std::make_unique<ServerState>();
    for (size_t index = 0; index < metrics_.size(); ++index) state->tracks.emplace_back(&limp_logs_, tolerated_log_);
    state->verdict.server = server;
    state->verdict.metrics.resize(metrics_.size());
  }
  return *state;
}

void CalibratedDecision::SetNoisePrior(size_t metric, double sigma, double windows) {
  if (metric < noise_.size()) noise_[metric].SetPrior(sigma, windows);
}

void CalibratedDecision::SetUsualRatio(const std::string& server, size_t metric, double log_ratio) {
  if (metric >= metrics_.size()) return;
  Track& track = StateOf(server).tracks[metric];
  track.usual = log_ratio;
  track.usual_known = true;
}

bool CalibratedDecision::UsualRatio(const std::string& server, size_t metric, double* log_ratio) const {
  auto found = servers_.find(server);
  if (found == servers_.end() || metric >= metrics_.size()) return false;
  const Track& track = found->second->tracks[metric];
  *log_ratio = track.usual;
  return track.usual_known;
}

bool CalibratedDecision::RatioSoFar(const std::string& server, size_t metric, double* log_ratio) const {
  if (UsualRatio(server, metric, log_ratio)) return true;
  auto found = servers_.find(server);
  if (found == servers_.end() || metric >= metrics_.size()) return false;
  const ResidualHistory& history = found->second->tracks[metric].history;
  if (history.size() < 2 * MetricNoise::kMinHistory) return false;
  *log_ratio = history.center();
  return true;
}

void CalibratedDecision::Forget(const std::string& server) {
  auto found = servers_.find(server);
  if (found == servers_.end()) return;
  // A restarted server starts its charts, history, usual ratios and usual
  // load again; what the verdicts say of it covers all its runs.
  found->second->usual_load = 0;
  found->second->load_windows = 0;
  for (Track& track : found->second->tracks) {
    Track fresh(&limp_logs_, tolerated_log_);
    fresh.verdict = track.verdict;
    fresh.ratio_bins = std::move(track.ratio_bins);
    track = std::move(fresh);
  }
}

double CalibratedDecision::load_slope(size_t metric) const {
  if (metric >= metrics_.size() || load_zx_[metric] <= 0) return 0.0;
  return std::clamp(load_zy_[metric] / load_zx_[metric], 0.0, 1.0);
}

DecisionWindow CalibratedDecision::Observe(uint64_t window, const std::vector<std::string>& servers,
                                           const std::vector<std::vector<double>>& values,
                                           const std::vector<bool>& warming_up) {
  const size_t count = servers.size();
  DecisionWindow result;
  result.window = window;
  result.servers.resize(count);
  std::vector<ServerState*> states(count);
  for (size_t i = 0; i < count; ++i) {
    states[i] = &StateOf(servers[i]);
    result.servers[i].server = servers[i];
    result.servers[i].warming_up = i < warming_up.size() && warming_up[i];
    result.servers[i].metrics.resize(metrics_.size());
  }
  std::vector<std::vector<double>> ratios = LogRatios(values);
  std::vector<double> load = LoadRatios(ratios);
  for (size_t m = 0; m < metrics_.size(); ++m) {
    if (IsSymptom(metrics_[m])) {
      JudgeMetric(m, ratios[m], load, states, &result);
      continue;
    }
    for (size_t i = 0; i < count; ++i) {
      MetricEvidence& evidence = result.servers[i].metrics[m];
      evidence.compared = std::isfinite(ratios[m][i]);
      evidence.log_ratio = evidence.compared ? ratios[m][i] : 0.0;
    }
  }
  for (size_t i = 0; i < count; ++i) {
    if (!std::isfinite(load[i]) || result.servers[i].warming_up) continue;
    ServerState& state = *states[i];
    ++state.load_windows;
    double weight = 1.0 / double(std::min<size_t>(state.load_windows, settings_.baseline_windows));
    state.usual_load += weight * (load[i] - state.usual_load);
  }
  Conclude(states, &result);
  return result;
}

std::vector<std::vector<double>> CalibratedDecision::LogRatios(const std::vector<std::vector<double>>& values) const {
  const size_t count = values.size();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::vector<double>> ratios(metrics_.size(), std::vector<double>(count, nan));
  std::vector<double> logs, sorted;
  for (size_t m = 0; m < metrics_.size(); ++m) {
    const DecisionMetric& metric = metrics_[m];
    logs.assign(count, nan);
    for (size_t i = 0; i < count; ++i) {
      double value = m < values[i].size() ? values[i][m] : nan;
      if (!std::isfinite(value)) continue;
      switch (metric.kind) {
        case EvidenceKind::kLevel:
        case EvidenceKind::kLoad:
          if (value > 0) logs[i] = std::log(value);
          break;
        case EvidenceKind::kWait:
          if (value >= 0) logs[i] = std::log(value + std::max(metric.epsilon, 1e-12));
          break;
        case EvidenceKind::kLogRatio: ratios[m][i] = value; break;
      }
    }
    if (metric.kind == EvidenceKind::kLogRatio) continue;
    sorted.clear();
    for (double log : logs) {
      if (std::isfinite(log)) sorted.push_back(log);
    }
    if (sorted.size() < 3) continue;  // a median of peers needs two of them and the server
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < count; ++i) {
      if (std::isfinite(logs[i])) ratios[m][i] = logs[i] - MedianWithoutOne(sorted, logs[i]);
    }
  }
  return ratios;
}

std::vector<double> CalibratedDecision::LoadRatios(const std::vector<std::vector<double>>& ratios) const {
  const size_t count = ratios.empty() ? 0 : ratios.front().size();
  std::vector<double> load(count, std::numeric_limits<double>::quiet_NaN());
  for (size_t i = 0; i < count; ++i) {
    double sum = 0;
    int loads = 0;
    for (size_t m = 0; m < metrics_.size(); ++m) {
      if (metrics_[m].kind == EvidenceKind::kLoad && std::isfinite(ratios[m][i])) {
        sum += ratios[m][i];
        ++loads;
      }
    }
    if (loads > 0) load[i] = sum / loads;
  }
  return load;
}

void CalibratedDecision::JudgeMetric(size_t m, const std::vector<double>& ratios, const std::vector<double>& load,
                                     const std::vector<ServerState*>& states, DecisionWindow* result) {
  const DecisionMetric& metric = metrics_[m];
  const size_t count = ratios.size();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double first_midpoint = (limp_logs_.front() + tolerated_log_) / 2.0;
  // What load explains, then the usual ratio of a profile metric.
  double slope = load_slope(m);
  std::vector<double> judged(count, nan), excess(count, nan);
  std::vector<const ResidualHistory*> histories;
  for (size_t i = 0; i < count; ++i) {
    if (!std::isfinite(ratios[i])) continue;
    double explained = std::isfinite(load[i]) ? slope * std::max(load[i], 0.0) : 0.0;
    judged[i] = ratios[i] - explained;
    Track& track = states[i]->tracks[m];
    if (metric.kind != EvidenceKind::kLogRatio) {
      excess[i] = judged[i];
    } else if (track.usual_known) {
      excess[i] = judged[i] - std::max(track.usual, 0.0);
    }
    if (!result->servers[i].warming_up) histories.push_back(&track.history);
  }
  // The noise of healthy servers, from their histories so far.
  MetricNoise& noise = noise_[m];
  noise.Estimate(histories, settings_.overlap);
  // Two groups rather than one limping server: nobody gains evidence.
  size_t compared = 0, clearly_slower = 0;
  for (size_t i = 0; i < count; ++i) {
    if (!std::isfinite(judged[i])) continue;
    ++compared;
    clearly_slower += std::isfinite(excess[i]) && noise.ready() && excess[i] > first_midpoint + 2.0 * noise.sigma();
  }
  bool two_groups = clearly_slower >= 2 && 2 * clearly_slower >= compared;

  for (size_t i = 0; i < count; ++i) {
    if (!std::isfinite(judged[i])) continue;
    Track& track = states[i]->tracks[m];
    MetricEvidence& evidence = result->servers[i].metrics[m];
    evidence.compared = true;
    evidence.log_ratio = ratios[i];
    evidence.sigma = noise.sigma();
    if (std::isfinite(excess[i])) evidence.excess = excess[i];
    bool warming = result->servers[i].warming_up;
    if (std::isfinite(excess[i]) && noise.ready() && !warming && !two_groups) {
      evidence.counted = true;
      track.detector.Update(excess[i], noise.For(&track.history), threshold_);
      evidence.still_seen = track.detector.last_gain() > 0;
    }
    evidence.statistic = track.detector.statistic() / threshold_;
    evidence.limp = std::exp(limp_logs_[track.detector.strongest_chart()]);
    if (warming) continue;
    track.history.Add(judged[i]);
    // A profile metric's usual ratio follows the server while it is not
    // suspected, and stays put while it is: a limp must not become usual.
    if (metric.kind == EvidenceKind::kLogRatio && track.history.size() >= settings_.baseline_windows &&
        evidence.statistic < 0.5) {
      track.usual = track.history.center();
      track.usual_known = true;
    }
    // The load fit learns from servers as they are, outliers of the symptom
    // clipped. A window's load is measured with noise of its own, which would
    // draw a plain least-squares slope towards zero (on generated peers 0.3
    // for a true 0.54, leaving a server with 1.4x the load 1.09x slower
    // than explained, indicted a few times in 100 server-days): the load each
    // server usually carries is its instrument, free of that window's noise.
    if (std::isfinite(load[i]) && noise.ready() && states[i]->load_windows > 0) {
      double bound = 3.0 * noise.sigma();
      double usual_load = states[i]->usual_load;
      load_zy_[m] = kLoadFitMemory * load_zy_[m] + usual_load * std::clamp(ratios[i], -bound, bound);
      load_zx_[m] = kLoadFitMemory * load_zx_[m] + usual_load * load[i];
    }
  }
}

void CalibratedDecision::Conclude(const std::vector<ServerState*>& states, DecisionWindow* result) {
  const double first_midpoint = (limp_logs_.front() + tolerated_log_) / 2.0;
  for (size_t i = 0; i < result->servers.size(); ++i) {
    ServerEvidence& server = result->servers[i];
    double strongest = 0;
    bool compared = false, anomalous = false;
    for (size_t m = 0; m < metrics_.size(); ++m) {
      const MetricEvidence& evidence = server.metrics[m];
      if (!evidence.compared) continue;
      if (!IsSymptom(metrics_[m])) {
        // A load is no symptom; its ratio is kept for the verdicts.
        if (settings_.keep_verdicts) CountRatio(states[i]->tracks[m], evidence.log_ratio);
        continue;
      }
      compared = true;
      if (evidence.statistic > strongest) {
        strongest = evidence.statistic;
        server.strongest = int(m);
      }
      if (evidence.statistic >= 1.0 && evidence.still_seen) server.limping_now = true;
      bool beyond = evidence.counted && evidence.excess > first_midpoint + 2.0 * evidence.sigma;
      server.metrics[m].beyond = beyond;
      anomalous |= beyond;
      if (!settings_.keep_verdicts) continue;
      Track& track = states[i]->tracks[m];
      CountRatio(track, evidence.log_ratio);
      track.verdict.anomalous += beyond;
      track.verdict.largest_statistic = std::max(track.verdict.largest_statistic, evidence.statistic);
    }
    server.indicted = strongest >= 1.0;
    if (!settings_.keep_verdicts || !compared) continue;
    ServerVerdict& verdict = states[i]->verdict;
    ++verdict.windows;
    verdict.anomalous_windows += anomalous;
    if (server.indicted) {
      if (verdict.indicted_windows++ == 0) verdict.first_indicted = result->window;
      verdict.last_indicted = result->window;
    }
  }
}

std::vector<ServerVerdict> CalibratedDecision::Verdicts() const {
  std::vector<ServerVerdict> verdicts;
  for (const auto& [name, state] : servers_) {
    ServerVerdict verdict = state->verdict;
    for (size_t m = 0; m < metrics_.size(); ++m) {
      const Track& track = state->tracks[m];
      MetricVerdict metric = track.verdict;
      uint64_t seen = 0, half = (metric.compared + 1) / 2;
      for (size_t bin = 0; bin < track.ratio_bins.size(); ++bin) {
        seen += track.ratio_bins[bin];
        if (seen >= half && half > 0) {
          metric.median_ratio = std::exp((double(int(bin) - kRatioBins / 2) + 0.5) * kRatioBinWidth);
          break;
        }
      }
      verdict.metrics[m] = metric;
    }
    verdicts.push_back(std::move(verdict));
  }
  return verdicts;
}

}  // namespace limpwatch::analyzer
