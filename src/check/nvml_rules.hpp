// memlab check's NVML rules, one pair of functions a metric (check/suite.cpp names them in its records):
// what the metric reads into its row, and its verdict on the row. The rules (docs/check.md, "The floors,
// and why"): uncorrected ECC errors since the driver loaded fail, over the GPU's life warn; a PCIe link
// trained below its maximum under load fails; a hardware clock slowdown fails, the driver's power or
// thermal cap warns.
#pragma once

#include "check/check.hpp"

namespace memlab::check::nvml_rules {

void read_clock_events(row& r, const nvml_readings& rd, const nvml_samples& s);
verdict judge_clock_events(const row& r);
void read_ecc_volatile(row& r, const nvml_readings& rd, const nvml_samples& s);
void read_ecc_aggregate(row& r, const nvml_readings& rd, const nvml_samples& s);
verdict judge_ecc_volatile(const row& r);
verdict judge_ecc_aggregate(const row& r);
void read_pcie_gen(row& r, const nvml_readings& rd, const nvml_samples& s);
void read_pcie_width(row& r, const nvml_readings& rd, const nvml_samples& s);
verdict judge_pcie_link(const row& r);

}  // namespace memlab::check::nvml_rules
