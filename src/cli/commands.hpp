// The memlab command: its subcommands, built from the labs it is given (one flag per lab axis).
// Knows no lab and no axis by name. Every command returns the process exit code:
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "harness/plan.hpp"
#include "harness/runner.hpp"
#include "harness/writers.hpp"

namespace memlab::check {
class check_backend;
}

namespace memlab::cli {

inline constexpr int exit_ok = 0;
inline constexpr int exit_failed = 1;         // a verification failed, or an error (CUDA, a write) stopped the run
inline constexpr int exit_usage = 2;          // bad input, found before any GPU work
inline constexpr int exit_no_device = 3;      // no usable CUDA device
inline constexpr int exit_nothing_run = 4;    // every case was skipped: nothing was measured
inline constexpr int exit_interrupted = 130;  // SIGINT/SIGTERM: the results so far are written
// memlab check (check/verdict.hpp): 0 every metric passed, 1 one failed (exit_failed), 5 a warning or a
// sibling and no failure, 6 no reference for this GPU model (measured, not judged), 7 another process on a
// GPU could have moved a flagged figure (run again when it is idle), 130 interrupted.
inline constexpr int exit_warn = 5;
inline constexpr int exit_no_reference = 6;
inline constexpr int exit_busy = 7;

struct list_options {
  std::vector<std::string> labs;
  std::string format = "table";  // table, json, md
};

struct run_options {
  run_request request;  // typed: the parser fills its dtypes, sizes, axis values and devices
  output_format format = output_format::table;               // stdout
  std::vector<std::pair<std::string, output_format>> outs;  // files, each in the format of its extension
};

struct inspect_options {
  std::string lab;
  std::string binary;  // empty: this executable
  std::string arch;    // empty: the newest SASS arch in the binary
  bool all_kernels = false;
  std::string format = "table";
};

struct device_options {
  int device = 0;
  bool ceiling = true;
  std::string format = "table";
};

struct check_options {
  std::vector<int> devices;      // --devices; empty: every GPU visible
  std::string reference;         // --reference FILE
  std::string references_dir;    // --references DIR (else $MEMLAB_REFERENCES, else the source tree's)
  std::string write_reference;   // --write-reference FILE
  int runs = 0;                  // --runs (0: not given; 3 when writing a reference)
  double max_time_s = 0.25;      // per lab case
  std::string format = "table";  // stdout: table, json, prometheus or line
  std::vector<std::string> outs;  // --out FILE.json (the check file), FILE.prom (Prometheus's text format)
  std::string replay;             // --replay FILE: judge a check file again, no GPU
  int line_max = 200;             // --line-max: the most characters of --format line
  bool progress = true;
  std::string command;  // as typed, for the JSON
};

// The labs an executable carries.
struct lab_set {
  std::span<const lab* const> built;
  std::span<const missing_lab> missing;
};

int list_command(const lab_set& labs, const list_options& o);
// `runner` null: the GPU's.
int run_command(const lab_set& labs, run_options o, case_runner* runner = nullptr);
int inspect_command(const lab_set& labs, const inspect_options& o);
int device_command(const device_options& o);
// `backend` null: the GPUs' (check/check.hpp).
int check_command(const lab_set& labs, const check_options& o, check::check_backend* backend = nullptr);

// Each subcommand ("list", "run", "inspect", "device", "check") with its flags that take a value ("--sizes",
// one per lab axis, ...), as the parser main_with builds has them: what the CLI fuzz test walks.
std::vector<std::pair<std::string, std::vector<std::string>>> value_flags(const lab_set& labs);

// Parses argv (flags from the labs' axes) and runs the chosen subcommand: what `main` returns.
// `runner` as in run_command, `checker` as check_command's backend.
int main_with(int argc, char** argv, const lab_set& labs, case_runner* runner = nullptr,
              check::check_backend* checker = nullptr);

// What still works without a GPU, printed with every exit-3 message.
extern const char* const no_gpu_hint;

}  // namespace memlab::cli
