// memlab check's fault codes: what a flagged row means and what an operator does about it, as one
// table (faults.cpp), mirrored in docs/check.md (a test compares the two). A code is stable: once
// released it keeps its meaning and its action; new codes may be added.
//
// Which code a row carries: a row that fails, warns or is a sibling carries its metric's code
// (check/suite.hpp, metric::fault); a lab case that did not give a figure carries the code of why
// (data_corruption, cuda_error, case_error, out_of_memory); a row another process on its GPU could
// have moved carries gpu_busy instead. A failure takes the code's action; a warning or a sibling
// takes `monitor`, whatever the code.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace memlab::check {

// What to do, from the least to the most disruptive for the node's users (rerun aside).
enum class action {
  monitor,  // keep it in service and watch the figure (a warning, a sibling, a history)
  rerun,    // the GPU was busy: run the check again when it is idle
  reset,    // drain the GPU, reset it (nvidia-smi -r or a reboot) and check again
  drain,    // take the node out of service for a person to look (a link, cooling, a slow level)
  replace,  // the part is at fault: take it out and have it replaced
};
std::string_view to_string(action a);
std::optional<action> action_named(std::string_view name);
// The more urgent of two actions: replace, drain, reset, rerun, monitor in that order.
action most_urgent(action a, action b);

struct fault {
  std::string_view code;       // snake_case, stable
  std::string_view raised_by;  // the metrics (or the event) that raise it
  std::string_view points_at;  // the level or part it points at
  std::string_view means;      // one line: what it means
  action on_fail = action::drain;
};

// Every code, in the order docs/check.md lists them.
std::span<const fault> faults();
// The code named `code`; nullptr when none is.
const fault* find_fault(std::string_view code);

// The codes a check gives without a metric's own.
namespace fault_code {
inline constexpr std::string_view gpu_busy = "gpu_busy";
inline constexpr std::string_view data_corruption = "data_corruption";
inline constexpr std::string_view cuda_error = "cuda_error";
inline constexpr std::string_view case_error = "case_error";
inline constexpr std::string_view out_of_memory = "out_of_memory";
}  // namespace fault_code

}  // namespace memlab::check
