// Experiment (not part of the build): memlab::transpose against a copy of the same bytes
// (cudaMemcpyAsync D2D), cold (L2 flushed before every timed launch), one process, at the shapes of
// the library's acceptance, every output checked byte-exact against the host. With --once every case runs
// once, untimed: the mode for ncu.
// Build and run on the GPU machine (from the repository root):
//   nvcc -O3 -std=c++20 -arch=sm_90 -Iinclude tools/studies/transpose_realign_bench.cu -o /tmp/tb && /tmp/tb
//   ncu --kernel-name regex:transpose_tile_kernel --section SpeedOfLight ... /tmp/tb --once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "memlab/transpose.cuh"

#include "check.cuh"

namespace {

struct shape {
  std::uint64_t rows, cols;
  int es;
  const char* dtype;
  unsigned src_off = 0, dst_off = 0;  // bytes past cudaMalloc's alignment
};

__global__ void fill(std::uint8_t* p, std::uint64_t n, std::uint32_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    std::uint32_t h = static_cast<std::uint32_t>(i * 0x9E3779B97F4A7C15ull >> 32) ^ seed;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    p[i] = static_cast<std::uint8_t>(h % 255 + 1);  // never zero
  }
}

// Candidate (experiment only): 8-byte elements, 64 x 64 tiles, one element per lane and access
// (LDG.E.64 / STG.E.64), tiles numbered down the rows of src first (grid.x), so that the tiles whose
// output rows meet in a sector of dst run side by side. Shared pitch 65 elements.
__global__ void __launch_bounds__(256) elem8_64(unsigned long long* __restrict__ dst, const unsigned long long* __restrict__ src,
                                               std::uint64_t rows, std::uint64_t cols) {
  __shared__ unsigned long long tile[64 * 65];
  const unsigned lane = threadIdx.x % 32, w = threadIdx.x / 32;
  const std::uint64_t r0 = std::uint64_t{blockIdx.x} * 64, c0 = std::uint64_t{blockIdx.y} * 64;
#pragma unroll
  for (int i = 0; i < 16; ++i) {  // row w + 4 (i / 2) ... : 8 warps x 2 halves of 32 columns
    const unsigned r = w + 8 * (i / 2), c = lane + 32 * (i % 2);
    if (r0 + r < rows && c0 + c < cols) tile[r * 65 + c] = src[(r0 + r) * cols + c0 + c];
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const unsigned c = w + 8 * (j / 2), r = lane + 32 * (j % 2);
    if (c0 + c < cols && r0 + r < rows) dst[(c0 + c) * rows + r0 + r] = tile[r * 65 + c];
  }
}

