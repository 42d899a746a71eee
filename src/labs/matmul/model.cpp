// The matmul lab's host-side model: shapes, refusals, launch policies, the check's error bound and
// sample. No CUDA runtime calls; host-tested in tests/labs/matmul/test_matmul_plan.cpp.
#include <cuda/cmath>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "harness/fill.hpp"
#include "labs/matmul/matmul.hpp"

namespace memlab::labs::matmul {

gemm_shape resolve(std::uint64_t n, std::uint64_t m_axis, std::uint64_t k_axis) {
  return {m_axis == 0 ? n : m_axis, n, k_axis == 0 ? n : k_axis};
}

std::string shape_text(const gemm_shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

std::uint64_t flops_of(const gemm_shape& s) { return 2 * s.m * s.n * s.k; }
std::uint64_t bytes_of(const gemm_shape& s) { return 4 * (s.m * s.k + s.k * s.n + s.m * s.n); }

std::optional<std::string> shape_rule(const tiling& t, const gemm_shape& s) {
  for (const auto& [name, e] : {std::pair{"m", s.m}, std::pair{"n", s.n}, std::pair{"k", s.k}}) {
    if (e > max_extent) {
      return std::string(name) + " = " + std::to_string(e) + " exceeds " + std::to_string(max_extent) +
             " (the largest extent the lab's grids and 32-bit indices are sized for)";
    }
  }
  for (const auto& [name, e] :
       {std::pair{"A (m x k)", s.m * s.k}, std::pair{"B (k x n)", s.k * s.n}, std::pair{"C (m x n)", s.m * s.n}}) {
    if (e > max_matrix_elements) {
      return std::string(name) + " of " + shape_text(s) + " holds " + std::to_string(e) +
             " elements; the kernels index with 32-bit ints (at most 2^31 - 1)";
    }
  }
  if (t.vec_bytes == 16 && (s.n % 4 != 0 || s.k % 4 != 0)) {
    return std::string(
               "n and k must be multiples of 4 for 16-byte accesses (every row of A, B and C then starts "
               "16-byte aligned); ") +
           shape_text(s) + " (m x n x k) has n % 4 = " + std::to_string(s.n % 4) +
           ", k % 4 = " + std::to_string(s.k % 4);
  }
  return std::nullopt;
}

launch_policy plan(const tiling& t, const gemm_shape& s) {
  if (t.threads == 0) return {};  // the peers choose their own kernels
  const std::uint64_t ctas = cuda::ceil_div(s.m, static_cast<std::uint64_t>(t.tile_m)) *
                             cuda::ceil_div(s.n, static_cast<std::uint64_t>(t.tile_n));
  return {
      .threads = t.threads, .items_per_thread = t.outputs, .vec_bytes = t.vec_bytes, .stages = t.stages, .grid = ctas};
}

double gamma(std::uint64_t k, double u) {
  const double ku = static_cast<double>(k) * u;
  return ku < 1 ? ku / (1 - ku) : std::numeric_limits<double>::infinity();
}

double error_bound(std::uint64_t k, double sum_abs, bool tf32_inputs) {
  if (!tf32_inputs) return gamma(k, f32_unit_roundoff) * sum_abs;
  const double in = (1 + tf32_input_error) * (1 + tf32_input_error);
  return (in * (1 + gamma(2 * k, f32_unit_roundoff)) - 1) * sum_abs;
}

namespace {

// `count` distinct indices below `extent` (fewer when the extent is smaller): 0, extent - 1, then
// draws from the seed; sorted.
std::vector<std::uint64_t> edges_and_random(std::uint64_t extent, std::uint64_t seed, std::size_t count) {
  std::vector<std::uint64_t> out;
  if (extent == 0) return out;
  const auto add = [&](std::uint64_t i) {
    if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
  };
  add(0);
  add(extent - 1);
  for (std::uint64_t draw = 0; out.size() < std::min<std::uint64_t>(count, extent); ++draw) {
    add(mix64(seed + draw) % extent);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// One index in every band of `band` (the last band may be shorter), drawn from the seed.
std::vector<std::uint64_t> one_per_band(std::uint64_t extent, std::uint64_t band, std::uint64_t seed) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t b0 = 0; b0 < extent; b0 += band) {
    const std::uint64_t len = std::min(band, extent - b0);
    out.push_back(b0 + mix64(seed ^ (b0 * 0x9E3779B97F4A7C15ull)) % len);
  }
  return out;
}

}  // namespace

sample_set samples_of(const gemm_shape& s, std::uint64_t seed) {
  sample_set out;
  if (s.m * s.n * s.k <= full_check_macs && s.m * s.n <= full_check_outputs) {
    out.full = true;
    return out;
  }
  out.rows = edges_and_random(s.m, mix64(seed ^ 1), 4);
  out.cols = edges_and_random(s.n, mix64(seed ^ 2), 4);
  out.grid_rows = one_per_band(s.m, sample_band, mix64(seed ^ 3));
  out.grid_cols = one_per_band(s.n, sample_band, mix64(seed ^ 4));
  return out;
}

std::uint64_t check_macs(const gemm_shape& s, const sample_set& set) {
  if (set.full) return s.m * s.n * s.k;
  return (set.rows.size() * s.n + set.cols.size() * s.m + set.grid_rows.size() * set.grid_cols.size()) * s.k;
}

std::array<std::uint32_t, 32> fragment_lane_bytes(const tiling& t, char operand) {
  if (t.outputs != 64) throw std::invalid_argument("fragment_lane_bytes: this rung loads no LDS.128 fragments");
  const auto bk = static_cast<std::uint32_t>(t.tile_k);
  std::array<std::uint32_t, 32> out{};
  for (std::uint32_t lane = 0; lane < 32; ++lane) {
    std::uint32_t word = 0;  // 4-byte words from the start of the tile, at step kk = 0
    if (t.warp_m == 0) {     // thread (tr, tc), an 8 x 8 block each
      const auto per_row = static_cast<std::uint32_t>(t.tile_n / 8);
      const std::uint32_t tr = lane / per_row, tc = lane % per_row;
      if (operand == 'b') {
        word = tc * 8;  // Bs[0][8 tc .. 8 tc + 3]
      } else if (t.a_transposed) {
        word = tr * 8;  // As[0][8 tr .. 8 tr + 3]: the transposed (BK, BM + 4) tile
      } else {
        word = tr * 8 * bk;  // As[8 tr][0 .. 3]: the (BM, BK) tile, row 8 tr, steps 0..3
      }
    } else {  // warp 0's lanes, 4 x 8, their first 4 x 4 block
      const std::uint32_t lr = lane / 8, lc = lane % 8;
      word = operand == 'b' ? lc * 4 : lr * 4;
    }
    out[lane] = 4 * word;
  }
  return out;
}

}  // namespace memlab::labs::matmul
