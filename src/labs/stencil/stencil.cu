// The stencil lab: a first derivative by an 8th-order centred finite difference (radius 4) at every
// point of a center domain whose edge points take their neighbours from a left and a right domain,
// as when domains of different physics are stitched, or a PML surrounds a model. 1D (three arrays)
// and 3D (nx x ny x nz volumes, x fastest, the derivative along y, the domains stitched along y).
// What it teaches: how a tile's halo is loaded, what branches at the domain edges cost in the SASS
// and in time next to branch-free loading, what cp.async (LDGSTS) and 16-byte accesses change, and
// whether overlapping the next tile's load with this tile's compute keeps more bytes in flight —
// on grids far larger than the L2, next to a copy of the same bytes (the ceiling).
//
// Assumes: f32. Inputs are random floats in +-[1, 2) (random bytes would hold NaN, infinities and
// 2^+-127), written by the lab's setup with a fresh seed for each case; outputs are poisoned by
// the harness. The left and right domains hold `--side` points (1D) or planes (3D) along y; the
// stencil reads the 4 nearest the center. Tiles: 1D 2048 points per CTA, 3D 64 x 64 (x, y);
// shapes that are not tile multiples run (partial tiles are predicated). The 16-byte 3D rungs
// refuse nx that is not a multiple of 4 (rows would not be 16-byte aligned); the 1D 16-byte rung
// falls back to 4-byte copies for a chunk that straddles two arrays or is misaligned.
//
// Reading order: the CPU reference; the operator on the device; the 1D ladder; the 3D ladder (its
// branch-free loads use memlab::halo::load_rows, include/memlab/halo.cuh); the peer; plans,
// refusals, setup, verification and launchers; the lab's table at the end. The host model
// (geometry, policies, sectors, tolerance) is in model.cpp.
#include <cuda/cmath>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/check.hpp"
#include "harness/copy_peer.hpp"
#include "harness/error.hpp"
#include "harness/fill.hpp"
#include "harness/launch.cuh"
#include "harness/text.hpp"
#include "labs/stencil/stencil.hpp"
#include "memlab/arch/cp_async.cuh"
#include "memlab/copy.cuh"
#include "memlab/halo.cuh"
#include "memlab/vector.cuh"