float time_ms(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  const bool once = argc > 1 && std::strcmp(argv[1], "--once") == 0;
  const int reps = 15;
  const std::vector<shape> shapes = {
      {16384, 16384, 4, "f32"}, {10000, 7000, 4, "f32"}, {12289, 3001, 4, "f32"},
      {8191, 8193, 2, "f16"},   {16411, 8191, 1, "u8"},  {8193, 4099, 8, "f64"},
      // one side realigning: which side costs what
      {12288, 3001, 4, "f32"},  {12289, 3000, 4, "f32"}, {16384, 8191, 1, "u8"},  {16411, 8192, 1, "u8"},
      // 8-byte elements, also 1 byte off (copy and transpose then realign at 1 byte)
      {8193, 4099, 8, "f64", 1, 1}, {8192, 4096, 8, "f64"}, {8192, 4099, 8, "f64"}, {8192, 4099, 8, "f64", 1, 0},
      {8193, 4096, 8, "f64"}, {8193, 4096, 8, "f64", 0, 1},
  };
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# %s, %d SMs, L2 %d MiB; cold medians of %d launches\n", prop.name, prop.multiProcessorCount,
              prop.l2CacheSize >> 20, reps);
  std::printf("%-16s %-5s %-7s %-13s %10s %10s %8s\n", "shape", "dtype", "offsets", "path", "copy GB/s", "tr GB/s",
              "% copy");
  const std::size_t flush_bytes = 2 * static_cast<std::size_t>(prop.l2CacheSize);
  void* flush = nullptr;
  CHECK(cudaMalloc(&flush, flush_bytes));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  for (const shape& s : shapes) {
    const std::uint64_t bytes = s.rows * s.cols * s.es;
    std::uint8_t *src_base = nullptr, *dst_base = nullptr;
    CHECK(cudaMalloc(&src_base, bytes + 16));
    CHECK(cudaMalloc(&dst_base, bytes + 16));
    std::uint8_t *src = src_base + s.src_off, *dst = dst_base + s.dst_off;
    fill<<<1024, 256>>>(src, bytes, 0x1234567u + s.es);
    CHECK(cudaGetLastError());
    CHECK(cudaMemset(dst, 0, bytes));
    const memlab::transpose_plan plan =
        memlab::plan_transpose(reinterpret_cast<std::uintptr_t>(dst), reinterpret_cast<std::uintptr_t>(src), 1,
                               s.rows, s.cols, s.es, memlab::copy_device{});
    CHECK(memlab::transpose_bytes(dst, src, 1, s.rows, s.cols, s.es));
    CHECK(cudaDeviceSynchronize());
    std::vector<std::uint8_t> h_src(bytes), h_dst(bytes);
    {  // byte-exact
      CHECK(cudaMemcpy(h_src.data(), src, bytes, cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(h_dst.data(), dst, bytes, cudaMemcpyDeviceToHost));
      for (std::uint64_t r = 0; r < s.rows; ++r) {
        for (std::uint64_t c = 0; c < s.cols; ++c) {
          if (std::memcmp(&h_dst[(c * s.rows + r) * s.es], &h_src[(r * s.cols + c) * s.es], s.es) != 0) {
            std::printf("MISMATCH %llux%llu %s at r=%llu c=%llu\n", (unsigned long long)s.rows,
                        (unsigned long long)s.cols, s.dtype, (unsigned long long)r, (unsigned long long)c);
            return 1;
          }
        }
      }
    }
    if (!once) {
      std::vector<float> tc, tt;
      for (int i = 0; i < reps; ++i) {
        CHECK(cudaMemsetAsync(flush, i, flush_bytes));
        CHECK(cudaEventRecord(e0));
        CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice));
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        tc.push_back(time_ms(e0, e1));
        CHECK(cudaMemsetAsync(flush, i, flush_bytes));
        CHECK(cudaEventRecord(e0));
        CHECK(memlab::transpose_bytes(dst, src, 1, s.rows, s.cols, s.es));
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        tt.push_back(time_ms(e0, e1));
      }
      std::vector<float> te;
      if (s.es == 8 && s.src_off % 8 == 0 && s.dst_off % 8 == 0) {
        const dim3 grid((s.rows + 63) / 64, (s.cols + 63) / 64);
        CHECK(cudaMemset(dst, 0, bytes));
        elem8_64<<<grid, 256>>>(reinterpret_cast<unsigned long long*>(dst),
                                reinterpret_cast<const unsigned long long*>(src), s.rows, s.cols);
        CHECK(cudaGetLastError());
        std::vector<std::uint8_t> h_e(bytes);
        CHECK(cudaMemcpy(h_e.data(), dst, bytes, cudaMemcpyDeviceToHost));
        if (h_e != h_dst) {
          std::printf("elem8_64 MISMATCH\n");
          return 1;
        }
        for (int i = 0; i < reps; ++i) {
          CHECK(cudaMemsetAsync(flush, i, flush_bytes));
          CHECK(cudaEventRecord(e0));
          elem8_64<<<grid, 256>>>(reinterpret_cast<unsigned long long*>(dst),
                                  reinterpret_cast<const unsigned long long*>(src), s.rows, s.cols);
          CHECK(cudaEventRecord(e1));
          CHECK(cudaEventSynchronize(e1));
          te.push_back(time_ms(e0, e1));
        }
        std::sort(te.begin(), te.end());
      }
      std::sort(tc.begin(), tc.end());
      std::sort(tt.begin(), tt.end());
      const double gc = 2.0 * bytes / (tc[reps / 2] * 1e6), gt = 2.0 * bytes / (tt[reps / 2] * 1e6);
      char sh[32];
      std::snprintf(sh, sizeof sh, "%llux%llu", (unsigned long long)s.rows, (unsigned long long)s.cols);
      char off[16];
      std::snprintf(off, sizeof off, "+%u,+%u", s.src_off, s.dst_off);
      std::printf("%-16s %-5s %-7s %-13s %10.1f %10.1f %7.1f%%", sh, s.dtype, off, memlab::to_string(plan.path), gc,
                  gt, 100.0 * gt / gc);
      if (!te.empty()) std::printf("   elem8_64 %.1f%%", 100.0 * (2.0 * bytes / (te[reps / 2] * 1e6)) / gc);
      std::printf("\n");
    }
    CHECK(cudaFree(src_base));
    CHECK(cudaFree(dst_base));
  }
  CHECK(cudaFree(flush));
  return 0;
}
