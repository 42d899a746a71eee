// Every hierarchy rung on the GPU at small sizes, verified (the walk's end node against the host's
// walk, the streams' outputs against the host), and its measured figures sane. Without a GPU every
// test here reports SKIPPED.
#include <gtest/gtest.h>

#include <string>

#include "gpu_fixture.hpp"
#include "harness/device.hpp"
#include "lab_helpers.hpp"
#include "labs/hierarchy/hierarchy.hpp"

namespace memlab {
namespace labs::hierarchy {
const lab& table();
}
namespace {

struct hierarchy_gpu : test::gpu_test<::testing::TestWithParam<std::string>> {};

case_params hcase(std::uint64_t bytes, std::uint64_t steps, std::uint64_t load_ctas = 0) {
  return labs::hierarchy::table().make_case(
      dtype::f32, bytes / 4,
      {{"steps", axis_value{{steps, 0, 0}, 1}}, {"load_ctas", axis_value{{load_ctas, 0, 0}, 1}}});
}

const measured_figure* figure(const std::vector<measured_figure>& f, std::string_view name) {
  for (const auto& m : f)
    if (m.name == name) return &m;
  return nullptr;
}

TEST_P(hierarchy_gpu, small_sizes_verify_and_report_sane_figures) {
  const lab& l = labs::hierarchy::table();
  const std::string& name = GetParam();
  int ran = 0;
  for (std::uint64_t bytes :
       {std::uint64_t{4096}, std::uint64_t{4096 + 16}, std::uint64_t{32} << 10, std::uint64_t{4} << 20}) {
    for (std::uint64_t steps : {64u, 100u, 1000u}) {
      const auto p = hcase(bytes, steps, name == "loaded_chase" ? 8 : 0);
      SCOPED_TRACE("bytes=" + std::to_string(bytes) + " steps=" + std::to_string(steps));
      if (test::refusal(l, name, p, dev)) continue;
      auto c = test::prepare(l, name, p, dev);
      ASSERT_EQ(test::run_and_verify(c), "");
      const auto f = l.observe(c);
      if (c.plan.roof.has_value()) {
        EXPECT_TRUE(f.empty());
      } else {
        const auto* cyc = figure(f, "cycles_per_load");
        const auto* mhz = figure(f, "sm_clock_mhz");
        ASSERT_NE(cyc, nullptr);
        ASSERT_NE(mhz, nullptr);
        EXPECT_GT(cyc->value, 1.0);
        EXPECT_LT(cyc->value, 5000.0);
        EXPECT_GT(mhz->value, 300.0);
        EXPECT_LT(mhz->value, 4000.0);
      }
      ++ran;
    }
  }
  EXPECT_GE(ran, 1);
}

// Poison without a launch: the checker must see the output the kernel never wrote. At the first size the
// rung takes (the L2 dots refuse 32 KiB: thousands of passes a launch, beyond the dot's derived bound).
TEST_P(hierarchy_gpu, checker_catches_an_unwritten_output) {
  const lab& l = labs::hierarchy::table();
  const std::string& name = GetParam();
  for (const std::uint64_t bytes :
       {std::uint64_t{name == "register_chain" ? 4096u : 32u << 10}, std::uint64_t{4} << 20}) {
    const auto p = hcase(bytes, 64);
    if (test::refusal(l, name, p, dev)) continue;
    auto c = test::prepare(l, name, p, dev);
    reset(c);
    EXPECT_NE(l.verify(c), "") << bytes << " B";
    return;
  }
  FAIL() << name << " refused at every size tried";
}

INSTANTIATE_TEST_SUITE_P(all, hierarchy_gpu, ::testing::ValuesIn(test::variant_names(labs::hierarchy::table())),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace memlab