namespace memlab::labs::stencil {

// ---- the CPU reference ----------------------------------------------------------------------------

double reference_derivative(const host_field& f, const geometry& g, std::uint64_t x, std::uint64_t y, std::uint64_t z) {
  const auto at = [&](std::int64_t yy) -> double {
    if (yy < 0)
      return f.left[(z * g.side + static_cast<std::uint64_t>(static_cast<std::int64_t>(g.side) + yy)) * g.nx + x];
    const auto u = static_cast<std::uint64_t>(yy);
    if (u < g.ny) return f.center[(z * g.ny + u) * g.nx + x];
    return f.right[(z * g.side + u - g.ny) * g.nx + x];
  };
  const auto iy = static_cast<std::int64_t>(y);
  double d = 0;
  for (int k = 1; k <= radius; ++k) d += coefficients[k - 1] * (at(iy + k) - at(iy - k));
  return d;
}

// ---- the operator on the device ----------------------------------------------------------------------

namespace {

constexpr float c1 = static_cast<float>(coefficients[0]);
constexpr float c2 = static_cast<float>(coefficients[1]);
constexpr float c3 = static_cast<float>(coefficients[2]);
constexpr float c4 = static_cast<float>(coefficients[3]);

// f'(point) from at(k), the value k points away along the derivative (k = +-1..+-4). One evaluation
// order for every rung: 4 subtractions, 1 multiply, 3 FMAs.
template <class At>
__device__ __forceinline__ float derivative(At&& at) {
  float d = c1 * (at(1) - at(-1));
  d = fmaf(c2, at(2) - at(-2), d);
  d = fmaf(c3, at(3) - at(-3), d);
  return fmaf(c4, at(4) - at(-4), d);
}

// One 16-byte global store (STG.E.128) of four floats; p 16-byte aligned.
__device__ __forceinline__ void store16(float* p, float a, float b, float c, float d) {
  *reinterpret_cast<float4*>(p) = make_float4(a, b, c, d);
}

constexpr int R = radius;
constexpr int threads = threads_per_cta;

}  // namespace

// ---- 1D --------------------------------------------------------------------------------------------
// A CTA computes a tile of T1 = 2048 consecutive points from base = 2048 x blockIdx.x, 8 per thread
// (thread t: points t, t + 256, ...: each warp access is 128 consecutive, 128-byte aligned bytes).
// Point g of the stitched line, -4 <= g < n + 4, is left4[g + 4] (left4: the left domain's last 4
// points), center[g], or right[g - n]. The staged rungs keep local point l = g - base (-4 <= l <
// T1 + 4) in s[H1 + l]: the tile starts 128 bytes into the shared array, so that the tile is
// 128-byte aligned in shared memory as it is in global memory, and the 4 halo points on each side
// sit just before and after it.

namespace {

constexpr int T1 = static_cast<int>(tile_1d.y);
constexpr int P1 = T1 / threads;  // points per thread
constexpr int H1 = 128 / 4;       // the tile's offset in the shared array, floats
constexpr int S1 = H1 + T1 + R;   // floats of the shared array

// The value of point g, the domain picked by branches.
__device__ __forceinline__ float value_branching(const float* left4, const float* center, const float* right,
                                                 std::int64_t n, std::int64_t g) {
  if (g < 0) return left4[g + R];
  if (g < n) return center[g];
  return right[g - n];
}

// out[base + l] for this thread's points of the tile staged in s.
__device__ __forceinline__ void derivatives_1d(float* __restrict__ out, const float* s, std::int64_t base,
                                               std::int64_t n) {
#pragma unroll
  for (int u = 0; u < P1; ++u) {
    const int l = static_cast<int>(threadIdx.x) + u * threads;
    if (base + l < n) out[base + l] = derivative([&](int k) { return s[H1 + l + k]; });
  }
}

}  // namespace

// Each kernel is instantiated from its rung's traits (rung_t, stencil.hpp: a record of the table) and
// asserts the ones it implements; where a traits value is a compile-time parameter (a width, a load
// path), the kernel reads it from there.

// ldg: no staging. Each point's 8 neighbours are loaded from global memory (L1 serves the re-reads
// of the CTA's own lines), each through branches that pick its domain.
template <class Rung>
__global__ void __launch_bounds__(threads)
    d1_ldg_kernel(float* __restrict__ out, const float* __restrict__ left4, const float* __restrict__ center,
                  const float* __restrict__ right, std::int64_t n) {
  static_assert(Rung::value.dims == 1 && Rung::value.path == load_path::none &&
                Rung::value.pick == domain_pick::branches);
  const std::int64_t first = std::int64_t{blockIdx.x} * T1 + threadIdx.x;
#pragma unroll
  for (int u = 0; u < P1; ++u) {
    const std::int64_t i = first + u * threads;
    if (i < n) out[i] = derivative([&](int k) { return value_branching(left4, center, right, n, i + k); });
  }
}

// ldg_sts: the tile and its halo staged in shared memory through registers (LDG + STS). The tile's
// points come from the center (or, past n, the right domain); the halo is loaded by the first and
// last 4 threads, branches picking the domain: the textbook way.
// ldgsts: the same through cp.async (LDGSTS, 4 bytes: .ca, the only 4-byte form): global -> shared
// without a register round trip; the same branches.
template <class Rung>
__global__ void __launch_bounds__(threads)
    d1_branching_kernel(float* __restrict__ out, const float* __restrict__ left4, const float* __restrict__ center,
                        const float* __restrict__ right, std::int64_t n) {
  constexpr rung_traits rung = Rung::value;
  static_assert(rung.dims == 1 && rung.path != load_path::none && rung.pick == domain_pick::branches &&
                rung.access_bytes == 4);
  __shared__ __align__(128) float s[S1];
  // Moves one point into shared memory, as the rung's load path does.
  const auto copy = [](float* d, const float* src) {
    if constexpr (Rung::value.path == load_path::cp_async) {
      arch::cp_async_ca<Rung::value.access_bytes>(d, src);
    } else {
      *d = *src;
    }
  };
  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t base = std::int64_t{blockIdx.x} * T1;
#pragma unroll
  for (int u = 0; u < P1; ++u) {
    const int l = t + u * threads;
    const std::int64_t g = base + l;
    if (g < n) {
      copy(&s[H1 + l], center + g);
    } else if (g < n + R) {
      copy(&s[H1 + l], right + (g - n));
    }
  }
  if (t < R) {
    if (base == 0) {
      copy(&s[H1 - R + t], left4 + t);
    } else {
      copy(&s[H1 - R + t], center + (base - R + t));
    }
  } else if (t >= threads - R) {
    const int l = T1 + t - (threads - R);
    const std::int64_t g = base + l;
    if (g < n) {
      copy(&s[H1 + l], center + g);
    } else if (g < n + R) {
      copy(&s[H1 + l], right + (g - n));
    }
  }
  if constexpr (rung.path == load_path::cp_async) {
    arch::cp_async_commit();
    arch::cp_async_wait_all();
  }
  __syncthreads();
  derivatives_1d(out, s, base, n);
}

// ldg_no_branch: the same staging with every point's address selected (line_1d) and moved by
// predicated instructions (memlab::arch::ld_global_nc_if, st_shared_if: @p LDG, @p STS, never a branch);
// the 8 halo points by threads 0..7. The loads in one loop, the stores after them: ptxas issues
// them in batches (sm_90: 4 loads, 2 stores, 5 loads, ...), where ldg_sts waits for each load.
template <class Rung>
__global__ void __launch_bounds__(threads)
    d1_ldg_no_branch_kernel(float* __restrict__ out, const float* __restrict__ left4, const float* __restrict__ center,
                            const float* __restrict__ right, std::int64_t n) {
  constexpr rung_traits rung = Rung::value;
  constexpr int bytes = rung.access_bytes;  // a point per access
  static_assert(rung.dims == 1 && rung.path == load_path::registers && rung.pick == domain_pick::selects && bytes == 4);
  __shared__ __align__(128) float s[S1];
  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t base = std::int64_t{blockIdx.x} * T1;
  const line_1d src = line_of(left4, center, right, n, base, T1);
  vector_t<bytes> v[P1 + 1];
#pragma unroll
  for (int u = 0; u < P1; ++u) v[u] = arch::ld_global_nc_if<bytes>(t + u * threads < src.end, src(t + u * threads));
  // Threads 0..3: the left halo, local points -4..-1; 4..7: the right halo, T1 .. T1 + 3.
  const int h = t < R ? t - R : T1 + t - R;
  const bool halo_ok = t < 2 * R && h < src.end;
  v[P1] = arch::ld_global_nc_if<bytes>(halo_ok, src(h));
#pragma unroll
  for (int u = 0; u < P1; ++u) arch::st_shared_if<bytes>(t + u * threads < src.end, &s[H1 + t + u * threads], v[u]);
  arch::st_shared_if<bytes>(halo_ok, &s[H1 + h], v[P1]);
  __syncthreads();
  derivatives_1d(out, s, base, n);
}

// ldgsts_no_branch: cp.async with every address selected, one predicated copy per point
// (memlab::arch::cp_async_if: @p LDGSTS).
template <class Rung>
__global__ void __launch_bounds__(threads)
    d1_ldgsts_no_branch_kernel(float* __restrict__ out, const float* __restrict__ left4,
                               const float* __restrict__ center, const float* __restrict__ right, std::int64_t n) {
  constexpr rung_traits rung = Rung::value;
  constexpr int bytes = rung.access_bytes;  // a point per access
  static_assert(rung.dims == 1 && rung.path == load_path::cp_async && rung.pick == domain_pick::selects && bytes == 4);
  __shared__ __align__(128) float s[S1];
  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t base = std::int64_t{blockIdx.x} * T1;
  const line_1d src = line_of(left4, center, right, n, base, T1);
#pragma unroll
  for (int u = 0; u < P1; ++u) {
    const int l = t + u * threads;
    arch::cp_async_if<bytes>(l < src.end, &s[H1 + l], src(l));
  }
  const int h = t < R ? t - R : T1 + t - R;
  arch::cp_async_if<bytes>(t < 2 * R && h < src.end, &s[H1 + h], src(h));
  arch::cp_async_commit();
  arch::cp_async_wait_all();
  __syncthreads();
  derivatives_1d(out, s, base, n);
}

// ldgsts_vec16: 16-byte chunks of 4 points, each one cp.async.cg of 16 bytes (LDGSTS.E.BYPASS.128)
// when its four points lie in one array at a 16-byte aligned address (every center chunk: base
// and the chunk's start are multiples of 4 points; the right domain's first chunk when n is a
// multiple of 4; the left halo when the left domain's last 4 points are aligned), else four
// 4-byte copies, each address selected; all of them predicated, none branched. The tile's 512
// chunks go two per thread, 128-byte aligned per warp in global and in shared memory; the two
// halo chunks to threads 0 and 1. Then a thread computes 2 quads of consecutive points: 3 LDS.128
// of the 12 points around a quad, one STG.128.
template <class Rung>
__global__ void __launch_bounds__(threads)
    d1_ldgsts_vec16_kernel(float* __restrict__ out, const float* __restrict__ left4, const float* __restrict__ center,
                           const float* __restrict__ right, std::int64_t n) {
  constexpr rung_traits rung = Rung::value;
  static_assert(rung.dims == 1 && rung.path == load_path::cp_async && rung.pick == domain_pick::selects &&
                rung.access_bytes == 16);
  constexpr int quads = T1 / 4 / threads;  // tile chunks per thread
  __shared__ __align__(128) float s[S1];
  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t base = std::int64_t{blockIdx.x} * T1;
  const line_1d src = line_of(left4, center, right, n, base, T1);
  const bool left_aligned = reinterpret_cast<std::uintptr_t>(left4) % 16 == 0;
  // Chunk of local points l .. l + 3 (l a multiple of 4), when `mine`.
  const auto chunk = [&](bool mine, int l) {
    const bool needed = mine && l < src.end;
    const bool one_array = (l >= src.left_end && l + 4 <= src.right_begin) || l == src.right_begin ||
                           (l == -R && src.left_end == 0 && left_aligned);
    const bool whole = needed && one_array;
    arch::cp_async_if<rung.access_bytes>(whole, &s[H1 + l], src(l));
#pragma unroll
    for (int e = 0; e < 4; ++e) arch::cp_async_if<4>(needed && !whole && l + e < src.end, &s[H1 + l + e], src(l + e));
  };
#pragma unroll
  for (int u = 0; u < quads; ++u) chunk(true, 4 * (t + u * threads));
  chunk(t < 2, t == 0 ? -R : T1);  // the halo chunks
  arch::cp_async_commit();
  arch::cp_async_wait_all();
  __syncthreads();
#pragma unroll
  for (int u = 0; u < quads; ++u) {
    const int l = 4 * (t + u * threads);  // points base + l .. + 3
    const std::int64_t i = base + l;
    if (i >= n) continue;
    const auto* w4 = reinterpret_cast<const float4*>(&s[H1 + l - R]);
    const float4 a = w4[0], b = w4[1], cc = w4[2];
    const float w[12] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, cc.x, cc.y, cc.z, cc.w};
    float o[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) o[r] = derivative([&](int k) { return w[R + r + k]; });
    if (i + 4 <= n) {
      store16(out + i, o[0], o[1], o[2], o[3]);
    } else {
#pragma unroll
      for (int r = 0; r < 4; ++r)
        if (i + r < n) out[i + r] = o[r];
    }
  }
}

