// One server's recent log ratios to its peers on one metric: what the
// calibrated decision (calibrated_decision.h) learns a healthy server's
// noise from.
//
// Kept per server, so that each server is measured around its own usual
// value: a healthy server that is persistently a little slower than its
// peers (more metadata, an older disk) wanders around its own offset, and a
// server limping since it started wanders around its limp. Neither offset
// makes the other servers look noisier. The cluster's noise is then the
// median over servers (metric_noise.h), which a minority of limping servers
// cannot move.
//
// From the values kept it gives:
//   - the robust center and scale (median, 1.4826 x MAD: a normal
//     distribution's standard deviation, undisturbed by bursts);
//   - how many of its values lie beyond a deviation from that center, and by
//     how much: the cluster's tail of bursts is counted over all servers but
//     the one judged (metric_noise.h);
//   - how much slow wander adds when windows are summed: the variance of
//     the means of blocks of consecutive values, times the block length,
//     over the variance of one value (1 for independent values; windows that
//     overlap, or a load that drifts for minutes, make it larger).
// Memory is bounded: `capacity` values and 32 block means.
#ifndef LIMPWATCH_ANALYZER_RESIDUAL_HISTORY_H_
#define LIMPWATCH_ANALYZER_RESIDUAL_HISTORY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace limpwatch::analyzer {

class ResidualHistory {
 public:
  static constexpr size_t kDefaultCapacity = 128;
  static constexpr size_t kBlockMeans = 32;

  // `block`: how many consecutive values one block mean holds.
  explicit ResidualHistory(size_t capacity = kDefaultCapacity, size_t block = 16);

  void Add(double value);
  size_t size() const { return values_.size(); }
  size_t added() const { return added_; }

  double center() const;
  double scale() const;
  // Of the kept values: how many, how many lie more than `start` above the
  // center, and their summed excess over it.
  struct Beyond {
    double values = 0;
    double beyond = 0;
    double excess = 0;
  };
  Beyond CountBeyond(double start) const;
  // The largest deviation above the center any value has had since the
  // server started, kept values or not: how rare a burst of that size is
  // the history may no longer tell, but that it happens it does.
  double largest_deviation() const { return largest_deviation_; }
  // Variance of block means x block / variance of single values, once 8
  // blocks are complete (robust variances: MAD squared).
  std::optional<double> WanderFactor() const;

 private:
  void Refresh() const;

  size_t capacity_;
  size_t block_;
  std::vector<float> values_;  // a ring once full
  size_t next_ = 0;
  uint64_t added_ = 0;
  double largest_deviation_ = 0;
  double block_sum_ = 0;
  size_t block_filled_ = 0;
  std::vector<float> block_means_;  // a ring of kBlockMeans
  size_t next_block_ = 0;

  // Center and scale, refreshed every few additions: they move slowly, and
  // sorting 128 values per window per server and metric would cost a
  // 1,000-server cluster its analyzer's tick.
  mutable double center_ = 0;
  mutable double scale_ = 0;
  mutable uint64_t refreshed_at_ = UINT64_MAX;
};

// The tail of bursts from counts of values beyond `start` (two spreads above
// their centers: 2.3 % of a normal sample lies beyond), any number of
// servers' together: the share beyond it, and their mean excess over it
// (peaks over a threshold: a latency with a power-law tail has a log with an
// exponential one). A burst that healthy servers show one window in twenty
// can then be no stronger evidence than twenty to one (shift_detector.h).
// The share is never taken below what the values can tell (one of all of
// them), the mean excess never below half a spread (what a normal tail
// shows: 0.37 spreads over two).
struct BurstTail {
  double start = 0;
  double share = 0;
  double scale = 0;
};
BurstTail TailOf(const ResidualHistory::Beyond& counts, double start, double spread);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_RESIDUAL_HISTORY_H_
