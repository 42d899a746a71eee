#include "check/suite.hpp"

#include <fmt/format.h>

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
// takes the other GPU ("$peer"); the all-reduce spans every GPU checked ("$gpus").
const std::vector<metric>& table() {
  static const std::vector<metric> metrics{
      {.name = "hbm_copy",
       .what = "a copy of 256 MiB through 16-byte loads and stores (copy lab, vec16), L2 flushed: HBM read + write",
       .level = "HBM (memory clock, a stack)",
       .unit = "GB/s",
       .measured = {.lab = "copy", .variant = "vec16", .dtype = "f32", .size = "2^26", .figure = "gbps"},
       .fault = "hbm_bandwidth"},
      {.name = "hbm_read",
       .what = "a dot product over 2 x 256 MiB (hierarchy lab, dot), L2 flushed: HBM reads alone",
       .level = "HBM (memory clock, a stack)",
       .unit = "GB/s",
       .measured = {.lab = "hierarchy", .variant = "dot", .dtype = "f32", .size = "2^26", .figure = "gbps"},
       .fault = "hbm_bandwidth"},
      {.name = "l2_read",
       .what = "the dot through ld.global.cg over 2 x 4 MiB, each SM its own slice (hierarchy lab, dot_l2), batch",
       .level = "L2 (its slices, the crossbar)",
       .unit = "GB/s",
       .measured = {.lab = "hierarchy", .variant = "dot_l2", .dtype = "f32", .size = "2^20", .figure = "batch_gbps"},
       .fault = "l2_bandwidth"},
      {.name = "l2_latency",
       .what = "dependent ld.global.cg loads over a 4 MiB random cycle (hierarchy lab, chase_l2)",
       .level = "L2 (latency: the crossbar, the clock)",
       .unit = "ns",
       .higher_is_better = false,
       .measured =
           {.lab = "hierarchy", .variant = "chase_l2", .dtype = "f32", .size = "2^20", .figure = "ns_per_load"},
       .fault = "l2_latency"},
      {.name = "hbm_latency",
       .what = "dependent ld.global.cg loads over a 256 MiB random cycle (hierarchy lab, chase_l2)",
       .level = "HBM (latency: the memory controller, the TLB)",
       .unit = "ns",
       .higher_is_better = false,
       .measured =
           {.lab = "hierarchy", .variant = "chase_l2", .dtype = "f32", .size = "2^26", .figure = "ns_per_load"},
       .fault = "hbm_latency"},
      {.name = "sm_clock",
       .what = "the SM clock during the HBM copy's cold samples (clock64 over %globaltimer)",
       .level = "SM clock (power or thermal limits, clocks locked low)",
       .unit = "MHz",
       .measured = {.lab = "copy", .variant = "vec16", .dtype = "f32", .size = "2^26", .figure = "sm_clock_mhz"},
       .fault = "sm_clock_low"},
      {.name = "h2d_pinned",
       .what = "cudaMemcpyAsync of 256 MiB from pinned host memory (transfer lab, ce)",
       .level = "PCIe link (trained width or generation, the host's root port)",
       .unit = "GB/s",
       .measured = {.lab = "transfer",
                    .variant = "ce",
                    .dtype = "u8",
                    .size = "256MiB",
                    .axes = {{"direction", "h2d"}, {"host_memory", "pinned"}},
                    .figure = "gbps"},
       .fault = "pcie_bandwidth"},
      {.name = "d2h_pinned",
       .what = "cudaMemcpyAsync of 256 MiB into pinned host memory (transfer lab, ce)",
       .level = "PCIe link (trained width or generation, the host's root port)",
       .unit = "GB/s",
       .measured = {.lab = "transfer",
                    .variant = "ce",
                    .dtype = "u8",
                    .size = "256MiB",
                    .axes = {{"direction", "d2h"}, {"host_memory", "pinned"}},
                    .figure = "gbps"},
       .fault = "pcie_bandwidth"},
      {.name = "clock_events",
       .what = "NVML's clock-event reasons seen while the GPU's cases ran (idle and application clocks aside)",
       .level = "power or thermal limits (HW slowdown, thermal, power brake)",
       .unit = "reasons",
       .higher_is_better = false,
       .nvml = nvml_reading::clock_events,
       .fault = "clock_slowdown"},
      {.name = "ecc_volatile",
       .what = "uncorrected ECC errors since the driver loaded (NVML, volatile)",
       .level = "HBM (ECC: a failing row or stack)",
       .unit = "errors",
       .higher_is_better = false,
       .nvml = nvml_reading::ecc_volatile,
       .fault = "ecc_uncorrected",
       .others_move_it = false},
      {.name = "ecc_aggregate",
       .what = "uncorrected ECC errors over the GPU's life (NVML, aggregate)",
       .level = "HBM (ECC history: rows retired or remapped)",
       .unit = "errors",
       .higher_is_better = false,
       .nvml = nvml_reading::ecc_aggregate,
       .fault = "ecc_history",
       .others_move_it = false},
      {.name = "pcie_gen",
       .what =
           "the PCIe generation the link trained to under load (NVML, sampled during the cases) against its maximum",
       .level = "PCIe link (slot, riser, retimer, BIOS setting)",
       .unit = "gen",
       .nvml = nvml_reading::pcie_gen,
       .fault = "pcie_link_degraded",
       .others_move_it = false},
      {.name = "pcie_width",
       .what = "the PCIe lanes the link trained to under load (NVML, sampled during the cases) against its maximum",
       .level = "PCIe link (slot, riser, a lane down)",
       .unit = "lanes",
       .nvml = nvml_reading::pcie_width,
       .fault = "pcie_link_degraded",
       .others_move_it = false},
      {.name = "peer_ce",
       .what = "cudaMemcpyPeerAsync of 256 MiB from one GPU to another (transfer lab, peer_ce)",
       .level = "NVLink or NVSwitch between the two GPUs (PCIe without them)",
       .unit = "GB/s",
       .where = scope::pair,
       .measured = {.lab = "transfer",
                    .variant = "peer_ce",
                    .dtype = "u8",
                    .size = "256MiB",
                    .axes = {{"peer", "$peer"}},
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
                    .dtype = "u8",
                    .size = "1GiB",
                    .axes = {{"gpus", "$gpus"}, {"placement", "out_of_place"}},
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

namespace {

template <class Axes>
std::string command_with(const lab_case& c, const Axes& axes) {
  std::string out = fmt::format("{} --variant {} --dtype {} --sizes {}", c.lab, c.variant, c.dtype, c.size);
  for (const auto& [axis, value] : axes) {
    std::string flag(axis);
    for (char& ch : flag)
      if (ch == '_') ch = '-';
    out += fmt::format(" --{} {}", flag, value);
  }
  return out;
}

}  // namespace

std::string command_of(const lab_case& c) { return command_with(c, c.axes); }

std::vector<std::pair<std::string, std::string>> axes_of(const lab_case& c, int peer, int gpus) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [axis, value] : c.axes) {
    std::string v(value);
    if (v == "$peer") v = std::to_string(peer);
    if (v == "$gpus") v = std::to_string(gpus);
    out.emplace_back(std::string(axis), std::move(v));
  }
  return out;
}

std::string command_of(const lab_case& c, int device, int peer, int gpus) {
  return fmt::format("{} --device {}", command_with(c, axes_of(c, peer, gpus)), device);
}

}  // namespace memlab::check