// ---- 3D --------------------------------------------------------------------------------------------
// A CTA computes a tile of 64 x 64 points (x, y) of one plane z; the tile it stages holds 72 rows
// (4 halo rows above and below) of 64 floats: s[r][c] = point (x0 + c, y0 - 4 + r, z). Row y of the
// stitched volume is in the left domain (y < 0: its plane side + y), the center, or the right
// domain (y >= ny: its plane y - ny); rows past ny + 3 are not loaded. Tiles are numbered x
// fastest, then y, then z, so the tiles that share a halo run close together and the second read
// of a halo row is an L2 hit.

struct volume {
  float* out;
  const float* left;
  const float* center;
  const float* right;
  std::int64_t nx, ny, nz, side;
  std::uint32_t tiles_x, tiles_y;  // tiles per row of tiles, rows of tiles per plane (< 2^31 tiles in all)
};

namespace {

constexpr int TX = static_cast<int>(tile_3d.x);
constexpr int TY = static_cast<int>(tile_3d.y);
constexpr int rows3 = TY + 2 * R;  // staged rows

struct tile_origin {
  std::int64_t x0, y0, z;
};

// 32-bit division (the lab refuses 2^31 tiles or more): a 64-bit one is a subroutine call with a
// branch in front of every kernel.
__device__ __forceinline__ tile_origin origin_of(const volume& v, std::uint32_t tile) {
  const std::uint32_t xt = tile % v.tiles_x, rest = tile / v.tiles_x;
  return {std::int64_t{xt} * TX, std::int64_t{rest % v.tiles_y} * TY, std::int64_t{rest / v.tiles_y}};
}

// The rows of tile o (rows_3d, stencil.hpp).
__device__ __forceinline__ rows_3d tile_rows(const volume& v, const tile_origin& o) {
  return rows_of(v.left, v.center, v.right, v.nx, v.ny, v.side, o.z, o.x0);
}

// The branch-free tile load of the no_branch, vec16 and overlap rungs: memlab::halo::load_rows over
// the 72 rows (row r is row y0 - 4 + r of the stitched volume), rows past ny + 3 and columns past
// nx predicated off.
template <halo::path Path, int Bytes>
__device__ __forceinline__ void load_tile_3d(float* s, const volume& v, const tile_origin& o) {
  constexpr int per_chunk = Bytes / 4;
  const rows_3d rows = tile_rows(v, o);
  const int y_first = static_cast<int>(o.y0) - R;
  const auto source = [&](int r) { return rows(y_first + r); };
  const std::int64_t valid_rows = v.ny + 2 * R - o.y0, cols = v.nx - o.x0;
  halo::load_rows<Path, Bytes, rows3, TX / per_chunk, threads>(
      s, source, static_cast<int>(valid_rows < rows3 ? valid_rows : rows3),
      static_cast<int>(cols < TX ? cols : TX) / per_chunk);
}

// The branching tile load of ldg and ldgsts: thread t loads column t % 64 of rows t / 64 + 4u, each
// row's domain picked by branches. Copy(dst, src) moves one float.
template <class Copy>
__device__ __forceinline__ void load_tile_3d_branching(float* s, const volume& v, const tile_origin& o, Copy&& copy) {
  const int c = static_cast<int>(threadIdx.x) % TX;
  const std::int64_t x = o.x0 + c;
  if (x >= v.nx) return;
#pragma unroll
  for (int u = 0; u < rows3 * TX / threads; ++u) {
    const int r = static_cast<int>(threadIdx.x) / TX + u * (threads / TX);
    const std::int64_t y = o.y0 - R + r;
    float* d = s + r * TX + c;
    if (y < 0) {
      copy(d, v.left + ((o.z * v.side + v.side + y) * v.nx + x));
    } else if (y < v.ny) {
      copy(d, v.center + ((o.z * v.ny + y) * v.nx + x));
    } else if (y < v.ny + R) {
      copy(d, v.right + ((o.z * v.side + y - v.ny) * v.nx + x));
    }
  }
}

// One float per access: thread t computes column t % 64, rows 16 (t / 64) .. + 15 of the tile from
// a window of 24 staged rows (24 LDS.32, 16 STG.32; a warp's accesses are 32 consecutive floats).
__device__ __forceinline__ void derivatives_3d(const float* s, const volume& v, const tile_origin& o) {
  constexpr int rows_per_thread = TY / (threads / TX);  // 16
  const int c = static_cast<int>(threadIdx.x) % TX;
  const int r0 = static_cast<int>(threadIdx.x) / TX * rows_per_thread;
  const std::int64_t x = o.x0 + c;
  if (x >= v.nx) return;
  float w[rows_per_thread + 2 * R];
#pragma unroll
  for (int i = 0; i < rows_per_thread + 2 * R; ++i) w[i] = s[(r0 + i) * TX + c];
  float* row = v.out + ((o.z * v.ny + o.y0 + r0) * v.nx + x);
#pragma unroll
  for (int i = 0; i < rows_per_thread; ++i) {
    if (o.y0 + r0 + i < v.ny) row[i * v.nx] = derivative([&](int k) { return w[R + i + k]; });
  }
}

// Four floats per access: thread t computes columns 4 (t % 16) .. + 3, rows 4 (t / 16) .. + 3 from
// 12 staged rows (12 LDS.128, 4 STG.128). nx is a multiple of 4 (refused otherwise).
__device__ __forceinline__ void derivatives_3d_vec16(const float* s, const volume& v, const tile_origin& o) {
  constexpr int quads = TX / 4;                            // 16 per row
  constexpr int rows_per_thread = TY / (threads / quads);  // 4
  const int q = static_cast<int>(threadIdx.x) % quads;
  const int r0 = static_cast<int>(threadIdx.x) / quads * rows_per_thread;
  const std::int64_t x = o.x0 + 4 * q;
  if (x >= v.nx) return;
  const auto* s4 = reinterpret_cast<const float4*>(s);
  float4 w[rows_per_thread + 2 * R];
#pragma unroll
  for (int i = 0; i < rows_per_thread + 2 * R; ++i) w[i] = s4[(r0 + i) * quads + q];
  // In float4 units (nx and x are multiples of 4): a store through a float* cast at the store was
  // split into four STG.E by the compiler (sm_90, nvcc 13.0).
  auto* row = reinterpret_cast<float4*>(v.out) + ((o.z * v.ny + o.y0 + r0) * v.nx + x) / 4;
#pragma unroll
  for (int i = 0; i < rows_per_thread; ++i) {
    if (o.y0 + r0 + i >= v.ny) continue;
    float4 d;
    d.x = derivative([&](int k) { return w[R + i + k].x; });
    d.y = derivative([&](int k) { return w[R + i + k].y; });
    d.z = derivative([&](int k) { return w[R + i + k].z; });
    d.w = derivative([&](int k) { return w[R + i + k].w; });
    row[i * (v.nx / 4)] = d;
  }
}

// Through the read-only path (LDG.E.CONSTANT), as the 1D kernels' const __restrict__ pointers and
// arch::ld_global_nc_if load: the rungs differ in their branches, not in the load instruction.
struct ldg_copy {
  __device__ void operator()(float* d, const float* s) const { *d = __ldg(s); }
};
struct cp_async4_copy {
  __device__ void operator()(float* d, const float* s) const { arch::cp_async_ca<4>(d, s); }
};

}  // namespace

