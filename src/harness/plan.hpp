// From a run request to the list of cases, on the host: every usage error (unknown lab, variant,
// dtype; a bad size or axis value; a sweep too large; a flag that changes nothing) and every GPU the
// machine lacks are found here, before any GPU work. plan_run is the one place the options become the
// cases and the refusals; the CLI reads its answer.
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "harness/lab.hpp"
#include "harness/launcher.hpp"
#include "harness/sizes.hpp"

namespace memlab {

// The values given for one axis. The CLI hands them typed: its flag parsed them once, checked
// against every declaration of the axis. A request written by hand (tests, tools) may give them as
// text in the axis's grammar instead ({"increment", "0,2"}), parsed once by the planner.
struct axis_values {
  std::vector<axis_value> typed;
  std::string text;  // used when `typed` is empty
  // Implicit, so that a request reads {"block_rows", values} or {"block_rows", "0..15"}.
  axis_values(std::vector<axis_value> v) : typed(std::move(v)) {}
  axis_values(std::string t) : text(std::move(t)) {}
  axis_values(const char* t) : text(t) {}
};

// The sizes of a run: typed by the CLI (its --sizes flag parsed them once); a request written by hand
// may give the text instead, parsed once by the planner.
struct size_list {
  std::vector<size_spec> specs;  // both empty: each lab's default sizes
  std::string text;              // used when `specs` is empty
  size_list() = default;
  // Implicit, so that a request reads `r.sizes = parse_sizes(text)` or `r.sizes = "2^20"`.
  size_list(std::vector<size_spec> s) : specs(std::move(s)) {}
  size_list(const char* t) : text(t) {}
  [[nodiscard]] bool empty() const { return specs.empty() && text.empty(); }
};

struct run_request {
  std::vector<std::string> labs;      // empty: every lab
  std::vector<std::string> variants;  // empty: every variant of each lab
  std::vector<dtype> dtypes;          // empty: each lab's default dtype
  size_list sizes;                    // empty: each lab's default sizes
  // Values by axis name ("block_rows" -> 0..15); an axis not given takes each lab's defaults. Each
  // lab checks them against its own declaration of the axis (its range may be narrower).
  std::vector<std::pair<std::string, axis_values>> axes;
  // The GPUs the cases run on, each in turn (--device 0,2 or all); empty: GPU 0. In a distributed
  // run, the one GPU of this rank.
  std::vector<int> devices;
  bool all_devices = false;   // --device all: every GPU the machine shows (plan_run fills `devices`)
  bool device_given = false;  // --device was given (a distributed run refuses it)
  // GPUs the machine shows (0: not known, planning on a host): an axis of GPU ordinals
  // (axis::other_gpus) keeps only these.
  int device_count = 0;
  // The ranks of a distributed run (harness/world.hpp), 1 for one process: a lab's ranks axis
  // (lab::ranks_axis) takes this value, and rungs that span no ranks are refused.
  int world_size = 1;
  // Seconds a rank of a distributed run waits for the others before it stops with an error.
  double rank_timeout_s = 30;
  double max_time_s = 0.5;  // per case, split between cold, batch and graph timing
  // nccl-tests' method in its graph mode (nccl-tests -G N): the loop captured once per stream and
  // replayed this many times a sample; 0: launched from the host (nccl-tests' default).
  int nccl_tests_graph_launches = 0;
  bool verify = true;
  bool progress = true;  // one line per case on the progress stream
  bool measure_ceiling = true;
  // For profilers (ncu, nsys), which serialize launches: each case verified, then launched once
  // more, timed without the blocking kernel; no batch or graph figure.
  bool profile = false;
  std::string command;                                       // recorded in the report
  std::vector<std::string> argv;                             // the same, as an argument vector
  std::vector<std::pair<std::string, std::string>> options;  // recorded in the report: flag, value
};

struct planned_case {
  const lab* l = nullptr;
  const variant* v = nullptr;
  case_params p;
  std::string size_text;  // as the user wrote it: "2^24"
  int device = -1;        // the GPU it runs on; -1: the run's only one
};

// More cases than this in one run is a usage error: narrow the sweep.
inline constexpr std::size_t max_cases = 20000;

// The cases of `req` over `labs` (missing ones named in errors): each GPU of req.devices in turn
// (outermost, when there are several), then labs in the order asked, dtypes, sizes, the product of
// the axes (first declared outermost) and the variants innermost. An axis of GPUs (axis::other_gpus)
// never takes the case's own GPU.
// Throws std::invalid_argument (a usage error) with a one-line message.
std::vector<planned_case> plan_cases(const run_request& req, std::span<const lab* const> labs,
                                     std::span<const missing_lab> missing = {});

// One flag per axis name any of `labs` declares: its declarations, in lab order, and the labs
// declaring it. Labs sharing a name share the flag, so they must read its values alike: the same
// grammar, unit, rank and words (a word's value is its index); their meanings and ranges may differ
// (each lab checks its own range when the run is planned). Throws std::logic_error naming the labs
// when two declarations read values differently: such axes need distinct names.
struct axis_flag {
  std::string_view name;
  std::vector<const axis*> decls;
  std::vector<std::string_view> labs;

