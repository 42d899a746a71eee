#include "check/verdict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "harness/stats.hpp"

namespace memlab::check {

std::string_view to_string(verdict v) {
  switch (v) {
    case verdict::pass: return "pass";
    case verdict::warn: return "warn";
    case verdict::fail: return "fail";
    case verdict::sibling: return "sibling";
    case verdict::busy: return "busy";
    case verdict::skip: return "skip";
    case verdict::no_reference: return "no_reference";
    case verdict::interrupted: return "interrupted";
  }
  return "?";
}

std::optional<verdict> verdict_named(std::string_view name) {
  for (verdict v : all_verdicts)
    if (to_string(v) == name) return v;
  return std::nullopt;
}

std::string rule_text(const floor_rule& r) {
  return fmt::format(
      "median m and relative spread s (1.4826 x MAD / median over every GPU, or pair, and run); higher is "
      "better: fail below m x (1 - max({}, {} s)), warn below m x (1 - max({}, {} s)); lower is better "
      "(latency): fail above m x (1 + max({}, {} s)), warn above m x (1 + max({}, {} s)); sibling: more "
      "than max({}, {} s) worse than the median of the node's GPUs (or pairs)",
      r.fail_margin, r.fail_spread_factor, r.warn_margin, r.warn_spread_factor, r.fail_margin, r.fail_spread_factor,
      r.warn_margin, r.warn_spread_factor, r.sibling_margin, r.sibling_spread_factor);
}

floors floors_of(double median, double spread, bool higher_is_better, const floor_rule& r) {
  const double fail = std::max(r.fail_margin, r.fail_spread_factor * spread);
  const double warn = std::max(r.warn_margin, r.warn_spread_factor * spread);
  const double sign = higher_is_better ? -1.0 : 1.0;
  return {.warn_at = median * (1 + sign * warn), .fail_at = median * (1 + sign * fail)};
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return quantile_sorted(v, 0.5);  // the harness's statistics (type 7: the usual median)
}

double relative_spread(std::span<const double> values) {
  if (values.size() < 2) return 0;
  const double m = median_of({values.begin(), values.end()});
  if (m == 0) return 0;
  std::vector<double> dev;
  for (double x : values) dev.push_back(std::abs(x - m));
  return 1.4826 * median_of(std::move(dev)) / std::abs(m);
}

verdict judge(double measured, const floors& f, bool higher_is_better) {
  if (higher_is_better) {
    if (measured < f.fail_at) return verdict::fail;
    if (measured < f.warn_at) return verdict::warn;
  } else {
    if (measured > f.fail_at) return verdict::fail;
    if (measured > f.warn_at) return verdict::warn;
  }
  return verdict::pass;
}

double sibling_margin(double reference_spread, const floor_rule& r) {
  return std::max(r.sibling_margin, r.sibling_spread_factor * reference_spread);
}

std::vector<bool> siblings(std::span<const double> values, double margin, bool higher_is_better) {
  std::vector<bool> out(values.size(), false);
  std::vector<double> known;
  for (double x : values)
    if (!std::isnan(x)) known.push_back(x);
  if (known.size() < 2) return out;
  const double m = median_of(known);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) continue;
    out[i] = higher_is_better ? values[i] < m * (1 - margin) : values[i] > m * (1 + margin);
  }
  return out;
}

int exit_status(std::span<const verdict> verdicts, bool reference_found) {
  const auto any = [&](verdict v) { return std::find(verdicts.begin(), verdicts.end(), v) != verdicts.end(); };
  if (any(verdict::interrupted)) return exit_interrupted;
  if (any(verdict::fail)) return exit_fail;
  if (any(verdict::busy)) return exit_busy;
  if (!reference_found) return exit_no_reference;
  if (any(verdict::warn) || any(verdict::sibling)) return exit_warn;
  return exit_pass;
}

}  // namespace memlab::check
