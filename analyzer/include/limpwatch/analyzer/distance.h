// Distances between two servers' feature vectors (seed 000 section 5.1).
//
// Vectors are sparse, sorted by key. Only keys present in both vectors are
// compared: every server reports every key of the cluster's feature set
// (zeros included), so a key missing on one side means that server has not
// heard of the feature yet, not that its value is zero.
#ifndef LIMPWATCH_ANALYZER_DISTANCE_H_
#define LIMPWATCH_ANALYZER_DISTANCE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "limpwatch/analyzer/peer_summary.h"

namespace limpwatch::analyzer {

enum class DistanceKind {
  kManhattan,  // sum |p - q|: the seed's best overall
  kRelative,   // sum |p - q| / max(p, q)
  kScaled,     // sum (p - q)^2 / max(p, q)
  kSymmetricKl,  // 1/2 sum p log(p/q) + q log(q/p), on vectors normalised to sum 1
};

std::optional<DistanceKind> ParseDistanceKind(std::string_view text);
const char* DistanceKindName(DistanceKind kind);

// Per-key weights (seed 000 section 7.1: down-weight features that vary a lot
// among fault-free servers). Empty = all 1.
struct FeatureWeights {
  std::vector<Feature> weights;  // sorted by key; value = weight
  double WeightOf(uint32_t key) const;
};

double Distance(const std::vector<Feature>& p, const std::vector<Feature>& q, DistanceKind kind,
                const FeatureWeights* weights = nullptr);

// The contribution of each common key to Distance(p, q) (for root cause).
// Appends (key, contribution) pairs to *out.
void ComponentDistances(const std::vector<Feature>& p, const std::vector<Feature>& q, DistanceKind kind,
                        std::vector<Feature>* out);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_DISTANCE_H_
