// Host-only checks of the layout lab: the sector counts behind hardware_bytes and the per-request
// figures against a brute-force replay of every thread's accesses, launch planning, refusals.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <vector>

#include "harness/fill.hpp"
#include "lab_helpers.hpp"
#include "labs/layout/layout.hpp"

namespace memlab::labs::layout {
namespace {

case_params layout_case(dtype t, std::uint64_t n, std::uint64_t field) {
  return table().make_case(t, n, {{"field", axis_value{{field, 0, 0}, 1}}});
}

// Every thread's accesses as the kernels issue them, grouped into warp requests (warp, instruction)
// and into warps; distinct sectors counted in each.
layout_sectors brute_force(const layout_rung& r, std::uint64_t es, std::uint64_t n, std::uint64_t f) {
  using key = std::tuple<std::uint64_t, int, std::uint64_t>;  // warp, instruction, iteration
  std::map<key, std::set<std::uint64_t>> ld, st;
  std::map<std::uint64_t, std::set<std::uint64_t>> ld_warp, st_warp;
  const auto touch = [&](auto& req, auto& warp, key k, std::uint64_t byte, std::uint64_t len) {
    for (std::uint64_t b = byte; b < byte + len; ++b) {
      req[k].insert(b / sector_bytes);
      warp[std::get<0>(k)].insert(b / sector_bytes);
    }
  };
  const launch_policy p = plan(r, es, n);
  const std::uint64_t threads = p.grid * static_cast<std::uint64_t>(p.threads);
  for (std::uint64_t g = 0; g < threads; ++g) {
    const std::uint64_t warp = g / 32, cta = g / threads_per_cta, t = g % threads_per_cta;
    if (r.whole_structures) {
      const std::uint64_t per = vec_points(es), main = n / per;
      if (g < main) {
        for (int i = 0; i < 3; ++i) touch(ld, ld_warp, {warp, i, 0}, 48 * g + 16 * static_cast<std::uint64_t>(i), 16);
        touch(st, st_warp, {warp, 0, 0}, 16 * g, 16);
      } else if (g == main) {
        for (std::uint64_t e = main * per; e < n; ++e) {
          touch(ld, ld_warp, {warp, 9, e}, (3 * e + f) * es, es);
          touch(st, st_warp, {warp, 9, e}, e * es, es);
        }
      }
      continue;
    }
    const auto items = static_cast<std::uint64_t>(p.items_per_thread);
    for (std::uint64_t u = 0; u < items; ++u) {
      const std::uint64_t e = cta * threads_per_cta * items + u * threads_per_cta + t;
      if (e >= n) continue;
      const std::uint64_t src = r.layout == point_layout::aos ? 3 * e + f : f * n + e;
      touch(ld, ld_warp, {warp, static_cast<int>(u), 0}, src * es, es);
      touch(st, st_warp, {warp, static_cast<int>(u), 0}, e * es, es);
    }
  }
  layout_sectors c;
  for (const auto& [k, s] : ld) c.ld_per_request += s.size(), ++c.ld_requests;
  for (const auto& [k, s] : st) c.st_per_request += s.size(), ++c.st_requests;
  for (const auto& [k, s] : ld_warp) c.ld_per_warp += s.size();
  for (const auto& [k, s] : st_warp) c.st_per_warp += s.size();
  return c;
}

// A rung of the table by name, as its traits.
const layout_rung& rung(std::string_view name) { return test::variant_of(table(), name).traits_as<layout_rung>(); }

TEST(layout_sectors, model_matches_brute_force) {
  for (const auto& v : table().variants) {
    const auto& r = v.traits_as<layout_rung>();
    for (std::uint64_t es : {2u, 4u, 8u}) {
      for (std::uint64_t n : {0u, 1u, 2u, 7u, 15u, 16u, 17u, 31u, 32u, 33u, 127u, 128u, 129u, 1000u, 4095u, 4097u}) {
        for (std::uint64_t f = 0; f < 3; ++f) {
          EXPECT_EQ(sectors_touched(r, es, n, f), brute_force(r, es, n, f))
              << v.name << " es=" << es << " n=" << n << " field=" << f;
        }
      }
    }
  }
}

// The figures docs/labs/layout.md quotes, for n = 2^20 f32 points.
TEST(layout_sectors, aos_moves_twice_the_bytes_of_soa) {
  const std::uint64_t n = 1u << 20, warps = n / 32;
  const layout_rung &aos_rung = rung("aos"), &soa_rung = rung("soa"), &aos_vec_rung = rung("aos_vec");
  for (std::uint64_t es : {2u, 4u, 8u}) {
    for (std::uint64_t f = 0; f < 3; ++f) {
      const auto aos = sectors_touched(aos_rung, es, n, f), soa = sectors_touched(soa_rung, es, n, f);
      const auto vec = sectors_touched(aos_vec_rung, es, n, f);
      EXPECT_EQ(aos.ld_per_warp, warps * 3 * es) << es;  // 32 x 3 elements: 3 es sectors
      EXPECT_EQ(soa.ld_per_warp, warps * es);
      EXPECT_EQ(aos.st_per_warp, soa.st_per_warp);
      EXPECT_EQ(aos.ld_per_warp + aos.st_per_warp, 2 * (soa.ld_per_warp + soa.st_per_warp));
      // Whole structures: the same sectors per warp as aos (the whole array) ...
      EXPECT_EQ(vec.ld_per_warp, aos.ld_per_warp);
      EXPECT_EQ(vec.st_per_warp, aos.st_per_warp);
      // ... in 32-sector requests, each sector half used: twice the sectors per request.
      EXPECT_EQ(vec.ld_per_request, 2 * vec.ld_per_warp);
      EXPECT_EQ(vec.ld_per_request / vec.ld_requests, 32u);
    }
  }
  const auto aos = sectors_touched(aos_rung, 4, n, 0);
  EXPECT_EQ(aos.ld_per_request / aos.ld_requests, 12u);
  EXPECT_EQ(aos.st_per_request / aos.st_requests, 4u);
}

TEST(layout_plan, bytes_grid_and_refusals) {
  const lab& l = table();
  EXPECT_EQ(test::find_lab("layout"), &l);
  std::set<std::string_view> names;
  for (const auto& v : l.variants) {
    EXPECT_TRUE(names.insert(v.name).second) << v.name << " twice";
    EXPECT_FALSE(v.teaches.empty()) << v.name;
    EXPECT_EQ(v.kernels.size(), 3u) << v.name << ": f16, f32, f64";
    const auto& r = v.traits_as<layout_rung>();
    // Whole structures exist only in the array of structures.
    if (r.whole_structures) {
      EXPECT_EQ(r.layout, point_layout::aos) << v.name;
    }
  }
  const device_info dev;
  const auto p = layout_case(dtype::f32, 1000003, 2);
  for (const auto& v : l.variants) {
    ASSERT_FALSE(l.why_not(v, p, dev));
    const case_plan c = l.plan(v, p, dev);
    EXPECT_EQ(c.bytes, 2u * 1000003 * 4) << v.name;
    EXPECT_EQ(c.device_bytes(), 4u * 1000003 * 4 + guard_bytes) << v.name;
    EXPECT_EQ(c.model.size(), 2u) << v.name;
    EXPECT_GE(c.policy.grid * static_cast<std::uint64_t>(c.policy.threads * c.policy.items_per_thread) *
                  (v.traits_as<layout_rung>().whole_structures ? 4u : 1u),
              1000003u)
        << v.name;
  }
  // 2x when the SoA's field arrays start on a sector (n a multiple of 8 f32); at n = 1000003 field 2
  // starts 24 bytes into a sector and every warp of soa touches one sector more.
  const auto q = layout_case(dtype::f32, 1u << 20, 2);
  EXPECT_EQ(test::plan_of(l, "aos", q, dev).hardware_bytes, 2 * test::plan_of(l, "soa", q, dev).hardware_bytes);
  EXPECT_EQ(test::plan_of(l, "soa", p, dev).hardware_bytes, (1000003u / 32 * 5 + 2 + 1000003u / 32 * 4 + 1) * 32);
  EXPECT_EQ(plan(rung("aos_vec"), 4, 0).grid, 0u);
  EXPECT_EQ(plan(rung("aos"), 4, 0).grid, 0u);
  EXPECT_EQ(plan(rung("aos_vec"), 4, 3).grid, 1u);  // no whole group: the tail's thread alone
  const auto big = test::refusal(l, "aos", layout_case(dtype::f64, std::uint64_t{1} << 60, 0), dev);
  ASSERT_TRUE(big);
  EXPECT_NE(big->find("2^62"), std::string::npos) << *big;
  EXPECT_THROW((void)parse_axis(*l.find_axis("field"), "3"), std::invalid_argument) << "field 3 is outside 0..2";
}

}  // namespace
}  // namespace memlab::labs::layout
