// Host-only checks of the gather lab: the random index draw, planning, and the refusals.
#include <gtest/gtest.h>

#include <vector>

#include "labs/gather/gather.hpp"

namespace memlab::labs::gather {
namespace {

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
  const lab& l = gather_lab();
  EXPECT_EQ(find_lab("gather"), &l);
  ASSERT_EQ(l.variants().size(), 2u);
  EXPECT_EQ(l.variants()[0].name, "random");
  EXPECT_EQ(l.variants()[1].name, "sorted");
  ASSERT_EQ(l.axes().size(), 1u);
  EXPECT_EQ(l.axes()[0], axis::table_bytes);
  const auto def = l.default_axes().table_bytes;
  EXPECT_NE(std::find(def.begin(), def.end(), 200ull << 20), def.end()) << "4 x the H100's 50 MiB L2";
  const device_info dev;
  case_params p;
  p.type = dtype::f32;
  p.n = 100;
  p.table_bytes = 4;  // one element
  EXPECT_FALSE(l.unsupported("random", p, dev));
  p.table_bytes = 6;
  ASSERT_TRUE(l.unsupported("sorted", p, dev));
  EXPECT_NE(l.unsupported("sorted", p, dev)->find("whole number"), std::string::npos);
  p.table_bytes = 0;
  EXPECT_TRUE(l.unsupported("random", p, dev));
  p.table_bytes = (std::uint64_t{1} << 32) * 4;  // 2^32 f32: the largest u32 can index
  EXPECT_FALSE(l.unsupported("random", p, dev));
  p.table_bytes += 4;
  ASSERT_TRUE(l.unsupported("random", p, dev));
  EXPECT_NE(l.unsupported("random", p, dev)->find("u32"), std::string::npos);
  p.table_bytes = 64;
  p.type = dtype::f16;
  EXPECT_TRUE(l.unsupported("random", p, dev));
}

}  // namespace
}  // namespace memlab::labs::gather
