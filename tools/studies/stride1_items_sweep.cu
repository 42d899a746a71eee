// Experiment (not part of the build): why does the stride lab's f16 copy at stride 1 stop at ~84%
// of peak while f32 reaches 88%? Both keep 16 bytes of element loads in flight per thread; f16
// needs twice the load instructions, each carrying 64 instead of 128 bytes per warp. Times the
// lab's element-per-load pattern (thread-element e = tile + u x blockDim + tid, all loads before
// the stores) for f16 and f32 with 1 to 32 elements per thread, cold (L2 flushed), n = 2^26.
//   nvcc -O3 -std=c++20 -arch=sm_90 tools/studies/stride1_items_sweep.cu -o /tmp/items && /tmp/items
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cold_timer.cuh"

template <class T, int Items>
__global__ void __launch_bounds__(256) items_copy(T* __restrict__ d, const T* __restrict__ s, std::uint64_t n) {
  const std::uint64_t tile = 256ull * Items, first = blockIdx.x * tile + threadIdx.x;
  if ((blockIdx.x + 1) * tile <= n) {
    T r[Items];
#pragma unroll
    for (int u = 0; u < Items; ++u) r[u] = s[first + u * 256ull];
#pragma unroll
    for (int u = 0; u < Items; ++u) d[first + u * 256ull] = r[u];
  } else {
    for (int u = 0; u < Items; ++u) {
      const std::uint64_t e = first + u * 256ull;
      if (e < n) d[e] = s[e];
    }
  }
}

int main() {
  cold_timer timer;
  const std::uint64_t n = 1ull << 26;
  void *s, *d;
  CHECK(cudaMalloc(&s, n * 4));
  CHECK(cudaMalloc(&d, n * 4));
  CHECK(cudaMemset(s, 1, n * 4));
  auto time = [&](const char* name, std::uint64_t bytes, auto launch) {
    const float ms = timer.median_ms(launch, 41);
    std::printf("%-22s %8.4f ms %8.1f GB/s\n", name, ms, gbps(2.0 * bytes, ms));
  };
#define RUN(T, I)                                                                                              \
  time(#T " " #I " items", n * sizeof(T), [&] {                                                                \
    items_copy<T, I><<<(n + 256 * I - 1) / (256 * I), 256>>>(static_cast<T*>(d), static_cast<const T*>(s), n); \
  })
  for (int rep = 0; rep < 2; ++rep) {
    RUN(float, 1);
    RUN(float, 2);
    RUN(float, 4);
    RUN(float, 8);
    RUN(float, 16);
    RUN(__half, 1);
    RUN(__half, 2);
    RUN(__half, 4);
    RUN(__half, 8);
    RUN(__half, 16);
    RUN(__half, 32);
  }
  return 0;
}
