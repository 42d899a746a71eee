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

// How a rung of the lab's cuts the product: its record in the table (matmul.cu) says it, and its kernel
// is instantiated from it (kernels.cuh). A CTA of `threads` threads computes a (tile_m, tile_n) block of
// C, tile_k deep per step; the warptiled rungs give each warp a (warp_m, warp_n) block of it. Each thread
// computes `outputs` elements of C: one (a 2D CTA, tile_n x tile_m threads, threadIdx.x along n) or a
// register block.
struct tiling {
  int tile_m = 0, tile_n = 0, tile_k = 0;  // tile_k 0: no shared-memory tiles
  int warp_m = 0, warp_n = 0;              // 0: the rung has no warp tile
  int threads = 0;
  int outputs = 0;            // per thread
  int vec_bytes = 0;          // width of the global loads and stores
  int stages = 0;             // shared-memory buffers of A and B tiles (2: double buffering); 0: none
  bool a_transposed = false;  // the A tile stored transposed in shared memory, (tile_k, tile_m + 4)
};
// A tiling as a type, for a kernel's template argument (nvcc instantiates kernels of class-type
// arguments through a type only).
template <tiling T>
struct tiling_t {
  static constexpr tiling value = T;
};

// What the table's record says of a rung: its tiling (all zero for the peers, which launch cuBLAS), and
// whether its inputs are rounded to TF32 (the cuBLAS TF32 peer: its own error bound in the check).
struct rung_traits {
  tiling tile{};
  bool tf32 = false;
};

// Why a rung of tiling t cannot multiply shape s; nullopt when it can. No device: every kernel runs on
// sm_80 and newer.
std::optional<std::string> shape_rule(const tiling& t, const gemm_shape& s);

// Threads per CTA, outputs per thread, global access width, stages and CTAs; all zero for the peers.
launch_policy plan(const tiling& t, const gemm_shape& s);

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
// (kk = 0), for the A ('a') or B ('b') fragment of a rung whose threads compute 8 x 8 register blocks
// (outputs 64): threads tile_n / 8 to a row of the CTA tile, each an 8 x 8 block (A row-major as
// ptxas vectorizes it: 4 steps of one row of the (BM, BK) tile; or transposed), or warp tiles of 4 x 8
// lanes, their first 4 x 4 block. What harness/bank_model.hpp turns into wavefronts (tests,
// docs/labs/matmul.md). std::invalid_argument for a rung without such blocks.
std::array<std::uint32_t, 32> fragment_lane_bytes(const tiling& t, char operand);

const lab& table();

}  // namespace memlab::labs::matmul