namespace {

// The halo path of memlab::halo::load_rows for a rung's load path.
constexpr halo::path halo_path(load_path p) {
  return p == load_path::cp_async ? halo::path::cp_async : halo::path::registers;
}

}  // namespace

// One 64 x 72 tile staged in shared memory, as the rung's traits say:
//   ldg               through registers (LDG + STS), a branch per row picking its domain;
//   ldg_no_branch     memlab::halo::load_rows through registers: each row's address selected, one
//                     predicated LDG and STS per element, every load issued before the first store;
//   ldgsts            ldg's branches, through cp.async (4 bytes);
//   ldgsts_no_branch  halo::load_rows through cp.async (4 bytes);
//   ldgsts_vec16      16-byte cp.async (LDGSTS.E.BYPASS.128), 16-byte shared loads and global stores.
template <class Rung>
__global__ void __launch_bounds__(threads) d3_tile_kernel(volume v) {
  constexpr rung_traits rung = Rung::value;
  static_assert(rung.dims == 3 && rung.path != load_path::none && !rung.pipelined);
  static_assert(rung.pick == domain_pick::selects || rung.access_bytes == 4, "the branching loads move floats");
  __shared__ __align__(16) float s[rows3 * TX];
  const tile_origin o = origin_of(v, blockIdx.x);
  if constexpr (rung.pick == domain_pick::selects) {
    load_tile_3d<halo_path(rung.path), rung.access_bytes>(s, v, o);
  } else if constexpr (rung.path == load_path::cp_async) {
    load_tile_3d_branching(s, v, o, cp_async4_copy{});
  } else {
    load_tile_3d_branching(s, v, o, ldg_copy{});
  }
  if constexpr (rung.path == load_path::cp_async) {
    arch::cp_async_commit();
    arch::cp_async_wait_all();
  }
  __syncthreads();
  if constexpr (rung.access_bytes == 16) {
    derivatives_3d_vec16(s, v, o);
  } else {
    derivatives_3d(s, v, o);
  }
}

