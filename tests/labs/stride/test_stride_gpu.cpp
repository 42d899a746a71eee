// Every stride variant x dtype x edge size x stride x source offset, on the GPU, compared byte for
// byte with the CPU reference (gaps between scattered stores and the guard checked for poison).
// Without a GPU every test here reports SKIPPED.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_fixture.hpp"
#include "harness/device.hpp"
#include "harness/lab.hpp"
#include "labs/stride/stride.hpp"

namespace memlab {
namespace {

using test::edge_sizes;

struct stride_gpu : test::gpu_test<::testing::TestWithParam<std::tuple<std::string, dtype>>> {};

void run_and_verify(const lab& l, const std::string& variant, const case_params& p, const device_info& dev) {
  auto c = l.prepare(variant, p, dev);
  c->reset();
  c->launch(nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(c->verify(), "");
}

TEST_P(stride_gpu, edge_sizes_strides_and_offsets) {
  const auto& [variant, type] = GetParam();
  const lab& l = labs::stride::stride_lab();
  const std::uint64_t es = size_of(type);
  const bool vec = variant == "vec16";
  // vec16: every element offset inside two 16-byte vectors; the strided variants: a few.
  std::vector<std::uint64_t> offsets;
  if (vec) {
    for (std::uint64_t k = 0; k * es < 32; ++k) offsets.push_back(k * es);
  } else {
    offsets = {0, es, 7 * es, 31 * es};
  }
  const std::vector<std::uint64_t> strides = vec ? std::vector<std::uint64_t>{1} : std::vector<std::uint64_t>{1, 2, 3, 8, 32};
  int ran = 0;
  for (const auto stride : strides) {
    for (const auto so : offsets) {
      for (const std::uint64_t n : edge_sizes) {
        case_params p{type, n, so, 0, stride};
        SCOPED_TRACE("n=" + std::to_string(n) + " stride=" + std::to_string(stride) + " src+" + std::to_string(so));
        ASSERT_FALSE(l.unsupported(variant, p, dev)) << *l.unsupported(variant, p, dev);
        run_and_verify(l, variant, p, dev);
        ++ran;
      }
    }
  }
  EXPECT_GT(ran, 0);
}

// A size past one CTA's tile and a grid of many CTAs, strided, to exercise the unchecked full tiles
// next to the partial one.
TEST_P(stride_gpu, a_large_copy_with_a_ragged_end) {
  const auto& [variant, type] = GetParam();
  const lab& l = labs::stride::stride_lab();
  const std::uint64_t es = size_of(type);
  const std::uint64_t stride = variant == "vec16" ? 1 : 5;
  run_and_verify(l, variant, case_params{type, (1u << 22) + 7, 3 * es, 0, stride}, dev);
}

TEST_P(stride_gpu, refuses_offsets_inside_an_element_and_vec16_strides) {
  const auto& [variant, type] = GetParam();
  const lab& l = labs::stride::stride_lab();
  if (size_of(type) > 1) {
    const auto refusal = l.unsupported(variant, case_params{type, 100, 1, 0, 1}, dev);
    ASSERT_TRUE(refusal);
    EXPECT_NE(refusal->find("multiple"), std::string::npos) << *refusal;
  }
  if (variant == "vec16") {
    EXPECT_TRUE(l.unsupported(variant, case_params{type, 100, 0, 0, 2}, dev));
  }
}

// Poison without a launch: the checker must see the unwritten output (the check is not vacuous).
TEST_P(stride_gpu, checker_catches_an_unwritten_output) {
  const auto& [variant, type] = GetParam();
  auto c = labs::stride::stride_lab().prepare(variant, case_params{type, 129, 0, 0, 1}, dev);
  c->reset();
  const std::string diff = c->verify();
  EXPECT_NE(diff.find("never written"), std::string::npos) << diff;
}

std::vector<std::string> variant_names() {
  std::vector<std::string> out;
  for (const auto& v : labs::stride::stride_lab().variants()) out.emplace_back(v.name);
  return out;
}

INSTANTIATE_TEST_SUITE_P(all, stride_gpu,
                         ::testing::Combine(::testing::ValuesIn(variant_names()),
                                            ::testing::ValuesIn(all_dtypes().begin(), all_dtypes().end())),
                         [](const auto& param_info) {
                           return std::get<0>(param_info.param) + "_" + std::string(to_string(std::get<1>(param_info.param)));
                         });

}  // namespace
}  // namespace memlab
