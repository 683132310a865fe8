// How noisy one metric's log ratio to the peers is on healthy servers of this
// cluster, estimated online and robustly (median / MAD), so that the same
// defaults hold for a 20 us SSD and a 200 ms loaded disk, four servers or
// sixty-four.
//
// Each window it reads the residual histories (residual_history.h) of the
// servers compared and takes, over servers, the median of their spreads:
// one server limping, steadily or on and off, cannot raise it. The estimate
// is inflated by its own uncertainty, 1 + 2.3 / sqrt(n) for n values behind
// it (the MAD's standard error is about 1.17 / sqrt(n) of a normal spread:
// two of them), so the first windows of a cluster judge with a wider margin
// than the hundredth. A spread learnt by `limpwatch train` is a prior with
// the number of windows it was learnt on: it narrows the start, and the
// online estimate takes over where it is wider.
//
// The tail (how often, and how far, healthy servers stray more than two
// spreads above their usual value) is counted over every server's windows
// together, but the judged server's own: a server's own few windows rarely
// hold enough bursts to tell their share, and a limp that has just begun
// would otherwise be taken for that server's bursts (as a radar's noise
// estimate leaves out the cells around its target).
//
// A spread below 1 % is not believed: no latency measurement here resolves
// a difference that small, and a cluster of identical constant series would
// otherwise make any difference infinitely significant.
#ifndef LIMPWATCH_ANALYZER_METRIC_NOISE_H_
#define LIMPWATCH_ANALYZER_METRIC_NOISE_H_

#include <cstddef>
#include <vector>

#include "limpwatch/analyzer/residual_history.h"
#include "limpwatch/analyzer/shift_detector.h"

namespace limpwatch::analyzer {

class MetricNoise {
 public:
  static constexpr double kSmallestSpread = 0.01;
  // A server's history counts once it holds this many windows.
  static constexpr size_t kMinHistory = 8;
  // The tail of bursts is learnt from at most this many servers' windows.
  static constexpr size_t kTailServers = 32;

  void SetPrior(double sigma, double windows);

  // The noise of this window from the histories of the servers compared;
  // `overlap`: how many windows share each tick (window / shift).
  void Estimate(const std::vector<const ResidualHistory*>& histories, double overlap);

  bool ready() const { return ready_; }
  double sigma() const { return noise_.sigma; }
  double wander() const { return noise_.wander; }
  // The spread, wander and tail the charts judge this window's evidence by;
  // For(history): with the tail of every server but the one of `history`.
  const ShiftNoise& shift_noise() const { return noise_; }
  ShiftNoise For(const ResidualHistory* judged) const;

  // The spread learnt online without its uncertainty, and the healthy
  // windows the servers behind it have had (what training keeps).
  double measured_sigma() const { return measured_sigma_; }
  double measured_windows() const { return measured_windows_; }

 private:
  double prior_sigma_ = 0;
  double prior_windows_ = 0;
  bool ready_ = false;
  ShiftNoise noise_;
  double measured_sigma_ = 0;
  double measured_windows_ = 0;
  // The tail's counts per server of this window's pool, and their sum.
  std::vector<std::pair<const ResidualHistory*, ResidualHistory::Beyond>> pool_;
  ResidualHistory::Beyond pooled_;
};

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_METRIC_NOISE_H_
