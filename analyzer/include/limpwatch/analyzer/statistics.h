// Small statistics used throughout the analyzer.
#ifndef LIMPWATCH_ANALYZER_STATISTICS_H_
#define LIMPWATCH_ANALYZER_STATISTICS_H_

#include <optional>
#include <vector>

namespace limpwatch::analyzer {

// The median (mean of the two middle values for an even count); 0 for none.
double Median(std::vector<double> values);
// The same of values already sorted ascending.
template <typename T>
double MedianOfSorted(const std::vector<T>& sorted) {
  if (sorted.empty()) return 0.0;
  size_t middle = sorted.size() / 2;
  return sorted.size() % 2 == 1 ? double(sorted[middle]) : (double(sorted[middle - 1]) + double(sorted[middle])) / 2.0;
}
// A normal distribution's standard deviation is 1.4826 times its median
// absolute deviation: the robust spread of `values` (0 for none).
inline constexpr double kMadToSigma = 1.4826;
double RobustSpread(std::vector<double> values);
// The same, reordering `values` instead of copying them.
double MedianInPlace(std::vector<double>& values);

// Pearson correlation; nullopt when either series is constant or too short.
std::optional<double> Correlation(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_STATISTICS_H_
