// The matmul lab's host-side model (model.cpp): shapes, refusals, launch policies, the error bound
// the check uses and the elements it samples. The kernels are in kernels.cuh; the CPU reference,
// launchers, peers and the lab's table in matmul.cu.
//
// C = A·B, f32, row-major: A is (m, k) with leading dimension k, B (k, n) with n, C (m, n) with n.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/fill.hpp"
#include "harness/lab.hpp"
#include "harness/result.hpp"
#include "memlab/arch/config.cuh"

namespace memlab::labs::matmul {

// Ladder order: one technique added per rung, then the two cuBLAS peers.
enum class variant_id {
  naive,
  smem_tiled,
  blocktiled_1d,
  blocktiled_2d,
  vectorized,
  warptiled,
  double_buffered,
  cublas_sgemm,
  cublas_tf32,
};

struct gemm_shape {
  std::uint64_t m = 0, n = 0, k = 0;
  friend bool operator==(const gemm_shape&, const gemm_shape&) = default;
};

// Element i of an input matrix filled from stream `seed`: an odd multiple of 2^-24 in (-1, 1),
// uniform, never zero, exactly a float (24 significant bits at most). The harness's random bytes
// read as floats would hold NaN, infinities and 1e38: no product could be checked against them.
// The lab's setup fills A and B with it on the device (kernels.cuh, fill_inputs_kernel).
MEMLAB_HOST_DEVICE inline float input_value(std::uint64_t seed, std::uint64_t i) {
  const auto u = static_cast<std::int32_t>(mix64(seed ^ mix64(i)) >> 40);  // 24 random bits
  return static_cast<float>(2 * u + 1 - (1 << 24)) * 0x1p-24f;
}

// The lab's extents: n is the run's size; the m and k axes read 0 as "the same as n", so that
// `--sizes 4096,8192` alone runs squares. A value of 0 for m or k cannot be asked for.
gemm_shape resolve(std::uint64_t n, std::uint64_t m_axis, std::uint64_t k_axis);
std::string shape_text(const gemm_shape& s);  // "4096x4096x4096" (m x n x k)

// FLOPs of C = A·B (one multiply and one add per term) and the fewest DRAM bytes the product
// must move: A and B read once, C written once.
std::uint64_t flops_of(const gemm_shape& s);
std::uint64_t bytes_of(const gemm_shape& s);

// The kernels index with 32-bit ints: each matrix holds at most this many elements.
inline constexpr std::uint64_t max_matrix_elements = 0x7fffffffu;
// The largest extent an axis (or --sizes) may ask for: keeps every grid dimension under 65536.
inline constexpr std::uint64_t max_extent = std::uint64_t{1} << 17;

// Why variant v cannot multiply shape s; nullopt when it can. No device: every kernel runs on
// sm_80 and newer.
std::optional<std::string> shape_rule(variant_id v, const gemm_shape& s);

// How each rung cuts the product (kernels.cuh instantiates its kernels from these numbers): a CTA of
// `threads` threads computes a (tile_m, tile_n) block of C, tile_k deep per step; the warptiled rungs
// give each warp a (warp_m, warp_n) block of it. Each thread computes `outputs` elements of C.
struct tiling {
  int tile_m = 0, tile_n = 0, tile_k = 0;
  int warp_m = 0, warp_n = 0;  // 0: the rung has no warp tile
  int threads = 0;
  int outputs = 0;    // per thread
  int vec_bytes = 0;  // width of the global loads and stores
  int stages = 0;     // shared-memory buffers of A and B tiles (2: double buffering); 0: none
};
// The tiles of the last three rungs were chosen on an H100 80GB HBM3 (docs/notes/matmul.md, the
// sweep of tools/experiments/matmul_tile_sweep.cu).
MEMLAB_HOST_DEVICE constexpr tiling tiling_of(variant_id v) {
  switch (v) {
    case variant_id::naive: return {8, 32, 0, 0, 0, 256, 1, 4, 0};
    case variant_id::smem_tiled: return {32, 32, 32, 0, 0, 1024, 1, 4, 1};
    case variant_id::blocktiled_1d: return {64, 64, 8, 0, 0, 512, 8, 4, 1};
    case variant_id::blocktiled_2d: return {128, 128, 8, 0, 0, 256, 64, 4, 1};
    case variant_id::vectorized: return {128, 128, 8, 0, 0, 256, 64, 16, 1};
    case variant_id::warptiled: return {128, 128, 8, 32, 64, 256, 64, 16, 1};
    case variant_id::double_buffered: return {128, 128, 8, 32, 64, 256, 64, 16, 2};
    case variant_id::cublas_sgemm:
    case variant_id::cublas_tf32: return {};
  }
  return {};
}

// Threads per CTA, outputs per thread, global access width, stages and CTAs; all zero for the peers.
launch_policy plan(variant_id v, const gemm_shape& s);

// ---- the check ----------------------------------------------------------------------------------------

// Unit roundoff of f32 (round to nearest): 2^-24.
inline constexpr double f32_unit_roundoff = 0x1p-24;
// TF32 keeps 10 explicit mantissa bits; the conversion may truncate rather than round, so an input
// may be off by up to 2^-10 of itself.
inline constexpr double tf32_input_error = 0x1p-10;

// gamma_k = k u / (1 - k u): the classic bound (Higham, Accuracy and Stability, 3.1) on the
// relative error of a k-term sum of products computed in floating point with unit roundoff u, in any
// order: |fl(sum) - sum| <= gamma_k x sum |a_p b_p|. Infinite when k u >= 1.
double gamma(std::uint64_t k, double u);

// What `got` may differ from the exact C_ij, given sum_abs = sum_p |a_ip b_pj|:
//   f32 products (every rung, cuBLAS SGEMM): gamma_k(2^-24) x sum_abs. An FFMA rounds once per term.
//   tf32 (the cuBLAS TF32 peer): each input off by up to 2^-10 before an exact product, the products
//   summed in f32 by tensor cores whose adders may truncate: ((1 + 2^-10)^2 (1 + gamma_2k) - 1) x sum_abs.
// The CPU reference sums in double: its own error (gamma_k(2^-53)) is below 1e-9 of this bound for
// every k the lab accepts and is left out.
double error_bound(std::uint64_t k, double sum_abs, bool tf32_inputs);

// The elements of C the check compares, chosen on the host from the case's seed:
//   full        every element (small products: m n k <= full_check_macs, m n <= full_check_outputs)
//   rows        whole rows: the first, the last and two at random
//   cols        whole columns: the same
//   grid_rows x grid_cols  one row in every band of sample_band rows times one column in every band of
//               sample_band columns: every (sample_band x sample_band) block of C holds a checked
//               element, so a CTA tile that was never written or was written wrong is seen
// Rows and columns are unique and in increasing order.
inline constexpr std::uint64_t full_check_macs = std::uint64_t{1} << 27;
inline constexpr std::uint64_t full_check_outputs = std::uint64_t{1} << 22;
inline constexpr std::uint64_t sample_band = 64;
struct sample_set {
  bool full = false;
  std::vector<std::uint64_t> rows, cols, grid_rows, grid_cols;
};
sample_set samples_of(const gemm_shape& s, std::uint64_t seed);
// Terms of the sums the check computes (its cost): m n k when full, else
// (|rows| n + |cols| m + |grid_rows| |grid_cols|) k.
std::uint64_t check_macs(const gemm_shape& s, const sample_set& set);

// ---- shared-memory fragment loads, for the bank model ---------------------------------------------------

// Byte offsets into its shared tile that each lane of warp 0 reads with the first LDS.128 of a step
// (kk = 0), for the A ('a') or B ('b') fragment of blocktiled_2d (as ptxas vectorizes it: 4 steps of
// one row of the (BM, BK) A tile), vectorized, warptiled and double_buffered. What
// harness/bank_model.hpp turns into wavefronts (tests, docs/labs/matmul.md).
std::array<std::uint32_t, 32> fragment_lane_bytes(variant_id v, char operand);

const lab& table();

}  // namespace memlab::labs::matmul