// ldgsts_overlap: vec16 on a persistent grid (overlap_ctas_per_sm per SM) with Stages tile buffers in
// dynamic shared memory. A CTA takes tiles blockIdx.x, + gridDim.x, ...; it starts the copies of
// its first Stages - 1 tiles, then for each tile starts the copy of the one Stages - 1 ahead into
// the buffer freed last, waits for this one's (cp.async.wait_group Stages - 1) and computes it:
// while it computes and stores, Stages - 1 tiles per CTA stay in flight.
template <class Rung, int Stages>
__global__ void __launch_bounds__(threads, overlap_ctas_per_sm) d3_ldgsts_overlap_kernel(volume v) {
  constexpr rung_traits rung = Rung::value;
  static_assert(rung.dims == 3 && rung.pipelined && rung.path == load_path::cp_async &&
                rung.pick == domain_pick::selects && rung.access_bytes == 16);
  constexpr halo::path path = halo_path(rung.path);
  extern __shared__ __align__(128) float s_tiles[];  // Stages x rows3 x TX
  constexpr int tile_floats = rows3 * TX;
  const auto tiles = static_cast<std::uint32_t>(v.tiles_x * v.tiles_y * static_cast<std::uint32_t>(v.nz));
  const std::uint32_t step = gridDim.x;
  std::uint32_t tile = blockIdx.x;
#pragma unroll
  for (int p = 0; p < Stages - 1; ++p) {
    const std::uint32_t ahead = tile + p * step;
    if (ahead < tiles) load_tile_3d<path, rung.access_bytes>(s_tiles + p * tile_floats, v, origin_of(v, ahead));
    arch::cp_async_commit();  // one group per tile, empty past the end: the wait below stays uniform
  }
  for (int i = 0; tile < tiles; tile += step, ++i) {
    const std::uint32_t ahead = tile + (Stages - 1) * step;
    if (ahead < tiles) {
      load_tile_3d<path, rung.access_bytes>(s_tiles + (i + Stages - 1) % Stages * tile_floats, v, origin_of(v, ahead));
    }
    arch::cp_async_commit();
    arch::cp_async_wait<Stages - 1>();  // this tile's group has landed; the Stages - 1 after it may not have
    __syncthreads();
    derivatives_3d_vec16(s_tiles + i % Stages * tile_floats, v, origin_of(v, tile));
    __syncthreads();  // every thread is done with this buffer before the next iteration refills it
  }
}

// ---- the kernels as types, for the table's records ------------------------------------------------------
// Each kernel's instantiation for a rung's traits: the table names a rung's kernel as
// lab_rung<d1_branching, rung_traits{...}>. A pipelined kernel has one instantiation per stage count.
struct d1_ldg {
  template <class Rung>
  static constexpr auto of = &d1_ldg_kernel<Rung>;
};
struct d1_branching {
  template <class Rung>
  static constexpr auto of = &d1_branching_kernel<Rung>;
};
struct d1_ldg_no_branch {
  template <class Rung>
  static constexpr auto of = &d1_ldg_no_branch_kernel<Rung>;
};
struct d1_ldgsts_no_branch {
  template <class Rung>
  static constexpr auto of = &d1_ldgsts_no_branch_kernel<Rung>;
};
struct d1_ldgsts_vec16 {
  template <class Rung>
  static constexpr auto of = &d1_ldgsts_vec16_kernel<Rung>;
};
struct d3_tile {
  template <class Rung>
  static constexpr auto of = &d3_tile_kernel<Rung>;
};
struct d3_ldgsts_overlap {
  template <class Rung, int Stages>
  static constexpr auto of = &d3_ldgsts_overlap_kernel<Rung, Stages>;
};

// ---- plans, refusals, setup, verification, launchers --------------------------------------------------

