// The stencil lab's host-side model (model.cpp): geometry, refusals, launch policies, the bytes a
// case declares and the 32-byte sectors its CTAs really read and write (hardware bytes), and the
// verification tolerance. The lab itself (reference, kernels, table): stencil.cu.
//
// One geometry serves both problems. A 3D case is a center volume nx x ny x nz (x fastest), the
// derivative taken along y, with a left and a right domain of nx x side x nz stitched before y = 0
// and after y = ny - 1. A 1D case is the same with nx = nz = 1 and ny = n: three arrays left (side
// points), center (n points), right (side points). The stencil reads the `radius` planes (points)
// of each side domain nearest the center: left planes side - 4 .. side - 1, right planes 0 .. 3.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <cstring>

#include "harness/fill.hpp"
#include "harness/lab.hpp"
#include "harness/result.hpp"
#include "harness/sectors.hpp"
#include "memlab/arch/config.cuh"

namespace memlab::labs::stencil {

// ---- a rung ----------------------------------------------------------------------------------------------

// How a rung's CTA gets its tile of input points, halo included.
enum class load_path {
  none,       // no staging: each point's neighbours loaded from global memory (L1 serves the re-reads)
  registers,  // staged in shared memory through registers: LDG + STS
  cp_async,   // staged in shared memory by cp.async (LDGSTS): no register round trip
};
// How a load picks the domain (left, center, right) its point lies in.
enum class domain_pick {
  branches,  // branches around each domain's load
  selects,   // the point's address selected (SEL): one predicated load per point, no branch
};

// What the table's record says of a rung: the facts its kernel is instantiated from (rung_t) and the
// model, plans and tests read.
struct rung_traits {
  int dims = 1;  // 1: three arrays; 3: volumes, the derivative along y
  load_path path = load_path::registers;
  domain_pick pick = domain_pick::branches;
  int access_bytes = 4;    // width of its global -> shared accesses (the policy's v): 4 or 16
  bool pipelined = false;  // a persistent grid, --stages tile buffers: the next tiles' loads in flight
  bool copy = false;       // the peer: memlab::copy of the same declared bytes (its body 16 bytes wide)
};
// A rung's traits as a type, for a kernel's template argument (nvcc instantiates kernels of class-type
// arguments through a type only).
template <rung_traits R>
struct rung_t {
  static constexpr rung_traits value = R;
};

// ---- the operator ------------------------------------------------------------------------------------

inline constexpr int radius = 4;
// The 8th-order centred first derivative with unit spacing: f'(i) = sum_k c_k (f(i + k) - f(i - k)),
// k = 1..4 (Fornberg's weights). Their absolute sum is 25/24.
inline constexpr double coefficients[radius] = {4.0 / 5.0, -1.0 / 5.0, 4.0 / 105.0, -1.0 / 280.0};
double coefficient_abs_sum();

// ---- the tolerance -------------------------------------------------------------------------------------
// Inputs are f32 in +-[1, 2): |f| < B = 2. In f32 the kernel evaluates sum_k c'_k (f(i+k) - f(i-k))
// with c'_k = fl(c_k), |c'_k - c_k| <= u |c_k| (u = 2^-24). Whatever order and fusion the compiler
// picks (differences first, or eight products summed, with or without FMA), the result is a sum
// of at most 8 products with at most 8 roundings on any path, so
//   |computed - sum c'_k (...)| <= gamma_8 x sum_k |c'_k| (|f(i+k)| + |f(i-k)|) <= gamma_8 x 2B x S'
// with gamma_8 = 8u / (1 - 8u) and S' = sum |c'_k| <= (1 + u) S, S = 25/24; the coefficients'
// own rounding adds u x 2B x S. The CPU reference (double, exact coefficients) is off by < 2^-50 x
// 2B x S. So tol = (gamma_8 (1 + u) + u + 2^-50) x 2B x S = 2.2e-6; eps = u covers the rounding
// of the stored result once more (|ref| < 2B x S). The check: |got - ref| <= tol + |ref| x eps.
inline constexpr double input_bound = 2.0;
inline constexpr double f32_unit_roundoff = 0x1p-24;
struct tolerance {
  double tol = 0, eps = 0;
};
tolerance check_tolerance();

// ---- geometry ------------------------------------------------------------------------------------------

struct geometry {
  int dims = 1;
  std::uint64_t nx = 1, ny = 0, nz = 1;  // the center; 1D: nx = nz = 1, ny = n
  std::uint64_t side = radius;           // planes (points) of each side domain along y

