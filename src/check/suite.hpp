// memlab check's suite: one record per metric, as data. A metric the labs measure names the case
// (lab, rung, dtype, size, axis values) and the figure of its result it reads, so that it is measured
// the way its lab measures it (same kernels, same verification); a metric NVML gives names the
// reading. Adding a metric is one record here and a line of docs/check.md.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memlab::check {

// Where a metric belongs: each GPU, each ordered pair of GPUs, or the node as a whole.
enum class scope { gpu, pair, node };
std::string_view to_string(scope s);

// What an NVML metric reads (nvml.hpp), judged by a rule of its own rather than a reference.
enum class nvml_reading {
  none,
  clock_events,   // the clock-event (throttle) reasons seen while the GPU's cases ran
  ecc_volatile,   // uncorrected ECC errors since the driver loaded
  ecc_aggregate,  // uncorrected ECC errors over the GPU's life
  pcie_gen,       // the PCIe generation the link trained to under load, against its maximum
  pcie_width,     // the PCIe lanes the link trained to under load, against its maximum
};

// A case of a lab: what `memlab run <lab> --variant <variant> --dtype <dtype> --sizes <size> --<axis>
// <value>...` would run, and the result's figure the metric reads: a result field
// (harness/result.hpp: "gbps", "batch_gbps", "sm_clock_mhz", "nccl_tests_busbw_gbps") or a figure
// the lab's kernels measured ("ns_per_load").
struct lab_case {
  std::string_view lab, variant, dtype, size;
  std::vector<std::pair<std::string_view, std::string_view>> axes{};
  std::string_view figure;
};

struct metric {
  std::string_view name;   // snake_case, as the table, the JSON and the references key it
  std::string_view what;   // one line: what it measures
  std::string_view level;  // what a failure points at
  std::string_view unit;   // "GB/s", "ns", "MHz", "lanes", "errors"
  bool higher_is_better = true;
  scope where = scope::gpu;
  lab_case measured{};  // empty lab: not a lab's case
  nvml_reading nvml = nvml_reading::none;
  std::string_view fault;        // the code a flagged row carries (check/faults.hpp)
  bool others_move_it = true;    // another process on the GPU can move the figure (its row may be "busy")

  [[nodiscard]] bool from_lab() const { return !measured.lab.empty(); }
  // Judged against a reference (the lab's figures); NVML's readings are judged by their own rule.
  [[nodiscard]] bool has_reference() const { return from_lab(); }
};

// The suite, in the order the table shows it: per GPU, then pairs, then the node.
std::span<const metric> suite();
// The metric named `name`; nullptr when none is.
const metric* find_metric(std::string_view name);

// The text of a lab case, as `memlab run` would take it ("copy --variant vec16 --dtype f32 --sizes 2^26").
std::string command_of(const lab_case& c);
// The case's axes with "$peer" (the pair's other GPU) and "$gpus" (the GPUs checked) given.
std::vector<std::pair<std::string, std::string>> axes_of(const lab_case& c, int peer, int gpus);
// The case as run on GPU `device`: what `memlab run` takes to measure it again
// ("transfer --variant peer_ce --dtype u8 --sizes 256MiB --peer 1 --device 0").
std::string command_of(const lab_case& c, int device, int peer, int gpus);

}  // namespace memlab::check
