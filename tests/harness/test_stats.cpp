// summarize() and quantile_sorted() against NumPy's default (type 7, "linear") percentiles,
// worked out by hand: position h = q (n - 1), linear between the two order statistics around it.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "harness/stats.hpp"

namespace {

using memlab::quantile_sorted;
using memlab::summarize;

TEST(Stats, EvenCountInterpolates) {
  // sorted 1 2 3 4: p25 h=0.75 -> 1.75, median h=1.5 -> 2.5, p75 h=2.25 -> 3.25.
  const auto s = summarize({4, 1, 3, 2});  // unsorted on purpose
  EXPECT_EQ(s.samples, 4u);
  EXPECT_DOUBLE_EQ(s.min_ms, 1);
  EXPECT_DOUBLE_EQ(s.max_ms, 4);
  EXPECT_DOUBLE_EQ(s.mean_ms, 2.5);
  EXPECT_DOUBLE_EQ(s.median_ms, 2.5);
  EXPECT_DOUBLE_EQ(s.p25_ms, 1.75);
  EXPECT_DOUBLE_EQ(s.p75_ms, 3.25);
  EXPECT_DOUBLE_EQ(s.rel_spread, (3.25 - 1.75) / 2.5);
}

TEST(Stats, EvenCountSix) {
  // 1 3 5 7 9 11: median h=2.5 -> 6, p25 h=1.25 -> 3.5, p75 h=3.75 -> 8.5.
  const auto s = summarize({11, 9, 7, 5, 3, 1});
  EXPECT_DOUBLE_EQ(s.median_ms, 6);
  EXPECT_DOUBLE_EQ(s.p25_ms, 3.5);
  EXPECT_DOUBLE_EQ(s.p75_ms, 8.5);
  EXPECT_DOUBLE_EQ(s.mean_ms, 6);
  EXPECT_DOUBLE_EQ(s.rel_spread, 5.0 / 6.0);
}

TEST(Stats, OddCountHitsOrderStatistics) {
  // 10 20 30 40 50: every quartile lands on a sample.
  const auto s = summarize({30, 50, 10, 40, 20});
  EXPECT_EQ(s.samples, 5u);
  EXPECT_DOUBLE_EQ(s.median_ms, 30);
  EXPECT_DOUBLE_EQ(s.p25_ms, 20);
  EXPECT_DOUBLE_EQ(s.p75_ms, 40);
  EXPECT_DOUBLE_EQ(s.mean_ms, 30);
  EXPECT_DOUBLE_EQ(s.rel_spread, 20.0 / 30.0);
}

TEST(Stats, SkewedDataMedianIgnoresOutlier) {
  // 1 2 4 8 16 32 100: p25 h=1.5 -> 3, median 8, p75 h=4.5 -> 24; mean is pulled up, median is not.
  const auto s = summarize({100, 1, 2, 4, 8, 16, 32});
  EXPECT_DOUBLE_EQ(s.median_ms, 8);
  EXPECT_DOUBLE_EQ(s.p25_ms, 3);
  EXPECT_DOUBLE_EQ(s.p75_ms, 24);
  EXPECT_DOUBLE_EQ(s.mean_ms, 163.0 / 7.0);
  EXPECT_DOUBLE_EQ(s.rel_spread, 21.0 / 8.0);
}

TEST(Stats, QuantileMatchesNumpy) {
  // np.percentile([1, 2, 4, 8, 16, 32, 100], 90) == 59.2  (h = 5.4: 32 + 0.4 * 68)
  const std::vector<double> a{1, 2, 4, 8, 16, 32, 100};
  EXPECT_DOUBLE_EQ(quantile_sorted(a, 0.9), 59.2);
  EXPECT_DOUBLE_EQ(quantile_sorted(a, 0.0), 1);
  EXPECT_DOUBLE_EQ(quantile_sorted(a, 1.0), 100);
  // np.percentile([3, 5, 7, 8, 12, 13, 14, 18, 21], 10) == 4.6  (h = 0.8)
  const std::vector<double> b{3, 5, 7, 8, 12, 13, 14, 18, 21};
  EXPECT_NEAR(quantile_sorted(b, 0.1), 4.6, 1e-12);
  EXPECT_DOUBLE_EQ(quantile_sorted(b, 0.25), 7);
  EXPECT_DOUBLE_EQ(quantile_sorted(b, 0.5), 12);
  EXPECT_DOUBLE_EQ(quantile_sorted(b, 0.75), 14);
  // Two samples: the median is their midpoint.
  EXPECT_DOUBLE_EQ(quantile_sorted({2, 4}, 0.5), 3);
}

TEST(Stats, QuantileRejectsBadInput) {
  EXPECT_THROW((void)quantile_sorted({}, 0.5), std::invalid_argument);
  EXPECT_THROW((void)quantile_sorted({1, 2}, -0.1), std::invalid_argument);
  EXPECT_THROW((void)quantile_sorted({1, 2}, 1.5), std::invalid_argument);
}

TEST(Stats, SingleSampleHasNoSpread) {
  const auto s = summarize({2.5});
  EXPECT_EQ(s.samples, 1u);
  EXPECT_DOUBLE_EQ(s.min_ms, 2.5);
  EXPECT_DOUBLE_EQ(s.max_ms, 2.5);
  EXPECT_DOUBLE_EQ(s.median_ms, 2.5);
  EXPECT_DOUBLE_EQ(s.mean_ms, 2.5);
  EXPECT_DOUBLE_EQ(s.p25_ms, 2.5);
  EXPECT_DOUBLE_EQ(s.p75_ms, 2.5);
  EXPECT_EQ(s.rel_spread, 0.0);
}

TEST(Stats, EmptyIsAllZero) {
  const auto s = summarize({});
  EXPECT_EQ(s.samples, 0u);
  EXPECT_EQ(s.min_ms, 0.0);
  EXPECT_EQ(s.max_ms, 0.0);
  EXPECT_EQ(s.median_ms, 0.0);
  EXPECT_EQ(s.mean_ms, 0.0);
  EXPECT_EQ(s.p25_ms, 0.0);
  EXPECT_EQ(s.p75_ms, 0.0);
  EXPECT_EQ(s.rel_spread, 0.0);
}

TEST(Stats, RelSpread) {
  // Identical samples: no spread at all.
  EXPECT_EQ(summarize({1.0, 1.0, 1.0, 1.0}).rel_spread, 0.0);
  // A single preempted sample among many barely moves the IQR (a stddev would explode).
  std::vector<double> v(99, 1.0);
  v.push_back(1000.0);
  const auto s = summarize(v);
  EXPECT_EQ(s.rel_spread, 0.0);
  EXPECT_DOUBLE_EQ(s.max_ms, 1000.0);
  // A zero median has no scale: the spread is reported as 0, not inf or NaN.
  EXPECT_EQ(summarize({0.0, 0.0, 0.0}).rel_spread, 0.0);
}

}  // namespace
