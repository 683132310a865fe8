#include "limpwatch/analyzer/distance.h"

#include <algorithm>
#include <cmath>

namespace limpwatch::analyzer {
namespace {

constexpr double kKlFloor = 1e-9;  // keeps log(p/q) finite when one side is 0

double Component(double p, double q, DistanceKind kind) {
  double difference = std::fabs(p - q);
  switch (kind) {
    case DistanceKind::kManhattan:
      return difference;
    case DistanceKind::kRelative: {
      double scale = std::max(std::fabs(p), std::fabs(q));
      return scale > 0 ? difference / scale : 0.0;
    }
    case DistanceKind::kScaled: {
      double scale = std::max(std::fabs(p), std::fabs(q));
      return scale > 0 ? difference * difference / scale : 0.0;
    }
    case DistanceKind::kSymmetricKl: {
      double a = std::max(p, kKlFloor), b = std::max(q, kKlFloor);
      return 0.5 * (a * std::log(a / b) + b * std::log(b / a));
    }
  }
  return difference;
}

double Total(const std::vector<Feature>& features) {
  double sum = 0;
  for (const auto& feature : features) sum += std::max(0.0f, feature.value);
  return sum;
}

// Calls visit(key, p, q) for every key in both sorted vectors.
template <typename Visit>
void ForCommonKeys(const std::vector<Feature>& p, const std::vector<Feature>& q, Visit visit) {
  size_t i = 0, j = 0;
  while (i < p.size() && j < q.size()) {
    if (p[i].key < q[j].key) {
      ++i;
    } else if (q[j].key < p[i].key) {
      ++j;
    } else {
      visit(p[i].key, double(p[i].value), double(q[j].value));
      ++i;
      ++j;
    }
  }
}

}  // namespace

std::optional<DistanceKind> ParseDistanceKind(std::string_view text) {
  if (text == "manhattan") return DistanceKind::kManhattan;
  if (text == "relative") return DistanceKind::kRelative;
  if (text == "scaled") return DistanceKind::kScaled;
  if (text == "kl") return DistanceKind::kSymmetricKl;
  return std::nullopt;
}

const char* DistanceKindName(DistanceKind kind) {
  switch (kind) {
    case DistanceKind::kManhattan: return "manhattan";
    case DistanceKind::kRelative: return "relative";
    case DistanceKind::kScaled: return "scaled";
    case DistanceKind::kSymmetricKl: return "kl";
  }
  return "?";
}

double FeatureWeights::WeightOf(uint32_t key) const {
  auto found = std::lower_bound(weights.begin(), weights.end(), key,
                                [](const Feature& feature, uint32_t wanted) { return feature.key < wanted; });
  return (found != weights.end() && found->key == key) ? double(found->value) : 1.0;
}

double Distance(const std::vector<Feature>& p, const std::vector<Feature>& q, DistanceKind kind,
                const FeatureWeights* weights) {
  double p_scale = 1.0, q_scale = 1.0;
  if (kind == DistanceKind::kSymmetricKl) {
    double p_total = Total(p), q_total = Total(q);
    p_scale = p_total > 0 ? 1.0 / p_total : 0.0;
    q_scale = q_total > 0 ? 1.0 / q_total : 0.0;
  }
  double sum = 0;
  bool weighted = weights != nullptr && !weights->weights.empty();
  ForCommonKeys(p, q, [&](uint32_t key, double a, double b) {
    double component = Component(a * p_scale, b * q_scale, kind);
    sum += weighted ? component * weights->WeightOf(key) : component;
  });
  return sum;
}

void ComponentDistances(const std::vector<Feature>& p, const std::vector<Feature>& q, DistanceKind kind,
                        std::vector<Feature>* out) {
  ForCommonKeys(p, q, [&](uint32_t key, double a, double b) {
    out->push_back({key, static_cast<float>(Component(a, b, kind))});
  });
}

}  // namespace limpwatch::analyzer
