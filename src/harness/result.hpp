// Result records: one per case (lab x variant x params), the only source of every printed number.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "harness/stats.hpp"

namespace memlab {

// How a variant launches: printed in every result row. Zero means "not applicable"
// (a library peer such as cudaMemcpy has no threads of ours).
struct launch_policy {
  int threads = 0;           // threads per CTA
  int items_per_thread = 0;  // vectors (or elements) each thread keeps in flight per iteration
  int vec_bytes = 0;         // width of each global access, bytes
  int stages = 0;            // pipeline stages (async labs)
  std::uint64_t grid = 0;    // CTAs launched
};
// "t256 i4 v16 g528" style; "-" for an all-zero policy.
std::string to_string(const launch_policy& p);

// A param's value: a number, a word, or not applicable (std::monostate: the rung does not read the
// axis; JSON null, an empty CSV cell, "-" in the tables).
using param_value = std::variant<std::monostate, std::int64_t, std::string>;
// One figure a lab's host model predicts for a case (bank wavefronts per shared-memory request,
// 32-byte sectors per global request, ...): reported with the result as computed, never measured.
struct model_figure {
  std::string name;  // snake_case, as results report it: "smem_ld_wavefronts"
  double value = 0;
  friend bool operator==(const model_figure&, const model_figure&) = default;
};
// A figure the lab's kernels measured themselves during the case (cycles per dependent load read
// with clock64, ns per load with %globaltimer, the SM clock over the walk, ...), with its unit:
// what a latency lab reports besides the launch timings. Reported as read, never derived.
struct measured_figure {
  std::string name;  // snake_case: "cycles_per_load"
  double value = 0;
  std::string unit;     // "cycles", "ns", "MHz", "GB/s", "B/clk/SM", "loads", ...
  bool detail = false;  // in JSON and CSV only, not a column of the per-lab table (histogram buckets)
  friend bool operator==(const measured_figure&, const measured_figure&) = default;
};
struct param {
  std::string name;  // dtype, n, then the lab's axes (docs/design.md, "Shared parameter names")
  param_value value;
};
// "4096", "h2d"; "-" for not applicable (the tables' text).
std::string to_string(const param_value& v);

struct device_info {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_threads_per_sm = 0;
  int smem_per_block_optin = 0;  // bytes of shared memory a CTA may opt in to
  std::uint64_t l2_bytes = 0;
  std::uint64_t global_mem_bytes = 0;
  int mem_clock_khz = 0;
  int bus_width_bits = 0;
  int sm_default_clock_khz = 0;  // the clock the device reports (cudaDevAttrClockRate); throttling is judged against it
  int driver_version = 0;        // cudaDriverGetVersion: 13000 = 13.0
  int runtime_version = 0;       // cudaRuntimeGetVersion
  double peak_gbps = 0;          // theoretical: 2 x memory clock x bus width / 8
  double measured_peak_gbps = 0;  // large cudaMemcpy D2D in the same run, read+write; 0 = not measured
  double measured_l2_gbps = 0;    // an L2-resident cudaMemcpy D2D, back to back; 0 = not measured
  // Links beyond the device's own memory (harness/link.hpp), read when the device is opened.
  int device_count = 1;              // GPUs visible to the run (cudaGetDeviceCount)
  int pcie_gen = 0, pcie_width = 0;  // the PCIe link's generation and lanes (the most it trains to)
  double pcie_gbps = 0;              // its theoretical rate per direction after line encoding, GB/s; 0 = unknown
  int nvlink_links = 0;              // active NVLinks
  double nvlink_gbps = 0;            // the NVLink roof: active links x a link's data rate, per direction, GB/s; 0 = none
  double nvlink_link_gbps = 0;       // one link's data rate per direction, GB/s (25 on NVLink 3 and 4: harness/link.hpp)
  std::string nvlink_rate_from;      // "NVLink version" (the data rate of the version NVML reports), or "NVML line rate"
                                     // where the version's data rate is not known here
  double nvlink_line_gbps = 0;       // NVML's reading of a link's speed: the line rate (26.562 on an H100); 0 = none
  bool nvlink_switch = false;        // the links go to NVSwitches: every GPU on them at the full rate
  std::vector<std::string> nvlink_gpus;  // bus ids of GPUs linked directly, a link each
  std::string link_source;           // where the link figures came from ("nvml", "sysfs", ...); "" = nowhere
  // The machine's other GPUs, read when the device is opened, so that planning asks the driver nothing:
  std::vector<std::string> bus_ids;  // every visible GPU's PCI bus id, by ordinal ("0000:1B:00.0")
  std::vector<bool> peer_access;     // by ordinal: this GPU can map that GPU's memory (cudaDeviceCanAccessPeer);
                                     // empty = not known (a device made up on the host: no refusal on its account)
};
// 2 x memory clock x bus width / 8, in GB/s (1e9 bytes/s).
double theoretical_peak_gbps(int mem_clock_khz, int bus_width_bits);

// The roof a lab is bound by (docs/design.md, "Roofs"). Each result reports its value and % of it.
enum class roof_kind {
  dram,  // theoretical DRAM bandwidth, GB/s; against the cold (L2 flushed) median
  l2,    // measured L2-resident copy, GB/s; against the batch median (the data stays in L2)
  smem,  // 32 banks x 4 B x SMs x SM clock measured during the case, GB/s; cold median
  fp32,  // SMs x 128 lanes x 2 (FMA) x SM clock measured during the case, GFLOP/s; cold median
  // Dense TF32 tensor-core FLOP per SM per clock (tf32_flop_per_sm_clock) x SMs x SM clock measured
  // during the case, GFLOP/s; cold median. 0 where the device's figure is not known here.
  tf32,
  // Links, read when the device is opened (device_info). Both are per direction: a case that moves
  // bytes both ways at once is held to the rate times the directions it uses; cold median.
  pcie,    // PCIe: generation x lanes, after line encoding
  nvlink,  // NVLink: active links x per-link rate
};
std::string_view to_string(roof_kind k);

struct roof {
  std::string name;  // "dram", "l2", "smem", "fp32"
  double value = 0;  // 0 when it could not be known (L2 not measured, no clock reading)
  std::string unit;  // "GB/s" or "GFLOP/s"
  roof_kind kind = roof_kind::dram;
};

// The bytes a transfer moves one way ("h2d", "d2h", "0->1"), counted once per direction; gbps is
// derived (bytes over the case's cold median: all directions of a case run at once).
struct direction_figure {
  std::string name;
  std::uint64_t bytes = 0;
  double gbps = 0;
  friend bool operator==(const direction_figure&, const direction_figure&) = default;
};

// A figure per device generation, by compute capability; 0.0 stands for every device.
struct cc_figure {
  int cc_major = 0, cc_minor = 0;
  double value = 0;
};

struct result;
using rate_member = double result::*;  // a rate of a result: &result::gbps

// What each roof judges (docs/design.md, "Roofs"): the one place the rule is written. derive() computes
// % of roof from `judged`; the progress line, the tables and the summary line read the same.
struct roof_rule {
  roof_kind kind;
  std::string_view name;              // as results report it: "dram"
  std::string_view label;             // for headings: "DRAM", "shared memory"
  std::string_view unit;              // of the roof and of the judged rate: "GB/s" or "GFLOP/s"
  rate_member judged;                 // the rate compared with the roof: cold GB/s, batch GB/s (L2), GFLOP/s
  rate_member bandwidth;              // the bandwidth a table shows: cold GB/s, batch GB/s for L2
  std::string_view bandwidth_header;  // "GB/s", "batch GB/s"
  std::string_view pct_header;        // "%DRAM", "%smem"
  std::string_view derived;           // how its value is found, one line (`memlab list` shows it)
  // A roof counted per SM and per clock (shared memory, FP32, TF32): what one SM does per clock, by
  // device where it differs (the roof is SMs x that x the SM clock measured during the case); empty for
  // the others.
  std::span<const cc_figure> per_sm_clock{};
};
const roof_rule& rule_of(roof_kind k);
// Every roof's rule, in roof_kind's order.
std::span<const roof_rule> roof_rules();
// What one SM of `dev` does per clock under a roof counted so (roof_rule::per_sm_clock); 0 when the
// device's figure is not known.
double per_sm_clock(const roof_rule& rule, const device_info& dev);

enum class result_status { ok, skipped, failed };
std::string_view to_string(result_status s);

struct result {
  std::string lab, variant;
  std::vector<param> params;
  launch_policy policy;
  std::uint64_t bytes = 0;  // fewest bytes the job must move through the roof's memory level, reads + writes
  std::uint64_t flops = 0;
  // Bytes the memory system really moved when the access pattern wastes some (32-byte sectors
  // touched); 0 when equal to `bytes`.
  std::uint64_t hardware_bytes = 0;
  summary cold, batch, graph;         // graph: samples == 0 when the variant could not be captured
  // nccl-tests' method (timer::loop), for rungs that have it: ms per launch, host clock around
  // back-to-back launches, mean over the ranks; the median over repetitions. samples == 0: not timed so.
  summary nccl_tests;
  int device = -1;  // the GPU the case ran on, in a run over several (-1: the run's only one)
  std::string graph_note;             // why there is no graph figure
  double sm_clock_mhz = 0;            // median SM clock over the cold samples kept (0: not read)
  std::size_t throttled_samples = 0;  // cold samples dropped: SM clock under 75% of the default
  // Derived by derive(), never set by hand:
  double gbps = 0;           // bytes / cold median
  double batch_gbps = 0;     // bytes / batch median
  double graph_gbps = 0;     // bytes / graph median (0 without one)
  double gflops = 0;         // flops / cold median
  double pct_peak = 0;       // gbps / theoretical DRAM peak x 100
  double pct_measured = 0;   // gbps / measured DRAM ceiling x 100 (0 when the ceiling was not measured)
  double hardware_gbps = 0;  // hardware_bytes / cold median (0 when hardware_bytes is 0)
  struct roof roof;          // the lab's roof for this case
  double pct_roof = 0;       // the achieved rate the roof is measured by / roof value x 100
  bool l2_resident = false;  // the working set fits in L2
  bool verified = false;     // compared with the CPU reference and found equal
  bool peer = false;         // a library the lab compares with (cudaMemcpy, CUB), not memlab's own kernel
  result_status status = result_status::ok;
  std::string note;                          // why skipped or failed; empty when ok
  std::vector<model_figure> model;           // the lab's predictions for the case (case_plan::model), in its order
  std::vector<direction_figure> directions;  // per-direction bytes and GB/s (case_plan::directions)
  double bus_factor = 0;                     // case_plan::bus_factor (nccl-tests' busbw correction); 0: none
  double busbw_gbps = 0;                     // gbps x bus_factor (derived; 0 without a factor)
  double nccl_tests_gbps = 0;                // bytes / nccl_tests median: nccl-tests' algbw (derived)
  double nccl_tests_busbw_gbps = 0;          // nccl_tests_gbps x bus_factor: nccl-tests' busbw (derived)
  std::vector<measured_figure> measured;     // what the lab's kernels measured themselves (lab::observe)

