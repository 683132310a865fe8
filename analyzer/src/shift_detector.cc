#include "limpwatch/analyzer/shift_detector.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace limpwatch::analyzer {

ShiftDetector::ShiftDetector(const std::vector<double>* limp_logs, double tolerated_log)
    : limp_logs_(limp_logs), tolerated_log_(tolerated_log), sums_(limp_logs->size(), 0.0) {}

namespace {

constexpr double kLogSqrtTwoPi = 0.91893853320467274;
constexpr double kNever = -std::numeric_limits<double>::infinity();
// The largest limp, 6x, stands for limps up to a thousand times larger (a
// wait of a whole tick's threads against a hundredth of one): every log
// size in between equally likely, so 20x and 1,000x are evidence alike.
const double kLastChartSpan = std::log(1000.0);

double LogSumExp(double a, double b) {
  if (a == kNever) return b;
  if (b == kNever) return a;
  double larger = std::max(a, b);
  return larger + std::log1p(std::exp(std::min(a, b) - larger));
}

// log Phi(x), accurate far into the lower tail.
double LogNormalCdf(double x) {
  if (x > -5) return std::log(std::max(0.5 * std::erfc(-x / std::sqrt(2.0)), 1e-300));
  // Mills' ratio: Phi(x) ~ phi(x) / -x (1 - 1/x^2).
  return -0.5 * x * x - kLogSqrtTwoPi - std::log(-x) + std::log1p(-1.0 / (x * x));
}

// log(Phi(b) - Phi(a)) for a < b.
double LogNormalInterval(double a, double b) {
  if (b <= 0) {
    double upper = LogNormalCdf(b), lower = LogNormalCdf(a);
    return upper + std::log1p(-std::exp(std::min(lower - upper, 0.0)));
  }
  if (a >= 0) return LogNormalInterval(-b, -a);
  return std::log(std::max(0.5 * (std::erfc(-b / std::sqrt(2.0)) - std::erfc(-a / std::sqrt(2.0))), 1e-300));
}

// The parts of a window's log density that do not depend on where the
// server's level lies exactly: its bursts (a share of windows beyond the
// tail's start, spread exponentially) and windows never seen (`rarest` of
// them, spread over sizes a factor e apart), both above the level.
double LogBurstDensity(double deviation, const ShiftNoise& noise) {
  if (deviation <= 0) return kNever;
  double scale = std::max(noise.tail_scale, 1e-9);
  double burst = deviation >= noise.tail_start
                     ? std::log(std::max(noise.tail_share, 1e-300)) - (deviation - noise.tail_start) / scale - std::log(scale)
                     : kNever;
  double rarest = deviation > noise.largest ? std::min(noise.rarest, noise.rarest_beyond) : noise.rarest;
  double unseen = std::log(std::max(rarest, 1e-300)) - deviation;
  return LogSumExp(burst, unseen);
}

}  // namespace

double ShiftDetector::Evidence(double excess, const ShiftNoise& noise, size_t chart) const {
  if (noise.sigma <= 0) return 0;
  const double sigma = noise.sigma;
  const double core_share = std::log(std::max(1.0 - noise.tail_share, 1e-9));
  // Healthy: the server's level is the tolerated one.
  double deviation = excess - tolerated_log_;
  double healthy = LogSumExp(core_share - 0.5 * (deviation / sigma) * (deviation / sigma) - std::log(sigma) - kLogSqrtTwoPi,
                             LogBurstDensity(deviation, noise));
  // Limping: its level lies anywhere from this chart's limp to the next
  // one's (the last chart: up to a thousand times its limp), each level
  // equally likely.
  const std::vector<double>& limps = *limp_logs_;
  double low = limps[chart];
  double high = chart + 1 < limps.size() ? limps[chart + 1] : low + kLastChartSpan;
  double core = core_share + LogNormalInterval((excess - high) / sigma, (excess - low) / sigma) - std::log(high - low);
  double limping = LogSumExp(core, LogBurstDensity(excess - low, noise));
  return (limping - healthy) / std::max(noise.wander, 1.0);
}

double ShiftDetector::Update(double excess, const ShiftNoise& noise, double threshold) {
  double ceiling = kCeiling * threshold;
  gains_.resize(sums_.size());
  for (size_t chart = 0; chart < sums_.size(); ++chart) {
    gains_[chart] = Evidence(excess, noise, chart);
    sums_[chart] = std::clamp(sums_[chart] + gains_[chart], 0.0, ceiling);
  }
  last_gain_ = sums_.empty() ? 0.0 : gains_[strongest_chart()];
  return statistic();
}

double ShiftDetector::statistic() const { return sums_.empty() ? 0.0 : *std::max_element(sums_.begin(), sums_.end()); }

size_t ShiftDetector::strongest_chart() const {
  return sums_.empty() ? 0 : size_t(std::max_element(sums_.begin(), sums_.end()) - sums_.begin());
}

void ShiftDetector::Reset() {
  std::fill(sums_.begin(), sums_.end(), 0.0);
  last_gain_ = 0;
}

}  // namespace limpwatch::analyzer
