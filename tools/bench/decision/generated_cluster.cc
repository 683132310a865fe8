#include "generated_cluster.h"

#include <cmath>

namespace limpwatch::decision {
namespace {

constexpr double kPi = 3.14159265358979323846;
// Latency follows load: 1.4x the load, 1.2x the latency.
constexpr double kLoadExponent = 0.54;

}  // namespace

const char* NoiseModelName(NoiseModel model) {
  switch (model) {
    case NoiseModel::kGaussian: return "gaussian";
    case NoiseModel::kLogNormal: return "lognormal";
    case NoiseModel::kBursty: return "bursty";
  }
  return "?";
}

GeneratedCluster::GeneratedCluster(const ClusterSpec& spec) : spec_(spec), random_(spec.seed * 0x9E3779B97F4A7C15ull + 7) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0), chance(0.05, 0.13);
  for (int index = 0; index < spec_.servers; ++index) {
    names_.push_back("peer" + std::to_string(index));
    offset_.push_back(1.0 + spec_.healthy_spread * unit(random_));
    load_share_.push_back(1.0 + 0.05 * unit(random_));
    wander_.push_back(0.0);
    burst_chance_.push_back(chance(random_));
  }
  burst_left_.assign(spec_.servers, 0);
  burst_size_.assign(spec_.servers, 1.0);
  if (spec_.hot >= 0 && spec_.hot < spec_.servers) load_share_[spec_.hot] = spec_.hot_load;
}

bool GeneratedCluster::Limping(uint64_t tick) const {
  if (spec_.limping < 0 || tick < spec_.limp_start) return false;
  if (spec_.intermittent_ticks == 0) return true;
  return ((tick - spec_.limp_start) / spec_.intermittent_ticks) % 2 == 0;
}

void GeneratedCluster::Next(std::vector<double>* latency, std::vector<double>* throughput) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  // Shared load: a cycle of a day (of ticks at 1 s: 24 h; the swing is the
  // same whatever the tick) and a drift with a time constant of 200 ticks.
  double hours = double(tick_) * spec_.tick_s / 3600.0;
  drift_ = drift_ * std::exp(-1.0 / 200.0) + 0.05 * normal(random_);
  double shared = std::exp(0.3 * std::sin(2 * kPi * hours / 24.0) + 0.1 * drift_);
  latency->assign(spec_.servers, 0.0);
  throughput->assign(spec_.servers, 0.0);
  for (int index = 0; index < spec_.servers; ++index) {
    // Each peer wanders on its own, 2 % with a time constant of 300 ticks.
    wander_[index] = wander_[index] * std::exp(-1.0 / 300.0) + 0.02 * std::sqrt(2.0 / 300.0) * normal(random_);
    double load = shared * load_share_[index];
    double level = spec_.unit * offset_[index] * std::exp(wander_[index]) * std::pow(load / shared, kLoadExponent) *
                   std::pow(shared, 0.5);
    double sample = level;
    switch (spec_.noise) {
      case NoiseModel::kGaussian: sample *= std::max(0.05, 1.0 + 0.1 * normal(random_)); break;
      case NoiseModel::kLogNormal: sample *= std::exp(0.3 * normal(random_) - 0.045); break;
      case NoiseModel::kBursty: {
        sample *= std::exp(0.15 * normal(random_));
        if (burst_left_[index] == 0 && uniform(random_) < burst_chance_[index] / 1.5) {
          burst_left_[index] = uniform(random_) < 0.5 ? 1 : 2;
          burst_size_[index] = 2.0 + 6.0 * uniform(random_);
        }
        if (burst_left_[index] > 0) {
          sample *= burst_size_[index];
          --burst_left_[index];
        }
        break;
      }
    }
    if (index == spec_.fast) sample *= spec_.fast_ratio;
    if (index == spec_.limping && Limping(tick_)) sample *= spec_.limp_ratio;
    (*latency)[index] = sample;
    (*throughput)[index] = 100.0 * load * std::max(0.05, 1.0 + 0.1 * normal(random_));
  }
  ++tick_;
}

}  // namespace limpwatch::decision
