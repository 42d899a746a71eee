// The stencil lab's host-side model: geometry and refusals, launch policies, declared bytes, the
// exact count of 32-byte sectors each CTA reads and writes, and the verification tolerance.
// Host-only; tested in tests/labs/stencil/test_stencil_plan.cpp (sectors against a brute-force
// replay of every CTA's accesses).
#include <cuda/cmath>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "labs/stencil/stencil.hpp"

namespace memlab::labs::stencil {

double coefficient_abs_sum() {
  double s = 0;
  for (double c : coefficients) s += std::fabs(c);
  return s;
}

tolerance check_tolerance() {
  const double u = f32_unit_roundoff;
  const double gamma8 = 8 * u / (1 - 8 * u);
  const double scale = 2 * input_bound * coefficient_abs_sum();  // bounds sum |c_k| (|f(i+k)| + |f(i-k)|)
  return {(gamma8 * (1 + u) + u + 0x1p-50) * scale, u};
}

tile_shape tile_of(const rung_traits& r) { return r.dims == 1 ? tile_1d : tile_3d; }

geometry geometry_of(const rung_traits& r, std::uint64_t n, std::uint64_t xy_nx, std::uint64_t xy_ny,
                     std::uint64_t side) {
  geometry g;
  g.side = side;
  if (r.dims == 1) {
    g.dims = 1;
    g.ny = n;
    return g;
  }
  g.dims = 3;
  g.nx = xy_nx;
  g.ny = xy_ny;
  g.nz = xy_nx * xy_ny == 0 ? 0 : n / (xy_nx * xy_ny);
  return g;
}

namespace {

// Accesses each thread issues for one tile, halo included, rounded up (the policy's i): chunks of
// the rung's width for the staged rungs; without staging, each point's neighbour loads (8 per point).
int accesses_per_thread(const rung_traits& r) {
  const tile_shape t = tile_of(r);
  if (r.path == load_path::none) return static_cast<int>(t.x * t.y / threads_per_cta) * 2 * radius;
  const std::uint64_t elements = t.x * (t.y + 2 * radius);
  const auto per_access = static_cast<std::uint64_t>(r.access_bytes) / sizeof(float);
  return static_cast<int>(cuda::ceil_div(elements / per_access, threads_per_cta));
}

}  // namespace

std::uint64_t tile_count(const rung_traits& r, const geometry& g) {
  const tile_shape t = tile_of(r);
  return cuda::ceil_div(g.nx, t.x) * cuda::ceil_div(g.ny, t.y) * g.nz;
}

std::optional<std::string> shape_rule(const rung_traits& r, std::uint64_t n, std::uint64_t xy_nx, std::uint64_t xy_ny,
                                      std::uint64_t side) {
  if (side < radius) {
    return "the side domains need at least " + std::to_string(radius) + " points (planes) along y: the stencil reads " +
           std::to_string(radius) + " of each (side = " + std::to_string(side) + ")";
  }
  if (r.dims == 3) {
    const std::string plane = std::to_string(xy_nx) + " x " + std::to_string(xy_ny);
    if (xy_nx == 0 || xy_ny == 0) return "an empty " + plane + " plane";
    if (n % (xy_nx * xy_ny) != 0) {
      return "n = " + std::to_string(n) + " points is not a whole number of " + plane +
             " planes (a 3D center is nx x ny x n / (nx ny))";
    }
    if (r.access_bytes == 16 && !r.copy && xy_nx % 4 != 0) {
      return "16-byte accesses need every row 16-byte aligned: nx = " + std::to_string(xy_nx) +
             " is not a multiple of 4 floats";
    }
  }
  if (r.copy) return std::nullopt;
  const geometry g = geometry_of(r, n, xy_nx, xy_ny, side);
  const tile_shape t = tile_of(r);
  if (tile_count(r, g) > 0x7fffffffu) {
    return "the center needs " + std::to_string(tile_count(r, g)) + " tiles of " + std::to_string(t.x) + " x " +
           std::to_string(t.y) + " points: the kernels number tiles (and CTAs) below 2^31";
  }
  return std::nullopt;
}

std::uint64_t declared_bytes(const geometry& g) {
  if (g.points() == 0) return 0;
  const std::uint64_t read = g.nx * g.nz * (g.ny + 2 * radius);  // the center and 4 planes of each side
  return sizeof(float) * (read + g.points());
}

launch_policy plan(const rung_traits& r, const geometry& g, int sm_count, std::uint64_t stages) {
  launch_policy p;
  p.threads = threads_per_cta;
  p.items_per_thread = accesses_per_thread(r);
  p.vec_bytes = r.access_bytes;
  p.grid = tile_count(r, g);
  if (r.pipelined) {
    p.stages = static_cast<int>(stages);
    p.grid = std::min<std::uint64_t>(p.grid, static_cast<std::uint64_t>(std::max(sm_count, 1)) * overlap_ctas_per_sm);
  }
  return p;
}

// ---- sectors -------------------------------------------------------------------------------------------

namespace {

// One CTA: tile (xt, yt) of plane z. It reads rows y0 - 4 .. y1 + 3 of columns [x0, x1), each from
// the domain it lies in (a rung without staging, whose only loads are the neighbours of its points,
// skips its own point when the tile holds one), and writes rows [y0, y1).
sector_count tile_sectors(const rung_traits& rung, const geometry& g, tile_shape t, std::uint64_t xt, std::uint64_t yt,
                          std::uint64_t z) {
  const std::uint64_t x0 = xt * t.x, x1 = std::min(x0 + t.x, g.nx);
  const std::uint64_t y0 = yt * t.y, y1 = std::min(y0 + t.y, g.ny);
  const bool skip_own = rung.path == load_path::none && y1 - y0 == 1;
  const auto row = [&](std::uint64_t r) { return byte_range{4 * (r * g.nx + x0), 4 * (r * g.nx + x1)}; };
  std::vector<byte_range> left, center, right, out;
  const auto r = static_cast<std::int64_t>(radius);
  for (auto y = static_cast<std::int64_t>(y0) - r; y < static_cast<std::int64_t>(y1) + r; ++y) {
    if (skip_own && y == static_cast<std::int64_t>(y0)) continue;
    if (y < 0) {
      left.push_back(row(z * g.side + static_cast<std::uint64_t>(static_cast<std::int64_t>(g.side) + y)));
    } else if (static_cast<std::uint64_t>(y) < g.ny) {
      center.push_back(row(z * g.ny + static_cast<std::uint64_t>(y)));
    } else {
      right.push_back(row(z * g.side + static_cast<std::uint64_t>(y) - g.ny));
    }
  }
  for (std::uint64_t y = y0; y < y1; ++y) out.push_back(row(z * g.ny + y));
  // Each buffer's ranges in increasing order (rows closer than a sector share one): harness/sectors.hpp.
  return {sectors_of_sorted(left) + sectors_of_sorted(center) + sectors_of_sorted(right), sectors_of_sorted(out)};
}

// A tile index along one dimension standing for `count` tiles with the same sector counts.
struct tile_class {
  std::uint64_t index = 0, count = 0;
};

}  // namespace

// Tiles are grouped into classes of equal counts, so that a case of 10^9 points costs a few dozen
// tile evaluations: along x, the full tiles (their rows start 256 bytes apart: same alignment) and
// the partial last one; along y, tile 0 (left halo), the tiles whose halo reaches past ny (right
// domain) one by one, and the interior tiles (rows 64 x nx or 2048 elements apart: the same
// alignment modulo 32 bytes); along z, z mod 8 (a plane's rows start at z x rows x nx x 4 bytes,
// periodic modulo 32 bytes with period 8).
sector_count sectors(const rung_traits& r, const geometry& g) {
  sector_count total;
  if (r.copy || g.points() == 0) return total;
  const tile_shape t = tile_of(r);
  const std::uint64_t tiles_x = cuda::ceil_div(g.nx, t.x), tiles_y = cuda::ceil_div(g.ny, t.y);
  std::vector<tile_class> xs, ys, zs;
  if (g.nx % t.x == 0) {
    xs.push_back({0, tiles_x});
  } else {
    if (tiles_x > 1) xs.push_back({0, tiles_x - 1});
    xs.push_back({tiles_x - 1, 1});
  }
  // The first tile whose bottom halo reaches the right domain: y0 + t.y + radius > ny.
  const std::uint64_t first_right = g.ny < t.y + radius ? 0 : (g.ny - t.y - radius) / t.y + 1;
  ys.push_back({0, 1});
  if (first_right > 1) ys.push_back({1, first_right - 1});
  for (std::uint64_t yt = std::max<std::uint64_t>(first_right, 1); yt < tiles_y; ++yt) ys.push_back({yt, 1});
  for (std::uint64_t c = 0; c < std::min<std::uint64_t>(8, g.nz); ++c) zs.push_back({c, (g.nz - c + 7) / 8});
  for (const auto& x : xs) {
    for (const auto& y : ys) {
      for (const auto& z : zs) {
        const sector_count s = tile_sectors(r, g, t, x.index, y.index, z.index);
        const std::uint64_t times = x.count * y.count * z.count;
        total.read += s.read * times;
        total.write += s.write * times;
      }
    }
  }
  return total;
}

}  // namespace memlab::labs::stencil
