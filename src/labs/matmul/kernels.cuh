// The matmul lab's kernels, naive -> best, each adding one technique (its first comment says which).
// C = A·B in f32, row-major: A (m, k) leading dimension k, B (k, n) with n, C (m, n) with n.
// Extents are ints: the lab refuses a matrix of 2^31 elements or more, so every index below fits.
//
// Shared by the lab (matmul.cu) and the tile sweep (tools/studies/matmul_tile_sweep.cu); no
// harness code here. Every kernel but warptiled's is a template on its rung's tiling (tiling_t,
// matmul.hpp), which the lab's table writes once, in the rung's record (matmul.cu); warptiled's takes
// the numbers, so that the sweep can try others.
//
// Why tiling pays: computing one element of C takes k terms, each needing one element of A and one
// of B. A kernel that fetches both operands from memory for every term (naive) moves 8 bytes per
// 2 FLOPs; a (BM, BN) tile of C reuses each element of A it loads BN times and each element of B BM
// times. Shared memory turns that reuse into on-chip traffic (smem_tiled); registers turn the reuse
// inside a thread's own block of outputs into no traffic at all (blocktiled_*); wide accesses cut
// instructions (vectorized); a warp's layout over the tile removes bank conflicts and lets lanes
// share operands by broadcast (warptiled); two buffers hide the loads behind the math
// (double_buffered).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "labs/matmul/matmul.hpp"
#include "memlab/arch/config.cuh"

namespace memlab::labs::matmul {

// acc += a x b (outer product): TM x TN FMAs from TM + TN registers, the register blocking of the
// blocktiled, vectorized and warptiled rungs. Inlined: each rung's SASS is its own.
template <int TM, int TN>
__device__ __forceinline__ void outer_product(float (&acc)[TM][TN], const float (&a)[TM], const float (&b)[TN]) {
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
}

// ---- the inputs -----------------------------------------------------------------------------------

// Fills A or B with input_value(seed, i) (matmul.hpp), grid-stride.
__global__ void fill_inputs_kernel(float* __restrict__ out, std::uint64_t count, std::uint64_t seed) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) {
    out[i] = input_value(seed, i);
  }
}

// ---- 1. naive -------------------------------------------------------------------------------------

// One output per thread, every operand from global memory: 2 loads per FMA. threadIdx.x runs
// along n, so a warp's loads of B are one coalesced 128-byte row segment and its loads of A one
// broadcast address; both mostly hit L1/L2, and the kernel is bound by load instructions, not DRAM.
template <class Tiling>
__global__ void __launch_bounds__(Tiling::value.threads)
    naive_kernel(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B, int m, int n, int k) {
  constexpr tiling t = Tiling::value;  // (8, 32) outputs per CTA
  static_assert(t.outputs == 1 && t.threads == t.tile_m * t.tile_n, "a thread per output: a 2D CTA");
  const int col = static_cast<int>(blockIdx.x) * t.tile_n + static_cast<int>(threadIdx.x);
  const int row = static_cast<int>(blockIdx.y) * t.tile_m + static_cast<int>(threadIdx.y);
  if (row >= m || col >= n) return;
  const float* a = A + row * k;
  float acc = 0.f;
  for (int p = 0; p < k; ++p) acc += a[p] * B[p * n + col];
  C[row * n + col] = acc;
}

// ---- 2. smem_tiled --------------------------------------------------------------------------------

// Shared-memory tiles: a 32 x 32 CTA stages 32 x 32 tiles of A and B, one element per thread, and
// each element in shared memory serves 32 FMAs. Global loads drop 32-fold; each FMA still reads two
// shared words (As[ty][kk] is a broadcast, Bs[kk][tx] 32 distinct banks).
template <class Tiling>
__global__ void __launch_bounds__(Tiling::value.threads)
    smem_tiled_kernel(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B, int m, int n,
                      int k) {
  constexpr int T = Tiling::value.tile_k;  // 32
  static_assert(Tiling::value.outputs == 1 && Tiling::value.tile_m == T && Tiling::value.tile_n == T,
                "a thread per output: a 2D CTA of T x T");
  __shared__ float As[T][T];  // (m, k) tile
  __shared__ float Bs[T][T];  // (k, n) tile
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int row = static_cast<int>(blockIdx.y) * T + ty, col = static_cast<int>(blockIdx.x) * T + tx;
  float acc = 0.f;
  for (int p0 = 0; p0 < k; p0 += T) {
    As[ty][tx] = row < m && p0 + tx < k ? A[row * k + p0 + tx] : 0.f;  // zeros past the edges add nothing
    Bs[ty][tx] = p0 + ty < k && col < n ? B[(p0 + ty) * n + col] : 0.f;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < T; ++kk) acc += As[ty][kk] * Bs[kk][tx];
    __syncthreads();
  }
  if (row < m && col < n) C[row * n + col] = acc;
}

