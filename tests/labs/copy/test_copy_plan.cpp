// Host-only checks of the copy lab: launch planning, the registry, and run planning (usage errors
// come before any GPU is touched).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "harness/plan.hpp"
#include "harness/registry.hpp"
#include "lab_helpers.hpp"
#include "labs/copy/copy.hpp"

namespace memlab::labs::copy {
namespace {

// A copy case: n elements of `type`, the source `so` and the destination `doff` bytes off.
case_params copy_case(dtype type, std::uint64_t n, std::uint64_t so, std::uint64_t doff) {
  return table().make_case(type, n,
                           {{"src_offset", axis_value{{so, 0, 0}, 1}}, {"dst_offset", axis_value{{doff, 0, 0}, 1}}});
}

const rung_traits& traits(std::string_view rung) { return test::traits_of<rung_traits>(table(), rung); }

// The value of the number axis `name` in a planned case.
std::uint64_t value(const case_params& p, std::string_view name) {
  for (const auto& [axis_name, v] : p.axes)
    if (axis_name == name) return v[0];
  throw std::logic_error("the case has no axis " + std::string(name));
}

TEST(copy_plan, scalar_and_vector_grids_cover_every_element_and_the_tail) {
  for (std::uint64_t n : {1ull, 15ull, 16ull, 17ull, 4097ull, (1ull << 31)}) {
    for (std::size_t es : {1u, 2u, 4u, 8u}) {
      const auto s = plan(traits("scalar"), es, n, 132);
      EXPECT_GE(s.grid * static_cast<std::uint64_t>(s.threads), n);
      EXPECT_LT((s.grid - 1) * static_cast<std::uint64_t>(s.threads), n);
      for (std::string_view v : {"vec8", "vec16", "vec32"}) {
        const auto p = plan(traits(v), es, n, 132);
        const auto vb = static_cast<std::uint64_t>(p.vec_bytes);
        const std::uint64_t threads_needed = (n * es) / vb + ((n * es) % vb != 0 ? 1 : 0);
        EXPECT_GE(p.grid * static_cast<std::uint64_t>(p.threads), threads_needed) << "n=" << n << " es=" << es;
      }
    }
  }
}

TEST(copy_plan, vec16_unroll_grid_is_sized_by_bytes_in_flight_not_by_n) {
  const auto big = plan(traits("vec16_unroll"), 2, 1ull << 31, 132);
  const std::uint64_t per_cta =
      static_cast<std::uint64_t>(big.threads) * static_cast<std::uint64_t>(big.items_per_thread) * 16;
  EXPECT_EQ(big.grid, 132u * (bytes_in_flight_per_sm / per_cta));
  EXPECT_EQ(big.vec_bytes, 16);
  // Small copies do not pay for a full grid: one CTA per tile of work.
  EXPECT_EQ(plan(traits("vec16_unroll"), 4, 4096, 132).grid, 1u);        // 16 KiB: exactly one tile
  EXPECT_EQ(plan(traits("vec16_unroll"), 4, 1u << 20, 132).grid, 256u);  // 4 MiB: 256 tiles < 528 resident
  EXPECT_EQ(plan(traits("vec16_unroll"), 4, 3, 132).grid, 1u);           // only a tail
  EXPECT_EQ(plan(traits("vec16_unroll"), 4, 0, 132).grid, 0u);
}

TEST(copy_plan, peers_have_no_policy_of_ours) {
  for (const auto& v : table().variants) {
    if (v.peer) {
      EXPECT_EQ(to_string(plan(v.traits_as<rung_traits>(), 4, 1024, 132)), "-") << v.name;
    }
  }
}

TEST(copy_lab_registry, ladder_then_peers_with_their_kernels) {
  const lab& l = table();
  EXPECT_EQ(l.name, "copy");
  EXPECT_EQ(test::variant_names(l), (std::vector<std::string>{"scalar", "vec8", "vec16", "vec16_unroll", "vec32",
                                                              "auto", "memcpy", "cub", "thrust"}));
  for (const auto& v : l.variants) {
    EXPECT_FALSE(v.teaches.empty()) << v.name;
    EXPECT_EQ(l.find_variant(v.name), &v) << v.name;
    // Every kernel a variant names is one `memlab inspect` can find: by symbol, or (a library's) by type.
    for (const auto& k : v.kernels) EXPECT_TRUE(k.symbol != nullptr || k.instantiated_with != nullptr) << v.name;
    if (!v.peer) {
      // memlab's own rungs launch kernels of their own, named by symbol.
      EXPECT_FALSE(v.kernels.empty()) << v.name;
      for (const auto& k : v.kernels) EXPECT_NE(k.symbol, nullptr) << v.name;
    }
  }
  EXPECT_EQ(test::find_lab("copy"), &l);
  EXPECT_EQ(test::find_lab("nope"), nullptr);
}

TEST(copy_lab_registry, vector_variants_refuse_misaligned_pointers_and_say_why) {
  const lab& l = table();
  const device_info dev;
  EXPECT_FALSE(test::refusal(l, "vec16", copy_case(dtype::f16, 100, 0, 0), dev));
  EXPECT_FALSE(test::refusal(l, "scalar", copy_case(dtype::f16, 100, 2, 6), dev));
  const auto why = test::refusal(l, "vec16", copy_case(dtype::f16, 100, 2, 0), dev);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("16-byte aligned"), std::string::npos) << *why;
  EXPECT_TRUE(test::refusal(l, "vec8", copy_case(dtype::f32, 100, 0, 4), dev));
  // An offset that is not a whole element is refused by every variant.
  EXPECT_TRUE(test::refusal(l, "scalar", copy_case(dtype::f32, 100, 2, 0), dev));
  // The alignment each variant declares (what the GPU tests hold the refusals to).
  EXPECT_EQ(test::variant_of(l, "vec8").needs.alignment, 8);
  EXPECT_EQ(test::variant_of(l, "vec16").needs.alignment, 16);
  EXPECT_EQ(test::variant_of(l, "vec16_unroll").needs.alignment, 16);
  EXPECT_EQ(test::variant_of(l, "vec32").needs.alignment, 32);
  for (std::string_view any : {"scalar", "auto", "memcpy", "cub", "thrust"})
    EXPECT_EQ(test::variant_of(l, any).needs.alignment, 0) << any;
}

// vec32 runs only where the device has 32-byte global accesses (sm_100 and newer), and says why
// elsewhere; where it runs, it needs both pointers 32-byte aligned.
TEST(copy_lab_registry, vec32_needs_sm_100_and_32_byte_alignment) {
  const lab& l = table();
  device_info h100;
  h100.cc_major = 9;
  device_info b200;
  b200.cc_major = 10;
  const auto why = test::refusal(l, "vec32", copy_case(dtype::f32, 1000, 0, 0), h100);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("sm_100 or newer"), std::string::npos) << *why;
  EXPECT_NE(why->find("this device is sm_90"), std::string::npos) << *why;
  EXPECT_FALSE(test::refusal(l, "vec32", copy_case(dtype::f32, 1000, 0, 0), b200));
  EXPECT_FALSE(test::refusal(l, "vec32", copy_case(dtype::f32, 1000, 32, 64), b200));
  const auto off16 = test::refusal(l, "vec32", copy_case(dtype::f32, 1000, 16, 0), b200);
  ASSERT_TRUE(off16);
  EXPECT_NE(off16->find("32-byte aligned"), std::string::npos) << *off16;
  const auto p = plan(traits("vec32"), 2, 1000, 148);  // 2000 B: 62 vectors and a 16-byte tail
  EXPECT_EQ(p.vec_bytes, 32);
  EXPECT_EQ(p.grid, 1u);
  // memlab::copy (auto) plans its 32-byte body from the device's compute capability.
  EXPECT_EQ(test::plan_of(l, "auto", copy_case(dtype::f32, 1 << 20, 0, 0), b200).policy.vec_bytes, 32);
  EXPECT_EQ(test::plan_of(l, "auto", copy_case(dtype::f32, 1 << 20, 0, 0), h100).policy.vec_bytes, 16);
}

