// Experiment (not part of the build): which CTA tile, warp tile and depth make the matmul lab's
// warptiled kernel (src/labs/matmul/kernels.cuh, the same template) fastest on this GPU, next to
// cuBLAS SGEMM in the same process. Cold medians (L2 flushed before each launch), 4096^3 and 8192^3.
// Each configuration is also compared with cuBLAS's result (max |difference|, for a sanity check
// only: the lab's own check is the CPU reference).
//
// `./matmul_tile_sweep patterns` instead launches one warp per fragment-load pattern of the lab's
// rungs (model.cpp, fragment_lane_bytes), each a loop of LDS.128 with that warp's exact addresses,
// for ncu to count shared-memory wavefronts per request against harness/bank_model.hpp:
//   ncu --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed_op_shared_ld.sum \
//       ./matmul_tile_sweep patterns
// Build:
//   nvcc -O3 -std=c++20 -arch=sm_90 -lineinfo -Xptxas=-warn-spills -Isrc -Iinclude -x cu \
//        tools/studies/matmul_tile_sweep.cu src/labs/matmul/model.cpp -lcublas -o matmul_tile_sweep
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "labs/matmul/kernels.cuh"

#include "cold_timer.cuh"
#define CHECK_BLAS(x)                                                \
  do {                                                               \
    cublasStatus_t s = (x);                                          \
    if (s != CUBLAS_STATUS_SUCCESS) {                                \
      std::printf("%s:%d %s: %d\n", __FILE__, __LINE__, #x, int(s)); \
      std::exit(1);                                                  \
    }                                                                \
  } while (0)

using namespace memlab::labs::matmul;

struct gpu {
  float *a = nullptr, *b = nullptr, *c = nullptr, *ref = nullptr;
  cublasHandle_t blas{};
};

template <class Launch>
double cold_median_ms(int samples, Launch&& launch) {
  static cold_timer timer;  // the flush buffer and events, made on first use
  return timer.median_ms(launch, samples);
}

double max_abs_diff(const gpu& g, int m, int n) {
  std::vector<float> x(static_cast<std::size_t>(m) * n), y(x.size());
  CHECK(cudaMemcpy(x.data(), g.c, 4 * x.size(), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(y.data(), g.ref, 4 * y.size(), cudaMemcpyDeviceToHost));
  double d = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    d = std::max(d, std::isfinite(x[i]) ? std::fabs(double(x[i]) - y[i]) : 1e30);
  return d;
}

template <int BM, int BN, int BK, int WM, int WN, int Stages>
void run_config(gpu& g, int m, int n, int k, int samples, double blas_ms) {
  auto kern = &warptiled_kernel<BM, BN, BK, WM, WN, Stages>;
  using w = warptile<BM, BN, BK, WM, WN, Stages>;
  cudaFuncAttributes attr{};
  CHECK(cudaFuncGetAttributes(&attr, kern));
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, w::threads, 0));
  const dim3 grid((n + BN - 1) / BN, (m + BM - 1) / BM);
  CHECK(cudaMemset(g.c, 0, 4ull * m * n));
  const double ms = cold_median_ms(samples, [&] { kern<<<grid, w::threads>>>(g.c, g.a, g.b, m, n, k); });
  CHECK(cudaGetLastError());
  const double tflops = 2.0 * m * n * k / ms / 1e9;
  std::printf(
      "%5d %5d %3d %4d %4d %2d  thr %3d  %2dx%-2d regs %3d local %d ctas/sm %d  %8.3f ms %6.2f TFLOP/s %6.1f%% of "
      "cuBLAS  max|d| %.3g\n",
      BM, BN, BK, WM, WN, Stages, w::threads, w::tm, w::tn, attr.numRegs, int(attr.localSizeBytes), per_sm, ms, tflops,
      100.0 * blas_ms / ms, max_abs_diff(g, m, n));
}

// One warp: each lane reads 16 bytes at its pattern's offset, `reps` times (the offset moves by a
// multiple of 512 bytes, which keeps every bank; the sum keeps the loads alive).
struct lane_words {
  int w[32];
};
__global__ void fragment_pattern_kernel(float* out, lane_words p, int reps) {
  __shared__ __align__(16) float s[4096];
  for (int i = threadIdx.x; i < 4096; i += blockDim.x) s[i] = float(i);
  __syncthreads();
  const int base = p.w[threadIdx.x % 32];
  float4 acc = make_float4(0, 0, 0, 0);
  for (int r = 0; r < reps; ++r) {
    const float4 v = *reinterpret_cast<const float4*>(&s[base + (r & 3) * 128]);
    acc.x += v.x, acc.y += v.y, acc.z += v.z, acc.w += v.w;
  }
  out[threadIdx.x] = acc.x + acc.y + acc.z + acc.w;
}

