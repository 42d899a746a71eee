// The stencil lab on the host: geometry and refusals, declared bytes, launch policies, the sector
// model against a brute-force replay of every CTA's accesses, the tolerance against an f32
// emulation of the kernels' arithmetic, and the inputs' value range. No GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "harness/lab.hpp"
#include "lab_helpers.hpp"
#include "labs/stencil/stencil.hpp"

namespace memlab::labs::stencil {
namespace {

// The lab's stencil rungs (not the copies), as the table lists them, with their traits.
struct stencil_rung {
  std::string_view name;
  rung_traits traits;
};
std::vector<stencil_rung> stencil_rungs() {
  std::vector<stencil_rung> out;
  for (const auto& v : table().variants) {
    const auto& r = v.traits_as<rung_traits>();
    if (!r.copy) out.push_back({v.name, r});
  }
  return out;
}
const std::vector<stencil_rung> rungs = stencil_rungs();

case_params stencil_case(std::uint64_t n, std::uint64_t nx, std::uint64_t ny, std::uint64_t side = 4,
                         dtype t = dtype::f32, std::uint64_t stages = 2) {
  return table().make_case(t, n,
                           {{"xy", axis_value{{nx, ny, 0}, 2}},
                            {"side", axis_value{{side, 0, 0}, 1}},
                            {"stages", axis_value{{stages, 0, 0}, 1}}});
}

// ---- the brute force: every element each CTA reads and writes, as the kernels address them ----------

// A sector of one of the four buffers: (buffer, byte / 32).
using sector = std::pair<int, std::uint64_t>;

sector_count brute_force_sectors(const rung_traits& r, const geometry& g) {
  const tile_shape t = tile_of(r);
  sector_count total;
  const auto ceil_div = [](std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; };
  for (std::uint64_t z = 0; z < g.nz; ++z) {
    for (std::uint64_t yt = 0; yt < ceil_div(g.ny, t.y); ++yt) {
      for (std::uint64_t xt = 0; xt < ceil_div(g.nx, t.x); ++xt) {
        std::set<sector> read, written;
        const std::uint64_t x0 = xt * t.x, x1 = std::min(x0 + t.x, g.nx);
        const std::uint64_t y0 = yt * t.y, y1 = std::min(y0 + t.y, g.ny);
        // The element at (x, y) of the stitched volume, y in [-4, ny + 4).
        const auto element = [&](std::uint64_t x, std::int64_t y) -> sector {
          if (y < 0) return {0, 4 * ((z * g.side + g.side - static_cast<std::uint64_t>(-y)) * g.nx + x) / 32};
          const auto u = static_cast<std::uint64_t>(y);
          if (u < g.ny) return {1, 4 * ((z * g.ny + u) * g.nx + x) / 32};
          return {2, 4 * ((z * g.side + u - g.ny) * g.nx + x) / 32};
        };
        for (std::uint64_t y = y0; y < y1; ++y) {
          for (std::uint64_t x = x0; x < x1; ++x) {
            written.insert({3, 4 * ((z * g.ny + y) * g.nx + x) / 32});
            if (r.path == load_path::none) {  // no staging: the 8 neighbours of each point
              for (std::int64_t k = 1; k <= radius; ++k) {
                read.insert(element(x, static_cast<std::int64_t>(y) + k));
                read.insert(element(x, static_cast<std::int64_t>(y) - k));
              }
            }
          }
        }
        if (r.path != load_path::none) {  // the staged tile: rows y0 - 4 .. y1 + 3
          for (auto y = static_cast<std::int64_t>(y0) - radius; y < static_cast<std::int64_t>(y1) + radius; ++y)
            for (std::uint64_t x = x0; x < x1; ++x) read.insert(element(x, y));
        }
        total.read += read.size();
        total.write += written.size();
      }
    }
  }
  return total;
}

geometry make_geometry(int dims, std::uint64_t nx, std::uint64_t ny, std::uint64_t nz, std::uint64_t side) {
  geometry g;
  g.dims = dims;
  g.nx = nx;
  g.ny = ny;
  g.nz = nz;
  g.side = side;
  return g;
}

TEST(stencil_model, sectors_match_a_brute_force_replay_of_every_cta_1d) {
  for (const auto& [name, v] : rungs) {
    if (v.dims != 1) continue;
    for (const std::uint64_t n : {1u, 2u, 3u, 5u, 15u, 16u, 17u, 127u, 2047u, 2048u, 2049u, 2050u, 2051u, 2052u, 2053u,
                                  4096u, 4100u, 6144u + 1u, 10000u}) {
      for (const std::uint64_t side : {4u, 5u, 7u, 12u}) {
        const geometry g = make_geometry(1, 1, n, 1, side);
        SCOPED_TRACE(std::string(name) + " n=" + std::to_string(n) + " side=" + std::to_string(side));
        const sector_count model = sectors(v, g), brute = brute_force_sectors(v, g);
        EXPECT_EQ(model.read, brute.read);
        EXPECT_EQ(model.write, brute.write);
      }
    }
  }
}

TEST(stencil_model, sectors_match_a_brute_force_replay_of_every_cta_3d) {
  const std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> shapes{
      {1, 1, 1},   {1, 9, 3},   {3, 5, 2},   {4, 4, 4},    {5, 64, 9},  {8, 65, 10},   {12, 67, 2},  {64, 64, 1},
      {64, 68, 2}, {65, 63, 3}, {70, 69, 2}, {72, 130, 3}, {128, 4, 9}, {130, 140, 2}, {20, 200, 17}};
  for (const auto& [name, v] : rungs) {
    if (v.dims != 3) continue;
    for (const auto& [nx, ny, nz] : shapes) {
      for (const std::uint64_t side : {4u, 5u}) {
        const geometry g = make_geometry(3, nx, ny, nz, side);
        SCOPED_TRACE(std::string(name) + " " + std::to_string(nx) + "x" + std::to_string(ny) + "x" +
                     std::to_string(nz) + " side=" + std::to_string(side));
        const sector_count model = sectors(v, g), brute = brute_force_sectors(v, g);
        EXPECT_EQ(model.read, brute.read);
        EXPECT_EQ(model.write, brute.write);
      }
    }
  }
}

// The default 3D case, by hand: 512 x 512 x 512, 64 x 64 tiles, every row 32-byte aligned. Each of
// the 8 x 8 x 512 CTAs of a staged 3D rung reads 72 rows of 256 bytes (8 sectors each) and writes 64;
// the halo rows are read twice (12.5% more reads than the 64 rows a CTA owns).
TEST(stencil_model, the_default_3d_case_reads_its_halo_rows_twice) {
  const geometry g = make_geometry(3, 512, 512, 512, 4);
  int checked = 0;
  for (const auto& [name, v] : rungs) {
    if (v.dims != 3 || v.path == load_path::none) continue;
    const sector_count s = sectors(v, g);
    const std::uint64_t ctas = 8 * 8 * 512;
    EXPECT_EQ(s.read, ctas * 72 * 8) << name;
    EXPECT_EQ(s.write, ctas * 64 * 8) << name;
    ++checked;
  }
  EXPECT_GT(checked, 0);
  EXPECT_EQ(declared_bytes(g), 4 * (512ull * 512 * 520 + 512ull * 512 * 512));
}

// 1D, n a multiple of the tile: each CTA of a staged 1D rung reads 2048 + 8 points, 258 sectors (each
// 4-point halo is half of a sector of the neighbouring tile, or of the side domain), and writes 256.
TEST(stencil_model, the_1d_tiles_read_one_extra_sector) {
  const std::uint64_t n = std::uint64_t{1} << 27;
  const geometry g = make_geometry(1, 1, n, 1, 4);
  int checked = 0;
  for (const auto& [name, v] : rungs) {
    if (v.dims != 1 || v.path == load_path::none) continue;
    const sector_count s = sectors(v, g);
    const std::uint64_t ctas = n / 2048;
    EXPECT_EQ(s.read, ctas * 258) << name;
    EXPECT_EQ(s.write, n * 4 / 32) << name;
    ++checked;
  }
  EXPECT_GT(checked, 0);
  EXPECT_EQ(declared_bytes(g), 4 * (n + 8 + n));
}

// ---- geometry, bytes, refusals -------------------------------------------------------------------

TEST(stencil_plan, one_d_rungs_take_n_and_three_d_rungs_take_the_plane) {
  const geometry g1 = geometry_of(rung_traits{.dims = 1}, 1000, 64, 32, 6);
  EXPECT_EQ(g1.dims, 1);
  EXPECT_EQ(g1.nx, 1u);
  EXPECT_EQ(g1.ny, 1000u);
  EXPECT_EQ(g1.nz, 1u);
  EXPECT_EQ(g1.side_points(), 6u);
  const geometry g3 = geometry_of(rung_traits{.dims = 3}, 64 * 32 * 5, 64, 32, 6);
  EXPECT_EQ(g3.dims, 3);
  EXPECT_EQ(g3.nz, 5u);
  EXPECT_EQ(g3.side_points(), 64u * 6 * 5);
  EXPECT_EQ(declared_bytes(g3), 4u * (64 * 5 * (32 + 8) + 64 * 32 * 5));
  EXPECT_EQ(declared_bytes(geometry_of(rung_traits{.dims = 1}, 0, 1, 1, 4)), 0u);
}

// Every refusal, for every rung its traits concern.
TEST(stencil_plan, refusals_name_the_reason) {
  const lab& l = table();
  device_info old;
  old.cc_major = 7;
  old.cc_minor = 5;
  device_info small;  // 64 KiB of shared memory per CTA
  small.cc_major = 8;
  small.smem_per_block_optin = 64 * 1024;
  int pipelined = 0;
  for (const auto& v : l.variants) {
    const auto& r = v.traits_as<rung_traits>();
    SCOPED_TRACE(std::string(v.name));
    // 3D: n must be whole planes; 1D rungs ignore the plane.
    auto why = l.why_not(v, stencil_case(1000, 64, 64), {});
    if (r.dims == 3) {
      ASSERT_TRUE(why);
      EXPECT_NE(why->find("not a whole number of 64 x 64 planes"), std::string::npos) << *why;
    } else {
      EXPECT_FALSE(why) << *why;
    }
    // 16-byte 3D rungs: rows 16-byte aligned (not the copy: memlab::copy takes any alignment).
    why = l.why_not(v, stencil_case(6 * 8 * 2, 6, 8), {});
    if (r.dims == 3 && r.access_bytes == 16 && !r.copy) {
      ASSERT_TRUE(why);
      EXPECT_NE(why->find("nx = 6 is not a multiple of 4"), std::string::npos) << *why;
    } else {
      EXPECT_FALSE(why) << *why;
    }
    // Side domains thinner than the radius (the axis refuses them too); f32 only.
    why = l.why_not(v, stencil_case(100, 512, 512, 3), {});
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("at least 4"), std::string::npos) << *why;
    why = l.why_not(v, stencil_case(100, 512, 512, 4, dtype::f16), {});
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("f32"), std::string::npos) << *why;
    // Tiles are numbered in 32 bits.
    why = l.why_not(v, stencil_case(std::uint64_t{1} << 34, 4, 1), {});  // 2^32 planes of one tile
    if (r.dims == 3 && !r.copy) {
      ASSERT_TRUE(why);
      EXPECT_NE(why->find("below 2^31"), std::string::npos) << *why;
    }
    // cp.async needs sm_80; LDG rungs run anywhere.
    why = l.why_not(v, stencil_case(64 * 64, 64, 64), old);
    if (r.path == load_path::cp_async) {
      ASSERT_TRUE(why);
      EXPECT_NE(why->find("sm_80"), std::string::npos) << *why;
    } else if (!r.copy) {
      EXPECT_FALSE(why) << *why;
    }
    // --stages is the pipelined rungs'; the others stage one tile and refuse another value, naming them.
    why = l.why_not(v, stencil_case(64 * 64, 64, 64, 4, dtype::f32, 3), {});
    if (!r.pipelined) {
      ASSERT_TRUE(why);
      EXPECT_NE(why->find("--stages sets"), std::string::npos) << *why;
      continue;
    }
    ++pipelined;
    EXPECT_FALSE(why) << *why;
    for (const auto& other : l.variants)
      if (!other.traits_as<rung_traits>().pipelined) {
        EXPECT_NE(l.why_not(other, stencil_case(64 * 64, 64, 64, 4, dtype::f32, 3), {}).value_or("").find(v.name),
                  std::string::npos);
      }
    EXPECT_FALSE(l.why_not(v, stencil_case(64 * 64, 64, 64, 4, dtype::f32, 4), {}));
    // Four 72 x 64 float buffers (72 KiB) need more shared memory than a device with 64 KiB per CTA has.
    why = l.why_not(v, stencil_case(64 * 64, 64, 64, 4, dtype::f32, 4), small);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("73728 B of shared memory"), std::string::npos) << *why;
    EXPECT_FALSE(l.why_not(v, stencil_case(64 * 64, 64, 64, 4, dtype::f32, 3), small));
  }
  EXPECT_GT(pipelined, 0);
  EXPECT_THROW((void)parse_axis(*l.find_axis("side"), "3"), std::invalid_argument);
  EXPECT_THROW((void)parse_axis(*l.find_axis("stages"), "5"), std::invalid_argument);
}

