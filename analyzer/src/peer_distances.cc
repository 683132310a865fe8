#include "limpwatch/analyzer/peer_distances.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>

#include "limpwatch/analyzer/statistics.h"

namespace limpwatch::analyzer {
namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Row = Eigen::Array<float, 1, Eigen::Dynamic>;

bool SameKeys(const std::vector<const std::vector<Feature>*>& vectors) {
  const std::vector<Feature>& first = *vectors.front();
  for (const auto* vector : vectors) {
    if (vector->size() != first.size()) return false;
    for (size_t index = 0; index < first.size(); ++index) {
      if ((*vector)[index].key != first[index].key) return false;
    }
  }
  return true;
}

// The peers vector i is compared with: all others, or an evenly spread subset.
template <typename Visit>
void ForComparedPeers(size_t i, size_t count, Visit visit) {
  size_t compared = std::min(count - 1, kMaxComparedPeers);
  double step = double(count - 1) / double(compared);
  for (size_t t = 0; t < compared; ++t) visit((i + 1 + size_t(double(t) * step)) % count);
}

// Written as single expressions so Eigen evaluates them in one vectorised
// pass, with no temporary row allocated per pair.
template <typename A, typename B>
float DenseDistance(const A& a, const B& b, DistanceKind kind, const Row& weights, bool weighted) {
  switch (kind) {
    case DistanceKind::kManhattan:
      return weighted ? ((a - b).abs() * weights).sum() : (a - b).abs().sum();
    case DistanceKind::kRelative:
      return weighted ? ((a - b).abs() / a.abs().max(b.abs()).max(1e-30f) * weights).sum()
                      : ((a - b).abs() / a.abs().max(b.abs()).max(1e-30f)).sum();
    case DistanceKind::kScaled:
      return weighted ? ((a - b).square() / a.abs().max(b.abs()).max(1e-30f) * weights).sum()
                      : ((a - b).square() / a.abs().max(b.abs()).max(1e-30f)).sum();
    case DistanceKind::kSymmetricKl: {
      auto p = a.max(1e-9f);
      auto q = b.max(1e-9f);
      return weighted ? (0.5f * (p * (p / q).log() + q * (q / p).log()) * weights).sum()
                      : (0.5f * (p * (p / q).log() + q * (q / p).log())).sum();
    }
  }
  return 0.0f;
}

}  // namespace

std::vector<double> MedianPeerDistances(const std::vector<const std::vector<Feature>*>& vectors, DistanceKind kind,
                                        const FeatureWeights* weights) {
  size_t count = vectors.size();
  std::vector<double> scores(count, 0.0);
  if (count < 2) return scores;
  std::vector<double> distances;
  if (!SameKeys(vectors)) {
    for (size_t i = 0; i < count; ++i) {
      distances.clear();
      ForComparedPeers(i, count, [&](size_t j) { distances.push_back(Distance(*vectors[i], *vectors[j], kind, weights)); });
      scores[i] = Median(distances);
    }
    return scores;
  }
  size_t features = vectors.front()->size();
  Matrix matrix(count, features);
  for (size_t i = 0; i < count; ++i) {
    for (size_t f = 0; f < features; ++f) matrix(i, f) = (*vectors[i])[f].value;
  }
  if (kind == DistanceKind::kSymmetricKl) {
    // KL compares distributions: each vector normalised to sum 1.
    for (size_t i = 0; i < count; ++i) {
      float total = matrix.row(i).cwiseMax(0.0f).sum();
      matrix.row(i) = total > 0 ? (matrix.row(i).cwiseMax(0.0f) / total).eval() : Eigen::RowVectorXf::Zero(features);
    }
  }
  bool weighted = weights != nullptr && !weights->weights.empty();
  Row weight_row = Row::Ones(features);
  if (weighted) {
    for (size_t f = 0; f < features; ++f) weight_row(f) = float(weights->WeightOf((*vectors.front())[f].key));
  }
  for (size_t i = 0; i < count; ++i) {
    distances.clear();
    ForComparedPeers(i, count, [&](size_t j) {
      distances.push_back(DenseDistance(matrix.row(i).array(), matrix.row(j).array(), kind, weight_row, weighted));
    });
    scores[i] = Median(distances);
  }
  return scores;
}

std::vector<Feature> MedianVector(const std::vector<const std::vector<Feature>*>& vectors) {
  std::vector<Feature> median;
  if (vectors.empty()) return median;
  std::vector<double> column;
  if (SameKeys(vectors)) {
    for (size_t f = 0; f < vectors.front()->size(); ++f) {
      column.clear();
      for (const auto* vector : vectors) column.push_back((*vector)[f].value);
      median.push_back({(*vectors.front())[f].key, static_cast<float>(Median(column))});
    }
    return median;
  }
  std::map<uint32_t, std::vector<double>> by_key;
  for (const auto* vector : vectors) {
    for (const Feature& feature : *vector) by_key[feature.key].push_back(feature.value);
  }
  for (auto& [key, values] : by_key) median.push_back({key, static_cast<float>(Median(values))});
  return median;
}

}  // namespace limpwatch::analyzer