namespace {

enum buffer_index { left_buffer, center_buffer, right_buffer, out_buffer };
enum peer_buffer_index { src_buffer, dst_buffer };

const axis xy_axis{"xy",
                   "3D rungs: nx x ny of the center volume (x fastest, derivative along y); nz = n / (nx ny). "
                   "1D rungs ignore it",
                   axis_grammar::shape,
                   "512x512",
                   1,
                   std::uint64_t{1} << 30,
                   {"nx", "ny"}};
const axis stages_axis{"stages",
                       "tile buffers of 3d_ldgsts_overlap's pipeline (tiles in flight per CTA + 1); the other rungs "
                       "stage one tile and refuse any value but the default",
                       axis_grammar::counts,
                       "2",
                       min_overlap_stages,
                       max_overlap_stages};
const axis side_axis{"side",
                     "points (1D) or planes (3D) of the left and right domains along y, >= 4: the stencil reads the 4 "
                     "nearest the center",
                     axis_grammar::counts,
                     "4",
                     radius,
                     std::uint64_t{1} << 20};

const rung_traits& traits_of(const variant& v) { return v.traits_as<rung_traits>(); }

geometry geometry_of_case(const variant& v, const case_params& p) {
  const axis_value& xy = p.shape(xy_axis);
  return geometry_of(traits_of(v), p.n, xy[0], xy[1], p[side_axis]);
}

std::uint64_t stages_of(const case_params& p) { return p[stages_axis]; }

std::optional<std::string> refusal(const variant& v, const case_params& p, const device_info& dev) {
  if (p.type != dtype::f32) return "stencil is built for f32 only";
  const rung_traits& r = traits_of(v);
  const std::uint64_t stages = p[stages_axis];
  if (!r.pipelined && stages != parse_axis(stages_axis, stages_axis.defaults).front()[0]) {
    std::string pipelined;  // the rungs --stages is for, as the table names them
    for (const auto& other : table().variants) {
      if (!other.traits_as<rung_traits>().pipelined) continue;
      pipelined += (pipelined.empty() ? "" : " and ") + std::string(other.name) + "'s";
    }
    return "--stages sets " + pipelined + " tile buffers; " + std::string(v.name) + " stages one tile";
  }
  if (r.pipelined && dev.smem_per_block_optin > 0 &&
      overlap_smem_bytes(stages) > static_cast<std::uint64_t>(dev.smem_per_block_optin)) {
    return std::to_string(stages) + " tile buffers need " + std::to_string(overlap_smem_bytes(stages)) +
           " B of shared memory; this device allows " + std::to_string(dev.smem_per_block_optin) + " B per CTA";
  }
  const axis_value& xy = p.shape(xy_axis);
  return shape_rule(r, p.n, xy[0], xy[1], p[side_axis]);
}

case_plan plan_case(const variant& v, const case_params& p, const device_info& dev) {
  const rung_traits& r = traits_of(v);
  const geometry g = geometry_of_case(v, p);
  case_plan out;
  out.bytes = declared_bytes(g);
  if (v.peer) {
    // A copy of half the declared bytes (read it, write it): the same bytes as the stencil.
    const std::uint64_t half = out.bytes / 2;
    out.policy = copy_policy(half, dev);
    out.working_set = out.bytes;
    out.buffers = {{"src", half, buffer_role::input}, {"dst", half, buffer_role::output}};
    return out;
  }
  out.policy = plan(r, g, dev.sm_count, stages_of(p));
  const sector_count sc = sectors(r, g);
  out.hardware_bytes = sector_bytes * (sc.read + sc.write);
  out.flops = flops_per_point * g.points();
  const std::uint64_t side_bytes = sizeof(float) * g.side_points(), center_bytes = sizeof(float) * g.points();
  out.working_set = 2 * side_bytes + 2 * center_bytes;
  // The inputs are the lab's (filled by setup with floats), the output the harness's (poisoned).
  out.buffers = {{"left", side_bytes, buffer_role::scratch},
                 {"center", center_bytes, buffer_role::scratch},
                 {"right", side_bytes, buffer_role::scratch},
                 {"out", center_bytes, buffer_role::output}};
  return out;
}

__global__ void fill_inputs_kernel(float* __restrict__ dst, std::uint64_t count, std::uint64_t seed) {
  for (std::uint64_t k = global_thread(); k < count; k += std::uint64_t{gridDim.x} * blockDim.x)
    dst[k] = input_value(seed, k);
}

// A pipelined rung's kernel for `stages` tile buffers (its dynamic shared memory: stages x 18 KiB): its
// record lists one per stage count, in order from min_overlap_stages.
const void* pipelined_kernel(const variant& v, std::uint64_t stages) {
  if (stages < min_overlap_stages || stages - min_overlap_stages >= v.kernels.size()) {
    throw std::invalid_argument("stencil: no " + std::string(v.name) + " kernel for " + std::to_string(stages) +
                                " stages");
  }
  return v.kernels[stages - min_overlap_stages].symbol;
}

// Fresh random floats in the three input domains, each from its own seed; the overlap kernel's
// shared-memory limit raised to its buffers (above the 48 KiB default from 3 stages on).
void setup(case_ctx& c) {
  if (c.v->peer) return;
  if (traits_of(*c.v).pipelined) {
    const std::uint64_t stages = stages_of(c.p);
    MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(pipelined_kernel(*c.v, stages), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(overlap_smem_bytes(stages))));
  }
  for (const int b : {left_buffer, center_buffer, right_buffer}) {
    const std::uint64_t count = c.buffers[static_cast<std::size_t>(b)].size() / sizeof(float);
    if (count == 0) continue;
    const std::uint64_t blocks = std::min<std::uint64_t>(cuda::ceil_div(count, std::uint64_t{threads}), 65536);
    fill_inputs_kernel<<<grid_of(blocks, "stencil"), threads>>>(c.ptr<float>(static_cast<std::size_t>(b)), count,
                                                                next_seed());
    MEMLAB_CUDA_CHECK_LAUNCH();
  }
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
}

// The first `count` floats of `b` in host memory that lives on from case to case: a default case
// reads 1 GiB back, and otherwise every case zeroes and faults in fresh host pages for it.
// Held until the thread ends: about 1.1 GiB of host memory after a default run.
const float* to_host(std::vector<float>& keep, const device_buffer& b, std::uint64_t count) {
  if (keep.size() < count) keep.resize(count);
  if (count > 0) MEMLAB_CUDA_CHECK(cudaMemcpy(keep.data(), b.data(), count * sizeof(float), cudaMemcpyDeviceToHost));
  return keep.data();
}

// Where a point is, for a message: its coordinates and how close it is to a domain edge.
std::string describe_point(const geometry& g, std::uint64_t x, std::uint64_t y, std::uint64_t z) {
  std::string s = g.dims == 1
                      ? "point " + std::to_string(y)
                      : "point (x " + std::to_string(x) + ", y " + std::to_string(y) + ", z " + std::to_string(z) + ")";
  if (y < radius) s += ", " + std::to_string(y + 1) + " from the left domain";
  if (g.ny - y <= radius) s += ", " + std::to_string(g.ny - y) + " from the right domain";
  return s;
}

