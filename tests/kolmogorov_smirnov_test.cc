// The two-sample Kolmogorov-Smirnov test of analyzer/ks_test.h, against
// values worked out by hand and the Kolmogorov distribution's table.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "limpwatch/analyzer/ks_test.h"

namespace limpwatch::analyzer {
namespace {

TEST(KolmogorovSmirnovTest, IdenticalSamplesAreNotApart) {
  std::vector<double> sample = {0.3, 0.1, 0.7, 0.7, 0.2, 0.9, 0.4, 0.5};
  KsResult result = KsTwoSample(sample, sample);
  EXPECT_EQ(result.statistic, 0.0);
  EXPECT_EQ(result.p_value, 1.0);
}

TEST(KolmogorovSmirnovTest, StatisticStepsBothSamplesAtATie) {
  // CDFs: at 1 1/4-0, at 2 2/4-0, at 3 3/4-1/5, at 4 1-2/5, then the second
  // catches up: D = 0.6. Stepping the first sample alone at the tie at 3
  // would see 3/4 - 0 = 0.75.
  KsResult result = KsTwoSample({4, 3, 2, 1}, {3, 4, 5, 6, 7});
  EXPECT_DOUBLE_EQ(result.statistic, 0.6);
  // ne = 20/9; lambda = (sqrt(ne) + 0.12 + 0.11/sqrt(ne)) * 0.6 = 1.0107;
  // Q_KS(1.0107) = 0.2587, summed by hand from the series.
  EXPECT_NEAR(result.p_value, 0.2587, 5e-4);
}

TEST(KolmogorovSmirnovTest, StatisticIsSymmetric) {
  std::vector<double> first = {1.5, 2.5, 2.5, 9, 0.1, 3}, second = {2.5, 2.6, 0.05, 7, 8};
  EXPECT_DOUBLE_EQ(KsTwoSample(first, second).statistic, KsTwoSample(second, first).statistic);
}

TEST(KolmogorovSmirnovTest, FullySeparatedSamplesOfFiftyAreFarApart) {
  std::vector<double> low, high;
  for (int i = 0; i < 50; ++i) {
    low.push_back(1.0 + i * 0.01);
    high.push_back(2.0 + i * 0.01);
  }
  KsResult result = KsTwoSample(low, high);
  EXPECT_DOUBLE_EQ(result.statistic, 1.0);
  // ne = 25: lambda = 5 + 0.12 + 0.022 = 5.142, Q = 2 exp(-2 lambda^2) = 2.16e-23.
  EXPECT_NEAR(std::log10(result.p_value), std::log10(2.165e-23), 0.01);
}

TEST(KolmogorovSmirnovTest, TailMatchesTheKolmogorovTable) {
  // The distribution's classic critical values, on both sides of the switch
  // between its two series.
  EXPECT_NEAR(KolmogorovTail(0.5), 0.96395, 1e-5);
  EXPECT_NEAR(KolmogorovTail(1.0), 0.27000, 1e-5);
  EXPECT_NEAR(KolmogorovTail(1.224), 0.09993, 1e-5);
  EXPECT_NEAR(KolmogorovTail(1.358), 0.05003, 1e-5);
  EXPECT_NEAR(KolmogorovTail(1.628), 0.00998, 1e-5);
  EXPECT_NEAR(KolmogorovTail(1.949), 0.00100, 1e-5);
  EXPECT_EQ(KolmogorovTail(0), 1.0);
  // Continuous where the two series meet.
  EXPECT_NEAR(KolmogorovTail(1.18 - 1e-9), KolmogorovTail(1.18 + 1e-9), 1e-7);
}

TEST(KolmogorovSmirnovTest, SameDistanceIsStrongerEvidenceInLargerSamples) {
  EXPECT_GT(KsPValue(0.3, 20, 20), KsPValue(0.3, 200, 200));
  EXPECT_LT(KsPValue(0.3, 200, 200), 1e-6);
}

TEST(KolmogorovSmirnovTest, AnEmptySampleSaysNothing) {
  KsResult result = KsTwoSample({}, {1, 2, 3});
  EXPECT_EQ(result.statistic, 0.0);
  EXPECT_EQ(result.p_value, 1.0);
}

}  // namespace
}  // namespace limpwatch::analyzer
