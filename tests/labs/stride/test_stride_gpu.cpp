// Every stride variant x dtype x edge size x stride x source offset, on the GPU, compared byte for
// byte with the CPU reference (gaps between scattered stores and the guard checked for poison).
// Without a GPU every test here reports SKIPPED.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_fixture.hpp"
#include "harness/device.hpp"
#include "harness/lab.hpp"
#include "lab_helpers.hpp"
#include "labs/stride/stride.hpp"

namespace memlab {
namespace {

using test::edge_sizes;

struct stride_gpu : test::gpu_test<::testing::TestWithParam<std::tuple<std::string, dtype>>> {};

// A stride case: n elements of `type`, neighbouring threads `stride` elements apart, the source
// `so` bytes off.
case_params stride_case(dtype type, std::uint64_t n, std::uint64_t stride, std::uint64_t so) {
  return labs::stride::table().make_case(
      type, n, {{"stride", axis_value{{stride, 0, 0}, 1}}, {"src_offset", axis_value{{so, 0, 0}, 1}}});
}

// A rung that moves 16-byte vectors (dense, stride 1 only), by its traits.
bool moves_vectors(const lab& l, const std::string& name) {
  return test::variant_of(l, name).traits_as<labs::stride::stride_rung>().vector_bytes != 0;
}

void run_and_verify(const lab& l, const std::string& variant_name, const case_params& p, const device_info& dev) {
  auto c = test::prepare(l, variant_name, p, dev);
  ASSERT_EQ(test::run_and_verify(c), "");
}

TEST_P(stride_gpu, edge_sizes_strides_and_offsets) {
  const auto& [name, type] = GetParam();
  const lab& l = labs::stride::table();
  const std::uint64_t es = size_of(type);
  const bool vec = moves_vectors(l, name);
  // vec16: every element offset inside two 16-byte vectors; the strided variants: a few.
  std::vector<std::uint64_t> offsets;
  if (vec) {
    for (std::uint64_t k = 0; k * es < 32; ++k) offsets.push_back(k * es);
  } else {
    offsets = {0, es, 7 * es, 31 * es};
  }
  const std::vector<std::uint64_t> strides =
      vec ? std::vector<std::uint64_t>{1} : std::vector<std::uint64_t>{1, 2, 3, 8, 32};
  int ran = 0;
  for (const auto stride : strides) {
    for (const auto so : offsets) {
      for (const std::uint64_t n : edge_sizes) {
        const case_params p = stride_case(type, n, stride, so);
        SCOPED_TRACE("n=" + std::to_string(n) + " stride=" + std::to_string(stride) + " src+" + std::to_string(so));
        const auto why_not = test::refusal(l, name, p, dev);
        ASSERT_FALSE(why_not) << *why_not;
        run_and_verify(l, name, p, dev);
        ++ran;
      }
    }
  }
  EXPECT_GT(ran, 0);
}

// A size past one CTA's tile and a grid of many CTAs, strided, to exercise the unchecked full tiles
// next to the partial one.
TEST_P(stride_gpu, a_large_copy_with_a_ragged_end) {
  const auto& [name, type] = GetParam();
  const lab& l = labs::stride::table();
  const std::uint64_t es = size_of(type);
  const std::uint64_t stride = moves_vectors(l, name) ? 1 : 5;
  run_and_verify(l, name, stride_case(type, (1u << 22) + 7, stride, 3 * es), dev);
}

TEST_P(stride_gpu, refuses_offsets_inside_an_element_and_vec16_strides) {
  const auto& [name, type] = GetParam();
  const lab& l = labs::stride::table();
  if (size_of(type) > 1) {
    const auto why = test::refusal(l, name, stride_case(type, 100, 1, 1), dev);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("multiple"), std::string::npos) << *why;
  }
  if (moves_vectors(l, name)) {
    EXPECT_TRUE(test::refusal(l, name, stride_case(type, 100, 2, 0), dev));
  }
}

// Poison without a launch: the checker must see the unwritten output (the check is not vacuous).
TEST_P(stride_gpu, checker_catches_an_unwritten_output) {
  const auto& [name, type] = GetParam();
  auto c = test::prepare(labs::stride::table(), name, stride_case(type, 129, 1, 0), dev);
  reset(c);
  const std::string diff = c.l->verify(c);
  EXPECT_NE(diff.find("never written"), std::string::npos) << diff;
}

INSTANTIATE_TEST_SUITE_P(all, stride_gpu,
                         ::testing::Combine(::testing::ValuesIn(test::variant_names(labs::stride::table())),
                                            ::testing::ValuesIn(all_dtypes().begin(), all_dtypes().end())),
                         test::variant_dtype_name{});

}  // namespace
}  // namespace memlab