// Every output point against the CPU reference computed from the inputs as the GPU holds them,
// within the derived tolerance; the poisoned guard after the output must be untouched.
std::string verify_stencil(const case_ctx& c) {
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  const geometry g = geometry_of_case(*c.v, c.p);
  thread_local std::vector<float> left_h, center_h, right_h, out_h;
  const float* left = to_host(left_h, c.buffers[left_buffer], g.side_points());
  const float* center = to_host(center_h, c.buffers[center_buffer], g.points());
  const float* right = to_host(right_h, c.buffers[right_buffer], g.side_points());
  const float* out = to_host(out_h, c.buffers[out_buffer], g.points());
  if (auto why = check_guard(c.buffers[out_buffer], sizeof(float) * g.points()); !why.empty()) return why;
  const host_field f{left, center, right};
  const tolerance tl = check_tolerance();
  // (x, y, z) of output i: two divisions in 3D, none in 1D (2^27 points per case, on the host).
  const auto coords = [&](std::uint64_t i) {
    if (g.dims == 1) return std::array<std::uint64_t, 3>{0, i, 0};
    const std::uint64_t row = i / g.nx, z = row / g.ny;
    return std::array<std::uint64_t, 3>{i - row * g.nx, row - z * g.ny, z};
  };
  const auto ref_at = [&](std::uint64_t i) {
    const auto [x, y, z] = coords(i);
    return reference_derivative(f, g, x, y, z);
  };
  const std::uint64_t bad = first_where(g.points(), [&](std::uint64_t i) {
    const double got = out[i], ref = ref_at(i);
    return !std::isfinite(got) || !(std::fabs(got - ref) <= tl.tol + std::fabs(ref) * tl.eps);
  });
  if (bad == g.points()) return {};
  const auto [x, y, z] = coords(bad);
  const double got = out[bad], ref = ref_at(bad);
  std::uint32_t bits = 0;
  std::memcpy(&bits, &out[bad], sizeof bits);
  return describe_point(g, x, y, z) + " is " + fixed_g(got) + ", expected " + fixed_g(ref) + " within " +
         fixed_g(tl.tol + std::fabs(ref) * tl.eps) + " (|error| " + fixed_g(std::fabs(got - ref)) + ")" +
         (bits == 0 ? ": never written" : "");
}

// The peer: its output is its input, byte for byte.
std::string verify_copy(const case_ctx& c) {
  const std::uint64_t seed = c.seeds[src_buffer];
  return check_bytes(c.buffers[dst_buffer], 0, c.plan.bytes / 2, sizeof(float),
                     [&](std::uint64_t j) { return random_byte(seed, j); });
}

std::string verify(const case_ctx& c) { return c.v->peer ? verify_copy(c) : verify_stencil(c); }

// A 1D rung: kernel(out, left4, center, right, n).
using kernel_1d = void (*)(float*, const float*, const float*, const float*, std::int64_t);

template <kernel_1d Kernel>
void launch_1d(const case_ctx& c, cudaStream_t s) {
  const std::uint64_t grid = c.plan.policy.grid;
  if (grid == 0) return;
  const std::uint64_t side = c.p[side_axis];
  Kernel<<<grid_of(grid, "stencil"), threads, 0, s>>>(
      c.ptr<float>(out_buffer), c.ptr<float>(left_buffer, sizeof(float) * (side - radius)), c.ptr<float>(center_buffer),
      c.ptr<float>(right_buffer), static_cast<std::int64_t>(c.p.n));
  MEMLAB_CUDA_CHECK_LAUNCH();
}

volume volume_of(const case_ctx& c) {
  const geometry g = geometry_of_case(*c.v, c.p);
  const auto i64 = [](std::uint64_t u) { return static_cast<std::int64_t>(u); };
  return {c.ptr<float>(out_buffer),
          c.ptr<float>(left_buffer),
          c.ptr<float>(center_buffer),
          c.ptr<float>(right_buffer),
          i64(g.nx),
          i64(g.ny),
          i64(g.nz),
          i64(g.side),
          static_cast<std::uint32_t>(cuda::ceil_div(g.nx, tile_3d.x)),
          static_cast<std::uint32_t>(cuda::ceil_div(g.ny, tile_3d.y))};
}

template <void (*Kernel)(volume)>
void launch_3d(const case_ctx& c, cudaStream_t s) {
  const std::uint64_t grid = c.plan.policy.grid;
  if (grid == 0) return;
  Kernel<<<grid_of(grid, "stencil"), threads, 0, s>>>(volume_of(c));
  MEMLAB_CUDA_CHECK_LAUNCH();
}

void launch_pipelined(const case_ctx& c, cudaStream_t s) {
  const std::uint64_t grid = c.plan.policy.grid;
  if (grid == 0) return;
  volume v = volume_of(c);
  void* args[] = {&v};
  const std::uint64_t stages = stages_of(c.p);
  MEMLAB_CUDA_CHECK(cudaLaunchKernel(pipelined_kernel(*c.v, stages), grid_of(grid, "stencil"), dim3(threads), args,
                                     overlap_smem_bytes(stages), s));
}

void launch_copy(const case_ctx& c, cudaStream_t s) {
  MEMLAB_CUDA_CHECK(memlab::copy_bytes(c.ptr(dst_buffer), c.ptr(src_buffer), c.plan.bytes / 2, s));
}

