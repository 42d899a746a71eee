// The studies' one cold timer (the labs are timed by memlab's harness, src/harness/timing.cu; a study asks one
// question outside it). Before every timed launch the L2 is flushed by a memset of a buffer twice its size (dirty
// lines, as the harness flushes), then two events on the legacy default stream around the launch alone; one
// launch first, untimed. The figure is the median of the samples (the middle one sorted; of an even count the
// upper of the two middle ones). A study whose question is the method itself (timing_method.cu) or that races
// contenders sample by sample behind a held stream (copy_small_floor.cu) times its own way and says so.
//
//   cold_timer t;                                    // flush buffer: 2 x the L2 of the current device
//   const float ms = t.median_ms([&] { kernel<<<grid, 256>>>(d, s, n); }, 31);
//   std::printf("%.1f GB/s\n", gbps(2.0 * bytes, ms));
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "check.cuh"

class cold_timer {
 public:
  // flush_bytes 0: twice the L2 of the current device.
  explicit cold_timer(std::size_t flush_bytes = 0) : flush_bytes_(flush_bytes) {
    if (flush_bytes_ == 0) {
      int l2 = 0;
      CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
      flush_bytes_ = 2 * static_cast<std::size_t>(l2);
    }
    CHECK(cudaMalloc(&flush_, flush_bytes_));
    CHECK(cudaEventCreate(&start_));
    CHECK(cudaEventCreate(&stop_));
  }
  ~cold_timer() {
    cudaFree(flush_);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  cold_timer(const cold_timer&) = delete;
  cold_timer& operator=(const cold_timer&) = delete;

  // The median of `samples` cold launches of `launch()` (which enqueues on the legacy default stream), ms.
  // warm_up: one launch first, untimed (code loaded, allocations made, autotuning done).
  template <class Launch>
  float median_ms(Launch&& launch, int samples = 31, bool warm_up = true) {
    if (warm_up) {
      launch();
      CHECK(cudaDeviceSynchronize());
    }
    std::vector<float> ms;
    for (int i = 0; i < samples; ++i) {
      CHECK(cudaMemsetAsync(flush_, i & 0xff, flush_bytes_));
      CHECK(cudaEventRecord(start_));
      launch();
      CHECK(cudaEventRecord(stop_));
      CHECK(cudaEventSynchronize(stop_));
      CHECK(cudaGetLastError());
      float t = 0;
      CHECK(cudaEventElapsedTime(&t, start_, stop_));
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  }

 private:
  std::size_t flush_bytes_ = 0;
  void* flush_ = nullptr;
  cudaEvent_t start_{}, stop_{};
};

// GB/s of `bytes` (read + written, as memlab counts them) moved in `ms`.
inline double gbps(double bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }
