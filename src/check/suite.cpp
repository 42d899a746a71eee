#include "check/suite.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "check/nvml_rules.hpp"
#include "harness/text.hpp"

namespace memlab::check {

std::string_view to_string(scope s) {
  switch (s) {
    case scope::gpu: return "gpu";
    case scope::pair: return "pair";
    case scope::node: return "node";
  }
  return "?";
}

namespace {

// Sizes: far beyond the L2 for HBM (an H100's L2 is 50 MiB: 2^26 f32 is 256 MiB per array, five
// times it), well inside it for the L2 (2^20 f32: 4 MiB per array). Transfers of 256 MiB reach the
// plateau of the transfer lab's size sweep (docs/labs/transfer.md). In a pair's case the peer axis
// takes the other GPU (check_value::peer); the all-reduce spans every GPU checked (check_value::gpus).
const std::vector<metric>& table() {
  static const std::vector<metric> metrics{
      {.name = "hbm_copy",
       .what = "a copy of 256 MiB through 16-byte loads and stores (copy lab, vec16), L2 flushed: HBM read + write",
       .level = "HBM (memory clock, a stack)",
       .unit = "GB/s",
       .measured = {.lab = "copy", .variant = "vec16", .type = dtype::f32, .count = 1ull << 26, .figure = "gbps"},
       .fault = "hbm_bandwidth"},
      {.name = "hbm_read",
       .what = "a dot product over 2 x 256 MiB (hierarchy lab, dot), L2 flushed: HBM reads alone",
       .level = "HBM (memory clock, a stack)",
       .unit = "GB/s",
       .measured = {.lab = "hierarchy", .variant = "dot", .type = dtype::f32, .count = 1ull << 26, .figure = "gbps"},
       .fault = "hbm_bandwidth"},
      {.name = "l2_read",
       .what = "the dot through ld.global.cg over 2 x 4 MiB, each SM its own slice (hierarchy lab, dot_l2), batch",
       .level = "L2 (its slices, the crossbar)",
       .unit = "GB/s",
       .measured = {.lab = "hierarchy", .variant = "dot_l2", .type = dtype::f32, .count = 1ull << 20, .figure = "batch_gbps"},
       .fault = "l2_bandwidth"},
      {.name = "l2_latency",
       .what = "dependent ld.global.cg loads over a 4 MiB random cycle (hierarchy lab, chase_l2)",
       .level = "L2 (latency: the crossbar, the clock)",
       .unit = "ns",
       .higher_is_better = false,
       .measured =
           {.lab = "hierarchy", .variant = "chase_l2", .type = dtype::f32, .count = 1ull << 20, .figure = "ns_per_load"},
       .fault = "l2_latency"},
      {.name = "hbm_latency",
       .what = "dependent ld.global.cg loads over a 256 MiB random cycle (hierarchy lab, chase_l2)",
       .level = "HBM (latency: the memory controller, the TLB)",
       .unit = "ns",
       .higher_is_better = false,
       .measured =
           {.lab = "hierarchy", .variant = "chase_l2", .type = dtype::f32, .count = 1ull << 26, .figure = "ns_per_load"},
       .fault = "hbm_latency"},
      {.name = "sm_clock",
       .what = "the SM clock during the HBM copy's cold samples (clock64 over %globaltimer)",
       .level = "SM clock (power or thermal limits, clocks locked low)",
       .unit = "MHz",
       .measured = {.lab = "copy", .variant = "vec16", .type = dtype::f32, .count = 1ull << 26, .figure = "sm_clock_mhz"},
       .fault = "sm_clock_low"},
      {.name = "h2d_pinned",
       .what = "cudaMemcpyAsync of 256 MiB from pinned host memory (transfer lab, ce)",
       .level = "PCIe link (trained width or generation, the host's root port)",
       .unit = "GB/s",
       .measured = {.lab = "transfer",
                    .variant = "ce",
                    .type = dtype::u8,
                    .count = 256ull << 20,
                    .bytes = true,
                    .axes = {{"direction", "h2d"}, {"host_memory", "pinned"}},
                    .figure = "gbps"},
       .fault = "pcie_bandwidth"},
      {.name = "d2h_pinned",
       .what = "cudaMemcpyAsync of 256 MiB into pinned host memory (transfer lab, ce)",
       .level = "PCIe link (trained width or generation, the host's root port)",
       .unit = "GB/s",
       .measured = {.lab = "transfer",
                    .variant = "ce",
                    .type = dtype::u8,
                    .count = 256ull << 20,
                    .bytes = true,
                    .axes = {{"direction", "d2h"}, {"host_memory", "pinned"}},
                    .figure = "gbps"},
       .fault = "pcie_bandwidth"},
      {.name = "clock_events",
       .what = "NVML's clock-event reasons seen while the GPU's cases ran (idle and application clocks aside)",
       .level = "power or thermal limits (HW slowdown, thermal, power brake)",
       .unit = "reasons",
       .higher_is_better = false,
       .nvml = {.read = nvml_rules::read_clock_events, .judge = nvml_rules::judge_clock_events, .words = true},
       .fault = "clock_slowdown"},
      {.name = "ecc_volatile",
       .what = "uncorrected ECC errors since the driver loaded (NVML, volatile)",
       .level = "HBM (ECC: a failing row or stack)",
       .unit = "errors",
       .higher_is_better = false,
       .nvml = {.read = nvml_rules::read_ecc_volatile, .judge = nvml_rules::judge_ecc_volatile},
       .fault = "ecc_uncorrected",
       .others_move_it = false},
      {.name = "ecc_aggregate",
       .what = "uncorrected ECC errors over the GPU's life (NVML, aggregate)",
       .level = "HBM (ECC history: rows retired or remapped)",
       .unit = "errors",
       .higher_is_better = false,
       .nvml = {.read = nvml_rules::read_ecc_aggregate, .judge = nvml_rules::judge_ecc_aggregate},
       .fault = "ecc_history",
       .others_move_it = false},
      {.name = "pcie_gen",
       .what =
           "the PCIe generation the link trained to under load (NVML, sampled during the cases) against its maximum",
       .level = "PCIe link (slot, riser, retimer, BIOS setting)",
       .unit = "gen",
       .nvml = {.read = nvml_rules::read_pcie_gen, .judge = nvml_rules::judge_pcie_link},
       .fault = "pcie_link_degraded",
       .others_move_it = false},
      {.name = "pcie_width",
       .what = "the PCIe lanes the link trained to under load (NVML, sampled during the cases) against its maximum",
       .level = "PCIe link (slot, riser, a lane down)",
       .unit = "lanes",
       .nvml = {.read = nvml_rules::read_pcie_width, .judge = nvml_rules::judge_pcie_link},
       .fault = "pcie_link_degraded",
       .others_move_it = false},
      {.name = "peer_ce",
       .what = "cudaMemcpyPeerAsync of 256 MiB from one GPU to another (transfer lab, peer_ce)",
       .level = "NVLink or NVSwitch between the two GPUs (PCIe without them)",
       .unit = "GB/s",
       .where = scope::pair,
       .measured = {.lab = "transfer",
                    .variant = "peer_ce",
                    .type = dtype::u8,
                    .count = 256ull << 20,
                    .bytes = true,
                    .axes = {{"peer", check_value::peer}},
                    .figure = "gbps"},
       .fault = "nvlink_bandwidth"},
      {.name = "all_reduce",
       .what = "ncclAllReduce of 1 GiB over every GPU checked, one process (transfer lab, nccl_all_reduce): "
               "nccl-tests' busbw",
       .level = "the NVLink fabric and NCCL (a slow link, a GPU, NCCL's settings)",
       .unit = "GB/s",
       .where = scope::node,
       .measured = {.lab = "transfer",
                    .variant = "nccl_all_reduce",
                    .type = dtype::u8,
                    .count = 1ull << 30,
                    .bytes = true,
                    .axes = {{"gpus", check_value::gpus}, {"placement", "out_of_place"}},
                    .figure = "nccl_tests_busbw_gbps"},
       .fault = "collective_bandwidth"},
  };
  return metrics;
}

}  // namespace

std::span<const metric> suite() { return table(); }

const metric* find_metric(std::string_view name) {
  for (const metric& m : suite())
    if (m.name == name) return &m;
  return nullptr;
}

std::string lab_case::size_text() const {
  if (!bytes) return format_count(count);
  for (const auto& [unit, shift] : {std::pair{"GiB", 30}, std::pair{"MiB", 20}, std::pair{"KiB", 10}}) {
    if (count >= (1ull << shift) && count % (1ull << shift) == 0) return fmt::format("{}{}", count >> shift, unit);
  }
  return fmt::format("{}B", count);
}

namespace {

std::string value_text(const case_axis_value& v, int peer, int gpus) {
  if (const auto* n = std::get_if<std::uint64_t>(&v)) return std::to_string(*n);
  if (const auto* w = std::get_if<std::string_view>(&v)) return std::string(*w);
  switch (std::get<check_value>(v)) {
    case check_value::peer: return peer >= 0 ? std::to_string(peer) : "$peer";
    case check_value::gpus: return gpus > 0 ? std::to_string(gpus) : "$gpus";
  }
  return "?";
}

template <class Axes>
std::string command_with(const lab_case& c, const Axes& axes) {
  std::string out = fmt::format("{} --variant {} --dtype {} --sizes {}", c.lab, c.variant, to_string(c.type),
                                c.size_text());
  for (const auto& [axis, value] : axes) out += fmt::format(" {} {}", flag_of(axis), value);
  return out;
}

}  // namespace

std::string command_of(const lab_case& c) { return command_with(c, axes_of(c, -1, 0)); }

std::vector<std::pair<std::string, std::string>> axes_of(const lab_case& c, int peer, int gpus) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [axis, value] : c.axes) out.emplace_back(std::string(axis), value_text(value, peer, gpus));
  return out;
}

