#include "harness/result.hpp"

#include <algorithm>

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

std::string_view to_string(roof_kind k) {
  switch (k) {
    case roof_kind::dram: return "dram";
    case roof_kind::l2: return "l2";
    case roof_kind::smem: return "smem";
    case roof_kind::fp32: return "fp32";
    case roof_kind::pcie: return "pcie";
    case roof_kind::nvlink: return "nvlink";
  }
  return "?";
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

namespace {

// Amount per second over `median_ms`, in units of 1e9 (GB/s, GFLOP/s); 0 without a median.
double giga_per_s(std::uint64_t amount, double median_ms) {
  return median_ms > 0 ? static_cast<double>(amount) / (median_ms * 1e-3) / 1e9 : 0.0;
}

// DESIGN.md, "Roofs". The shared-memory and FP32 roofs use the SM clock measured during the case.
// Links are rated per direction: a case moving bytes both ways at once is held to the sum.
roof roof_of(roof_kind k, const device_info& dev, double sm_clock_mhz, std::size_t directions) {
  const double ways = static_cast<double>(std::max<std::size_t>(directions, 1));
  const double sms = dev.sm_count;
  const double clock_hz = sm_clock_mhz * 1e6;
  switch (k) {
    case roof_kind::dram: return {"dram", dev.peak_gbps, "GB/s"};
    case roof_kind::l2: return {"l2", dev.measured_l2_gbps, "GB/s"};
    case roof_kind::smem: return {"smem", 32.0 * 4.0 * sms * clock_hz / 1e9, "GB/s"};
    case roof_kind::fp32: return {"fp32", sms * 128.0 * 2.0 * clock_hz / 1e9, "GFLOP/s"};
    case roof_kind::pcie: return {"pcie", dev.pcie_gbps * ways, "GB/s"};
    case roof_kind::nvlink: return {"nvlink", dev.nvlink_gbps * ways, "GB/s"};
  }
  return {};
}

}  // namespace

void derive(result& r, roof_kind k, const device_info& dev, std::uint64_t working_set_bytes) {
  r.gbps = giga_per_s(r.bytes, r.cold.median_ms);
  r.batch_gbps = giga_per_s(r.bytes, r.batch.median_ms);
  r.graph_gbps = giga_per_s(r.bytes, r.graph.median_ms);
  r.gflops = giga_per_s(r.flops, r.cold.median_ms);
  r.hardware_gbps = giga_per_s(r.hardware_bytes, r.cold.median_ms);
  r.pct_peak = dev.peak_gbps > 0 ? 100.0 * r.gbps / dev.peak_gbps : 0.0;
  r.pct_measured = dev.measured_peak_gbps > 0 ? 100.0 * r.gbps / dev.measured_peak_gbps : 0.0;
  for (auto& d : r.directions) d.gbps = giga_per_s(d.bytes, r.cold.median_ms);
  r.busbw_gbps = r.gbps * r.bus_factor;
  const auto ways = static_cast<std::size_t>(
      std::count_if(r.directions.begin(), r.directions.end(), [](const direction_figure& d) { return d.bytes > 0; }));
  r.roof = roof_of(k, dev, r.sm_clock_mhz, ways);
  const double achieved = k == roof_kind::fp32 ? r.gflops : k == roof_kind::l2 ? r.batch_gbps : r.gbps;
  r.pct_roof = r.roof.value > 0 ? 100.0 * achieved / r.roof.value : 0.0;
  r.l2_resident = dev.l2_bytes > 0 && working_set_bytes <= dev.l2_bytes;
}

}  // namespace memlab
