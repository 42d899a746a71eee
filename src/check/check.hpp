// memlab check: the suite (check/suite.hpp) run on every GPU, pair and node checked, each lab metric
// through its lab (planned by harness/plan.hpp, run by a case_runner: the GPU's, or a fake one in host
// tests), NVML's readings beside them; then judged against a reference (check/reference.hpp) and
// against the node's other GPUs (check/verdict.hpp), each flagged row given a fault code and an action
// (check/faults.hpp), and written by the writers of check/writers.hpp (the table, the check file
// memlab.check/2: docs/check.schema.json, Prometheus's text format, one line for a scheduler). A check
// file read back (read_check_file: memlab.check/1 or /2) is judged again the same way: `--replay`.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "check/faults.hpp"
#include "check/nvml.hpp"
#include "check/reference.hpp"
#include "check/suite.hpp"
#include "check/verdict.hpp"
#include "harness/lab.hpp"
#include "harness/runner.hpp"

namespace memlab::check {

// The check file's schema: docs/check.md, "The check file", says what a reader may rely on.
inline constexpr std::string_view check_schema = "memlab.check/2";
// Every schema a check file may have and memlab still reads (--replay), oldest first.
inline constexpr std::string_view check_schemas_read[] = {"memlab.check/1", "memlab.check/2"};

// What a GPU is, read without GPU work (its properties, its links, NVML's identity), and the other
// processes found on it before or during the check.
struct gpu_facts {
  int ordinal = 0;
  model_keys model;
  std::string bus_id;
  int driver_version = 0;        // the CUDA driver API version (cudaDriverGetVersion: 13000 for 13.0)
  int runtime_version = 0;       // the CUDA runtime memlab was built with (cudaRuntimeGetVersion); 0: unknown
  std::string uuid;              // "GPU-8c2f..." as nvidia-smi prints it; "" when unknown
  std::string serial;            // the board's serial number (NVML); "" when unknown
  std::string driver;            // the kernel driver's version (NVML: "580.95.05"); "" when unknown
  std::vector<gpu_process> processes;  // other processes on the GPU, before or during the check
  [[nodiscard]] bool busy() const { return !processes.empty(); }
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
  virtual nvml_samples nvml_stop(int ordinal) = 0;  // with the other processes seen while sampling
  // The other processes on the GPU now (before the check's own work there).
  virtual std::vector<gpu_process> processes(int ordinal) = 0;
};
// The GPU's (check/gpu_backend.cpp).
std::unique_ptr<check_backend> gpu_backend();

struct check_options {
  std::vector<int> devices;  // the GPUs checked, in order
  double max_time_s = 0.25;  // per lab case (harness: half cold, a quarter batch, a quarter graph)
  bool progress = true;
};

// One cell of the table: a metric on a GPU, a pair (gpu -> peer) or the node (gpu = -1). What was
// measured, then what judge() made of it.
struct row {
  const metric* m = nullptr;
  int gpu = -1, peer = -1;
  double value = NAN;  // NaN: not measured (skipped, failed or interrupted)
  std::string shown;   // the value in words where a number says too little (clock-event reasons)
  std::string note;    // why skipped; what a rule read; why a case gave no figure
  double seconds = 0;  // the case's wall time (0 for NVML readings)
  std::optional<double> expected;  // an NVML rule's value expected (the PCIe link's maximum; 0 errors)
  std::string_view failed;         // a case that gave no figure: its fault code (faults.hpp), else ""
  bool interrupted = false;        // not measured: a signal stopped the check before it
  // Judged:
  verdict v = verdict::skip;
  std::optional<double> reference;  // the reference median (NVML rules: the value expected)
  std::optional<floors> at;
  double ratio = NAN;  // value / reference
  std::string judged;  // the judge's words on a flagged row ("above the failure line, 380.1 ns")
  const fault* f = nullptr;      // flagged or failed rows: its fault code
  std::optional<action> act;     // ... and what to do
  std::string points_at;         // ... the level or part it points at
  std::string reason;            // ... in one line: where, metric, value, line, what it points at, action
  [[nodiscard]] bool measured() const { return !std::isnan(value); }
};

struct measurement {
  std::vector<gpu_facts> gpus;
  std::string link;  // how the checked GPUs are joined: NVSwitch, NVLink, PCIe ("mixed" when they differ)
  std::vector<row> rows;
  std::string started;         // when the measuring started, ISO 8601 UTC
  double seconds = 0;          // how long it took
  std::string interrupted_by;  // "SIGINT", "SIGTERM": the signal that stopped it; "" when it ran to the end
  [[nodiscard]] bool busy() const;  // another process showed on a GPU checked
};

// Runs the suite once on `o.devices` (each GPU in turn, then the pairs, then the node), a progress
// line per metric and GPU. A CUDA error in a case fails that metric and stops the measuring: every
// case after it is a skipped row saying so, and what was measured before it is kept. A stop request
// (SIGINT, SIGTERM: harness/runner.hpp) ends it after the current case: every row not measured is
// marked interrupted. Throws what opening the runner throws (cuda_error, no_device_error).
measurement measure(std::span<const lab* const> built, std::span<const missing_lab> missing, check_backend& backend,
                    const check_options& o, std::ostream& progress);

// Judges every row: NVML's rules; against `ref` (nullptr: no reference, NVML rules and siblings still
// apply) and against the node's other GPUs or pairs; a flagged row another process could have moved
// is busy; then each flagged row's fault code, action and reason. Judging a measurement again (another
// reference, a replay) gives what judging it first gave.
void judge(measurement& m, const reference* ref);

// A reference made of several runs of the suite on one machine.
reference make_reference(std::span<const measurement> runs, const std::string& machine);
// `fresh`, keeping the node sections of `old` (same model) for other GPU counts or links.
reference merge_reference(reference fresh, const reference& old);

// The verdicts of every row, in order.
std::vector<verdict> verdicts_of(const measurement& m);

// The most urgent action over the rows (nullopt: nothing to do).
std::optional<action> action_of(const measurement& m);

// What a check file says besides its measurement. `reference_note`: where the reference came from,
// or why there is none and how to write one.
struct replay_source {
  std::string path, schema, created, command, memlab_version, git_sha;
};
struct check_header {
  std::string command, created, machine, reference_note;
  const reference* ref = nullptr;
  int exit_status = 0;
  std::optional<replay_source> replay;  // a replay: the file judged again
};
// ---- the fields of a row -----------------------------------------------------------------------------
// Every field of a row a writer shows is declared once (row_fields.cpp): its name, its unit, how to read
// it from a judged row, and which outputs show it and how. The table's columns, the check file's keys of
// a row, Prometheus's series and labels of a row and the items of the one line (a scheduler's reason)
// read these declarations, in their order, and no field of a row besides; docs/check.schema.json and
// docs/check.md ("Prometheus") describe each field.

// A field's value: a whole number, a number, a flag, words; std::monostate: none (null in the check file).
using row_value = std::variant<std::monostate, std::int64_t, double, bool, std::string>;

// How Prometheus's text format shows a field.
enum class prometheus_role {
  none,
  label,     // a label of every series of the row, at its place (`label`) among the row's labels
  gauge,     // a series of its own, memlab_check_<name>, with the row's labels and `with`; none when no value
  stateset,  // a series per state (`states`), labelled <name>="<state>": 1 for the row's value, 0 for the others
  info,      // a series of value 1 labelled <name>="<value>", with the row's labels and `with`; none when no value
};
struct row_field_table {  // a column of the table; no header: none
  std::string_view header;
  bool right = false;           // right-aligned (numbers)
  std::string_view none = "-";  // the cell of a field with no value
  std::size_t max_width = 0;    // cut to this many columns ("..."); 0: never
  // The cell where it differs from the field's text (a shorter form); null: the field's text.
  std::string (*text)(const measurement& m, const row& r) = nullptr;
};
struct row_field_prometheus {
  prometheus_role role = prometheus_role::none;
  std::string_view help;                                // a series' HELP line
  int label = 0;                                        // a label: its place among a row's labels, from 1
  std::array<std::string_view, 2> with{};               // a series: the fields named so, as more labels of it
  std::vector<std::string_view> (*states)() = nullptr;  // a stateset: every state, in order
};
struct row_field {
  std::string_view name;  // the check file's key of a row; Prometheus's label, or its series memlab_check_<name>
  // "" (counts, words, flags); "s"; "unit": in the unit of the row's metric (the field named "unit")
  std::string_view unit;
  row_value (*get)(const measurement& m, const row& r) = nullptr;
  bool json = false;  // a key of each row in the check file
  // Read back from a check file's row by --replay (read_check_file): what was measured. The other keys
  // are the judge's and a replay writes them anew.
  bool replayed = false;
  row_field_table table{};
  row_field_prometheus prometheus{};
  // An item of a flagged row in the one line: a format of its text ("{}", "({})"); "": none.
  std::string_view line;
};
// In the order of the check file's row; the table's columns, Prometheus's series and the line's items
// follow it (Prometheus's labels follow their places).
std::span<const row_field> row_fields();
// The field named `name` in `fields`; throws std::out_of_range when none is.
const row_field& row_field_named(std::string_view name, std::span<const row_field> fields = row_fields());
// A field's value in words, as the table and the line show it: "-" for none, a number in its unit
// ("2929.5 GB/s" for a row's unit, "0.993" for a ratio).
std::string row_text(const row_field& f, const measurement& m, const row& r);

// The writers: each reads a row through `fields` (row_fields(); a test gives others), as judge() left it
// (check_file.cpp, writers.cpp).
void write_table(std::ostream& os, const measurement& m, const check_header& h,
                 std::span<const row_field> fields = row_fields());
std::string check_json(const measurement& m, const check_header& h, std::span<const row_field> fields = row_fields());
// Prometheus's text exposition format, for node_exporter's textfile collector (docs/check.md names
// every metric and label).
std::string check_prometheus(const measurement& m, const check_header& h,
                             std::span<const row_field> fields = row_fields());
// One line for a scheduler or a log: the verdict, the action, then the flagged rows' items, most
// urgent first, cut to `max_chars` with "+N more" ("memlab check fail (drain): GPU 3 hbm_latency ...").
std::string check_line(const measurement& m, const check_header& h, std::size_t max_chars,
                       std::span<const row_field> fields = row_fields());

// A path the check writes (--out, --write-reference) with its patterns expanded, as Slurm's file names
// have them: %N this host's short name (`hostname -s`: its name up to the first dot), %% a percent sign.
// Any other % throws std::invalid_argument, its message naming the path and the pattern.
std::string expand_path(std::string_view path, std::string_view short_host);
// This host's short name, as `hostname -s` prints it ("node17" on node17.cluster.example).
std::string short_host_name();

// A row's value as the table shows it ("2929.5 GB/s", "Gen5", "none"); "-" when not measured.
std::string format_value(const row& r);
// A figure of metric `m` shown the same way.
std::string format_number(double v, const metric& m);
// Where a row is: "GPU 3", "GPU 3->0", "node".
std::string where_text(const row& r);

// A check file read back: what it measured (rows unjudged), and what it said of itself.
struct check_file {
  measurement m;
  replay_source source;  // path, schema, created, command, the memlab that wrote it
  std::string machine;
};
// A check file that cannot be replayed: the message names the file and what is wrong (one line).
class check_file_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// Reads a check file of any schema in check_schemas_read.
check_file read_check_file(const std::string& path);

}  // namespace memlab::check