// Each rung's policy from its traits: a CTA per tile (a pipelined rung: a persistent grid of
// overlap_ctas_per_sm per SM), its access width, and its accesses per thread, halo included.
TEST(stencil_plan, policies_buffers_and_the_peer_moves_the_same_bytes) {
  const lab& l = table();
  device_info dev;
  dev.sm_count = 132;
  dev.max_threads_per_sm = 2048;
  dev.cc_major = 9;
  const auto p = stencil_case(std::uint64_t{1} << 27, 512, 512);
  const auto p3 = stencil_case(std::uint64_t{1} << 27, 512, 512, 4, dtype::f32, 3);
  const auto accesses = [](const rung_traits& r) {
    if (r.path == load_path::none) return 64;              // 8 points x 8 neighbours
    if (r.dims == 1) return r.access_bytes == 16 ? 3 : 9;  // 2056 points: 514 chunks or 2056 floats, 256 threads
    return r.access_bytes == 16 ? 5 : 18;                  // 72 x 64 floats: 72 x 16 chunks or 4608 floats
  };
  // The first staged rung of each dimension, as the table lists them.
  const auto first_staged = [&](int dims) {
    for (const auto& [name, r] : rungs)
      if (r.dims == dims && r.path != load_path::none) return test::plan_of(l, name, p, dev);
    throw std::logic_error("no staged rung");
  };
  const case_plan staged[2] = {first_staged(1), first_staged(3)};
  for (const auto& [name, r] : rungs) {
    SCOPED_TRACE(std::string(name));
    const case_plan c = test::plan_of(l, name, p, dev);
    EXPECT_EQ(c.policy.grid, r.pipelined ? 132u * overlap_ctas_per_sm
                                         : (r.dims == 1 ? (std::uint64_t{1} << 27) / 2048 : 8u * 8 * 512));
    EXPECT_EQ(c.policy.vec_bytes, r.access_bytes);
    EXPECT_EQ(c.policy.items_per_thread, accesses(r));
    EXPECT_EQ(c.policy.stages, r.pipelined ? 2 : 0);
    if (r.pipelined) {
      EXPECT_EQ(test::plan_of(l, name, p3, dev).policy.stages, 3);
    }
    EXPECT_EQ(c.flops, 11u << 27);
    // Inputs the lab fills (scratch), the output the harness poisons.
    ASSERT_EQ(c.buffers.size(), 4u);
    EXPECT_EQ(c.buffers[0].role, buffer_role::scratch);
    EXPECT_EQ(c.buffers[3].role, buffer_role::output);
    EXPECT_EQ(c.buffers[1].bytes, 4u << 27);
    // Grids at least 8 x the H100's 50 MB L2: the center alone is 512 MiB.
    EXPECT_GE(c.buffers[1].bytes, 8u * 50'000'000);
    if (r.dims == 3) {
      EXPECT_EQ(c.buffers[0].bytes, 4u * 512 * 4 * 512);
    }
    // Every rung of a dimension moves the same declared bytes and the same sectors.
    const case_plan& first = staged[r.dims == 1 ? 0 : 1];
    EXPECT_EQ(c.bytes, first.bytes);
    if (r.path != load_path::none) {
      EXPECT_EQ(c.hardware_bytes, first.hardware_bytes);
    }
  }
  // The peers copy half the declared bytes of their dimension, and so move the same bytes as its rungs.
  for (const auto& v : l.variants) {
    const auto& r = v.traits_as<rung_traits>();
    if (!r.copy) continue;
    const case_plan c = l.plan(v, p, dev);
    for (const auto& [name, s] : rungs) {
      if (s.dims != r.dims) continue;
      EXPECT_EQ(c.bytes, test::plan_of(l, name, p, dev).bytes) << v.name << " " << name;
    }
    ASSERT_EQ(c.buffers.size(), 2u);
    EXPECT_EQ(c.buffers[0].bytes, c.bytes / 2);
    EXPECT_EQ(c.buffers[0].role, buffer_role::input);
    EXPECT_EQ(c.policy.vec_bytes, 16) << "memlab::copy's aligned 16-byte body";
  }
}

