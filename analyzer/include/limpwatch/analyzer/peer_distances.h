// Each server's median distance to its peers, and the median server.
//
// Servers of one cluster report the same feature keys, so the vectors are
// laid out as one dense matrix (servers x features) and distances computed
// with vector instructions (Eigen); vectors with differing keys fall back to
// the sparse merge of distance.h. Beyond kMaxComparedPeers servers, each
// one is compared with a fixed, evenly spread subset of its peers: the
// median of that many distances estimates the median of all of them well,
// and keeps a 1,000-server window within milliseconds.
#ifndef LIMPWATCH_ANALYZER_PEER_DISTANCES_H_
#define LIMPWATCH_ANALYZER_PEER_DISTANCES_H_

#include <cstddef>
#include <vector>

#include "limpwatch/analyzer/distance.h"

namespace limpwatch::analyzer {

inline constexpr size_t kMaxComparedPeers = 63;

// For each vector, the median of its distances to the others (or to the
// evenly spread subset). Needs at least two vectors.
std::vector<double> MedianPeerDistances(const std::vector<const std::vector<Feature>*>& vectors, DistanceKind kind,
                                        const FeatureWeights* weights);

// The component-wise median of the vectors, over the keys any of them has
// (sorted by key).
std::vector<Feature> MedianVector(const std::vector<const std::vector<Feature>*>& vectors);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_PEER_DISTANCES_H_
