// Summary statistics of timing samples (milliseconds).
#pragma once

#include <cstddef>
#include <vector>

namespace memlab {

struct summary {
  double min_ms = 0, max_ms = 0, median_ms = 0, mean_ms = 0, p25_ms = 0, p75_ms = 0;
  std::size_t samples = 0;
  // Interquartile range over the median: (p75 - p25) / median. Robust to the odd preempted
  // sample, which a standard deviation is not. 0 when there are fewer than two samples.
  double rel_spread = 0;
};

// Percentiles interpolate linearly between order statistics (the "type 7" rule of R and NumPy).
// An empty input gives an all-zero summary with samples == 0.
summary summarize(std::vector<double> samples_ms);

// The q-quantile (0 <= q <= 1) of sorted, non-empty data, same rule as summarize().
double quantile_sorted(const std::vector<double>& sorted, double q);

}  // namespace memlab
