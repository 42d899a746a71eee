// From a run request to results: plan the cases (no GPU needed, so usage errors come first),
// then for each case allocate, fill, run once, verify against the CPU reference, and time.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "harness/lab.hpp"
#include "harness/sizes.hpp"

namespace memlab {

struct run_request {
  std::vector<std::string> labs;      // empty: every lab
  std::vector<std::string> variants;  // empty: every variant of each lab
  std::vector<dtype> dtypes;          // empty: each lab's default dtype
  std::string sizes;                  // empty: each lab's default sizes
  axis_values axes;                   // empty lists: each lab's defaults
  int device = 0;
  double max_time_s = 0.5;  // per case, split evenly between cold and batch
  bool verify = true;
  bool progress = true;     // one line per case on the progress stream
  bool measure_ceiling = true;
  std::string command;      // recorded in the report
};

struct planned_case {
  const lab* l = nullptr;
  const variant_info* v = nullptr;
  case_params p;
  std::string size_text;  // as the user wrote it: "2^24"
};

// Throws std::invalid_argument (a usage error) for unknown labs, variants, dtypes or bad sizes.
std::vector<planned_case> plan_cases(const run_request& req);

// Runs every planned case on req.device. Throws no_device_error when there is no usable GPU.
// A failed verification is recorded (status failed), not thrown.
run_report run_cases(const run_request& req, const std::vector<planned_case>& cases, std::ostream& progress);

}  // namespace memlab
