// memlab check: the suite (check/suite.hpp) run on every GPU, pair and node checked, each lab metric
// through its lab (planned by harness/plan.hpp, run by a case_runner: the GPU's, or a fake one in host
// tests), NVML's readings beside them; then judged against a reference (check/reference.hpp) and
// against the node's other GPUs (check/verdict.hpp), and written as one table or as JSON
// (memlab.check/1: docs/check.schema.json).
#pragma once

#include <cmath>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "check/nvml.hpp"
#include "check/reference.hpp"
#include "check/suite.hpp"
#include "check/verdict.hpp"
#include "harness/lab.hpp"
#include "harness/runner.hpp"

namespace memlab::check {

inline constexpr std::string_view check_schema = "memlab.check/1";

// What a GPU is, read without GPU work (its properties, its links).
struct gpu_facts {
  int ordinal = 0;
  model_keys model;
  std::string bus_id;
  int driver_version = 0;
};

// What the check runs on: the GPUs and NVML, or a fake of them (host tests).
class check_backend {
 public:
  virtual ~check_backend() = default;
  virtual int device_count() = 0;  // GPUs visible (no GPU work); 0 when none
  virtual gpu_facts facts(int ordinal) = 0;
  virtual case_runner& runner() = 0;
  virtual nvml_readings nvml_read(int ordinal) = 0;
  virtual void nvml_start(int ordinal) = 0;
  virtual nvml_samples nvml_stop(int ordinal) = 0;
};
// The GPU's (check/gpu_backend.cpp).
std::unique_ptr<check_backend> gpu_backend();

struct check_options {
  std::vector<int> devices;  // the GPUs checked, in order
  double max_time_s = 0.25;  // per lab case (harness: half cold, a quarter batch, a quarter graph)
  bool progress = true;
};

// One cell of the table: a metric on a GPU, a pair (gpu -> peer) or the node (gpu = -1).
struct row {
  const metric* m = nullptr;
  int gpu = -1, peer = -1;
  double value = NAN;  // NaN: not measured (skipped)
  std::string shown;   // the value in words where a number says too little (clock-event reasons)
  std::string note;    // why skipped; what a rule found
  double seconds = 0;  // the case's wall time (0 for NVML readings)
  // Judged:
  verdict v = verdict::skip;
  std::optional<double> reference;  // the reference median (NVML rules: the value expected)
  std::optional<floors> at;
  double ratio = NAN;  // value / reference
  [[nodiscard]] bool measured() const { return !std::isnan(value); }
};

struct measurement {
  std::vector<gpu_facts> gpus;
  std::string link;  // how the checked GPUs are joined: NVSwitch, NVLink, PCIe ("mixed" when they differ)
  std::vector<row> rows;
  double seconds = 0;
};

// Runs the suite once on `o.devices` (each GPU in turn, then the pairs, then the node), a progress
// line per metric and GPU. A CUDA error in a case fails that metric and stops the measuring: every
// case after it is a skipped row saying so, and what was measured before it is kept. Throws what
// opening the runner throws (cuda_error, no_device_error).
measurement measure(std::span<const lab* const> built, std::span<const missing_lab> missing, check_backend& backend,
                    const check_options& o, std::ostream& progress);

// Judges every row: against `ref` (nullptr: no reference, NVML rules and siblings still apply) and
// against the node's other GPUs or pairs.
void judge(measurement& m, const reference* ref);

// A reference made of several runs of the suite on one machine.
reference make_reference(std::span<const measurement> runs, const std::string& machine);
// `fresh`, keeping the node sections of `old` (same model) for other GPU counts or links.
reference merge_reference(reference fresh, const reference& old);

// The verdicts of every row, in order.
std::vector<verdict> verdicts_of(const measurement& m);

// Output. `ref_note`: where the reference came from, or why there is none and how to write one.
struct check_header {
  std::string command, created, machine, reference_note;
  const reference* ref = nullptr;
  int exit_status = 0;
};
void write_table(std::ostream& os, const measurement& m, const check_header& h);
std::string check_json(const measurement& m, const check_header& h);

}  // namespace memlab::check
