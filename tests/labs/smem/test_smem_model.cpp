// Host-only checks of the smem lab: the closed-form wavefront counts against the lane-by-lane bank
// simulator (harness/bank_model.hpp), request by request for every variant, stride and number of
// active lanes, and launch by launch against a brute-force replay of every request the kernels make;
// the regions; the refusals, the plans and the CPU reference.
#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/bank_model.hpp"
#include "lab_helpers.hpp"
#include "labs/smem/smem.hpp"

namespace memlab::labs::smem {
namespace {

// Every rung of the table: the model reads its traits.
const std::vector<variant>& all_variants() { return table().variants; }
const smem_rung& traits(const variant& v) { return v.traits_as<smem_rung>(); }
const smem_rung& rung(std::string_view name) { return traits(test::variant_of(table(), name)); }

std::vector<std::uint64_t> strides_of(const variant& v) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = 1; s <= max_stride; ++s)
    if (!stride_rule(v, s)) out.push_back(s);
  return out;
}

// The request lanes 0 .. active-1 make at request k (for the copies: warp `warp` of the CTA).
warp_addresses request(const smem_rung& r, std::uint64_t stride, int active, int k, int warp = 0) {
  warp_addresses a;
  for (int l = 0; l < active; ++l) a[static_cast<std::size_t>(l)] = address_of(r, stride, 32 * warp + l, k);
  return a;
}

TEST(smem_model, every_request_matches_the_bank_simulator) {
  for (const auto& v : all_variants()) {
    const smem_rung& r = traits(v);
    const bool copy = !is_bank_bound(r);
    for (auto s : strides_of(v)) {
      for (int active = 1; active <= 32; ++active) {
        for (int k : {0, 1, 5, 17, 31, 32, 1000, 1023}) {
          for (int warp : copy ? std::vector<int>{0, 3, 7} : std::vector<int>{0}) {
            if (copy && k != 0) continue;
            const bank_request sim = shared_request(request(r, s, active, k, warp), r.access_bytes);
            ASSERT_EQ(request_wavefronts(r, s, active), sim.wavefronts)
                << "variant " << v.name << " stride " << s << " active " << active << " k " << k << " warp " << warp;
          }
        }
      }
    }
  }
}

TEST(smem_model, the_lessons_in_numbers) {
  const smem_rung &load_stride = rung("load_stride"), &store_stride = rung("store_stride");
  const smem_rung &load_vec8 = rung("load_vec8"), &load_vec16 = rung("load_vec16");
  for (std::uint64_t s = 1; s <= 32; ++s) {
    const int g = static_cast<int>(std::gcd(s, std::uint64_t{32}));
    EXPECT_EQ(request_wavefronts(load_stride, s, 32), g) << s;
    EXPECT_EQ(request_wavefronts(store_stride, s, 32), g) << s;
  }
  EXPECT_EQ(request_wavefronts(rung("smem_padded"), 32, 32), 1);
  EXPECT_EQ(request_wavefronts(rung("smem_swizzled"), 32, 32), 1);
  EXPECT_EQ(request_wavefronts(load_vec8, 1, 32), 2);     // the minimum: 256 bytes
  EXPECT_EQ(request_wavefronts(load_vec16, 1, 32), 4);    // 512 bytes
  EXPECT_EQ(request_wavefronts(load_vec16, 32, 32), 32);  // one quad of banks per quarter
  EXPECT_EQ(request_wavefronts(load_vec8, 2, 32), 4);
  EXPECT_EQ(request_wavefronts(load_stride, 32, 5), 5);  // a partial warp: 5 lanes, one bank
  EXPECT_EQ(request_wavefronts(load_stride, 3, 0), 0);
}

TEST(smem_model, every_access_stays_inside_its_region) {
  for (const auto& v : all_variants()) {
    const smem_rung& r = traits(v);
    for (auto s : strides_of(v)) {
      const std::uint64_t region = region_bytes(r, s);
      const std::uint64_t w = static_cast<std::uint64_t>(r.access_bytes);
      const int threads = is_bank_bound(r) ? 32 : threads_per_cta;
      const int ks = is_bank_bound(r) ? columns : 1;
      std::set<std::uint32_t> words;
      for (int l = 0; l < threads; ++l) {
        for (int k = 0; k < ks; ++k) {
          const std::uint32_t a = address_of(r, s, l, k);
          ASSERT_EQ(a % w, 0u);
          // store_stride: the warp's own region is an eighth of the CTA's; a copy: its first array.
          const std::uint64_t limit = is_bank_bound(r) && !r.load ? region / warps_per_cta
                                      : !is_bank_bound(r)         ? region / static_cast<std::uint64_t>(r.copy_arrays)
                                                                  : region;
          ASSERT_LE(a + w, limit) << v.name << " stride " << s << " lane " << l << " k " << k;
          if (k == 0) words.insert(a);
        }
      }
      // No two lanes share an element: stores never race, loads never broadcast.
      EXPECT_EQ(words.size(), static_cast<std::size_t>(threads)) << v.name << " stride " << s;
      if (r.load) {
        EXPECT_EQ(fill_words(r, s) * 4, region) << "the load rungs fill their whole region";
      }
    }
  }
}

