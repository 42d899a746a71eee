#include "harness/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "memlab/error.cuh"

namespace memlab {
namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// Repeats `sample()` (which returns milliseconds) until the spread is small or the budget ends.
template <class Sample>
summary sample_until_stable(Sample&& sample, const measure_options& opt) {
  std::vector<double> ms;
  const auto t0 = clock_type::now();
  summary s;
  for (;;) {
    ms.push_back(sample());
    const std::size_t n = ms.size();
    const bool enough = n >= opt.min_samples;
    // Summaries sort: re-check every few samples, not after each.
    if (enough && (n % 5 == 0)) {
      s = summarize(ms);
      if (s.rel_spread < opt.target_rel_spread) return s;
    }
    if (n >= opt.max_samples) break;
    if (n >= measure_options::floor_samples && seconds_since(t0) > opt.max_time_s) break;
  }
  return summarize(std::move(ms));
}

}  // namespace

summary measure_cold(const launch_fn& launch, cudaStream_t stream, l2_flusher& flusher, const measure_options& opt) {
  cuda_event start, stop;
  launch(stream);  // warm-up: module load, first-touch, CUB's tuning queries
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return sample_until_stable(
      [&] {
        flusher.flush(stream);
        start.record(stream);
        launch(stream);
        stop.record(stream);
        stop.synchronize();
        return static_cast<double>(elapsed_ms(start, stop));
      },
      opt);
}

summary measure_batch(const launch_fn& launch, cudaStream_t stream, const measure_options& opt, double estimate_ms) {
  constexpr double batch_target_ms = 1.0;
  const int launches = estimate_ms > 0 ? static_cast<int>(std::clamp(std::ceil(batch_target_ms / estimate_ms), 1.0, 2000.0)) : 100;
  cuda_event start, stop;
  for (int i = 0; i < launches; ++i) launch(stream);  // warm-up batch: fills the launch queue, warms L2
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return sample_until_stable(
      [&] {
        start.record(stream);
        for (int i = 0; i < launches; ++i) launch(stream);
        stop.record(stream);
        stop.synchronize();
        return static_cast<double>(elapsed_ms(start, stop)) / launches;
      },
      opt);
}

}  // namespace memlab