std::string command_of(const lab_case& c, int device, int peer, int gpus) {
  return fmt::format("{} --device {}", command_with(c, axes_of(c, peer, gpus)), device);
}

case_plan_result plan_case(const lab_case& c, std::span<const lab* const> built, std::span<const missing_lab> missing,
                           int device, int peer, int gpus, int device_count) {
  case_plan_result out;
  const rung_lookup found = find_rung(built, missing, c.lab, c.variant);
  if (!found.why.empty()) {
    out.why = found.why;
    return out;
  }
  run_request& req = out.request;
  req.labs = {std::string(c.lab)};
  req.variants = {std::string(c.variant)};
  req.dtypes = {c.type};
  req.sizes.specs = {size_spec{.value = c.count, .bytes = c.bytes, .text = c.size_text()}};
  for (const auto& [name, value] : c.axes) {
    const axis* a = found.l->find_axis(name);
    if (a == nullptr) {
      out.why = fmt::format("lab {} has no axis {}", c.lab, name);
      return out;
    }
    std::uint64_t v = 0;
    if (const auto* n = std::get_if<std::uint64_t>(&value)) {
      v = *n;
    } else if (const auto* w = std::get_if<std::string_view>(&value)) {
      const auto it = std::find(a->words.begin(), a->words.end(), *w);
      if (it == a->words.end()) {
        out.why = fmt::format("{} takes {}, not {}", flag_of(name), accepted_values(*a), *w);
        return out;
      }
      v = static_cast<std::uint64_t>(it - a->words.begin());
    } else {
      v = static_cast<std::uint64_t>(std::get<check_value>(value) == check_value::peer ? peer : gpus);
    }
    req.axes.emplace_back(std::string(name), std::vector<axis_value>{axis_value{{v, 0, 0}, 1}});
  }
  req.devices = {device};
  req.device_count = device_count;
  req.progress = false;
  req.measure_ceiling = false;
  req.command = "memlab run " + command_of(c, device, peer, gpus);
  try {
    auto cases = plan_cases(req, built, missing);
    if (cases.size() != 1) {
      out.why = fmt::format("the case plans {} cases, not one", cases.size());
      return out;
    }
    cases.front().device = device;  // a run of one GPU plans it as "the run's only one"
    out.planned = std::move(cases.front());
  } catch (const std::invalid_argument& e) {
    out.why = e.what();
  }
  return out;
}

}  // namespace memlab::check
