#include "check/faults.hpp"

#include <array>

namespace memlab::check {

std::string_view to_string(action a) {
  switch (a) {
    case action::monitor: return "monitor";
    case action::rerun: return "rerun";
    case action::reset: return "reset";
    case action::drain: return "drain";
    case action::replace: return "replace";
  }
  return "?";
}

std::optional<action> action_named(std::string_view name) {
  for (action a : {action::monitor, action::rerun, action::reset, action::drain, action::replace})
    if (to_string(a) == name) return a;
  return std::nullopt;
}

action most_urgent(action a, action b) { return static_cast<int>(a) >= static_cast<int>(b) ? a : b; }

namespace {

// docs/check.md, "Fault codes", holds this table; tests/check/test_faults.cpp compares the two.
constexpr std::array table{
    fault{.code = "hbm_bandwidth",
          .raised_by = "hbm_copy, hbm_read",
          .points_at = "HBM (the memory clock, a stack)",
          .means = "the GPU's memory delivers less bandwidth than the model's",
          .on_fail = action::drain},
    fault{.code = "hbm_latency",
          .raised_by = "hbm_latency",
          .points_at = "HBM latency (the memory controller, the TLB)",
          .means = "a load that misses the L2 takes longer than on the model",
          .on_fail = action::drain},
    fault{.code = "l2_bandwidth",
          .raised_by = "l2_read",
          .points_at = "L2 (its slices, the crossbar)",
          .means = "the L2 delivers less bandwidth than the model's",
          .on_fail = action::drain},
    fault{.code = "l2_latency",
          .raised_by = "l2_latency",
          .points_at = "L2 latency (the crossbar, the clock)",
          .means = "a load that hits the L2 takes longer than on the model",
          .on_fail = action::drain},
    fault{.code = "sm_clock_low",
          .raised_by = "sm_clock",
          .points_at = "SM clock (power or thermal limits, clocks locked low)",
          .means = "the SMs ran slower than the model's under load",
          .on_fail = action::reset},
    fault{.code = "clock_slowdown",
          .raised_by = "clock_events",
          .points_at = "power or thermal limits (cooling, power delivery)",
          .means = "NVML saw the clocks held down: by the hardware (fails) or the driver's power or thermal cap (warns)",
          .on_fail = action::drain},
    fault{.code = "pcie_bandwidth",
          .raised_by = "h2d_pinned, d2h_pinned",
          .points_at = "PCIe link (trained width or generation, the host's root port)",
          .means = "copies between host and GPU are slower than the model's",
          .on_fail = action::drain},
    fault{.code = "pcie_link_degraded",
          .raised_by = "pcie_gen, pcie_width",
          .points_at = "PCIe link (slot, riser, retimer, a lane down, a BIOS setting)",
          .means = "the link trained below its maximum generation or width under load",
          .on_fail = action::drain},
    fault{.code = "ecc_uncorrected",
          .raised_by = "ecc_volatile",
          .points_at = "HBM (ECC: a failing row or stack)",
          .means = "uncorrected ECC errors since the driver loaded (a reset remaps the rows; replace if they recur)",
          .on_fail = action::reset},
    fault{.code = "ecc_history",
          .raised_by = "ecc_aggregate",
          .points_at = "HBM (ECC history: rows retired or remapped)",
          .means = "uncorrected ECC errors over the GPU's life (warns only)",
          .on_fail = action::monitor},
    fault{.code = "nvlink_bandwidth",
          .raised_by = "peer_ce",
          .points_at = "NVLink or NVSwitch between the two GPUs (PCIe without them)",
          .means = "a copy from one GPU into another is slower than the model's",
          .on_fail = action::drain},
    fault{.code = "collective_bandwidth",
          .raised_by = "all_reduce",
          .points_at = "the NVLink fabric and NCCL (a slow link, a GPU, NCCL's settings)",
          .means = "an all-reduce over the node's GPUs is slower than the model's",
          .on_fail = action::drain},
    fault{.code = "data_corruption",
          .raised_by = "a lab case's verification",
          .points_at = "the GPU (its memory or its SMs returned wrong bytes)",
          .means = "a case's output differs from the CPU's: the GPU corrupts data",
          .on_fail = action::replace},
    fault{.code = "cuda_error",
          .raised_by = "a CUDA error in a case",
          .points_at = "the GPU's state (a lost context, an Xid)",
          .means = "the GPU stopped a case with an error; the check measures nothing after it",
          .on_fail = action::reset},
    fault{.code = "case_error",
          .raised_by = "another error in a case (NCCL, the host)",
          .points_at = "the software or the host (NCCL, host memory)",
          .means = "a case stopped with an error that is not the GPU's",
          .on_fail = action::drain},
    fault{.code = "out_of_memory",
          .raised_by = "a failed allocation, no other process seen",
          .points_at = "device memory held by something the check cannot see (another container, a leak)",
          .means = "the check could not allocate its buffers and no other process showed on the GPU",
          .on_fail = action::reset},
    fault{.code = "gpu_busy",
          .raised_by = "any row another process on its GPU could have moved",
          .points_at = "another process on the GPU (named in the check's header)",
          .means = "not judged as a fault: another process was computing on the GPU or holding its memory",
          .on_fail = action::rerun},
};

}  // namespace

std::span<const fault> faults() { return table; }

const fault* find_fault(std::string_view code) {
  for (const fault& f : table)
    if (f.code == code) return &f;
  return nullptr;
}

}  // namespace memlab::check
