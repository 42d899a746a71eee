// Experiment (not part of the build): how the grid-stride 16-byte copy's speed depends on the
// vectors each thread keeps in flight (unroll) and on CTAs per SM, next to one-vector-per-thread.
// Build and run on the GPU machine:
//   nvcc -O3 -std=c++20 -arch=sm_90 tools/studies/copy_grid_sweep.cu -o /tmp/sweep && /tmp/sweep
// Prints cold medians (L2 flushed before each launch) for a 2^31-element f16 copy and 2^26.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "cold_timer.cuh"

__global__ void one_vector(uint4* __restrict__ d, const uint4* __restrict__ s, std::uint64_t v) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < v) d[i] = s[i];
}

// Tile-strided (the lab's vec16_unroll): CTA b moves tiles b, b + grid, ...
template <int U>
__global__ void tile_stride(uint4* __restrict__ d, const uint4* __restrict__ s, std::uint64_t v) {
  const std::uint64_t tile = std::uint64_t{blockDim.x} * U, full = v / tile;
  for (std::uint64_t t = blockIdx.x; t < full; t += gridDim.x) {
    const std::uint64_t base = t * tile + threadIdx.x;
    uint4 r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) r[u] = s[base + std::uint64_t(u) * blockDim.x];
#pragma unroll
    for (int u = 0; u < U; ++u) d[base + std::uint64_t(u) * blockDim.x] = r[u];
  }
}

// Thread-strided: vector index i = global thread + k x (all threads); U loads per iteration,
// each U x (all threads) apart. The grid's threads sweep the array together, densely.
template <int U>
__global__ void thread_stride(uint4* __restrict__ d, const uint4* __restrict__ s, std::uint64_t v) {
  const std::uint64_t all = std::uint64_t{gridDim.x} * blockDim.x;
  const std::uint64_t step = all * U, full = v / step * step;
  std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (; i < full; i += step) {
    uint4 r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) r[u] = s[i + u * all];
#pragma unroll
    for (int u = 0; u < U; ++u) d[i + u * all] = r[u];
  }
  for (; i < v; i += all) d[i] = s[i];  // the remainder, so every variant moves the same bytes
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cold_timer timer;
  for (std::uint64_t n : {1ull << 31, 1ull << 26}) {  // f16 elements
    const std::uint64_t bytes = n * 2, v = bytes / 16;
    uint4 *s, *d;
    CHECK(cudaMalloc(&s, bytes));
    CHECK(cudaMalloc(&d, bytes));
    CHECK(cudaMemset(s, 1, bytes));
    auto time = [&](const char* name, auto launch) {
      const float ms = timer.median_ms(launch, 30);
      std::printf("n=2^%d %-28s %8.3f ms  %7.1f GB/s\n", n == (1ull << 31) ? 31 : 26, name, ms, gbps(2.0 * bytes, ms));
    };
    time("one_vector t256", [&] { one_vector<<<(v + 255) / 256, 256>>>(d, s, v); });
    time("memcpy", [&] { CHECK(cudaMemcpyAsync(d, s, bytes, cudaMemcpyDeviceToDevice)); });
    char name[64];
#define SWEEP(KERNEL, U)                                                  \
  for (int per_sm : {2, 4, 8}) {                                          \
    if (per_sm * 256 > 2048) continue;                                    \
    std::snprintf(name, sizeof name, "%s u%d %d/SM", #KERNEL, U, per_sm); \
    time(name, [&] { KERNEL<U><<<sms * per_sm, 256>>>(d, s, v); });       \
  }
    SWEEP(tile_stride, 1)
    SWEEP(tile_stride, 2) SWEEP(tile_stride, 4) SWEEP(tile_stride, 8) SWEEP(thread_stride, 1) SWEEP(thread_stride, 2)
        SWEEP(thread_stride, 4) SWEEP(thread_stride, 8) CHECK(cudaFree(s));
    CHECK(cudaFree(d));
  }
  return 0;
}