TEST(run_planning, expands_labs_variants_dtypes_and_sizes) {
  run_request r;
  r.labs = {"copy"};
  r.variants = {"vec16", "memcpy"};
  r.dtypes = {dtype::f16, dtype::f32};
  r.sizes = "2^10..2^12,64KiB";
  const auto cases = plan_cases(r, all_labs());
  ASSERT_EQ(cases.size(), 2u * 4u * 2u);  // dtypes x sizes x variants
  EXPECT_EQ(cases.front().p.n, 1024u);
  EXPECT_EQ(cases.back().p.n, 65536u / 4);  // 64 KiB of f32
}

TEST(run_planning, offsets_are_axes_swept_for_every_variant) {
  run_request r;
  r.labs = {"copy"};
  r.variants = {"vec16", "scalar"};
  r.dtypes = {dtype::f16};
  r.sizes = "1K";
  r.axes = {{"src_offset", "0,2"}, {"dst_offset", "0,4,6"}};
  const auto cases = plan_cases(r, all_labs());
  ASSERT_EQ(cases.size(), 2u * 3u * 2u);  // src offsets x dst offsets x variants
  // Variants of one point are adjacent (in ladder order), so one run compares them side by side.
  EXPECT_EQ(cases[0].v->name, "scalar");
  EXPECT_EQ(cases[1].v->name, "vec16");
  EXPECT_EQ(value(cases[0].p, "src_offset"), value(cases[1].p, "src_offset"));
  EXPECT_EQ(value(cases[0].p, "dst_offset"), value(cases[1].p, "dst_offset"));
  EXPECT_EQ(value(cases.back().p, "src_offset"), 2u);
  EXPECT_EQ(value(cases.back().p, "dst_offset"), 6u);
}