int patterns() {
  float* out = nullptr;
  CHECK(cudaMalloc(&out, 4 * 32));
  // The tilings of three of the lab's rungs, as their records in src/labs/matmul/matmul.cu give them (what
  // fragment_lane_bytes reads: the register blocks, warp tiles and A's layout).
  const std::pair<tiling, const char*> rungs[] = {
      {tiling{.tile_m = 128, .tile_n = 128, .tile_k = 8, .threads = 256, .outputs = 64}, "blocktiled_2d"},
      {tiling{.tile_m = 128, .tile_n = 128, .tile_k = 8, .threads = 256, .outputs = 64, .a_transposed = true},
       "vectorized"},
      {tiling{.tile_m = 128,
              .tile_n = 128,
              .tile_k = 8,
              .warp_m = 32,
              .warp_n = 64,
              .threads = 256,
              .outputs = 64,
              .a_transposed = true},
       "warptiled"}};
  int launch = 0;
  for (const auto& [t, name] : rungs) {
    for (const char op : {'a', 'b'}) {
      lane_words p{};
      const auto bytes = fragment_lane_bytes(t, op);
      for (int l = 0; l < 32; ++l) p.w[l] = int(bytes[l] / 4);
      std::printf("launch %d: pattern %s %c\n", launch++, name, op);
      fragment_pattern_kernel<<<1, 32>>>(out, p, 1024);
      CHECK(cudaDeviceSynchronize());
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "patterns") return patterns();
  gpu g;
  constexpr int max_n = 8192;
  const std::size_t elems = std::size_t{max_n} * max_n;
  CHECK(cudaMalloc(&g.a, 4 * elems));
  CHECK(cudaMalloc(&g.b, 4 * elems));
  CHECK(cudaMalloc(&g.c, 4 * elems));
  CHECK(cudaMalloc(&g.ref, 4 * elems));
  CHECK_BLAS(cublasCreate(&g.blas));
  void* ws = nullptr;
  CHECK(cudaMalloc(&ws, 32 << 20));
  CHECK_BLAS(cublasSetWorkspace(g.blas, ws, 32 << 20));
  fill_inputs_kernel<<<4096, 256>>>(g.a, elems, 1);
  fill_inputs_kernel<<<4096, 256>>>(g.b, elems, 2);
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);

  for (const int size : {4096, 8192}) {
    const int m = size, n = size, k = size, samples = size == 4096 ? 15 : 7;
    const float alpha = 1, beta = 0;
    // Row-major C = A B is column-major C^T = B^T A^T.
    const auto sgemm = [&](float* out) {
      CHECK_BLAS(cublasSgemm(g.blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, g.b, n, g.a, k, &beta, out, n));
    };
    const double blas_ms = cold_median_ms(samples, [&] { sgemm(g.ref); });
    std::printf("\n%dx%dx%d  cuBLAS SGEMM %8.3f ms %6.2f TFLOP/s\n", m, n, k, blas_ms, 2.0 * m * n * k / blas_ms / 1e9);
    std::printf("   BM    BN  BK   WM   WN st\n");
    run_config<128, 128, 8, 32, 64, 1>(g, m, n, k, samples, blas_ms);
    run_config<128, 128, 8, 32, 64, 2>(g, m, n, k, samples, blas_ms);
    run_config<128, 128, 16, 32, 64, 1>(g, m, n, k, samples, blas_ms);
    run_config<128, 128, 16, 32, 64, 2>(g, m, n, k, samples, blas_ms);
    run_config<64, 128, 8, 32, 64, 2>(g, m, n, k, samples, blas_ms);
    run_config<128, 256, 8, 64, 64, 2>(g, m, n, k, samples, blas_ms);
    run_config<256, 128, 8, 64, 64, 2>(g, m, n, k, samples, blas_ms);
    run_config<128, 256, 8, 32, 128, 2>(g, m, n, k, samples, blas_ms);
    run_config<128, 128, 8, 64, 64, 2>(g, m, n, k, samples, blas_ms);
    run_config<128, 128, 16, 64, 64, 2>(g, m, n, k, samples, blas_ms);
  }
  return 0;
}
