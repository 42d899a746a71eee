// Experiment (not part of the build): memlab::copy's realigning body stores 31 vectors per 32 it
// loads, so a warp's 496-byte store chunks split a 32-byte sector at every other warp boundary, and
// neighbouring warps load one vector twice. A candidate stores 32 per warp group (512-byte chunks,
// sector-aligned where the destination body is), taking lane 31's missing words from the next
// group's lane 0 (a second shuffle) and one extra load per warp for its last group. Timed cold (L2
// flushed) against memlab::copy and CUB, src + 2 bytes, f16, 2^26..2^30 elements; every output checked.
// Build and run on the GPU machine (from the repository root):
//   nvcc -O3 -std=c++20 -arch=sm_90 -Iinclude tools/studies/copy_realign_sweep.cu -o /tmp/realign && /tmp/realign
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_fp16.h>

#include <cub/device/device_transform.cuh>

#include "memlab/copy.cuh"

#include "cold_timer.cuh"

struct identity {
  template <class T>
  __device__ T operator()(T x) const {
    return x;
  }
};

// Output vector i = bytes [16 i + shift, 16 i + shift + 16) of s; source vectors 0..vectors exist.
template <int Words, int U>
__global__ void __launch_bounds__(256)
    realign32(uint4* __restrict__ d, const uint4* __restrict__ s, std::size_t vectors, unsigned shift_bits) {
  const unsigned lane = threadIdx.x % 32;
  const std::size_t group0 = (std::size_t{blockIdx.x} * 8 + threadIdx.x / 32) * U;
  uint4 v[U + 1];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const std::size_t i = (group0 + u) * 32 + lane;
    v[u] = memlab::arch::ld_global_v4(s + (i <= vectors ? i : vectors));
  }
  {  // the vector after the last group: one address for the whole warp
    const std::size_t i = (group0 + U) * 32;
    v[U] = memlab::arch::ld_global_v4(s + (i <= vectors ? i : vectors));
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const unsigned mine[4] = {v[u].x, v[u].y, v[u].z, v[u].w};
    const unsigned after[4] = {v[u + 1].x, v[u + 1].y, v[u + 1].z, v[u + 1].w};
    unsigned next[4] = {0, 0, 0, 0};
#pragma unroll
    for (int k = 0; k <= Words; ++k) {
      const unsigned down = memlab::arch::shfl_down1(mine[k]);
      const unsigned first = __shfl_sync(0xffffffffu, after[k], 0);  // lane 0 of the next group
      next[k] = lane == 31 ? first : down;
    }
    const uint4 out = memlab::funnel16<Words>(v[u], make_uint4(next[0], next[1], next[2], next[3]), shift_bits);
    const std::size_t i = (group0 + u) * 32 + lane;
    if (i < vectors) d[i] = out;
  }
}

int main() {
  const std::size_t max_n = std::size_t{1} << 30;  // f16 elements
  const std::size_t max_bytes = max_n * 2;
  unsigned char *src, *dst, *ref;
  CHECK(cudaMalloc(&src, max_bytes + 64));
  CHECK(cudaMalloc(&dst, max_bytes + 64));
  CHECK(cudaMalloc(&ref, max_bytes + 64));
  const std::size_t flush_bytes = 256u << 20;
  {
    std::vector<unsigned char> h(max_bytes + 64);
    std::uint64_t x = 0x9E3779B97F4A7C15ull;
    for (auto& c : h) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      c = static_cast<unsigned char>(x | 1);  // never zero
    }
    CHECK(cudaMemcpy(src, h.data(), h.size(), cudaMemcpyHostToDevice));
  }
  const int shift = 2;  // src + 2 bytes, dst aligned: Words 0, 16-bit funnel shift
  cold_timer timer(flush_bytes);
  auto cold = [&](auto&& launch) { return timer.median_ms(launch, 25, /*warm_up=*/false); };
  auto check = [&](const char* what, std::size_t bytes) {
    std::vector<unsigned char> a(bytes), b(bytes);
    CHECK(cudaMemcpy(a.data(), dst, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(b.data(), ref, bytes, cudaMemcpyDeviceToHost));
    if (a != b) {
      std::printf("MISMATCH: %s at %zu bytes\n", what, bytes);
      std::exit(2);
    }
  };
  std::printf("f16, src + %d bytes, dst aligned; cold medians of 25 (ms) and GB/s (read + write)\n", shift);
  std::printf("%12s %10s %10s %10s %10s %10s\n", "n", "auto", "cub", "realign32_2", "realign32_4", "best/auto");
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t n = std::size_t{1} << 26; n <= max_n; n <<= 2) {
      const std::size_t bytes = n * 2, vectors = bytes / 16;
      const auto* s16 = reinterpret_cast<const __half*>(src + shift);
      auto* d16 = reinterpret_cast<__half*>(dst);
      CHECK(cudaMemcpy(ref, src + shift, bytes, cudaMemcpyDeviceToDevice));
      CHECK(cudaMemset(dst, 0, bytes));
      const float t_auto = cold([&] { CHECK(memlab::copy(d16, s16, n)); });
      check("auto", bytes);
      CHECK(cudaMemset(dst, 0, bytes));
      const float t_cub = cold([&] { CHECK(cub::DeviceTransform::Transform(s16, d16, n, identity{})); });
      check("cub", bytes);
      float t_r[2];
      int k = 0;
      for (int u : {2, 4}) {
        CHECK(cudaMemset(dst, 0, bytes));
        const std::size_t groups = (vectors + 31) / 32, per_cta = 8 * std::size_t(u);
        const unsigned grid = static_cast<unsigned>((groups + per_cta - 1) / per_cta);
        const auto* s = reinterpret_cast<const uint4*>(src);
        auto* d = reinterpret_cast<uint4*>(dst);
        t_r[k++] = cold([&] {
          if (u == 2)
            realign32<0, 2><<<grid, 256>>>(d, s, vectors, 16);
          else
            realign32<0, 4><<<grid, 256>>>(d, s, vectors, 16);
        });
        check(u == 2 ? "realign32_2" : "realign32_4", bytes);
      }
      const double gb = 2.0 * bytes / 1e6;
      std::printf("%12zu %10.4f %10.4f %10.4f %10.4f %10.4f   GB/s %7.1f %7.1f %7.1f %7.1f\n", n, t_auto, t_cub, t_r[0],
                  t_r[1], std::min(t_r[0], t_r[1]) / t_auto, gb / t_auto, gb / t_cub, gb / t_r[0], gb / t_r[1]);
    }
  }
  return 0;
}