TEST(run_planning, an_axis_no_chosen_lab_reads_is_a_usage_error) {
  run_request r;
  r.labs = {"copy"};
  r.axes = {{"stride", "2"}};
  try {
    (void)plan_cases(r, all_labs());
    ADD_FAILURE() << "--stride accepted for the copy lab";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--stride is not an axis of lab copy"), std::string::npos) << e.what();
  }
}

TEST(run_planning, repeated_names_run_once) {
  run_request r;
  r.labs = {"copy", "copy"};
  r.variants = {"vec16", "vec16"};
  r.dtypes = {dtype::f16, dtype::f16};
  r.sizes = "1K";
  EXPECT_EQ(plan_cases(r, all_labs()).size(), 1u);
}

TEST(run_planning, rejects_unknown_names_with_the_choices) {
  auto expect_usage_error = [](run_request r, std::string_view needle) {
    try {
      (void)plan_cases(r, all_labs());
      ADD_FAILURE() << "no error for " << needle;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  run_request bad_lab;
  bad_lab.labs = {"cpoy"};
  expect_usage_error(bad_lab, "unknown lab 'cpoy'");
  expect_usage_error(bad_lab, "(labs: ");
  run_request bad_variant;
  bad_variant.variants = {"fastest"};
  expect_usage_error(bad_variant, "--variant: unknown variant 'fastest'");
  expect_usage_error(bad_variant, "(variants: ");
  run_request bad_size;
  bad_size.sizes = "2^x";
  expect_usage_error(bad_size, "2^x");
  run_request odd_bytes;
  odd_bytes.dtypes = {dtype::f32};
  odd_bytes.sizes = "6B";
  expect_usage_error(odd_bytes, "6B");
}

}  // namespace
}  // namespace memlab::labs::copy