TEST(stencil_plan, the_default_run_is_one_case_per_variant) {
  const lab& l = table();
  EXPECT_EQ(parse_axis(*l.find_axis("xy"), l.find_axis("xy")->defaults).size(), 1u);
  EXPECT_EQ(parse_axis(*l.find_axis("side"), l.find_axis("side")->defaults).size(), 1u);
  EXPECT_EQ(parse_axis(*l.find_axis("stages"), l.find_axis("stages")->defaults).size(), 1u);
  // The records agree with themselves: the copies are the table's peers, a rung's name carries its
  // dimensions (1d_, 3d_).
  for (const auto& v : l.variants) {
    const auto& r = v.traits_as<rung_traits>();
    EXPECT_EQ(v.peer, r.copy) << v.name;
    EXPECT_EQ(v.name.substr(0, 3), r.dims == 1 ? "1d_" : "3d_") << v.name;
  }
}

// ---- branch-free addresses ---------------------------------------------------------------------------

// Fake, far-apart arrays: only addresses are compared, nothing is dereferenced.
const float* fake(std::uintptr_t at) { return reinterpret_cast<const float*>(at); }

TEST(stencil_addresses, every_1d_point_a_tile_loads_is_selected_from_its_own_array) {
  const float* left = fake(0x1000'0000);
  const float* center = fake(0x2000'0000);
  const float* right = fake(0x9000'0000);
  for (const std::int64_t n : {1, 2, 3, 5, 2047, 2048, 2049, 2050, 2052, 2053, 4097, 6145}) {
    for (const std::int64_t side : {4, 5, 9}) {
      const float* left4 = left + side - radius;
      for (std::int64_t base = 0; base < n; base += 2048) {
        const line_1d line = line_of(left4, center, right, n, base, 2048);
        SCOPED_TRACE("n=" + std::to_string(n) + " side=" + std::to_string(side) + " base=" + std::to_string(base));
        EXPECT_EQ(line.end, static_cast<int>(std::min<std::int64_t>(n - base + radius, 2048 + radius)));
        for (int l = -radius; l < line.end; ++l) {
          const std::int64_t g = base + l;
          const float* want = g < 0 ? left + side + g : (g < n ? center + g : right + (g - n));
          ASSERT_EQ(line(l), want) << "local point " << l;
        }
      }
    }
  }
}

TEST(stencil_addresses, every_3d_row_a_tile_loads_is_selected_from_its_own_array) {
  const float* left = fake(0x1000'0000);
  const float* center = fake(0x4000'0000);
  const float* right = fake(0x9000'0000);
  for (const auto& [nx, ny, nz, side] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>>{
           {1, 1, 1, 4}, {3, 5, 2, 5}, {64, 68, 3, 4}, {130, 70, 4, 7}, {512, 512, 3, 4}}) {
    for (std::int64_t z = 0; z < nz; ++z) {
      for (std::int64_t x0 = 0; x0 < nx; x0 += 64) {
        const rows_3d rows = rows_of(left, center, right, nx, ny, side, z, x0);
        for (int y = -radius; y < ny + radius; ++y) {
          const float* want =
              y < 0 ? left + ((z * side + side + y) * nx + x0)
                    : (y < ny ? center + ((z * ny + y) * nx + x0) : right + ((z * side + y - ny) * nx + x0));
          ASSERT_EQ(rows(y), want) << nx << "x" << ny << "x" << nz << " side " << side << " z " << z << " x0 " << x0
                                   << " y " << y;
        }
      }
    }
  }
}

// ---- the tolerance --------------------------------------------------------------------------------

TEST(stencil_tolerance, derived_from_the_coefficients_and_f32_rounding) {
  EXPECT_DOUBLE_EQ(coefficient_abs_sum(), 25.0 / 24.0);
  const tolerance t = check_tolerance();
  // (gamma_8 (1 + u) + u + 2^-50) x 2 x 2 x 25/24, about 9 u x 4.17.
  EXPECT_NEAR(t.tol, 9 * 0x1p-24 * 4 * 25.0 / 24.0, 1e-9);
  EXPECT_LT(t.tol, 2.3e-6);
  EXPECT_EQ(t.eps, 0x1p-24);
}

// The kernels' arithmetic emulated in f32 on the host (the same order and FMAs) over random inputs
// stays within the tolerance; a derivative that drops its outermost term does not.
TEST(stencil_tolerance, holds_for_the_f32_evaluation_and_catches_a_missing_term) {
  const tolerance t = check_tolerance();
  const float c[4] = {static_cast<float>(coefficients[0]), static_cast<float>(coefficients[1]),
                      static_cast<float>(coefficients[2]), static_cast<float>(coefficients[3])};
  std::mt19937_64 rng(42);
  double worst = 0;
  int missing_caught = 0;
  constexpr int trials = 200000;
  for (int trial = 0; trial < trials; ++trial) {
    float f[9];
    for (auto& x : f) x = input_value(rng(), 0);
    double ref = 0;
    for (int k = 1; k <= 4; ++k) ref += coefficients[k - 1] * (double{f[4 + k]} - double{f[4 - k]});
    float d = c[0] * (f[5] - f[3]);
    d = std::fma(c[1], f[6] - f[2], d);
    d = std::fma(c[2], f[7] - f[1], d);
    const float without_c4 = d;
    d = std::fma(c[3], f[8] - f[0], d);
    worst = std::max(worst, std::fabs(double{d} - ref) - std::fabs(ref) * t.eps);
    missing_caught += std::fabs(double{without_c4} - ref) > t.tol + std::fabs(ref) * t.eps;
  }
  EXPECT_LE(worst, t.tol);
  EXPECT_GT(missing_caught, trials * 9 / 10);
}

TEST(stencil_inputs, are_finite_never_zero_and_within_the_bound) {
  bool negative = false, positive = false;
  for (std::uint64_t k = 0; k < 100000; ++k) {
    const float f = input_value(7, k);
    ASSERT_TRUE(std::isfinite(f));
    ASSERT_GE(std::fabs(f), 1.0f) << k;
    ASSERT_LT(std::fabs(f), input_bound) << k;
    negative = negative || f < 0;
    positive = positive || f > 0;
  }
  EXPECT_TRUE(negative && positive);
  EXPECT_NE(input_value(1, 5), input_value(2, 5));
}

}  // namespace
}  // namespace memlab::labs::stencil
