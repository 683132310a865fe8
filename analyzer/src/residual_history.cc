#include "limpwatch/analyzer/residual_history.h"

#include <algorithm>
#include <cmath>

#include "limpwatch/analyzer/statistics.h"

namespace limpwatch::analyzer {

ResidualHistory::ResidualHistory(size_t capacity, size_t block)
    : capacity_(std::max<size_t>(capacity, 8)), block_(std::max<size_t>(block, 1)) {
  values_.reserve(capacity_);
}

void ResidualHistory::Add(double value) {
  if (values_.size() < capacity_) {
    values_.push_back(static_cast<float>(value));
  } else {
    values_[next_] = static_cast<float>(value);
    next_ = (next_ + 1) % capacity_;
  }
  ++added_;
  if (values_.size() >= 8) largest_deviation_ = std::max(largest_deviation_, value - center_);
  // Block means measure how the core of the values wanders: bursts, which
  // the tail accounts for, are clipped at three spreads first.
  if (values_.size() >= 8 && scale_ > 0) {
    value = std::clamp(value, center_ - 3.0 * scale_, center_ + 3.0 * scale_);
  }
  block_sum_ += value;
  if (++block_filled_ == block_) {
    float mean = static_cast<float>(block_sum_ / double(block_));
    if (block_means_.size() < kBlockMeans) {
      block_means_.push_back(mean);
    } else {
      block_means_[next_block_] = mean;
      next_block_ = (next_block_ + 1) % kBlockMeans;
    }
    block_sum_ = 0;
    block_filled_ = 0;
  }
}

void ResidualHistory::Refresh() const {
  // After every value while few are kept, then after every eighth.
  if (refreshed_at_ == added_) return;
  bool stale = refreshed_at_ == UINT64_MAX || values_.size() < 64 || added_ - refreshed_at_ >= 8;
  if (!stale) return;
  refreshed_at_ = added_;
  std::vector<float> sorted(values_.begin(), values_.end());
  std::sort(sorted.begin(), sorted.end());
  center_ = MedianOfSorted(sorted);
  std::vector<float> absolute(sorted.size());
  for (size_t index = 0; index < sorted.size(); ++index) absolute[index] = std::fabs(float(double(sorted[index]) - center_));
  std::sort(absolute.begin(), absolute.end());
  scale_ = kMadToSigma * MedianOfSorted(absolute);
}

double ResidualHistory::center() const {
  Refresh();
  return center_;
}

double ResidualHistory::scale() const {
  Refresh();
  return scale_;
}

ResidualHistory::Beyond ResidualHistory::CountBeyond(double start) const {
  Beyond counts;
  double bound = center() + start;
  for (float value : values_) {
    counts.values += 1;
    if (double(value) > bound) {
      counts.beyond += 1;
      counts.excess += double(value) - bound;
    }
  }
  return counts;
}

BurstTail TailOf(const ResidualHistory::Beyond& counts, double start, double spread) {
  BurstTail tail;
  tail.start = start;
  tail.share = std::max(counts.beyond, 1.0) / (counts.values + 1.0);
  tail.scale = std::max(counts.beyond > 0 ? counts.excess / counts.beyond : 0.0, 0.5 * spread);
  return tail;
}

std::optional<double> ResidualHistory::WanderFactor() const {
  if (block_means_.size() < 8) return std::nullopt;
  double single = scale();
  if (single <= 0) return std::nullopt;
  std::vector<double> means(block_means_.begin(), block_means_.end());
  double spread = RobustSpread(std::move(means));
  return spread * spread * double(block_) / (single * single);
}

}  // namespace limpwatch::analyzer
