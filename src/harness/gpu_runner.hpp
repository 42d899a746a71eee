// The case_runner that runs cases on a GPU: for each case, refuse what cannot run (with the reason),
// account its device memory, allocate, fill, run once, verify against the CPU reference, then time
// it cold, in batches and as a CUDA graph (harness/timing.hpp).
#pragma once

#include <memory>

#include "harness/runner.hpp"

namespace memlab {

class gpu_runner final : public case_runner {
 public:
  gpu_runner();
  ~gpu_runner() override;
  device_info open(const run_request& req, std::span<const lab* const> labs, std::ostream& progress) override;
  result run(const planned_case& c, const run_request& req) override;
  [[nodiscard]] timing_info timing(const run_request& req) const override;
  [[nodiscard]] std::vector<device_info> devices() const override;
  [[nodiscard]] world_info world() const override;

 private:
  struct state;
  std::unique_ptr<state> s_;
};

// The timing options a run uses: `max_time_s` per case, half for cold, a quarter each for batch
// and graph.
struct measure_options;
measure_options cold_options(double max_time_s);
measure_options hot_options(double max_time_s);

}  // namespace memlab