// ---- 3. blocktiled_1d -----------------------------------------------------------------------------

// 1D register blocking: each thread computes TM = 8 outputs of one column, so the B value it reads
// from shared memory serves 8 FMAs from a register. A (64, 64) tile, 8 deep, 512 threads.
template <class Tiling>
__global__ void __launch_bounds__(Tiling::value.threads)
    blocktiled_1d_kernel(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B, int m, int n,
                         int k) {
  constexpr tiling t = Tiling::value;
  constexpr int BM = t.tile_m, BN = t.tile_n, BK = t.tile_k, TM = t.outputs;
  static_assert(BM * BK == t.threads && BK * BN == t.threads && BM * BN == t.threads * TM);
  __shared__ float As[BM * BK];  // (BM, BK) row-major
  __shared__ float Bs[BK * BN];  // (BK, BN) row-major
  const int tid = static_cast<int>(threadIdx.x);
  const int tc = tid % BN, tr = tid / BN;  // output column, and which strip of TM rows
  const int row0 = static_cast<int>(blockIdx.y) * BM, col0 = static_cast<int>(blockIdx.x) * BN;
  const int ar = tid / BK, ac = tid % BK;  // the A element this thread stages
  const int br = tid / BN, bc = tid % BN;  // the B element
  float acc[TM] = {};
  for (int p0 = 0; p0 < k; p0 += BK) {
    As[tid] = row0 + ar < m && p0 + ac < k ? A[(row0 + ar) * k + p0 + ac] : 0.f;
    Bs[tid] = p0 + br < k && col0 + bc < n ? B[(p0 + br) * n + col0 + bc] : 0.f;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      const float b = Bs[kk * BN + tc];
#pragma unroll
      for (int i = 0; i < TM; ++i) acc[i] += As[(tr * TM + i) * BK + kk] * b;
    }
    __syncthreads();
  }
  const int col = col0 + tc;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = row0 + tr * TM + i;
    if (row < m && col < n) C[row * n + col] = acc[i];
  }
}

// ---- 4. blocktiled_2d -----------------------------------------------------------------------------

// 2D register blocking: each thread computes an 8 x 8 block of outputs, an outer product of 8 A
// values and 8 B values per step: 64 FMAs for 16 shared loads (1D: 8 FMAs for 9). A (128, 128) tile,
// 8 deep, 256 threads; global and shared accesses stay one float wide in the source.
template <class Tiling>
__global__ void __launch_bounds__(Tiling::value.threads)
    blocktiled_2d_kernel(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B, int m, int n,
                         int k) {
  constexpr tiling t = Tiling::value;
  constexpr int BM = t.tile_m, BN = t.tile_n, BK = t.tile_k, TM = 8, TN = 8, NT = t.threads;
  static_assert(TM * TN == t.outputs && (BM / TM) * (BN / TN) == NT && !t.a_transposed);
  __shared__ float As[BM * BK];  // (BM, BK) row-major
  __shared__ float Bs[BK * BN];  // (BK, BN) row-major
  const int tid = static_cast<int>(threadIdx.x);
  const int tc = tid % (BN / TN), tr = tid / (BN / TN);  // 16 x 16 threads, each an 8 x 8 block
  const int row0 = static_cast<int>(blockIdx.y) * BM, col0 = static_cast<int>(blockIdx.x) * BN;
  float acc[TM][TN] = {};
  for (int p0 = 0; p0 < k; p0 += BK) {
#pragma unroll
    for (int e = tid; e < BM * BK; e += NT) {  // 4 elements of A per thread
      const int r = e / BK, c = e % BK;
      As[e] = row0 + r < m && p0 + c < k ? A[(row0 + r) * k + p0 + c] : 0.f;
    }
#pragma unroll
    for (int e = tid; e < BK * BN; e += NT) {  // 4 of B
      const int r = e / BN, c = e % BN;
      Bs[e] = p0 + r < k && col0 + c < n ? B[(p0 + r) * n + col0 + c] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[(tr * TM + i) * BK + kk];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[kk * BN + tc * TN + j];
      outer_product(acc, a, b);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = row0 + tr * TM + i;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int col = col0 + tc * TN + j;
      if (row < m && col < n) C[row * n + col] = acc[i][j];
    }
  }
}

