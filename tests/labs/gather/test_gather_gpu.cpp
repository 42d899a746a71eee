// Every gather order x dtype x edge size x table size, on the GPU, compared with out[i] =
// table[idx[i]] on the host; and the declared bytes: the same for both orders, from the exact
// count of distinct indices. Without a GPU every test here reports SKIPPED.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu_fixture.hpp"
#include "harness/device.hpp"
#include "harness/lab.hpp"
#include "lab_helpers.hpp"
#include "labs/gather/gather.hpp"

namespace memlab {
namespace {

using test::edge_sizes;

struct gather_gpu : test::gpu_test<::testing::TestWithParam<std::tuple<std::string, dtype>>> {};

// A gather case: n lookups of `t` from a table of `table_bytes` bytes.
case_params gather_case(dtype t, std::uint64_t n, std::uint64_t table_bytes) {
  return labs::gather::table().make_case(t, n, {{"table_bytes", axis_value{{table_bytes, 0, 0}, 1}}});
}

TEST_P(gather_gpu, edge_sizes_and_tables) {
  const auto& [name, type] = GetParam();
  const lab& l = labs::gather::table();
  const std::uint64_t es = size_of(type);
  // One element, one sector and a bit, not a power of two, 1 MiB, past the L2 of any GPU.
  for (const std::uint64_t table : {es, 5 * es, 4100 * es, std::uint64_t{1} << 20, std::uint64_t{192} << 20}) {
    for (const std::uint64_t n : edge_sizes) {
      const auto p = gather_case(type, n, table);
      SCOPED_TRACE("n=" + std::to_string(n) + " table=" + std::to_string(table) + " B");
      ASSERT_FALSE(test::refusal(l, name, p, dev));
      auto c = test::prepare(l, name, p, dev);
      ASSERT_EQ(test::run_and_verify(c), "");
    }
  }
}

TEST_P(gather_gpu, verifies_again_after_each_reset) {
  const auto& [name, type] = GetParam();
  auto c = test::prepare(labs::gather::table(), name, gather_case(type, 4097, 1u << 16), dev);
  for (int round = 0; round < 2; ++round) ASSERT_EQ(test::run_and_verify(c), "") << "round " << round;
}

TEST_P(gather_gpu, checker_catches_an_unwritten_output) {
  const auto& [name, type] = GetParam();
  auto c = test::prepare(labs::gather::table(), name, gather_case(type, 129, 1u << 12), dev);
  reset(c);
  const std::string diff = c.l->verify(c);
  EXPECT_NE(diff.find("never written"), std::string::npos) << diff;
}

// Declared bytes: distinct indices x elem + idx + out, the same for both orders; the per-warp
// sector count is the host's, and the sorted order's is never above the random one's.
// (Not parameterised by variant: it compares the two orders with each other, for each dtype.)
using gather_bytes_gpu = test::gpu_test<>;

// The table's rung for an index order (by its traits, not its name).
std::string rung_of(const lab& l, labs::gather::index_order order) {
  for (const auto& v : l.variants)
    if (v.traits_as<labs::gather::gather_rung>().order == order) return std::string(v.name);
  throw std::logic_error("the gather table has no rung of that order");
}

TEST_F(gather_bytes_gpu, declared_bytes_count_each_distinct_index_once) {
  const lab& l = labs::gather::table();
  for (const dtype type : {dtype::f32, dtype::f64}) {
    const std::uint64_t es = size_of(type);
    for (const std::uint64_t elements : {1ull, 1000ull, 100000ull}) {
      SCOPED_TRACE(std::string(to_string(type)) + " table of " + std::to_string(elements));
      const std::uint64_t n = 100000;
      const auto p = gather_case(type, n, elements * es);
      const std::uint64_t seed = labs::gather::index_seed(n, elements);
      std::set<std::uint32_t> distinct;
      std::uint64_t warp_sectors = 0;
      for (std::uint64_t g = 0; g < n; g += 32) {
        std::set<std::uint64_t> s;
        for (std::uint64_t i = g; i < std::min(n, g + 32); ++i) {
          const auto k = labs::gather::random_index(seed, i, elements);
          distinct.insert(k);
          s.insert(k * es / 32);
        }
        warp_sectors += s.size();
      }
      // The lab's setup draws and sorts the indices and counts what they touch when the case is prepared.
      const auto random = test::prepare(l, rung_of(l, labs::gather::index_order::random), p, dev);
      const auto sorted = test::prepare(l, rung_of(l, labs::gather::index_order::sorted), p, dev);
      const std::uint64_t rest = n * 4 + n * es;
      EXPECT_EQ(random.plan.bytes, distinct.size() * es + rest) << elements;
      EXPECT_EQ(sorted.plan.bytes, random.plan.bytes) << elements;
      EXPECT_EQ(random.plan.hardware_bytes, warp_sectors * 32 + rest) << elements;
      EXPECT_LE(sorted.plan.hardware_bytes, random.plan.hardware_bytes) << elements;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(all, gather_gpu,
                         ::testing::Combine(::testing::ValuesIn(test::variant_names(labs::gather::table())),
                                            ::testing::Values(dtype::f32, dtype::f64)),
                         test::variant_dtype_name{});

}  // namespace
}  // namespace memlab