// Every request one launch makes, replayed through the simulator: the fill (loads, once per CTA:
// thread i of the CTA stores words i, i + 256, ...), each task's 1024 requests, store_stride's
// read-back, the copies' one or two stores and loads per warp.
launch_counts brute_force(const smem_rung& v, std::uint64_t s, std::uint64_t n, std::uint64_t grid) {
  launch_counts c;
  const auto add = [](std::uint64_t& requests, std::uint64_t& wavefronts, const warp_addresses& a, int width) {
    const bank_request r = shared_request(a, width);
    if (r.ideal == 0) return;  // no lane active: no request
    ++requests;
    wavefronts += static_cast<std::uint64_t>(r.wavefronts);
  };
  const auto active_of = [&](std::uint64_t task) {
    return static_cast<int>(std::min<std::uint64_t>(32, n - 32 * task));
  };
  const std::uint64_t tasks = (n + 31) / 32;
  const int w = v.access_bytes;
  if (v.load) {
    const std::uint64_t f = fill_words(v, s);
    for (std::uint64_t cta = 0; cta < grid; ++cta) {
      for (std::uint64_t base = 0; base < f; base += threads_per_cta) {
        for (int warp = 0; warp < warps_per_cta; ++warp) {
          warp_addresses a;
          for (int l = 0; l < 32; ++l) {
            const std::uint64_t word = base + static_cast<std::uint64_t>(32 * warp + l);
            if (word < f) a[static_cast<std::size_t>(l)] = static_cast<std::uint32_t>(4 * word);
          }
          add(c.st_requests, c.st_wavefronts, a, 4);
          for (int l = 0; l < 32; ++l) c.bytes += a[static_cast<std::size_t>(l)] ? 4 : 0;
        }
      }
    }
  }
  for (std::uint64_t task = 0; task < tasks; ++task) {
    const int active = active_of(task);
    if (is_bank_bound(v)) {
      for (int k = 0; k < accesses_per_thread; ++k) {
        const warp_addresses a = request(v, s, active, k);
        if (v.load) {
          add(c.ld_requests, c.ld_wavefronts, a, w);
        } else {
          add(c.st_requests, c.st_wavefronts, a, w);
        }
        c.bytes += static_cast<std::uint64_t>(active * w);
      }
      if (!v.load) {  // store_stride: the read-back
        add(c.ld_requests, c.ld_wavefronts, request(v, s, active, 0), 4);
        c.bytes += static_cast<std::uint64_t>(active * 4);
      }
    } else {
      const int copies = v.copy_arrays;
      const warp_addresses a = request(v, s, active, 0, static_cast<int>(task % warps_per_cta));
      for (int i = 0; i < copies; ++i) {
        add(c.st_requests, c.st_wavefronts, a, 4);
        add(c.ld_requests, c.ld_wavefronts, a, 4);
        c.bytes += static_cast<std::uint64_t>(2 * active * 4);
      }
    }
  }
  return c;
}

TEST(smem_model, every_launch_matches_a_replay_of_its_requests) {
  for (const auto& v : all_variants()) {
    for (std::uint64_t s : {1u, 2u, 3u, 8u, 24u, 32u}) {
      if (stride_rule(v, s)) continue;
      for (std::uint64_t n : {0u, 1u, 17u, 31u, 32u, 33u, 257u, 1000u}) {
        for (std::uint64_t grid : {1u, 3u}) {
          const auto want = brute_force(traits(v), s, n, grid);
          const auto got = predict(traits(v), s, n, grid);
          SCOPED_TRACE("variant " + std::string(v.name) + " stride " + std::to_string(s) + " n " + std::to_string(n) +
                       " grid " + std::to_string(grid));
          EXPECT_EQ(got.ld_requests, want.ld_requests);
          EXPECT_EQ(got.ld_wavefronts, want.ld_wavefronts);
          EXPECT_EQ(got.st_requests, want.st_requests);
          EXPECT_EQ(got.st_wavefronts, want.st_wavefronts);
          EXPECT_EQ(got.bytes, want.bytes);
        }
      }
    }
  }
}

TEST(smem_model, hardware_bytes_over_bytes_is_the_conflict_degree) {
  // 2^20 lanes on 1056 CTAs (an H100 at 8 per SM): the fill is under 0.5% of the traffic.
  for (std::uint64_t s : {1u, 2u, 4u, 8u, 16u, 32u}) {
    const auto c = predict(rung("load_stride"), s, 1u << 20, 1056);
    const double degree = static_cast<double>(c.hardware_bytes()) / static_cast<double>(c.bytes);
    EXPECT_NEAR(degree, static_cast<double>(std::gcd(s, std::uint64_t{32})), 0.005 * static_cast<double>(s)) << s;
  }
}