  [[nodiscard]] std::uint64_t points() const { return nx * ny * nz; }         // of the center = outputs
  [[nodiscard]] std::uint64_t side_points() const { return nx * side * nz; }  // of each side domain
};

inline constexpr int threads_per_cta = 256;
// A CTA's tile: tile_x x tile_y output points (x, y), plus `radius` halo rows above and below.
// 1D: 2048 points (8 per thread). 3D: 64 x 64 (a 64-float row is 256 bytes: 16 chunks of 16 B).
struct tile_shape {
  std::uint64_t x = 1, y = 1;
};
inline constexpr tile_shape tile_1d{1, 2048};
inline constexpr tile_shape tile_3d{64, 64};
tile_shape tile_of(const rung_traits& r);
// A pipelined rung (3d_ldgsts_overlap): a persistent grid of this many CTAs per SM (at most 85 registers
// per thread), each with --stages tile buffers of 72 x 64 floats in dynamic shared memory.
inline constexpr int overlap_ctas_per_sm = 3;
inline constexpr std::uint64_t min_overlap_stages = 2, max_overlap_stages = 4;
inline constexpr std::uint64_t overlap_tile_bytes = sizeof(float) * 64 * (64 + 2 * radius);
constexpr std::uint64_t overlap_smem_bytes(std::uint64_t stages) { return stages * overlap_tile_bytes; }

// The geometry of case (n, nx x ny of the --xy axis, side) for a rung (its dims decide which of n
// and the axis it reads). Call after shape_rule found nothing.
geometry geometry_of(const rung_traits& r, std::uint64_t n, std::uint64_t xy_nx, std::uint64_t xy_ny,
                     std::uint64_t side);
// Why the case cannot run (shape, alignment); nullopt when it can. Device features are the lab's.
std::optional<std::string> shape_rule(const rung_traits& r, std::uint64_t n, std::uint64_t xy_nx, std::uint64_t xy_ny,
                                      std::uint64_t side);

// CTAs of one tile each: ceil(nx / tile.x) x ceil(ny / tile.y) x nz.
std::uint64_t tile_count(const rung_traits& r, const geometry& g);

// The fewest bytes the job must move: every input point it needs read once (the center and the
// radius planes of each side domain), every output written once; 0 for an empty center.
std::uint64_t declared_bytes(const geometry& g);
// Arithmetic per output: 4 subtractions, 1 multiply, 3 FMAs = 11 flops.
inline constexpr std::uint64_t flops_per_point = 11;

// `stages`: a pipelined rung's tile buffers (--stages), printed in its policy; the other rungs ignore it.
launch_policy plan(const rung_traits& r, const geometry& g, int sm_count, std::uint64_t stages = min_overlap_stages);

// 32-byte sectors each CTA reads and writes, summed over the CTAs: a CTA reads each sector of its
// tile and halo once (shared memory, or L1 for ldg, serves its own re-reads), so the halo rows a
// CTA shares with its neighbours count once per CTA — the re-reads the hardware really issues to L2.
// Buffers are separate 256-byte aligned allocations. Not for the peers (their bytes are the plan's).
sector_count sectors(const rung_traits& r, const geometry& g);

// ---- branch-free addresses (device code; host-testable integer arithmetic) --------------------------

// The addresses of one 1D tile's local points l = g - base (-4 <= l < tile + 4) without a branch:
// each domain's array as if it held local point 0 (an integer: for two of them that address lies
// outside the array), and the local points where the left domain ends and the right one begins; a
// point's address is the selected base (SEL) plus 4 l, one load per point.
struct line_1d {
  std::uintptr_t left = 0, center = 0, right = 0;
  int left_end = 0;     // local points below lie in the left domain (0 in the first tile; none, -4, elsewhere)
  int right_begin = 0;  // local points from here on lie in the right domain
  int end = 0;          // local points from here on lie past the right domain's 4: not loaded

