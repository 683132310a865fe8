#include "limpwatch/analyzer/metric_noise.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "limpwatch/analyzer/statistics.h"

namespace limpwatch::analyzer {
namespace {

double WithUncertainty(double sigma, double windows) {
  return sigma * (1.0 + 2.3 / std::sqrt(std::max(windows, 1.0)));
}

}  // namespace

void MetricNoise::SetPrior(double sigma, double windows) {
  prior_sigma_ = std::max(sigma, 0.0);
  prior_windows_ = std::max(windows, 0.0);
}

void MetricNoise::Estimate(const std::vector<const ResidualHistory*>& histories, double overlap) {
  double windows = 0, ever = 0;
  std::vector<double> spreads, wanders, largest;
  std::vector<const ResidualHistory*> usable_histories;
  size_t usable = 0;
  for (const ResidualHistory* history : histories) {
    if (history->size() < kMinHistory) continue;
    ++usable;
    windows += double(history->size());
    ever += double(history->added());
    largest.push_back(history->largest_deviation());
    spreads.push_back(history->scale());
    usable_histories.push_back(history);
    if (auto wander = history->WanderFactor()) wanders.push_back(*wander);
  }
  // A median needs a majority of healthy servers: at least three histories
  // (or every server of a smaller comparison).
  bool online = usable > 0 && usable >= std::min<size_t>(3, histories.size());
  // The last spread measured is kept while the metric goes unmeasured (a
  // read-only load has no writes to compare): training reads it at the end.
  if (online) {
    measured_sigma_ = MedianInPlace(spreads);
    measured_windows_ = ever;  // healthy windows seen, kept or not
  }
  double sigma = 0;
  if (online) sigma = WithUncertainty(measured_sigma_, windows);
  if (prior_windows_ > 0) sigma = std::max(sigma, WithUncertainty(prior_sigma_, prior_windows_));
  ready_ = online || prior_windows_ > 0;
  noise_.sigma = std::max(sigma, kSmallestSpread);
  noise_.wander = std::max(overlap, wanders.empty() ? 1.0 : MedianInPlace(wanders));
  if (online) {
    // The bursts of every server together (or of an even spread of
    // kTailServers of them); For() takes the judged server's own out.
    noise_.tail_start = 2.0 * measured_sigma_;
    pool_.clear();
    pooled_ = {};
    size_t step = std::max<size_t>(usable_histories.size() / kTailServers, 1);
    for (size_t index = 0; index < usable_histories.size(); index += step) {
      ResidualHistory::Beyond counts = usable_histories[index]->CountBeyond(noise_.tail_start);
      pool_.push_back({usable_histories[index], counts});
      pooled_.values += counts.values;
      pooled_.beyond += counts.beyond;
      pooled_.excess += counts.excess;
    }
    BurstTail tail = TailOf(pooled_, noise_.tail_start, measured_sigma_);
    noise_.tail_share = tail.share;
    noise_.tail_scale = std::max(tail.scale, 0.5 * noise_.sigma);
    // Windows learnt in training count too: they were healthy.
    noise_.rarest = 1.0 / (windows + prior_windows_ + 1.0);
    noise_.rarest_beyond = 1.0 / (ever + prior_windows_ + 1.0);
    // The largest deviation a quarter of the servers have had: one limping
    // server (or a quarter of them) does not raise it.
    std::sort(largest.begin(), largest.end(), std::greater<double>());
    noise_.largest = largest[largest.size() / 4];
  } else {
    pool_.clear();
    pooled_ = {};
    // A trained spread alone: a normal tail, as rare as training could tell.
    noise_.tail_start = 2.0 * noise_.sigma;
    noise_.tail_share = 0.023;
    noise_.tail_scale = 0.5 * noise_.sigma;
    noise_.rarest = 1.0 / (prior_windows_ + 1.0);
    noise_.rarest_beyond = noise_.rarest;
    noise_.largest = 0;
  }
}

ShiftNoise MetricNoise::For(const ResidualHistory* judged) const {
  ShiftNoise noise = noise_;
  for (const auto& [history, counts] : pool_) {
    if (history != judged) continue;
    ResidualHistory::Beyond others = pooled_;
    others.values -= counts.values;
    others.beyond -= counts.beyond;
    others.excess -= counts.excess;
    if (others.values <= 0) break;
    BurstTail tail = TailOf(others, noise.tail_start, measured_sigma_);
    noise.tail_share = tail.share;
    noise.tail_scale = std::max(tail.scale, 0.5 * noise.sigma);
    break;
  }
  return noise;
}

}  // namespace limpwatch::analyzer
