// The links beyond a GPU's own memory: its PCIe link (generation, lanes) and its NVLinks, read at
// run time, and their theoretical rates per direction. Two sources, tried in order:
//   nvml   libnvidia-ml.so.1, loaded with dlopen (no build-time dependency; absent without a driver):
//          the most the PCIe link trains to, and each NVLink's state and version;
//   sysfs  /sys/bus/pci/devices/<bus id>/max_link_speed and max_link_width (no NVLink figures).
// The maximum, not the current, generation: an idle GPU's link trains down (an H100 at rest reads
// Gen1) and back up under load, faster than a reading between cases could follow.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memlab {

struct link_figures {
  int pcie_gen = 0, pcie_width = 0;
  double pcie_gbps = 0;  // per direction, after line encoding
  int nvlink_links = 0;
  double nvlink_gbps = 0;        // active links x a link's data rate, per direction: the NVLink roof
  double nvlink_link_gbps = 0;   // one link's data rate per direction (the first active link's): the table below
  std::string nvlink_rate_from;  // "NVLink version" (the table below), or "NVML line rate" where it has no entry
  double nvlink_line_gbps = 0;   // NVML's reading of the first active link's speed (the line rate), 0 = none
  bool nvlink_switch = false;    // a link goes to an NVSwitch: every GPU on the switch is reached at the full rate
  std::vector<std::string> nvlink_gpus;  // PCI bus ids at the far end of links that go straight to a GPU, a link each
  std::string source;                    // "nvml", "sysfs", or "" when neither answered
};

// GB/s per lane and direction after line encoding: Gen1 2.5 GT/s and Gen2 5 GT/s with 8b/10b,
// Gen3 8, Gen4 16, Gen5 32 GT/s with 128b/130b, Gen6 64 GT/s (PAM4, FLIT mode, 242/256). 0 when
// unknown. Gen5 x16: 32e9 x 16 / 8 x 128/130 = 63.02 GB/s (64 GB/s before encoding). Packet headers
// (TLPs) cost more still: what a copy reaches is lower, which the lab's page explains.
double pcie_lane_gbps(int gen);
// The generation of a sysfs link speed ("32.0 GT/s PCIe", "16 GT/s"); nullopt when not one.
std::optional<int> pcie_gen_of_speed(std::string_view sysfs_speed);
// A link's data rate, GB/s per direction, from what nvmlDeviceGetNvLinkVersion returns, an
// nvmlNvlinkVersion_t: 1 (NVLink 1.0, P100) 20; 2, 3 (2.0, 2.2: V100), 4, 5 (3.0, 3.1: A100) and 6
// (4.0: H100) 25; 7 (5.0: B200) 50, except that drivers have returned 7 for H100s (sm_90), where it
// is 25 (the workaround others use too). 0 when unknown. The data rate is what NVIDIA's figures count
// (an H100's 18 links: 450 GB/s a direction) and what the NVLink roof is, whatever the driver reports
// beside it: NVML's link speed (NVML_FI_DEV_NVLINK_GET_SPEED, 26.562 GB/s on an H100: `nvidia-smi
// nvlink -s`) is the line rate, the signalling before the link's own framing, which no copy reaches.
double nvlink_link_gbps(unsigned nvml_version, int cc_major);

// The links of CUDA device `ordinal` (its PCI bus id from the CUDA runtime), from NVML, else sysfs.
link_figures read_links(int ordinal);

}  // namespace memlab
