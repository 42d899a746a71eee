// Measuring like NVBench: CUDA events on a stream, warm-up kept out, repeat until the relative
// spread is small or the time budget ends.
//
// cold:  before every sample the L2 is flushed; events bracket one launch. What a kernel costs
//        when its data comes from DRAM.
// batch: events bracket `launches_per_sample` back-to-back launches; the sample is their mean.
//        Launch gaps hide behind running kernels; L2-resident data stays resident. What a kernel
//        costs in a steady stream of work.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>

#include "harness/buffer.hpp"
#include "harness/stats.hpp"

namespace memlab {

using launch_fn = std::function<void(cudaStream_t)>;

struct measure_options {
  double max_time_s = 0.25;           // wall-clock budget for one measurement (cold or batch)
  double target_rel_spread = 0.005;   // stop once (p75 - p25) / median is below this ...
  std::size_t min_samples = 10;       // ... and at least this many samples were taken
  std::size_t max_samples = 5000;
  // Taken even when the budget ends first, so every summary has a median.
  static constexpr std::size_t floor_samples = 3;
};

summary measure_cold(const launch_fn& launch, cudaStream_t stream, l2_flusher& flusher, const measure_options& opt);

// `estimate_ms` (e.g. the cold median) sizes the batch to about 1 ms of work.
summary measure_batch(const launch_fn& launch, cudaStream_t stream, const measure_options& opt, double estimate_ms);

}  // namespace memlab
