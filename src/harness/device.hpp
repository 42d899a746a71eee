// The GPU a run uses: its properties, peaks and the measured ceilings.
#pragma once

#include <stdexcept>
#include <string>

#include "harness/buffer.hpp"
#include "harness/result.hpp"

namespace memlab {

class timer;

// Thrown when no usable CUDA device is present (the CLI exits 3).
class no_device_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Number of CUDA devices; throws no_device_error with the runtime's reason when there are none.
int device_count();

// Selects `ordinal` (cudaSetDevice) and reads its attributes, clocks and driver/runtime versions;
// throws no_device_error when absent.
device_info open_device(int ordinal);

// The measured DRAM ceiling: cold median of a large cudaMemcpyAsync D2D (max(40 x L2, 2 GiB), at
// most a quarter of free memory), bytes read + written, GB/s.
double measure_copy_ceiling_gbps(const device_info& dev, timer& t, double max_time_s);

// The measured L2 ceiling: batch median of a cudaMemcpyAsync D2D of L2 / 4 (source and destination
// together half the L2, so both stay resident), bytes read + written, GB/s.
double measure_l2_ceiling_gbps(const device_info& dev, timer& t, double max_time_s);

}  // namespace memlab
