// Result records: one per case (lab x variant x params), the only source of every printed number.
#pragma once

#include <cstdint>
#include <string>
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

using param_value = std::variant<std::int64_t, std::string>;
struct param {
  std::string name;  // shared names: dtype, n, src_offset, dst_offset, stride, ctas, rows, cols, ...
  param_value value;
};
std::string to_string(const param_value& v);

struct device_info {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::uint64_t l2_bytes = 0;
  std::uint64_t global_mem_bytes = 0;
  int mem_clock_khz = 0;
  int bus_width_bits = 0;
  double peak_gbps = 0;           // theoretical: 2 x memory clock x bus width / 8
  double measured_peak_gbps = 0;  // large cudaMemcpy D2D in the same run, read+write; 0 = not measured
};
// 2 x memory clock x bus width / 8, in GB/s (1e9 bytes/s).
double theoretical_peak_gbps(int mem_clock_khz, int bus_width_bits);

enum class result_status { ok, skipped, failed };
std::string_view to_string(result_status s);

struct result {
  std::string lab, variant;
  std::vector<param> params;
  launch_policy policy;
  std::uint64_t bytes = 0;  // fewest bytes the job must move through device memory, reads + writes
  std::uint64_t flops = 0;
  // Bytes the memory system really moved when the access pattern wastes some (32-byte sectors
  // touched); 0 when equal to `bytes`.
  std::uint64_t hardware_bytes = 0;
  summary cold, batch;
  // Derived by derive(), never set by hand:
  double gbps = 0;          // bytes / cold median
  double batch_gbps = 0;    // bytes / batch median
  double pct_peak = 0;      // gbps / theoretical peak x 100
  double pct_measured = 0;  // gbps / measured ceiling x 100 (0 when the ceiling was not measured)
  double hardware_gbps = 0; // hardware_bytes / cold median (0 when hardware_bytes is 0)
  bool l2_resident = false; // the working set fits in L2
  bool verified = false;    // compared with the CPU reference and found equal
  result_status status = result_status::ok;
  std::string note;         // why skipped or failed; empty when ok

  [[nodiscard]] const param_value* find(std::string_view name) const;
};

// Fills the derived fields of r from its declared bytes, its timings and the device.
void derive(result& r, const device_info& dev, std::uint64_t working_set_bytes);

struct run_report {
  std::string memlab_version;
  std::string git_sha;
  std::string created;       // ISO 8601 UTC
  std::string command;       // the command line that made it
  device_info device;
  std::vector<result> results;
};

}  // namespace memlab