  // What the flag accepts: the first declaration, over the union of the ranges; choices only where
  // every declaration lists them (their union), and the smallest multiple.
  [[nodiscard]] axis accepted() const;
  // Each distinct meaning and the labs that declare it with that meaning, in lab order.
  [[nodiscard]] std::vector<std::pair<std::string_view, std::vector<std::string_view>>> meanings() const;
};
std::vector<axis_flag> axis_flags(std::span<const lab* const> labs);

// What a results file says about a lab: its roof and its params in declared order.
lab_info info_of(const lab& l);

// Where a run is planned: who started this process (launcher.hpp) and the GPUs it sees.
struct run_host {
  launch_env launch;  // one process, or a rank of a distributed job
  int gpus = 0;       // GPUs the machine shows (0: none, or not asked)
  bool asked = true;  // false: not asked, planning on the host alone (a fake runner in tests): --device all
                      // takes no GPU and is not refused for that
};

// Why a run does not start, and what that means for its exit: a usage error (exit 2) or GPUs the machine
// lacks (exit 3; `no_device`: none at all, said with what still works without one).
enum class refusal_kind { none, usage, too_few_gpus, no_device };

// What the options ask of this machine: the request as the run takes it (the GPUs it runs on, the world's
// size), its cases, or one line saying why it does not run.
struct run_plan {
  run_request request;
  std::vector<planned_case> cases;
  refusal_kind refused = refusal_kind::none;
  std::string why;  // one line, when refused
};

// The run `req` asks of `labs` on `host`: plan_cases's usage errors, a flag that would change nothing
// (--nccl-tests-graph where no rung is timed by nccl-tests' method), --device in a distributed run, and the
// GPUs the machine lacks (a rank without one; fewer than the ranks on this host; --device all on none; a
// ranks axis over more GPUs than it shows). No GPU work.
run_plan plan_run(run_request req, std::span<const lab* const> labs, std::span<const missing_lab> missing,
                  const run_host& host);

// The lab named `lab` among `labs`, and its rung `variant` when one is named; else why not, in one line:
// "lab transfer is not built: NCCL not found", "unknown lab 'x' (labs: copy, ...)", "nccl_all_reduce is not
// built: built without NCCL", "lab copy has no rung 'x' (rungs: scalar, ...)". One lookup for every caller
// that names a lab and a rung (memlab check's suite, a run's plan).
struct rung_lookup {
  const lab* l = nullptr;
  const variant* v = nullptr;
  std::string why;  // non-empty: not found
};
rung_lookup find_rung(std::span<const lab* const> labs, std::span<const missing_lab> missing, std::string_view lab,
                      std::string_view variant = {});

}  // namespace memlab