// ---- 16-byte helpers for the vectorized rungs ---------------------------------------------------------
// They need n and k multiples of 4 (the lab refuses other shapes): every row of A, B and C then
// starts 16-byte aligned, and a float4 that starts inside a row ends inside it.

__device__ __forceinline__ float4 load4(const float* p) { return *reinterpret_cast<const float4*>(p); }
__device__ __forceinline__ void store4(float* p, float4 v) { *reinterpret_cast<float4*>(p) = v; }

// ---- 5. vectorized --------------------------------------------------------------------------------

// 16-byte accesses: one LDG.128 of A and one of B per thread per step, STG.128 for C; the A tile is
// stored transposed in shared memory, (BK, BM), so that a thread's 8 A values of one step are
// contiguous and arrive with two LDS.128 like its 8 B values. The transposed rows are padded by 4
// floats: the two threads that stage one row of A then write 16 banks apart (unpadded, 2-way
// conflicts), and each row stays 16-byte aligned. Same tiles and threads as blocktiled_2d.
template <class Tiling>
__global__ void __launch_bounds__(Tiling::value.threads)
    vectorized_kernel(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B, int m, int n,
                      int k) {
  constexpr tiling t = Tiling::value;
  constexpr int BM = t.tile_m, BN = t.tile_n, BK = t.tile_k, TM = 8, TN = 8, LDA = BM + 4;
  static_assert(BM * BK / 4 == t.threads && BK * BN / 4 == t.threads && TM * TN == t.outputs && t.a_transposed);
  __shared__ __align__(16) float As[BK * LDA];  // (BK, BM + 4): A transposed
  __shared__ __align__(16) float Bs[BK * BN];   // (BK, BN)
  const int tid = static_cast<int>(threadIdx.x);
  const int tc = tid % (BN / TN), tr = tid / (BN / TN);
  const int row0 = static_cast<int>(blockIdx.y) * BM, col0 = static_cast<int>(blockIdx.x) * BN;
  const int ar = tid / (BK / 4), ac = (tid % (BK / 4)) * 4;  // the float4 of A this thread stages
  const int br = tid / (BN / 4), bc = (tid % (BN / 4)) * 4;  // the float4 of B
  float acc[TM][TN] = {};
  for (int p0 = 0; p0 < k; p0 += BK) {
    float4 va = make_float4(0.f, 0.f, 0.f, 0.f), vb = va;
    if (row0 + ar < m && p0 + ac < k) va = load4(A + (row0 + ar) * k + p0 + ac);
    if (p0 + br < k && col0 + bc < n) vb = load4(B + (p0 + br) * n + col0 + bc);
    As[(ac + 0) * LDA + ar] = va.x;
    As[(ac + 1) * LDA + ar] = va.y;
    As[(ac + 2) * LDA + ar] = va.z;
    As[(ac + 3) * LDA + ar] = va.w;
    store4(&Bs[br * BN + bc], vb);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      const float4 a0 = load4(&As[kk * LDA + tr * TM]), a1 = load4(&As[kk * LDA + tr * TM + 4]);
      const float4 b0 = load4(&Bs[kk * BN + tc * TN]), b1 = load4(&Bs[kk * BN + tc * TN + 4]);
      const float a[TM] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[TN] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
      outer_product(acc, a, b);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = row0 + tr * TM + i;
    if (row >= m) continue;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const int col = col0 + tc * TN + j;
      if (col < n) store4(C + row * n + col, make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
    }
  }
}

// ---- 6. warptiled and 7. double_buffered ----------------------------------------------------------------

