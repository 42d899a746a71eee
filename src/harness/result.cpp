#include "harness/result.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

namespace memlab {

std::string to_string(const launch_policy& p) {
  std::vector<std::string> parts;
  const auto add = [&parts](char tag, std::uint64_t v) {
    if (v != 0) parts.push_back(fmt::format("{}{}", tag, v));  // zero means "not applicable": left out
  };
  const auto u = [](int v) { return v > 0 ? static_cast<std::uint64_t>(v) : 0; };
  add('t', u(p.threads));
  add('i', u(p.items_per_thread));
  add('v', u(p.vec_bytes));
  add('s', u(p.stages));
  add('g', p.grid);
  return parts.empty() ? "-" : fmt::format("{}", fmt::join(parts, " "));
}

std::string to_string(const param_value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return fmt::format("{}", *i);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return "-";
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

namespace {

// Amount per second over `median_ms`, in units of 1e9 (GB/s, GFLOP/s); 0 without a median.
double giga_per_s(std::uint64_t amount, double median_ms) {
  return median_ms > 0 ? static_cast<double>(amount) / (median_ms * 1e-3) / 1e9 : 0.0;
}

// docs/design.md, "Roofs". The shared-memory and FP32 roofs use the SM clock measured during the case.
// Links are rated per direction: a case moving bytes both ways at once is held to the sum.
roof roof_of(roof_kind k, const device_info& dev, double sm_clock_mhz, std::size_t directions) {
  const double ways = static_cast<double>(std::max<std::size_t>(directions, 1));
  const double sms = dev.sm_count;
  const double clock_hz = sm_clock_mhz * 1e6;
  const roof_rule& rule = rule_of(k);
  const auto make = [&](double value) { return roof{std::string(rule.name), value, std::string(rule.unit), k}; };
  switch (k) {
    case roof_kind::dram: return make(dev.peak_gbps);
    case roof_kind::l2: return make(dev.measured_l2_gbps);
    case roof_kind::smem:
    case roof_kind::fp32:
    case roof_kind::tf32: return make(sms * per_sm_clock(rule, dev) * clock_hz / 1e9);
    case roof_kind::pcie: return make(dev.pcie_gbps * ways);
    case roof_kind::nvlink: return make(dev.nvlink_gbps * ways);
  }
  return {};
}

// The roofs' rules, in roof_kind's order. DRAM and shared memory judge the cold (L2 flushed) GB/s;
// L2 the batch GB/s, since its data stays in the L2 between launches; FP32 the cold GFLOP/s; the
// links the cold GB/s (all directions of a case counted).
// Per SM per clock: shared memory 32 banks x 4 B; FP32 128 lanes x 2 (an FMA is two FLOP); dense TF32
// tensor-core FLOP from NVIDIA's datasheets: A100 (sm_80) 156 TFLOP/s = 108 SMs x 1024 x 1410 MHz, H100
// (sm_90) 494.7 TFLOP/s = 132 SMs x 2048 x 1830 MHz; other devices: not known here.
constexpr cc_figure smem_bytes_per_sm_clock[] = {{0, 0, 32.0 * 4.0}};
constexpr cc_figure fp32_flop_per_sm_clock[] = {{0, 0, 128.0 * 2.0}};
constexpr cc_figure tf32_flop_per_sm_clock[] = {{8, 0, 1024}, {9, 0, 2048}};

constexpr roof_rule rules[] = {
    {roof_kind::dram, "dram", "DRAM", "GB/s", &result::gbps, &result::gbps, "GB/s", "%DRAM",
     "2 x memory clock x bus width / 8 (theoretical); beside it the measured ceiling, a 2 GiB cudaMemcpy D2D in the "
     "same run"},
    {roof_kind::l2, "l2", "L2", "GB/s", &result::batch_gbps, &result::batch_gbps, "batch GB/s", "%L2",
     "an L2-resident cudaMemcpy D2D measured in the same run, launched back to back"},
    {roof_kind::smem, "smem", "shared memory", "GB/s", &result::gbps, &result::gbps, "GB/s", "%smem",
     "SMs x 32 banks x 4 B x the SM clock measured during the case", smem_bytes_per_sm_clock},
    {roof_kind::fp32, "fp32", "FP32", "GFLOP/s", &result::gflops, &result::gbps, "GB/s", "%fp32",
     "SMs x 128 lanes x 2 (FMA) x the SM clock measured during the case", fp32_flop_per_sm_clock},
    {roof_kind::tf32, "tf32", "TF32 tensor cores", "GFLOP/s", &result::gflops, &result::gbps, "GB/s", "%tf32",
     "SMs x dense TF32 FLOP per SM per clock (1024 on sm_80, 2048 on sm_90: NVIDIA's datasheets) x the SM clock "
     "measured during the case; 0 on other devices",
     tf32_flop_per_sm_clock},
    {roof_kind::pcie, "pcie", "PCIe", "GB/s", &result::gbps, &result::gbps, "GB/s", "%PCIe",
     "generation x lanes after line encoding, per direction (NVML or sysfs); a case moving bytes both ways is held "
     "to twice it"},
    {roof_kind::nvlink, "nvlink", "NVLink", "GB/s", &result::gbps, &result::gbps, "GB/s", "%NVLink",
     "active links (NVML) x a link's data rate per direction (25 GB/s on NVLink 3 and 4, 50 on NVLink 5: the "
     "rate NVIDIA's 450 GB/s for an H100 counts; NVML's line rate, 26.562 on an H100, is recorded beside it); a case "
     "moving bytes both ways is held to twice it"},
};

}  // namespace

std::span<const roof_rule> roof_rules() { return rules; }

double per_sm_clock(const roof_rule& rule, const device_info& dev) {
  for (const cc_figure& f : rule.per_sm_clock) {
    if ((f.cc_major == 0 && f.cc_minor == 0) || (f.cc_major == dev.cc_major && f.cc_minor == dev.cc_minor))
      return f.value;
  }
  return 0;
}

const roof_rule& rule_of(roof_kind k) {
  for (const auto& r : rules)
    if (r.kind == k) return r;
  throw std::logic_error("no rule for this roof");
}

std::string_view to_string(roof_kind k) { return rule_of(k).name; }

double judged_rate(const result& r) { return r.*rule_of(r.roof.kind).judged; }

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
  r.nccl_tests_gbps = giga_per_s(r.bytes, r.nccl_tests.median_ms);
  r.nccl_tests_busbw_gbps = r.nccl_tests_gbps * r.bus_factor;
  const auto ways = static_cast<std::size_t>(
      std::count_if(r.directions.begin(), r.directions.end(), [](const direction_figure& d) { return d.bytes > 0; }));
  r.roof = roof_of(k, dev, r.sm_clock_mhz, ways);
  r.pct_roof = r.roof.value > 0 ? 100.0 * judged_rate(r) / r.roof.value : 0.0;
  r.l2_resident = dev.l2_bytes > 0 && working_set_bytes <= dev.l2_bytes;
}

// ---- the fields of a record ----------------------------------------------------------------------------

namespace {

template <summary result::*S, double summary::*F>
field_value summary_ms(const result& r) {
  return (r.*S).*F;
}
template <summary result::*S>
field_value summary_samples(const result& r) {
  return static_cast<std::uint64_t>((r.*S).samples);
}
template <summary result::*S>
field_value summary_spread(const result& r) {
  return (r.*S).rel_spread;
}

#define MEMLAB_SUMMARY_FIELDS(s)                                                         \
  {#s "_median_ms", #s, "median_ms", "ms", summary_ms<&result::s, &summary::median_ms>}, \
      {#s "_min_ms", #s, "min_ms", "ms", summary_ms<&result::s, &summary::min_ms>},      \
      {#s "_max_ms", #s, "max_ms", "ms", summary_ms<&result::s, &summary::max_ms>},      \
      {#s "_p25_ms", #s, "p25_ms", "ms", summary_ms<&result::s, &summary::p25_ms>},      \
      {#s "_p75_ms", #s, "p75_ms", "ms", summary_ms<&result::s, &summary::p75_ms>},      \
      {#s "_samples", #s, "samples", "", summary_samples<&result::s>},                   \
      {#s "_rel_spread", #s, "rel_spread", "", summary_spread<&result::s>}, {            \
#s "_mean_ms", #s, "mean_ms", "ms", summary_ms < &result::s, &summary::mean_ms>      \
  }

using R = const result&;
bool timed_like_nccl_tests(R r) { return r.nccl_tests.samples > 0; }
const result_field fields[] = {
    {"lab", "", "lab", "", [](R r) -> field_value { return r.lab; }},
    {"variant", "", "variant", "", [](R r) -> field_value { return r.variant; }},
    {"params", "", "params", "", nullptr, field_kind::params},
    {"policy_threads", "policy", "threads", "", [](R r) -> field_value { return std::int64_t{r.policy.threads}; }},
    {"policy_items_per_thread", "policy", "items_per_thread", "",
     [](R r) -> field_value { return std::int64_t{r.policy.items_per_thread}; }},
    {"policy_vec_bytes", "policy", "vec_bytes", "bytes",
     [](R r) -> field_value { return std::int64_t{r.policy.vec_bytes}; }},
    {"policy_stages", "policy", "stages", "", [](R r) -> field_value { return std::int64_t{r.policy.stages}; }},
    {"policy_grid", "policy", "grid", "", [](R r) -> field_value { return r.policy.grid; }},
    {"policy", "", "", "", [](R r) -> field_value { return to_string(r.policy); }},
    {"bytes", "", "bytes", "bytes", [](R r) -> field_value { return r.bytes; }},
    {"flops", "", "flops", "", [](R r) -> field_value { return r.flops; }},
    MEMLAB_SUMMARY_FIELDS(cold),
    MEMLAB_SUMMARY_FIELDS(batch),
    {"gbps", "", "gbps", "GB/s", [](R r) -> field_value { return r.gbps; }},
    {"pct_peak", "", "pct_peak", "%", [](R r) -> field_value { return r.pct_peak; }},
    {"l2_resident", "", "l2_resident", "", [](R r) -> field_value { return r.l2_resident; }},
    {"verified", "", "verified", "", [](R r) -> field_value { return r.verified; }},
    {"batch_gbps", "", "batch_gbps", "GB/s", [](R r) -> field_value { return r.batch_gbps; }},
    {"pct_measured", "", "pct_measured", "%", [](R r) -> field_value { return r.pct_measured; }},
    {"status", "", "status", "", [](R r) -> field_value { return std::string(to_string(r.status)); }},
    {"note", "", "note", "", [](R r) -> field_value { return r.note; }},
    {"hardware_bytes", "", "hardware_bytes", "bytes", [](R r) -> field_value { return r.hardware_bytes; }},
    {"hardware_gbps", "", "hardware_gbps", "GB/s", [](R r) -> field_value { return r.hardware_gbps; }},
    MEMLAB_SUMMARY_FIELDS(graph),
    {"graph_gbps", "", "graph_gbps", "GB/s", [](R r) -> field_value { return r.graph_gbps; }},
    {"graph_note", "", "graph_note", "", [](R r) -> field_value { return r.graph_note; }},
    {"peer", "", "peer", "", [](R r) -> field_value { return r.peer; }},
    {"gflops", "", "gflops", "GFLOP/s", [](R r) -> field_value { return r.gflops; }},
    {"roof", "roof", "name", "", [](R r) -> field_value { return r.roof.name; }},
    {"roof_value", "roof", "value", "roof_unit", [](R r) -> field_value { return r.roof.value; }},
    {"roof_unit", "roof", "unit", "", [](R r) -> field_value { return r.roof.unit; }},
    {"pct_roof", "", "pct_roof", "%", [](R r) -> field_value { return r.pct_roof; }},
    {"sm_clock_mhz", "", "sm_clock_mhz", "MHz", [](R r) -> field_value { return r.sm_clock_mhz; }},
    {"throttled_samples", "", "throttled_samples", "",
     [](R r) -> field_value { return static_cast<std::uint64_t>(r.throttled_samples); }},
    {"model", "", "model", "", nullptr, field_kind::model},
    {"directions", "", "directions", "", nullptr, field_kind::directions},
    {"bus_factor", "", "bus_factor", "", [](R r) -> field_value { return r.bus_factor; }, field_kind::value,
     [](R r) { return r.bus_factor > 0; }},
    {"busbw_gbps", "", "busbw_gbps", "GB/s", [](R r) -> field_value { return r.busbw_gbps; }, field_kind::value,
     [](R r) { return r.bus_factor > 0; }},
    {"measured", "", "measured", "", nullptr, field_kind::measured},
    // nccl-tests' method, where a rung has it (an extension).
    {"nccl_tests_median_ms", "nccl_tests", "median_ms", "ms", summary_ms<&result::nccl_tests, &summary::median_ms>,
     field_kind::value, timed_like_nccl_tests},
    {"nccl_tests_min_ms", "nccl_tests", "min_ms", "ms", summary_ms<&result::nccl_tests, &summary::min_ms>,
     field_kind::value, timed_like_nccl_tests},
    {"nccl_tests_max_ms", "nccl_tests", "max_ms", "ms", summary_ms<&result::nccl_tests, &summary::max_ms>,
     field_kind::value, timed_like_nccl_tests},
    {"nccl_tests_samples", "nccl_tests", "samples", "", summary_samples<&result::nccl_tests>, field_kind::value,
     timed_like_nccl_tests},
    {"nccl_tests_rel_spread", "nccl_tests", "rel_spread", "", summary_spread<&result::nccl_tests>, field_kind::value,
     timed_like_nccl_tests},
    {"nccl_tests_gbps", "", "nccl_tests_gbps", "GB/s", [](R r) -> field_value { return r.nccl_tests_gbps; },
     field_kind::value, timed_like_nccl_tests},
    {"nccl_tests_busbw_gbps", "", "nccl_tests_busbw_gbps", "GB/s",
     [](R r) -> field_value { return r.nccl_tests_busbw_gbps; }, field_kind::value,
     [](R r) { return r.nccl_tests.samples > 0 && r.bus_factor > 0; }},
    // The GPU of the case, in a run over several (an extension).
    {"device", "", "device", "", [](R r) -> field_value { return std::int64_t{r.device}; }, field_kind::value,
     [](R r) { return r.device >= 0; }},
};
#undef MEMLAB_SUMMARY_FIELDS

}  // namespace

std::span<const result_field> result_fields() { return fields; }

const result_field& result_field_named(std::string_view name) {
  for (const auto& f : fields)
    if (f.name == name) return f;
  throw std::out_of_range(fmt::format("no result field is named {}", name));
}

// ---- a lab's summary line -------------------------------------------------------------------------------

std::optional<ladder_summary> summarize_ladder(const run_report& rep, const lab_info& l) {
  std::vector<const result*> rows;
  for (const auto& r : rep.results)
    if (r.lab == l.name) rows.push_back(&r);
  const auto measured = [](const result* r) { return r->status == result_status::ok && r->cold.samples > 0; };
  const auto rate = [&](const result* r) { return r->*rule_of(l.roof).judged; };
  const result* best = nullptr;
  for (const result* r : rows) {
    if (!measured(r) || r->peer) continue;
    if (best == nullptr || rate(r) > rate(best)) best = r;
  }
  if (best == nullptr) return std::nullopt;
  const auto same_point = [&](const result* r) {
    if (r->params.size() != best->params.size()) return false;
    for (std::size_t i = 0; i < r->params.size(); ++i)
      if (r->params[i].name != best->params[i].name || r->params[i].value != best->params[i].value) return false;
    return true;
  };
  // The worst rung measured at the best one's point: what the ladder climbs. The peers measured
  // there: what a user would otherwise pick.
  const result* worst = best;
  std::vector<const result*> peers;
  for (const result* r : rows) {
    if (!measured(r) || !same_point(r)) continue;
    if (r->peer) {
      // One entry per peer: a point measured twice in one report lists its best figure.
      const auto same =
          std::find_if(peers.begin(), peers.end(), [&](const result* q) { return q->variant == r->variant; });
      if (same == peers.end()) {
        peers.push_back(r);
      } else if (rate(r) > rate(*same)) {
        *same = r;
      }
    } else if (rate(r) < rate(worst)) {
      worst = r;
    }
  }
  ladder_summary s;
  s.roof = best->roof.kind;  // the best case's own roof (a lab of links: NVLink for one rung, PCIe for another)
  s.best = best->variant;
  s.point = best->params;
  s.best_rate = rate(best);
  s.best_pct_roof = best->pct_roof;
  if (worst != best && rate(worst) > 0) {
    s.worst = worst->variant;
    s.worst_rate = rate(worst);
    s.best_over_worst = s.best_rate / s.worst_rate;
  }
  for (const result* p : peers) s.peers.emplace_back(p->variant, rate(p));
  return s;
}

}  // namespace memlab
