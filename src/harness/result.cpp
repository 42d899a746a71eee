#include "harness/result.hpp"

namespace memlab {

std::string to_string(const launch_policy& p) {
  std::string s;
  const auto add = [&s](char tag, std::uint64_t v) {
    if (v == 0) return;  // zero means "not applicable": leave it out
    if (!s.empty()) s += ' ';
    s += tag;
    s += std::to_string(v);
  };
  const auto u = [](int v) { return v > 0 ? static_cast<std::uint64_t>(v) : 0; };
  add('t', u(p.threads));
  add('i', u(p.items_per_thread));
  add('v', u(p.vec_bytes));
  add('s', u(p.stages));
  add('g', p.grid);
  return s.empty() ? "-" : s;
}

std::string to_string(const param_value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  return std::get<std::string>(v);
}

double theoretical_peak_gbps(int mem_clock_khz, int bus_width_bits) {
  // Double data rate: two transfers per clock.
  return 2.0 * static_cast<double>(mem_clock_khz) * 1e3 * static_cast<double>(bus_width_bits) / 8.0 / 1e9;
}

std::string_view to_string(result_status s) {
  switch (s) {
    case result_status::ok: return "ok";
    case result_status::skipped: return "skipped";
    case result_status::failed: return "failed";
  }
  return "?";
}

const param_value* result::find(std::string_view name) const {
  for (const auto& p : params) {
    if (p.name == name) return &p.value;
  }
  return nullptr;
}

void derive(result& r, const device_info& dev, std::uint64_t working_set_bytes) {
  const auto rate_gbps = [](std::uint64_t bytes, double median_ms) {
    return median_ms > 0 ? static_cast<double>(bytes) / (median_ms * 1e-3) / 1e9 : 0.0;
  };
  r.gbps = rate_gbps(r.bytes, r.cold.median_ms);
  r.batch_gbps = rate_gbps(r.bytes, r.batch.median_ms);
  r.hardware_gbps = rate_gbps(r.hardware_bytes, r.cold.median_ms);
  r.pct_peak = dev.peak_gbps > 0 ? 100.0 * r.gbps / dev.peak_gbps : 0.0;
  r.pct_measured = dev.measured_peak_gbps > 0 ? 100.0 * r.gbps / dev.measured_peak_gbps : 0.0;
  r.l2_resident = dev.l2_bytes > 0 && working_set_bytes <= dev.l2_bytes;
}

}  // namespace memlab