// warptiled: a warp tile. The CTA's (BM, BN) tile is cut into (WM, WN) warp tiles; a warp's 32 lanes
// form a 4 x 8 grid over its tile, and each thread's outputs are (WM / 16) x (WN / 32) blocks of 4 x 4,
// strided 16 rows and 32 columns apart, instead of one contiguous 8 x 8 block. A 16-byte shared
// load is served a quarter-warp (8 lanes, here one lane row) at a time: the B fragment of a
// quarter-warp is now 8 contiguous float4, one wavefront (4 per request, the fewest); vectorized's
// 16 x 16 threads put 8 distinct float4 32 bytes apart in each quarter-warp, two per bank group:
// 2-way conflicts, 8 wavefronts. The A fragment is a broadcast either way (the H100 serves it in 2;
// docs/labs/matmul.md). The stores of C come out as 128-byte segments per 8 lanes.
//
// double_buffered (Stages = 2): two shared buffers and a register prefetch. The global loads of
// step s + 1 are issued before the math of step s and land in the other buffer after it, so their
// latency hides behind the math instead of stalling the warp; one __syncthreads per step instead of
// two.
template <int BM, int BN, int BK, int WM, int WN, int Stages>
struct warptile {
  static constexpr int warps_m = BM / WM, warps_n = BN / WN;
  static constexpr int threads = warps_m * warps_n * 32;
  static constexpr int lanes_m = 4, lanes_n = 8;                                // a warp's lanes over its tile
  static constexpr int sub_m = WM / (lanes_m * 4), sub_n = WN / (lanes_n * 4);  // 4 x 4 blocks per thread
  static constexpr int tm = sub_m * 4, tn = sub_n * 4;                          // outputs per thread: tm x tn
  static constexpr int lda = BM + 4;                    // transposed A rows, padded (see vectorized)
  static constexpr int a_vecs = BM * BK / 4 / threads;  // float4 of A each thread stages per step
  static constexpr int b_vecs = BK * BN / 4 / threads;
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 32 == 0, "warp tile: 4 x 8 lanes of 4 x 4");
  static_assert(BK % 4 == 0 && a_vecs * threads * 4 == BM * BK && b_vecs * threads * 4 == BK * BN,
                "every thread stages whole float4 of A and B");
  static_assert(Stages == 1 || Stages == 2);
  static constexpr int smem_bytes = Stages * BK * (lda + BN) * 4;
  static_assert(smem_bytes <= 48 * 1024, "static shared memory");
};

