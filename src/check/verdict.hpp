// memlab check's verdicts: floors from a reference's median and spread, a measurement judged against
// them, and siblings (a GPU, or a pair, well below the node's median). Plain C++, host-tested.
//
// The rule (written in every reference file and in docs/check.md): for a metric whose higher values
// are better, with the reference median m and relative spread s (over every GPU and run it was made
// from),
//   fail below m x (1 - max(0.10, 4 s)),  warn below m x (1 - max(0.05, 2 s));
// for one whose lower values are better (latency) the same margins above m. A measurement more than
// max(0.05, 4 s) below the median of the same metric over the node's GPUs (or pairs) is a sibling
// (above the median for latency), even when it clears the floor.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace memlab::check {

// busy: flagged (fail, warn or sibling), but another process on the GPU could have moved the figure;
// interrupted: not measured, a signal stopped the check first.
enum class verdict { pass, warn, fail, sibling, busy, skip, no_reference, interrupted };
inline constexpr verdict all_verdicts[] = {verdict::pass, verdict::warn,         verdict::fail,
                                           verdict::sibling, verdict::busy,     verdict::skip,
                                           verdict::no_reference, verdict::interrupted};
std::string_view to_string(verdict v);
std::optional<verdict> verdict_named(std::string_view name);

struct floor_rule {
  double fail_margin = 0.10;      // the least margin below the median before a failure
  double fail_spread_factor = 4;  // ... or this many spreads, when larger
  double warn_margin = 0.05;
  double warn_spread_factor = 2;
  double sibling_margin = 0.05;  // below the node's median by more than this: a sibling
  double sibling_spread_factor = 4;
  friend bool operator==(const floor_rule&, const floor_rule&) = default;
};
// The rule in words, as the reference files carry it.
std::string rule_text(const floor_rule& r);

struct floors {
  double warn_at = 0, fail_at = 0;  // thresholds: below (higher is better) or above (lower is better)
};
floors floors_of(double median, double spread, bool higher_is_better, const floor_rule& r);

// The relative spread of `values`: 1.4826 x the median absolute deviation over the median (a
// standard deviation one odd value cannot inflate); 0 for fewer than two values or a zero median.
double relative_spread(std::span<const double> values);
double median_of(std::vector<double> values);

// A measurement against floors: pass, warn or fail.
verdict judge(double measured, const floors& f, bool higher_is_better);

// A metric's margin for siblings, from the reference spread (0 without one).
double sibling_margin(double reference_spread, const floor_rule& r);
// Which of `values` (one per GPU or pair) lie beyond `margin` of their median, on the bad side. Needs
// two values or more; a value that is not a number (a skipped measurement) is never flagged.
std::vector<bool> siblings(std::span<const double> values, double margin, bool higher_is_better);

// The exit status of a check (documented in `memlab check --help` and docs/check.md).
inline constexpr int exit_pass = 0;
inline constexpr int exit_fail = 1;          // a metric failed (below its floor, or an NVML rule)
inline constexpr int exit_warn = 5;          // a metric in its warning band, or a sibling, none failed
inline constexpr int exit_no_reference = 6;  // no reference for this GPU model: measured, not judged
inline constexpr int exit_busy = 7;          // another process on a GPU could have moved a flagged figure
inline constexpr int exit_interrupted = 130;  // a signal stopped the check: the rows measured are written
// The status of a set of verdicts: interrupted, then fail, then busy, then no reference, then warn or
// sibling, else pass.
int exit_status(std::span<const verdict> verdicts, bool reference_found);

}  // namespace memlab::check