  [[nodiscard]] const param_value* find(std::string_view name) const;
};

// Fills the derived fields of r from its declared bytes and flops, its timings, its SM clock and
// the device.
void derive(result& r, roof_kind k, const device_info& dev, std::uint64_t working_set_bytes);

// The rate r's roof judges, in the roof's unit (rule_of(r.roof.kind).judged).
double judged_rate(const result& r);

// ---- the fields of a record ----------------------------------------------------------------------
// Every field a writer shows is declared once, here: its name, where it sits in the JSON record, its
// unit, and how to read it from a result. JSON, CSV, Markdown and the terminal read these
// declarations (docs/results-schema.md describes each field).
using field_value = std::variant<std::uint64_t, std::int64_t, double, bool, std::string>;
enum class field_kind {
  value,
  params,      // the case's params, name -> value (a column each in CSV and the tables)
  model,       // the lab's model figures, name -> value
  measured,    // what the lab's kernels measured themselves, name -> {value, unit} (an extension)
  directions,  // a transfer's bytes per direction, name -> {bytes, gbps} (an extension)
};
struct result_field {
  std::string_view name;    // flat, as the CSV column: "cold_median_ms"
  std::string_view object;  // the JSON object it sits in ("cold", "policy", "roof"); "" at the top
  std::string_view key;     // its key there ("median_ms"); "" when the JSON has it otherwise (CSV's policy text)
  std::string_view unit;    // "ms", "bytes", "GB/s", "GFLOP/s", "%", "MHz"; "" for counts, words and flags
  field_value (*get)(const result&) = nullptr;  // null for params, model, measured, directions
  field_kind kind = field_kind::value;
  // An extension of memlab.results/1 that only some records carry: written where this holds.
  bool (*only_when)(const result&) = nullptr;
};
// In the order of the JSON record.
std::span<const result_field> result_fields();
// The field named `name`; throws std::out_of_range when none is.
const result_field& result_field_named(std::string_view name);

// ---- a lab's summary line ---------------------------------------------------------------------------
// The best rung of a lab (not a peer) by the rate its roof judges, the worst rung measured at the
// same point and the ratio between them, and the peers measured there: computed here, printed by the
// writers.
struct ladder_summary {
  roof_kind roof = roof_kind::dram;
  std::string best;          // the rung
  std::vector<param> point;  // its params
  double best_rate = 0;      // in rule_of(roof).unit
  double best_pct_roof = 0;
  std::string worst;  // "" when no other rung was measured there (or it measured 0)
  double worst_rate = 0;
  double best_over_worst = 0;                         // best_rate / worst_rate
  std::vector<std::pair<std::string, double>> peers;  // each peer once, its best rate there
};

// How the timings of a run were taken (harness/timing.hpp), recorded with the results.
struct timing_info {
  double max_time_s = 0;         // per case, split between cold, batch and graph
  double target_rel_spread = 0;  // sampling stops once (p75 - p25) / median is below this ...
  std::size_t min_samples = 0;   // ... with at least this many samples
  std::size_t max_samples = 0;
  double throttle_threshold = 0;     // cold samples under this fraction of the default SM clock are dropped
  std::uint64_t l2_flush_bytes = 0;  // bytes written to evict the L2 before each cold sample
  double batch_target_ms = 0;        // GPU time one batch or graph sample aims at
  int max_queued_launches = 0;       // launches queued behind the blocking kernel per batch sample
  double blocking_timeout_s = 0;     // the blocking kernel releases itself after this (a hung launch)
  int nccl_tests_warmup = 0;         // nccl-tests' method: warm-up launches, then a sync ...
  int nccl_tests_iters = 0;          // ... then this many back to back between two host clock readings
  int nccl_tests_graph_launches = 0;  // > 0: those launches captured in a graph per rank, replayed this often
};

// One rank of a distributed run (harness/world.hpp), as the results' header lists it.
struct rank_info {
  int rank = 0;
  std::string host;
  long pid = 0;
  int device = 0;      // its CUDA ordinal on its host
  std::string bus_id;  // its GPU's PCI bus id
};

// Who ran: one process, or the ranks of a distributed run and how they met.
struct world_info {
  std::string launcher;  // "torchrun", "env", "mpi", "slurm"; "" for one process
  int size = 1;
  std::string root, root_from;  // NCCL_COMM_ID and where it came from
  int nccl_version = 0;         // 22809 = 2.28.9; 0 without NCCL
  double rank_timeout_s = 0;
  std::vector<rank_info> ranks;
};

// What a reader needs to interpret a lab's records: its roof and its params in declared order.
struct lab_info {
  std::string name, teaches, size_meaning;
  roof_kind roof = roof_kind::dram;
  std::vector<std::string> params;  // dtype, n, then each axis (shapes as their extents)
};

// An environment variable a lab's run depends on (lab::environment): its value and who set it.
struct env_setting {
  std::string name, value;
  std::string set_by;  // "user" (present before the run), or "memlab" (the lab's default, set by the run)
};

struct run_report {
  std::string memlab_version;
  std::string git_sha;
  std::string created;                                       // ISO 8601 UTC
  std::string command;                                       // the command line that made it, one string
  std::vector<std::string> argv;                             // the same, as the argument vector
  std::vector<std::pair<std::string, std::string>> options;  // the run's options as given: flag, value
  timing_info timing;
  std::vector<lab_info> labs;  // the labs of the planned cases
  device_info device;
  std::vector<device_info> devices;  // every GPU the cases ran on, when several (device is the first)
  world_info world;
  std::vector<env_setting> environment;  // what the planned labs declared, as the run saw it
  std::vector<result> results;
  std::size_t planned = 0;  // cases planned; results.size() < planned when the run stopped early
  std::string ended;        // "complete", or why the run stopped ("interrupted by SIGINT", a CUDA error)
};

// The summary of `lab`'s records in `report`; nullopt when none of its rungs was measured.
std::optional<ladder_summary> summarize_ladder(const run_report& report, const lab_info& lab);

}  // namespace memlab
