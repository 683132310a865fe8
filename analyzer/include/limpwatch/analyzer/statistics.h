// Small statistics used throughout the analyzer.
#ifndef LIMPWATCH_ANALYZER_STATISTICS_H_
#define LIMPWATCH_ANALYZER_STATISTICS_H_

#include <optional>
#include <vector>

namespace limpwatch::analyzer {

// The median (mean of the two middle values for an even count); 0 for none.
double Median(std::vector<double> values);
// The same, reordering `values` instead of copying them.
double MedianInPlace(std::vector<double>& values);

// Pearson correlation; nullopt when either series is constant or too short.
std::optional<double> Correlation(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_STATISTICS_H_
