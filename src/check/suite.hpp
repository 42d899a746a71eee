// memlab check's suite: one record per metric, as data. A metric the labs measure names the case
// (lab, rung, dtype, size, axis values) and the figure of its result it reads, so that it is measured
// the way its lab measures it (same kernels, same verification); a metric NVML gives names the
// reading. Adding a metric is one record here and a line of docs/check.md.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "harness/dtype.hpp"
#include "check/verdict.hpp"
#include "harness/plan.hpp"

namespace memlab::check {

// Where a metric belongs: each GPU, each ordered pair of GPUs, or the node as a whole.
enum class scope { gpu, pair, node };
std::string_view to_string(scope s);

struct row;            // check/check.hpp
struct nvml_readings;  // check/nvml.hpp
struct nvml_samples;

// An NVML metric: what it reads into its row (its value, the value expected, its words, a note; nothing
// when NVML gives no reading) and the rule that judges the row instead of a reference. The rules are in
// check/nvml_rules.cpp.
struct nvml_rule {
  void (*read)(row& r, const nvml_readings& at_rest, const nvml_samples& under_load) = nullptr;
  verdict (*judge)(const row& r) = nullptr;
  bool words = false;  // the value is shown in words the rule reads back (the check file's "shown")
};

// A value of a case's axis: a number, a word of the lab's axis (its grammar's: "h2d", "pinned"; the
// planner checks it, and so does a host test for every case of the suite), or a GPU count the check knows
// only when it runs.
enum class check_value {
  peer,  // the pair's other GPU
  gpus,  // how many GPUs are checked
};
using case_axis_value = std::variant<std::uint64_t, std::string_view, check_value>;

// A case of a lab, typed: what `memlab run <lab> --variant <variant> --dtype <type> --sizes <size>
// --<axis> <value>...` would run, and the result's figure the metric reads: a result field
// (harness/result.hpp: "gbps", "batch_gbps", "sm_clock_mhz", "nccl_tests_busbw_gbps") or a figure the
// lab's kernels measured ("ns_per_load").
struct lab_case {
  std::string_view lab, variant;
  dtype type = dtype::f32;
  std::uint64_t count = 0;  // the size: elements, or bytes when `bytes`
  bool bytes = false;
  std::vector<std::pair<std::string_view, case_axis_value>> axes{};
  std::string_view figure;

  [[nodiscard]] std::string size_text() const;  // "2^26", "256MiB", as --sizes takes it
};

struct metric {
  std::string_view name;   // snake_case, as the table, the JSON and the references key it
  std::string_view what;   // one line: what it measures
  std::string_view level;  // what a failure points at
  std::string_view unit;   // "GB/s", "ns", "MHz", "lanes", "errors"
  bool higher_is_better = true;
  scope where = scope::gpu;
  lab_case measured{};  // empty lab: not a lab's case
  nvml_rule nvml{};     // no read: not NVML's
  std::string_view fault;        // the code a flagged row carries (check/faults.hpp)
  bool others_move_it = true;    // another process on the GPU can move the figure (its row may be "busy")

  [[nodiscard]] bool from_lab() const { return !measured.lab.empty(); }
  [[nodiscard]] bool from_nvml() const { return nvml.read != nullptr; }
  // Judged against a reference (the lab's figures); NVML's readings are judged by their own rule.
  [[nodiscard]] bool has_reference() const { return from_lab(); }
};

// The suite, in the order the table shows it: per GPU, then pairs, then the node.
std::span<const metric> suite();
// The metric named `name`; nullptr when none is.
const metric* find_metric(std::string_view name);

// The text of a lab case, as `memlab run` would take it ("copy --variant vec16 --dtype f32 --sizes 2^26").
std::string command_of(const lab_case& c);
// The case's axes in words, the pair's other GPU and the GPUs checked given ("peer" -> "1").
std::vector<std::pair<std::string, std::string>> axes_of(const lab_case& c, int peer, int gpus);
// The case as run on GPU `device`: what `memlab run` takes to measure it again
// ("transfer --variant peer_ce --dtype u8 --sizes 256MiB --peer 1 --device 0").
std::string command_of(const lab_case& c, int device, int peer, int gpus);

// The run request of the case on GPU `device` of `device_count` (the pair's other GPU `peer`, `gpus`
// checked), its values typed from the record (a word by the lab's own axis), planned by the labs' planner:
// the one case it plans, or why it plans none (one line: a lab or rung not built, a value the lab refuses).
struct case_plan_result {
  run_request request;
  std::optional<planned_case> planned;
  std::string why;
};
case_plan_result plan_case(const lab_case& c, std::span<const lab* const> built, std::span<const missing_lab> missing,
                           int device, int peer, int gpus, int device_count);

}  // namespace memlab::check