template <int BM, int BN, int BK, int WM, int WN, int Stages>
__global__ void __launch_bounds__(warptile<BM, BN, BK, WM, WN, Stages>::threads)
    warptiled_kernel(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B, int m, int n,
                     int k) {
  using w = warptile<BM, BN, BK, WM, WN, Stages>;
  constexpr int NT = w::threads, LDA = w::lda, TM = w::tm, TN = w::tn;
  __shared__ __align__(16) float As[Stages][BK * LDA];  // (BK, BM + 4): A transposed
  __shared__ __align__(16) float Bs[Stages][BK * BN];   // (BK, BN)
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int wm0 = (warp / w::warps_n) * WM, wn0 = (warp % w::warps_n) * WN;  // the warp's tile in the CTA's
  const int lr = lane / w::lanes_n, lc = lane % w::lanes_n;                  // the lane in the 4 x 8 grid
  const int row0 = static_cast<int>(blockIdx.y) * BM, col0 = static_cast<int>(blockIdx.x) * BN;

  float4 ra[w::a_vecs], rb[w::b_vecs];  // the next step's tiles, between global and shared memory
  const auto load_tiles = [&](int p0) {
#pragma unroll
    for (int v = 0; v < w::a_vecs; ++v) {
      const int f = tid + v * NT, r = f / (BK / 4), c = (f % (BK / 4)) * 4;
      ra[v] = make_float4(0.f, 0.f, 0.f, 0.f);
      if (row0 + r < m && p0 + c < k) ra[v] = load4(A + (row0 + r) * k + p0 + c);
    }
#pragma unroll
    for (int v = 0; v < w::b_vecs; ++v) {
      const int f = tid + v * NT, r = f / (BN / 4), c = (f % (BN / 4)) * 4;
      rb[v] = make_float4(0.f, 0.f, 0.f, 0.f);
      if (p0 + r < k && col0 + c < n) rb[v] = load4(B + (p0 + r) * n + col0 + c);
    }
  };
  const auto store_tiles = [&](int stage) {
#pragma unroll
    for (int v = 0; v < w::a_vecs; ++v) {
      const int f = tid + v * NT, r = f / (BK / 4), c = (f % (BK / 4)) * 4;
      As[stage][(c + 0) * LDA + r] = ra[v].x;
      As[stage][(c + 1) * LDA + r] = ra[v].y;
      As[stage][(c + 2) * LDA + r] = ra[v].z;
      As[stage][(c + 3) * LDA + r] = ra[v].w;
    }
#pragma unroll
    for (int v = 0; v < w::b_vecs; ++v) {
      const int f = tid + v * NT, r = f / (BN / 4), c = (f % (BN / 4)) * 4;
      store4(&Bs[stage][r * BN + c], rb[v]);
    }
  };

  float acc[TM][TN] = {};
  const auto multiply_tiles = [&](int stage) {
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], b[TN];
#pragma unroll
      for (int s = 0; s < w::sub_m; ++s) {  // rows wm0 + 16 s + 4 lr + (0..3)
        const float4 v = load4(&As[stage][kk * LDA + wm0 + s * (w::lanes_m * 4) + lr * 4]);
        a[4 * s + 0] = v.x, a[4 * s + 1] = v.y, a[4 * s + 2] = v.z, a[4 * s + 3] = v.w;
      }
#pragma unroll
      for (int u = 0; u < w::sub_n; ++u) {  // columns wn0 + 32 u + 4 lc + (0..3)
        const float4 v = load4(&Bs[stage][kk * BN + wn0 + u * (w::lanes_n * 4) + lc * 4]);
        b[4 * u + 0] = v.x, b[4 * u + 1] = v.y, b[4 * u + 2] = v.z, b[4 * u + 3] = v.w;
      }
      outer_product(acc, a, b);
    }
  };

  const int steps = (k + BK - 1) / BK;
  load_tiles(0);
  store_tiles(0);
  __syncthreads();
  for (int s = 0; s < steps; ++s) {
    if constexpr (Stages == 2) {
      // No `if (s + 1 < steps)` around the prefetch: ptxas merges two blocks under the same branch,
      // and the loads then sink below the math to the stores (seen in sm_90 SASS), which undoes the
      // double buffering. Past the last step every load is predicated off and zeros are stored.
      const int stage = s & 1;
      load_tiles((s + 1) * BK);  // in flight during the math below
      multiply_tiles(stage);
      store_tiles(stage ^ 1);  // the buffer every thread finished reading last step
      __syncthreads();
    } else {
      multiply_tiles(0);
      __syncthreads();  // everyone is done reading before the buffer is overwritten
      if (s + 1 < steps) {
        load_tiles((s + 1) * BK);
        store_tiles(0);
        __syncthreads();
      }
    }
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = row0 + wm0 + (i / 4) * (w::lanes_m * 4) + lr * 4 + i % 4;
    if (row >= m) continue;
#pragma unroll
    for (int u = 0; u < w::sub_n; ++u) {
      const int col = col0 + wn0 + u * (w::lanes_n * 4) + lc * 4;
      if (col < n) {
        store4(C + row * n + col, make_float4(acc[i][4 * u], acc[i][4 * u + 1], acc[i][4 * u + 2], acc[i][4 * u + 3]));
      }
    }
  }
}

// ---- the kernels as types, for the table's records -------------------------------------------------------
// Each kernel's instantiation for a rung's tiling: the table (matmul.cu) names a rung's kernel as
// lab_rung<naive, tiling{...}>.
struct naive {
  template <class Tiling>
  static constexpr auto of = &naive_kernel<Tiling>;
};
struct smem_tiled {
  template <class Tiling>
  static constexpr auto of = &smem_tiled_kernel<Tiling>;
};
struct blocktiled_1d {
  template <class Tiling>
  static constexpr auto of = &blocktiled_1d_kernel<Tiling>;
};
struct blocktiled_2d {
  template <class Tiling>
  static constexpr auto of = &blocktiled_2d_kernel<Tiling>;
};
struct vectorized {
  template <class Tiling>
  static constexpr auto of = &vectorized_kernel<Tiling>;
};
struct warptiled {
  template <class Tiling>
  static constexpr auto kernel() {
    constexpr tiling t = Tiling::value;
    static_assert(t.a_transposed && t.outputs == 64 &&
                  t.threads == warptile<t.tile_m, t.tile_n, t.tile_k, t.warp_m, t.warp_n, t.stages>::threads);
    return &warptiled_kernel<t.tile_m, t.tile_n, t.tile_k, t.warp_m, t.warp_n, t.stages>;
  }
  template <class Tiling>
  static constexpr auto of = kernel<Tiling>();
};

}  // namespace memlab::labs::matmul