TEST(smem_lab, refusals_name_their_reason) {
  const lab& l = table();
  const auto at = [&](std::uint64_t stride, dtype t = dtype::f32) {
    return l.make_case(t, 1024, {{"lane_stride", axis_value{{stride, 0, 0}, 1}}});
  };
  // The padded and swizzled patterns are the stride-32 tile: every other stride is refused, the
  // refusal names the rung, and the rung's needs say so.
  int tiles = 0;
  for (const auto& v : l.variants) {
    if (traits(v).pattern == address_pattern::strided) {
      EXPECT_FALSE(test::refusal(l, v.name, at(16))) << v.name;
      EXPECT_TRUE(v.needs.shape.empty()) << v.name;
      continue;
    }
    const auto why = test::refusal(l, v.name, at(16));
    ASSERT_TRUE(why) << v.name;
    EXPECT_NE(why->find("--lane-stride 32"), std::string::npos) << *why;
    EXPECT_EQ(why->rfind(std::string(v.name) + " is the stride-32 pattern", 0), 0u) << *why;
    EXPECT_FALSE(test::refusal(l, v.name, at(32))) << v.name;
    EXPECT_NE(v.needs.shape.find("--lane-stride 32"), std::string_view::npos) << v.name;
    ++tiles;
  }
  EXPECT_EQ(tiles, 2);  // smem_padded, smem_swizzled
  for (const auto& v : l.variants) {
    const auto why = test::refusal(l, v.name, at(1, dtype::f16));
    ASSERT_TRUE(why) << v.name;
    EXPECT_NE(why->find("f32"), std::string::npos) << *why;
  }
  device_info small;
  small.smem_per_block_optin = 16 * 1024;
  const auto why = test::refusal(l, "smem_to_smem", at(32), small);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("65536 B of shared memory"), std::string::npos) << *why;
  EXPECT_THROW((void)parse_axis(*l.find_axis("lane_stride"), "33"), std::invalid_argument);
  EXPECT_THROW((void)parse_axis(*l.find_axis("lane_stride"), "0"), std::invalid_argument);
}

TEST(smem_lab, ladder_and_plans) {
  const lab& l = table();
  std::set<std::string_view> names;
  std::set<const void*> symbols;
  for (const auto& v : l.variants) {
    EXPECT_TRUE(names.insert(v.name).second) << v.name << " twice";
    const smem_rung& r = traits(v);
    EXPECT_TRUE(r.access_bytes == 4 || r.access_bytes == 8 || r.access_bytes == 16) << v.name;
    EXPECT_TRUE(r.copy_arrays >= 0 && r.copy_arrays <= 2) << v.name;
    if (!is_bank_bound(r)) {
      EXPECT_FALSE(r.load) << v.name << ": a copy neither fills nor loads a region";
    }
    ASSERT_EQ(v.kernels.size(), 1u) << v.name;
    EXPECT_TRUE(symbols.insert(v.kernels[0].symbol).second) << v.name << ": a kernel of its own";
    EXPECT_NE(v.kernels[0].symbol, nullptr) << v.name;
    EXPECT_FALSE(v.peer);
  }
  EXPECT_EQ(l.roof, roof_kind::smem);
  // The bank-bound rungs: a persistent grid, never more CTAs than 8-task groups.
  EXPECT_EQ(grid_of_case(rung("load_stride"), 1u << 20, 1056), 1056u);
  EXPECT_EQ(grid_of_case(rung("load_stride"), 100, 1056), 1u);
  EXPECT_EQ(grid_of_case(rung("load_stride"), 0, 1056), 0u);
  EXPECT_EQ(grid_of_case(rung("global_strided_store"), 257, 1056), 2u);
  // The plan carries the model: hardware bytes / 128 = the predicted wavefronts.
  device_info h100;
  h100.sm_count = 132;
  h100.max_threads_per_sm = 2048;
  const auto p = l.make_case(dtype::f32, 1u << 20, {{"lane_stride", axis_value{{8, 0, 0}, 1}}});
  const case_plan plan = test::plan_of(l, "store_stride", p, h100);
  const auto c = predict(rung("store_stride"), 8, 1u << 20, plan.policy.grid);
  EXPECT_EQ(plan.hardware_bytes, c.wavefronts() * 128);
  EXPECT_EQ(plan.bytes, c.bytes);
  EXPECT_EQ(plan.policy.items_per_thread, accesses_per_thread);
}

TEST(smem_lab, cpu_reference_sums_what_each_lane_reads) {
  // Word i of the region = i: lane 0 of load_stride at stride 1 reads columns 0..31, 32 times.
  const auto word = [](std::uint32_t i) { return i; };
  EXPECT_EQ(load_sum(rung("load_stride"), 1, 0, word), 32u * (31u * 32u / 2u));
  // Lane 3 at stride 2 reads words 6 .. 37.
  EXPECT_EQ(load_sum(rung("load_stride"), 2, 3, word), 32u * (6u + 37u) * 32u / 2u);
  // load_vec16 lane 0 at stride 1: elements 0..31 = words 0..127.
  EXPECT_EQ(load_sum(rung("load_vec16"), 1, 0, word), 32u * (127u * 128u / 2u));
  EXPECT_EQ(stored_value(5), 5u + 1023u);
}

}  // namespace
}  // namespace memlab::labs::smem