// A rung of the lab's own, from its record: its kernel instantiated from its traits (one per stage count
// for a pipelined one), launched for its dimensions, and what it needs of the device.
template <class Kernel, rung_traits T, std::uint64_t... Stages>
std::vector<kernel_ref> pipelined_kernels(std::integer_sequence<std::uint64_t, Stages...>) {
  return {kernel_ref::of(Kernel::template of<rung_t<T>, static_cast<int>(min_overlap_stages + Stages)>)...};
}
template <class Kernel, rung_traits T>
variant lab_rung(variant v) {
  if constexpr (T.pipelined) {
    v.launch = launch_pipelined;
    v.kernels = pipelined_kernels<Kernel, T>(
        std::make_integer_sequence<std::uint64_t, max_overlap_stages - min_overlap_stages + 1>{});
  } else {
    constexpr auto kernel = Kernel::template of<rung_t<T>>;
    if constexpr (T.dims == 1) {
      v.launch = launch_1d<kernel>;
    } else {
      v.launch = launch_3d<kernel>;
    }
    v.kernels = {kernel_ref::of(kernel)};
  }
  if (T.path == load_path::cp_async) v.needs = {.min_cc = 80, .feature = "cp.async (LDGSTS)"};
  v.traits = T;
  return v;
}

}  // namespace

// ---- the lab's table ------------------------------------------------------------------------------------

const lab& table() {
  static const lab stencil_lab{
      .name = "stencil",
      .teaches =
          "an 8th-order first derivative across stitched domains, 1D and along y of a 3D volume: halo "
          "loads with branches vs selects, LDG vs LDGSTS, 4 vs 16 bytes, overlapping the next tile's load",
      .dtypes = {dtype::f32},
      .default_dtype = dtype::f32,
      .default_sizes = "2^27",  // 512 MiB of center: > 8 x the H100's 50 MB L2, in and out
      .size_meaning = "points of the center domain (1D: n; 3D: nx x ny x nz, with --xy)",
      .axes = {xy_axis, side_axis, stages_axis},
      .roof = roof_kind::dram,
      .variants =
          {
              lab_rung<d1_ldg, rung_traits{.dims = 1, .path = load_path::none}>({
                  .name = "1d_ldg",
                  .teaches = "no staging: each point's 8 neighbours loaded from global memory (L1 serves re-reads), "
                             "branches pick the domain of each",
              }),
              lab_rung<d1_branching, rung_traits{.dims = 1, .path = load_path::registers}>({
                  .name = "1d_ldg_sts",
                  .teaches = "the tile and its halo staged in shared memory (LDG + STS); the halo loaded by edge "
                             "threads under branches",
              }),
              lab_rung<d1_ldg_no_branch,
                       rung_traits{.dims = 1, .path = load_path::registers, .pick = domain_pick::selects}>({
                  .name = "1d_ldg_no_branch",
                  .teaches = "the same staging, each point's array selected (SEL): one predicated load per point",
              }),
              lab_rung<d1_branching, rung_traits{.dims = 1, .path = load_path::cp_async}>({
                  .name = "1d_ldgsts",
                  .teaches = "ldg_sts through cp.async (LDGSTS, 4 B): no register round trip; the same branches",
              }),
              lab_rung<d1_ldgsts_no_branch,
                       rung_traits{.dims = 1, .path = load_path::cp_async, .pick = domain_pick::selects}>({
                  .name = "1d_ldgsts_no_branch",
                  .teaches = "cp.async (4 B), each point's array selected: one predicated copy per point",
              }),
              lab_rung<d1_ldgsts_vec16,
                       rung_traits{
                           .dims = 1, .path = load_path::cp_async, .pick = domain_pick::selects, .access_bytes = 16}>({
                  .name = "1d_ldgsts_vec16",
                  .teaches = "16-byte cp.async chunks (LDGSTS.128), LDS.128 and STG.128; 4-byte copies only "
                             "for a chunk that straddles two arrays or is misaligned",
              }),
              {
                  .name = "1d_copy",
                  .teaches = "memlab::copy of the same declared bytes: the 1D stencil's ceiling",
                  .launch = launch_copy,
                  .peer = true,
                  .traits = rung_traits{.dims = 1, .access_bytes = 16, .copy = true},
              },
              lab_rung<d3_tile, rung_traits{.dims = 3, .path = load_path::registers}>({
                  .name = "3d_ldg",
                  .teaches =
                      "64 x 72 tile staged through registers (LDG + STS, 4 B), a branch per row picks its domain",
              }),
              lab_rung<d3_tile, rung_traits{.dims = 3, .path = load_path::registers, .pick = domain_pick::selects}>({
                  .name = "3d_ldg_no_branch",
                  .teaches = "memlab::halo::load_rows through registers: each row's array selected (SEL), one "
                             "predicated load per element, all loads before the stores",
              }),
              lab_rung<d3_tile, rung_traits{.dims = 3, .path = load_path::cp_async}>({
                  .name = "3d_ldgsts",
                  .teaches = "3d_ldg's branches through cp.async (LDGSTS, 4 B)",
              }),
              lab_rung<d3_tile, rung_traits{.dims = 3, .path = load_path::cp_async, .pick = domain_pick::selects}>({
                  .name = "3d_ldgsts_no_branch",
                  .teaches = "memlab::halo::load_rows through cp.async (4 B)",
              }),
              lab_rung<d3_tile,
                       rung_traits{
                           .dims = 3, .path = load_path::cp_async, .pick = domain_pick::selects, .access_bytes = 16}>({
                  .name = "3d_ldgsts_vec16",
                  .teaches = "16-byte accesses: cp.async.cg (LDGSTS.E.BYPASS.128), LDS.128, STG.128",
              }),
              lab_rung<d3_ldgsts_overlap, rung_traits{.dims = 3,
                                                      .path = load_path::cp_async,
                                                      .pick = domain_pick::selects,
                                                      .access_bytes = 16,
                                                      .pipelined = true}>({
                  .name = "3d_ldgsts_overlap",
                  .teaches = "vec16 on a persistent grid with --stages tile buffers: the next tiles' cp.async "
                             "in flight while this one is computed and stored",
              }),
              {
                  .name = "3d_copy",
                  .teaches = "memlab::copy of the same declared bytes: the 3D stencil's ceiling",
                  .launch = launch_copy,
                  .peer = true,
                  .traits = rung_traits{.dims = 3, .access_bytes = 16, .copy = true},
              },
          },
      .unsupported = refusal,
      .plan = plan_case,
      .setup = setup,
      .verify = verify,
  };
  return stencil_lab;
}

}  // namespace memlab::labs::stencil
