// Host-only checks of the stride lab: the sector counts behind hardware_bytes() against a
// brute-force replay of every thread's accesses, launch planning, and the refusals.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "harness/fill.hpp"
#include "lab_helpers.hpp"
#include "labs/stride/stride.hpp"

namespace memlab::labs::stride {
namespace {

// A stride case: n elements of `type`, neighbouring threads `stride` elements apart, the source
// `so` bytes off.
case_params stride_case(dtype type, std::uint64_t n, std::uint64_t stride, std::uint64_t so) {
  return table().make_case(type, n,
                           {{"stride", axis_value{{stride, 0, 0}, 1}}, {"src_offset", axis_value{{so, 0, 0}, 1}}});
}

// Brute force: every byte each warp access touches, as the kernels issue them, into a set of
// sectors per warp access; summed.
sector_count brute_force(const stride_rung& rung, std::uint64_t es, std::uint64_t n, std::uint64_t stride,
                         std::uint64_t so) {
  sector_count c;
  auto add = [](std::set<std::uint64_t>& s, std::uint64_t lo, std::uint64_t len) {
    for (std::uint64_t b = lo; b < lo + len; ++b) s.insert(b / sector_bytes);
  };
  if (rung.vector_bytes != 16) {
    const auto st = strides_of(rung, stride);
    for (std::uint64_t g = 0; g < n; g += warp_size) {
      std::set<std::uint64_t> r, w;
      for (std::uint64_t e = g; e < std::min(n, g + warp_size); ++e) {
        add(r, so + e * st.src * es, es);
        add(w, e * st.dst * es, es);
      }
      c.read += r.size();
      c.write += w.size();
    }
    return c;
  }
  if (n == 0) return c;
  const std::uint64_t bytes = n * es, m = so % 16, main = vec16_main_vectors(bytes, m);
  for (std::uint64_t w0 = 0; w0 <= main; w0 += warp_size) {
    std::set<std::uint64_t> r, w;
    for (std::uint64_t j = w0; j < w0 + warp_size; ++j) {
      const std::uint64_t lane = j % warp_size;
      if (m == 0) {
        if (j < main) add(r, so + 16 * j, 16);
      } else {
        if (j < main || (j == main && lane != 0)) add(r, so - m + 16 * j, 16);
        if (lane == 31 && j < main) add(r, so - m + 16 * (j + 1), 16);
      }
      if (j < main) add(w, 16 * j, 16);
      if (j == main) {
        for (std::uint64_t i = main * 16 / es; i < n; ++i) {
          add(r, so + i * es, es);
          add(w, i * es, es);
        }
      }
    }
    c.read += r.size();
    c.write += w.size();
  }
  return c;
}

TEST(stride_sectors, closed_form_matches_brute_force) {
  for (const auto& v : table().variants) {
    const auto& r = v.traits_as<stride_rung>();
    for (std::uint64_t es : {1u, 2u, 4u, 8u}) {
      for (std::uint64_t n : {0u, 1u, 2u, 7u, 15u, 16u, 17u, 31u, 32u, 33u, 127u, 128u, 129u, 1000u, 4097u}) {
        for (std::uint64_t stride : {1u, 2u, 3u, 5u, 8u, 16u, 33u}) {
          if (r.vector_bytes != 0 && stride != 1) continue;
          for (std::uint64_t k = 0; k < 32; ++k) {
            const std::uint64_t so = k * es;
            const auto want = brute_force(r, es, n, stride, so);
            const auto got = sectors_touched(r, es, n, stride, so);
            ASSERT_EQ(got.read, want.read)
                << v.name << " es=" << es << " n=" << n << " stride=" << stride << " off=" << so;
            ASSERT_EQ(got.write, want.write)
                << v.name << " es=" << es << " n=" << n << " stride=" << stride << " off=" << so;
          }
        }
      }
    }
  }
}

// A rung of the table by name, as its traits.
const stride_rung& rung(std::string_view name) { return test::variant_of(table(), name).traits_as<stride_rung>(); }

// The numbers the lab page quotes, for n = 2^20 f32 from an aligned source.
TEST(stride_sectors, a_warp_of_f32_reads_min_stride_times_4_sectors_of_32) {
  const std::uint64_t n = 1u << 20, warps = n / 32;
  const stride_rung& strided = rung("strided");
  const stride_rung& vec16 = rung("vec16");
  for (std::uint64_t s : {1u, 2u, 4u, 8u, 16u, 32u}) {
    const auto c = sectors_touched(strided, 4, n, s, 0);
    EXPECT_EQ(c.read, warps * std::min<std::uint64_t>(4 * s, 32)) << s;
    EXPECT_EQ(c.write, warps * 4) << s;
  }
  // Stride 32: 32 sectors (1 KiB) for 128 useful bytes, 8x; u8 at stride 32: 32x.
  EXPECT_EQ(sectors_touched(strided, 1, n, 32, 0).read * sector_bytes, 32 * n);
  // A misaligned start costs one sector per warp: 5 instead of 4 for f32 elements...
  EXPECT_EQ(sectors_touched(strided, 4, n, 1, 4).read, warps * 5);
  // ... and 17 instead of 16 for vec16 whenever the source is not 32-byte (sector) aligned: 33
  // aligned vectors per 32 outputs, or 32 vectors that start mid-sector (offset 16).
  EXPECT_EQ(sectors_touched(vec16, 4, n, 1, 0).read, warps / 4 * 16);
  for (std::uint64_t so : {4u, 8u, 12u, 16u, 20u, 32u}) {
    const auto c = sectors_touched(vec16, 4, n, 1, so);
    EXPECT_NEAR(static_cast<double>(c.read), static_cast<double>(warps / 4 * (so % 32 == 0 ? 16 : 17)), 4.0) << so;
    EXPECT_EQ(c.write, warps / 4 * 16) << so;  // the stores stay aligned: 16 per warp
  }
}

TEST(stride_plan, grids_cover_every_element) {
  const stride_rung& strided = rung("strided");
  const stride_rung& vec16 = rung("vec16");
  for (std::uint64_t n : {1ull, 15ull, 4097ull, (1ull << 26) + 3}) {
    for (std::size_t es : {1u, 2u, 4u, 8u}) {
      const auto p = plan(strided, es, n, 0);
      EXPECT_EQ(p.items_per_thread * static_cast<int>(es), bytes_per_thread);
      EXPECT_EQ(p.vec_bytes, static_cast<int>(es));
      EXPECT_GE(p.grid * static_cast<std::uint64_t>(p.threads * p.items_per_thread), n);
      for (std::uint64_t so = 0; so < 16; so += es) {
        const auto q = plan(vec16, es, n, so);
        const std::uint64_t main = vec16_main_vectors(n * es, so % 16);
        EXPECT_EQ(q.vec_bytes, 16);
        EXPECT_GT(q.grid * static_cast<std::uint64_t>(q.threads), main);  // thread `main` exists
      }
    }
  }
  EXPECT_EQ(plan(strided, 4, 0, 0).grid, 0u);
  EXPECT_EQ(plan(vec16, 4, 0, 4).grid, 0u);
}

TEST(stride_plan, vec16_main_vectors_never_read_past_the_source) {
  for (std::uint64_t bytes = 0; bytes < 200; ++bytes) {
    for (std::uint64_t m = 0; m < 16; ++m) {
      const std::uint64_t main = vec16_main_vectors(bytes, m);
      EXPECT_LE(main * 16, bytes);  // outputs inside the destination
      if (m > 0 && main > 0) {
        EXPECT_LE(16 * (main + 1) - m, bytes);  // aligned vector `main` inside the source
      }
    }
  }
}

TEST(stride_lab_registry, variants_axes_and_refusals) {
  const lab& l = table();
  EXPECT_EQ(test::find_lab("stride"), &l);
  std::set<std::string_view> names;
  for (const auto& v : l.variants) {
    EXPECT_TRUE(names.insert(v.name).second) << v.name << " twice";
    EXPECT_FALSE(v.teaches.empty()) << v.name;
    EXPECT_FALSE(v.peer) << v.name;
    EXPECT_FALSE(v.kernels.empty()) << v.name;
    for (const auto& k : v.kernels) EXPECT_NE(k.symbol, nullptr) << v.name;
    const auto& r = v.traits_as<stride_rung>();  // every rung describes itself
    EXPECT_TRUE(r.vector_bytes == 0 || r.vector_bytes == 16) << v.name;
    // A vector rung is dense on both sides and says so in its needs.
    if (r.vector_bytes != 0) {
      EXPECT_FALSE(r.strided_src || r.strided_dst) << v.name;
      EXPECT_FALSE(v.needs.shape.empty()) << v.name;
    }
  }
  const device_info dev;
  EXPECT_FALSE(test::refusal(l, "strided", stride_case(dtype::f32, 100, 32, 8), dev));
  EXPECT_FALSE(test::refusal(l, "vec16", stride_case(dtype::f32, 100, 1, 4), dev));
  const auto odd = test::refusal(l, "vec16", stride_case(dtype::f32, 100, 1, 2), dev);  // 2 bytes into an f32
  ASSERT_TRUE(odd);
  EXPECT_NE(odd->find("multiple of the 4-byte"), std::string::npos) << *odd;
  const auto strided16 = test::refusal(l, "vec16", stride_case(dtype::f32, 100, 2, 0), dev);
  ASSERT_TRUE(strided16);
  EXPECT_NE(strided16->find("stride 1"), std::string::npos) << *strided16;
  EXPECT_TRUE(test::refusal(l, "strided", stride_case(dtype::f32, 100, 0, 0), dev));
  EXPECT_TRUE(
      test::refusal(l, "strided", stride_case(dtype::f32, std::uint64_t{1} << 40, std::uint64_t{1} << 30, 0), dev));
  // An unknown variant has nothing to run: the lab does not know it, and asking for it is an error.
  EXPECT_EQ(l.find_variant("nope"), nullptr);
  EXPECT_THROW((void)test::refusal(l, "nope", stride_case(dtype::f32, 100, 1, 0), dev), std::invalid_argument);
  // Useful bytes are 2 x n x elem whatever the stride; the footprint grows with it: each variant
  // allocates the span of its own scattered side(s), + the output's guard.
  const std::uint64_t n = 1000, es = 4, dense = n * es, span = extent(n, 32) * es;
  int scattered = 0;
  for (const auto& v : l.variants) {
    const auto& r = v.traits_as<stride_rung>();
    if (r.vector_bytes != 0) continue;
    const std::uint64_t allocated = (r.strided_src ? span : dense) + (r.strided_dst ? span : dense);
    const auto p = stride_case(dtype::f32, n, 32, 0);
    ASSERT_FALSE(l.why_not(v, p, dev)) << v.name;
    const case_plan planned = l.plan(v, p, dev);
    EXPECT_EQ(planned.bytes, 2 * n * es) << v.name;
    EXPECT_GT(planned.device_bytes(), 32 * 4 * 999u) << v.name;
    EXPECT_EQ(planned.device_bytes(), allocated + guard_bytes) << v.name;
    ++scattered;
  }
  EXPECT_EQ(scattered, 3);  // strided, strided_write, strided_rw
  // vec16 is dense: its footprint is the payload on both sides.
  const auto dense_case = stride_case(dtype::f32, n, 1, 0);
  EXPECT_EQ(test::plan_of(l, "vec16", dense_case, dev).device_bytes(), 2 * dense + guard_bytes);
  // Its refusal names the rung, from the table.
  EXPECT_EQ(strided16->rfind("vec16 copies a dense source", 0), 0u) << *strided16;
}

}  // namespace
}  // namespace memlab::labs::stride
