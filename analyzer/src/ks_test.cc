#include "limpwatch/analyzer/ks_test.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace limpwatch::analyzer {

double KsStatistic(std::span<const double> sorted_first, std::span<const double> sorted_second) {
  if (sorted_first.empty() || sorted_second.empty()) return 0;
  const double n = double(sorted_first.size());
  const double m = double(sorted_second.size());
  size_t i = 0, j = 0;
  double largest = 0;
  while (i < sorted_first.size() && j < sorted_second.size()) {
    // Equal values step both CDFs at once: stepping one alone would measure a
    // gap between the two that no point of the line has.
    double value = std::min(sorted_first[i], sorted_second[j]);
    while (i < sorted_first.size() && sorted_first[i] == value) ++i;
    while (j < sorted_second.size() && sorted_second[j] == value) ++j;
    largest = std::max(largest, std::fabs(double(i) / n - double(j) / m));
  }
  // Past the end of one sample its CDF is 1 and the other's only rises, so
  // the distance only shrinks from here.
  return largest;
}

double KolmogorovTail(double lambda) {
  if (lambda <= 0) return 1;
  // The alternating series converges slowly for small lambda, where the
  // Jacobi theta form of the same function, 1 - sqrt(2 pi) / lambda
  // sum_{j>=1} exp(-(2j-1)^2 pi^2 / (8 lambda^2)), converges in a few terms.
  if (lambda < 1.18) {
    const double scale = -std::numbers::pi * std::numbers::pi / (8 * lambda * lambda);
    double sum = 0;
    for (int j = 1; j <= 6; ++j) {
      double odd = 2.0 * j - 1;
      sum += std::exp(odd * odd * scale);
    }
    return std::clamp(1 - std::sqrt(2 * std::numbers::pi) / lambda * sum, 0.0, 1.0);
  }
  double sum = 0;
  double sign = 1;
  for (int j = 1; j <= 100; ++j) {
    double term = std::exp(-2.0 * j * j * lambda * lambda);
    sum += sign * term;
    if (term < 1e-300 || term < 1e-16 * sum) break;
    sign = -sign;
  }
  return std::clamp(2 * sum, 0.0, 1.0);
}

double KsPValue(double statistic, size_t n, size_t m) {
  if (n == 0 || m == 0) return 1;
  const double effective = double(n) * double(m) / double(n + m);
  const double root = std::sqrt(effective);
  return KolmogorovTail((root + 0.12 + 0.11 / root) * statistic);
}

KsResult KsTwoSample(std::vector<double> first, std::vector<double> second) {
  std::sort(first.begin(), first.end());
  std::sort(second.begin(), second.end());
  KsResult result;
  result.statistic = KsStatistic(first, second);
  result.p_value = KsPValue(result.statistic, first.size(), second.size());
  return result;
}

}  // namespace limpwatch::analyzer
