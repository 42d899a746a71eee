// Every layout variant x dtype x edge size x field, on the GPU, compared byte for byte with the CPU
// reference (the output's guard checked for poison). Without a GPU every test here reports SKIPPED.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_fixture.hpp"
#include "harness/device.hpp"
#include "harness/lab.hpp"
#include "lab_helpers.hpp"
#include "labs/layout/layout.hpp"

namespace memlab {
namespace {

using labs::layout::table;
using test::edge_sizes;

struct layout_gpu : test::gpu_test<::testing::TestWithParam<std::tuple<std::string, dtype>>> {};

case_params layout_case(dtype t, std::uint64_t n, std::uint64_t field) {
  return table().make_case(t, n, {{"field", axis_value{{field, 0, 0}, 1}}});
}

void run_and_verify(const std::string& name, const case_params& p, const device_info& dev) {
  const auto why_not = test::refusal(table(), name, p, dev);
  ASSERT_FALSE(why_not) << *why_not;
  auto c = test::prepare(table(), name, p, dev);
  ASSERT_EQ(test::run_and_verify(c), "");
}

TEST_P(layout_gpu, edge_sizes_and_fields) {
  const auto& [name, type] = GetParam();
  for (std::uint64_t field = 0; field < 3; ++field) {
    for (const std::uint64_t n : edge_sizes) {
      SCOPED_TRACE("n=" + std::to_string(n) + " field=" + std::to_string(field));
      run_and_verify(name, layout_case(type, n, field), dev);
    }
  }
}

// Many CTAs and a ragged end: the unchecked full tiles next to the partial one, aos_vec's tail.
TEST_P(layout_gpu, a_large_ragged_size) {
  const auto& [name, type] = GetParam();
  run_and_verify(name, layout_case(type, (1u << 22) + 7, 1), dev);
}

TEST_P(layout_gpu, checker_catches_an_unwritten_output) {
  const auto& [name, type] = GetParam();
  auto c = test::prepare(table(), name, layout_case(type, 129, 0), dev);
  reset(c);
  const std::string diff = c.l->verify(c);
  EXPECT_NE(diff.find("never written"), std::string::npos) << diff;
}

INSTANTIATE_TEST_SUITE_P(all, layout_gpu,
                         ::testing::Combine(::testing::ValuesIn(test::variant_names(table())),
                                            ::testing::Values(dtype::f16, dtype::f32, dtype::f64)),
                         test::variant_dtype_name{});

}  // namespace
}  // namespace memlab
