// Running planned cases: one at a time, each result handed to the sinks (files, stdout) as soon as
// it exists, so that a run stopped by a signal, a CUDA error or an exception keeps everything it
// measured. What runs a case is behind `case_runner`: the GPU's (gpu_runner.hpp), or a fake one in
// host tests.
#pragma once

#include <iosfwd>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/plan.hpp"

namespace memlab {

class case_runner {
 public:
  virtual ~case_runner() = default;
  // Opens the device and measures what the roofs of `labs` need. Throws no_device_error.
  virtual device_info open(const run_request& req, std::span<const lab* const> labs, std::ostream& progress) = 0;
  // Verifies and times one case, or records why it was skipped or failed. Throws cuda_error (or
  // another exception) when the run cannot go on.
  virtual result run(const planned_case& c, const run_request& req) = 0;
  // How this runner times, for the report's header.
  [[nodiscard]] virtual timing_info timing(const run_request& req) const = 0;
  // Every GPU open() opened, in order (the report lists them when there are several).
  [[nodiscard]] virtual std::vector<device_info> devices() const { return {}; }
  // Who runs: one process, or the ranks of a distributed run (the report's header).
  [[nodiscard]] virtual world_info world() const { return {}; }
};

// Receives the report after every case, when a lab's last case is done, and once at the end. A sink
// that cannot write throws write_error; the run stops, and what the sink wrote before stays intact.
class results_sink {
 public:
  virtual ~results_sink() = default;
  virtual void update(const run_report& r) = 0;
  // The last result closes a lab's block of cases. Not called for the block an interrupt or an
  // error cuts short: finish() receives what it measured.
  virtual void lab_done(const run_report& /*r*/) {}
  virtual void finish(const run_report& r) = 0;
};

class write_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// SIGINT and SIGTERM ask the run to stop after the current case (a second one, half a second or
// more later, ends the process at once, exit 130); SIGPIPE is ignored, so a closed stdout cannot
// stop the files being written.
void install_stop_handlers();
// The signal that asked for a stop (0: none). request_stop() does what a signal does (for tests).
int stop_signal();
void request_stop(int sig);

// Runs `cases` through `runner`, streaming to `sinks`. The report's `ended` says "complete" or why
// it stopped: a stop request ("interrupted by SIGINT") returns normally; an exception from the
// runner is rethrown after every sink has finished with what was measured before it.
run_report run_cases(const run_request& req, const std::vector<planned_case>& cases, case_runner& runner,
                     std::span<results_sink* const> sinks, std::ostream& progress);

}  // namespace memlab
