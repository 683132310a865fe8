// The two-sample Kolmogorov-Smirnov test: whether two samples come from the
// same distribution, whatever its shape. `limpwatch compare` asks it of each
// function's time per call in two periods (Spectroscope's response-time
// mutations): times per call are skewed and often bimodal (cache hits and
// misses), so a test of means or of normal samples would mislead.
#ifndef LIMPWATCH_ANALYZER_KS_TEST_H_
#define LIMPWATCH_ANALYZER_KS_TEST_H_

#include <cstddef>
#include <span>
#include <vector>

namespace limpwatch::analyzer {

struct KsResult {
  double statistic = 0;  // D: the largest distance between the two empirical CDFs, 0..1
  double p_value = 1;
};

// D of two samples, each sorted ascending. 0 when either is empty.
double KsStatistic(std::span<const double> sorted_first, std::span<const double> sorted_second);

// The Kolmogorov distribution's upper tail, Q_KS(lambda) = 2 sum_{j>=1}
// (-1)^(j-1) exp(-2 j^2 lambda^2): 1 at lambda <= 0, falling towards 0.
double KolmogorovTail(double lambda);

// The asymptotic p-value of D for samples of n and m values, with Stephens'
// correction for small samples: Q_KS((sqrt(ne) + 0.12 + 0.11 / sqrt(ne)) D),
// ne = n m / (n + m). 1 when either sample is empty.
double KsPValue(double statistic, size_t n, size_t m);

// Sorts both samples and tests them.
KsResult KsTwoSample(std::vector<double> first, std::vector<double> second);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_KS_TEST_H_
