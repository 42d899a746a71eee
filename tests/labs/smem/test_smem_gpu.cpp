// Every smem variant x stride x edge size on the GPU, compared word for word with the CPU reference
// (the loads' per-lane sums, the stores' last values, the copies' elements). Partial warps (n not a
// multiple of 32) and partial CTAs included. Without a GPU every test here reports SKIPPED.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_fixture.hpp"
#include "harness/device.hpp"
#include "lab_helpers.hpp"
#include "labs/smem/smem.hpp"

namespace memlab {
namespace {

using test::edge_sizes;

struct smem_gpu : test::gpu_test<::testing::TestWithParam<std::string>> {};

case_params smem_case(std::uint64_t n, std::uint64_t stride) {
  return labs::smem::table().make_case(dtype::f32, n, {{"lane_stride", axis_value{{stride, 0, 0}, 1}}});
}

// The stride a rung runs at when the test does not sweep it: the tile patterns take only 32.
std::uint64_t stride_for(const std::string& name, std::uint64_t otherwise) {
  const auto& r = test::variant_of(labs::smem::table(), name).traits_as<labs::smem::smem_rung>();
  return r.pattern == labs::smem::address_pattern::strided ? otherwise : 32;
}

TEST_P(smem_gpu, edge_sizes_and_strides) {
  const lab& l = labs::smem::table();
  const std::string& name = GetParam();
  int ran = 0;
  for (std::uint64_t stride : {1u, 2u, 3u, 8u, 16u, 31u, 32u}) {
    for (const std::uint64_t n : edge_sizes) {
      const case_params p = smem_case(n, stride);
      SCOPED_TRACE("n=" + std::to_string(n) + " stride=" + std::to_string(stride));
      if (const auto why = test::refusal(l, name, p, dev)) {
        // Only the tile patterns (smem_padded, smem_swizzled) refuse, and only strides other than 32.
        EXPECT_TRUE(stride_for(name, 0) == 32 && stride != 32) << *why;
        EXPECT_NE(why->find("--lane-stride 32"), std::string::npos) << *why;
        continue;
      }
      auto c = test::prepare(l, name, p, dev);
      ASSERT_EQ(test::run_and_verify(c), "");
      ++ran;
    }
  }
  EXPECT_GE(ran, static_cast<int>(edge_sizes.size()));
}

// A whole grid: more tasks than resident warps, so that warps take several tasks; 37 idle lanes.
TEST_P(smem_gpu, a_full_grid_with_a_ragged_end) {
  const lab& l = labs::smem::table();
  const std::string& name = GetParam();
  const std::uint64_t stride = stride_for(name, 4);
  auto c = test::prepare(l, name, smem_case((1u << 20) + 37, stride), dev);
  if (labs::smem::is_bank_bound(c.v->traits_as<labs::smem::smem_rung>())) {
    // setup sized the grid from the occupancy calculator: every CTA resident, each with work.
    EXPECT_GE(c.plan.policy.grid, static_cast<std::uint64_t>(dev.sm_count));
    EXPECT_LE(c.plan.policy.grid * labs::smem::warps_per_cta,
              labs::smem::tasks_of(c.p.n) + labs::smem::warps_per_cta - 1);
  }
  ASSERT_EQ(test::run_and_verify(c), "");
}

// Poison without a launch: the checker must see the unwritten output (the check is not vacuous).
TEST_P(smem_gpu, checker_catches_an_unwritten_output) {
  const std::string& name = GetParam();
  const std::uint64_t stride = stride_for(name, 1);
  auto c = test::prepare(labs::smem::table(), name, smem_case(129, stride), dev);
  reset(c);
  const std::string diff = c.l->verify(c);
  EXPECT_NE(diff.find("never written"), std::string::npos) << diff;
}

INSTANTIATE_TEST_SUITE_P(all, smem_gpu, ::testing::ValuesIn(test::variant_names(labs::smem::table())),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace memlab
