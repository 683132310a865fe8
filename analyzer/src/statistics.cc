#include "limpwatch/analyzer/statistics.h"

#include <algorithm>
#include <cmath>

namespace limpwatch::analyzer {

double Median(std::vector<double> values) { return MedianInPlace(values); }

double RobustSpread(std::vector<double> values) {
  double center = MedianInPlace(values);
  for (double& value : values) value = std::fabs(value - center);
  return kMadToSigma * MedianInPlace(values);
}

double MedianInPlace(std::vector<double>& values) {
  if (values.empty()) return 0.0;
  size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + middle, values.end());
  double upper = values[middle];
  if (values.size() % 2 == 1) return upper;
  double lower = *std::max_element(values.begin(), values.begin() + middle);
  return (lower + upper) / 2.0;
}

std::optional<double> Correlation(const std::vector<double>& x, const std::vector<double>& y) {
  size_t n = std::min(x.size(), y.size());
  if (n < 2) return std::nullopt;
  double mean_x = 0, mean_y = 0;
  for (size_t i = 0; i < n; ++i) {
    mean_x += x[i];
    mean_y += y[i];
  }
  mean_x /= double(n);
  mean_y /= double(n);
  double covariance = 0, variance_x = 0, variance_y = 0;
  for (size_t i = 0; i < n; ++i) {
    covariance += (x[i] - mean_x) * (y[i] - mean_y);
    variance_x += (x[i] - mean_x) * (x[i] - mean_x);
    variance_y += (y[i] - mean_y) * (y[i] - mean_y);
  }
  // A constant series has no defined correlation: the invariant is not tested.
  if (variance_x <= 1e-12 * (1 + mean_x * mean_x) || variance_y <= 1e-12 * (1 + mean_y * mean_y)) {
    return std::nullopt;
  }
  return covariance / std::sqrt(variance_x * variance_y);
}

}  // namespace limpwatch::analyzer
