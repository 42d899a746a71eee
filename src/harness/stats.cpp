#include "harness/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace memlab {

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("quantile_sorted: no samples");
  if (!(q >= 0.0 && q <= 1.0)) throw std::invalid_argument("quantile_sorted: q must lie in [0, 1]");
  // Type 7: position h = q (n - 1) on 0-based order statistics, linear between its neighbours.
  const double h = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  const double frac = h - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

summary summarize(std::vector<double> samples_ms) {
  summary s;
  if (samples_ms.empty()) return s;
  std::sort(samples_ms.begin(), samples_ms.end());
  s.samples = samples_ms.size();
  s.min_ms = samples_ms.front();
  s.max_ms = samples_ms.back();
  s.mean_ms = std::accumulate(samples_ms.begin(), samples_ms.end(), 0.0) / static_cast<double>(s.samples);
  s.median_ms = quantile_sorted(samples_ms, 0.5);
  s.p25_ms = quantile_sorted(samples_ms, 0.25);
  s.p75_ms = quantile_sorted(samples_ms, 0.75);
  // One sample has no spread; a zero median (a timer that never ticked) has no scale to divide by.
  if (s.samples >= 2 && s.median_ms > 0) s.rel_spread = (s.p75_ms - s.p25_ms) / s.median_ms;
  return s;
}

}  // namespace memlab