  MEMLAB_HOST_DEVICE const float* operator()(int l) const {
    const std::uintptr_t b = l < left_end ? left : (l >= right_begin ? right : center);
    return reinterpret_cast<const float*>(b + static_cast<std::uintptr_t>(4 * static_cast<std::intptr_t>(l)));
  }
};

// The tile of `tile` points from `base` (0 <= base < n) of the line left4 (the left domain's last 4
// points), center (n), right.
MEMLAB_HOST_DEVICE inline line_1d line_of(const float* left4, const float* center, const float* right, std::int64_t n,
                                          std::int64_t base, int tile) {
  const auto at = [&](const float* p, std::int64_t first) {  // address of local point 0 if p[0] is point `first`
    return reinterpret_cast<std::uintptr_t>(p) + static_cast<std::uintptr_t>(4 * (base - first));
  };
  const std::int64_t rest = n - base, cap = tile + radius;
  return {at(left4, -radius),
          at(center, 0),
          at(right, n),
          base == 0 ? 0 : -radius,
          static_cast<int>(rest < cap ? rest : cap),
          static_cast<int>(rest + radius < cap ? rest + radius : cap)};
}

// The rows of one 3D tile without a branch: each domain's array as if it held row y = 0 of plane z
// at column x0 (an integer: for the left and right domains that address lies outside the array),
// so that row y is the selected base (SEL) plus y x 4 nx bytes — per row a compare pair, the selects
// and one multiply-add, where the row's own index in its own array costs two 64-bit multiplies.
struct rows_3d {
  std::uintptr_t left = 0, center = 0, right = 0;
  std::int64_t pitch = 0;  // bytes from one row to the next: 4 nx
  int ny = 0;

  MEMLAB_HOST_DEVICE const float* operator()(int y) const {
    const std::uintptr_t b = y < 0 ? left : (y >= ny ? right : center);
    return reinterpret_cast<const float*>(b + static_cast<std::uintptr_t>(y * pitch));
  }
};

MEMLAB_HOST_DEVICE inline rows_3d rows_of(const float* left, const float* center, const float* right, std::int64_t nx,
                                          std::int64_t ny, std::int64_t side, std::int64_t z, std::int64_t x0) {
  // Address of row 0 of plane z, column x0, if p's plane z began at row `first` of the stitched volume.
  const auto at = [&](const float* p, std::int64_t rows, std::int64_t first) {
    return reinterpret_cast<std::uintptr_t>(p) + static_cast<std::uintptr_t>(4 * ((z * rows - first) * nx + x0));
  };
  return {at(left, side, -side), at(center, ny, 0), at(right, side, ny), 4 * nx, static_cast<int>(ny)};
}

// ---- inputs and the CPU reference -----------------------------------------------------------------------

// Input point k of the random stream `seed` (the lab's setup fills each domain from its own seed):
// a random sign and mantissa under exponent 0, so +-[1, 2): finite, never zero, |f| < input_bound.
MEMLAB_HOST_DEVICE inline float input_value(std::uint64_t seed, std::uint64_t k) {
  const auto w = static_cast<std::uint32_t>(mix64(seed ^ mix64(k)));
  const std::uint32_t bits = (w & 0x807fffffu) | 0x3f800000u;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The three domains as the host holds them: left and right nx x side x nz, center nx x ny x nz,
// x fastest.
struct host_field {
  const float* left = nullptr;
  const float* center = nullptr;
  const float* right = nullptr;
};
// The CPU reference (stencil.cu): f'(x, y, z) in double, with the exact coefficients.
double reference_derivative(const host_field& f, const geometry& g, std::uint64_t x, std::uint64_t y, std::uint64_t z);

const lab& table();

}  // namespace memlab::labs::stencil
