// Host-only checks of the gather lab: the random index draw, planning, and the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "lab_helpers.hpp"
#include "labs/gather/gather.hpp"

namespace memlab::labs::gather {
namespace {

// A gather case: n lookups of `type` from a table of `table_bytes` bytes.
case_params gather_case(dtype type, std::uint64_t n, std::uint64_t table_bytes) {
  return table().make_case(type, n, {{"table_bytes", axis_value{{table_bytes, 0, 0}, 1}}});
}

TEST(gather_index, draws_stay_inside_the_table_and_cover_it) {
  const std::uint64_t seed = index_seed(4096, 100);
  for (std::uint64_t t : {1ull, 2ull, 3ull, 100ull, 1ull << 20, 1ull << 32}) {
    for (std::uint64_t i = 0; i < 10000; ++i) EXPECT_LT(random_index(seed, i, t), t);
  }
  std::vector<int> seen(100, 0);
  for (std::uint64_t i = 0; i < 100000; ++i) ++seen[random_index(seed, i, 100)];
  for (int c : seen) EXPECT_NEAR(c, 1000, 200);  // uniform within a few sigma
  EXPECT_EQ(random_index(seed, 7, 1), 0u);
}

TEST(gather_index, the_seed_is_fixed_by_the_case) {
  EXPECT_EQ(index_seed(1u << 24, 1u << 20), index_seed(1u << 24, 1u << 20));
  EXPECT_NE(index_seed(1u << 24, 1u << 20), index_seed(1u << 24, 1u << 21));
  EXPECT_NE(index_seed(1u << 24, 1u << 20), index_seed(1u << 25, 1u << 20));
}

TEST(gather_plan, grid_covers_every_lookup) {
  for (std::uint64_t n : {0ull, 1ull, 1023ull, 1024ull, 1025ull, 1ull << 26}) {
    const auto p = plan(n, 4);
    EXPECT_EQ(p.vec_bytes, 4);
    EXPECT_GE(p.grid * static_cast<std::uint64_t>(p.threads * p.items_per_thread), n);
    if (n > 0) {
      EXPECT_LT((p.grid - 1) * static_cast<std::uint64_t>(p.threads * p.items_per_thread), n);
    }
  }
}

TEST(gather_lab_registry, variants_axes_and_refusals) {
  const lab& l = table();
  EXPECT_EQ(test::find_lab("gather"), &l);
  // One rung per index order, each described by its traits; random first (the ladder: naive -> best).
  std::vector<index_order> orders;
  for (const auto& v : l.variants) {
    EXPECT_FALSE(v.teaches.empty()) << v.name;
    EXPECT_FALSE(v.peer) << v.name;
    EXPECT_EQ(v.kernels.size(), 2u) << v.name << ": f32 and f64";
    for (const auto& k : v.kernels) EXPECT_NE(k.symbol, nullptr) << v.name;
    orders.push_back(v.traits_as<gather_rung>().order);
  }
  EXPECT_EQ(orders, (std::vector<index_order>{index_order::random, index_order::sorted}));
  EXPECT_EQ(l.find_variant("random")->traits_as<gather_rung>().order, index_order::random);
  EXPECT_EQ(l.find_variant("sorted")->traits_as<gather_rung>().order, index_order::sorted);
  ASSERT_EQ(l.axes.size(), 1u);
  EXPECT_EQ(l.axes[0].name, "table_bytes");
  const auto def = parse_axis(l.axes[0], l.axes[0].defaults);
  EXPECT_NE(std::find(def.begin(), def.end(), axis_value{{200ull << 20, 0, 0}, 1}), def.end())
      << "4 x the H100's 50 MiB L2";
  const device_info dev;
  EXPECT_FALSE(test::refusal(l, "random", gather_case(dtype::f32, 100, 4), dev));  // one element
  const auto ragged = gather_case(dtype::f32, 100, 6);
  ASSERT_TRUE(test::refusal(l, "sorted", ragged, dev));
  EXPECT_NE(test::refusal(l, "sorted", ragged, dev)->find("whole number"), std::string::npos);
  EXPECT_TRUE(test::refusal(l, "random", gather_case(dtype::f32, 100, 0), dev));
  const std::uint64_t largest = (std::uint64_t{1} << 32) * 4;  // 2^32 f32: the largest u32 can index
  EXPECT_FALSE(test::refusal(l, "random", gather_case(dtype::f32, 100, largest), dev));
  const auto too_large = gather_case(dtype::f32, 100, largest + 4);
  ASSERT_TRUE(test::refusal(l, "random", too_large, dev));
  EXPECT_NE(test::refusal(l, "random", too_large, dev)->find("u32"), std::string::npos);
  EXPECT_TRUE(test::refusal(l, "random", gather_case(dtype::f16, 100, 64), dev));
}

}  // namespace
}  // namespace memlab::labs::gather
