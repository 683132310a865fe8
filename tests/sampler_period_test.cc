// The random periods of per-CPU sampling events (runtime/src/sampler/period_jitter.h).
#include <gtest/gtest.h>

#include <set>

#include "sampler/period_jitter.h"

namespace limpwatch::runtime {
namespace {

TEST(PeriodJitterTest, PeriodsStayWithinAQuarterOfTheNominalRate) {
  PeriodJitter jitter(199, 42);
  double shortest = 1e9 / (199 * 1.25);
  double longest = 1e9 / (199 * 0.75);
  for (int draw = 0; draw < 100000; ++draw) {
    double period = double(jitter.NextPeriodNs());
    ASSERT_GE(period, shortest - 1);
    ASSERT_LE(period, longest + 1);
  }
}

TEST(PeriodJitterTest, TheMeanRateIsTheNominalOne) {
  for (uint32_t rate : {1u, 10u, 199u, 4000u}) {
    PeriodJitter jitter(rate, 7);
    double rate_sum = 0;
    constexpr int kDraws = 200000;
    for (int draw = 0; draw < kDraws; ++draw) rate_sum += 1e9 / double(jitter.NextPeriodNs());
    EXPECT_NEAR(rate_sum / kDraws, rate, rate * 0.005) << rate;
  }
}

TEST(PeriodJitterTest, PeriodsKeepChangingAndSeedsDiffer) {
  PeriodJitter first(199, 1);
  PeriodJitter second(199, 2);
  std::set<uint64_t> distinct;
  int same = 0;
  for (int draw = 0; draw < 1000; ++draw) {
    uint64_t period = first.NextPeriodNs();
    distinct.insert(period);
    same += period == second.NextPeriodNs();
  }
  EXPECT_GT(distinct.size(), 900u);
  EXPECT_LT(same, 10);
}

TEST(PeriodJitterTest, ASeedOfZeroStillSpreads) {
  PeriodJitter jitter(199, 0);
  std::set<uint64_t> distinct;
  for (int draw = 0; draw < 100; ++draw) distinct.insert(jitter.NextPeriodNs());
  EXPECT_GT(distinct.size(), 90u);
}

}  // namespace
}  // namespace limpwatch::runtime
