// Every matmul rung and peer x edge shape, on the GPU, checked against the CPU reference within the
// derived bound; the shapes a rung cannot do asserted as refusals with their reason; and the check
// itself shown to catch an unwritten output, a wrong tile and a stray store. Without a GPU every
// test here reports SKIPPED.
//
// The size is n; m and k are axes where 0 means "the same as n", so m = 0 or k = 0 with n > 0 is
// not a case the lab has: the edge sizes sweep each extent with the other two small and nonzero.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "gpu_fixture.hpp"
#include "harness/buffer.hpp"
#include "harness/device.hpp"
#include "harness/error.hpp"
#include "harness/lab.hpp"
#include "lab_helpers.hpp"
#include "labs/matmul/matmul.hpp"

namespace memlab {
namespace {

using labs::matmul::gemm_shape;
using labs::matmul::shape_text;
using test::edge_sizes;

struct matmul_gpu : test::gpu_test<::testing::TestWithParam<std::string>> {};

case_params mm_case(std::uint64_t m, std::uint64_t n, std::uint64_t k) {
  return labs::matmul::table().make_case(dtype::f32, n,
                                         {{"m", axis_value{{m, 0, 0}, 1}}, {"k", axis_value{{k, 0, 0}, 1}}});
}

// The rungs of 16-byte accesses, as their records say.
bool vectorized_rung(const std::string& name) {
  return test::traits_of<labs::matmul::rung_traits>(labs::matmul::table(), name).tile.vec_bytes == 16;
}

// Runs and checks (m, n, k), or asserts the refusal the rung owes it. Returns whether it ran.
bool run_or_refused(const std::string& name, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                    const device_info& dev) {
  const lab& l = labs::matmul::table();
  const case_params p = mm_case(m, n, k);
  const gemm_shape s = labs::matmul::resolve(n, m, k);
  SCOPED_TRACE(name + " " + shape_text(s) + " (m x n x k)");
  const auto why = test::refusal(l, name, p, dev);
  if (vectorized_rung(name) && (s.n % 4 != 0 || s.k % 4 != 0)) {
    EXPECT_TRUE(why && why->find("multiples of 4") != std::string::npos) << why.value_or("(not refused)");
    return false;
  }
  EXPECT_FALSE(why) << *why;
  if (why) return false;
  auto c = test::prepare(l, name, p, dev);
  EXPECT_EQ(test::run_and_verify(c), "");
  return true;
}

TEST_P(matmul_gpu, cubes_of_edge_sizes) {
  int ran = 0;
  for (const std::uint64_t s : {1u, 15u, 16u, 17u, 127u, 128u, 129u}) ran += run_or_refused(GetParam(), 0, s, 0, dev);
  EXPECT_GT(ran, 0);
}

TEST_P(matmul_gpu, each_extent_through_the_edge_sizes) {
  int ran = 0;
  for (const std::uint64_t s : edge_sizes) {
    if (s > 0) ran += run_or_refused(GetParam(), s, 36, 20, dev);  // m (0 would mean m = n)
    ran += run_or_refused(GetParam(), 36, s, 20, dev);             // n (0: C is empty)
    if (s > 0) ran += run_or_refused(GetParam(), 20, 36, s, dev);  // k (0 would mean k = n)
  }
  EXPECT_GT(ran, 0);
}

// Ragged in every dimension: more than one CTA tile each way, partial tiles at every edge; the first
// checked whole, the second sampled (rows, columns, one element per 64 x 64 block).
TEST_P(matmul_gpu, ragged_shapes_checked_whole_and_sampled) {
  EXPECT_TRUE(run_or_refused(GetParam(), 513, 516, 500, dev));
  EXPECT_TRUE(run_or_refused(GetParam(), 4097, 4100, 4100, dev));
  run_or_refused(GetParam(), 1001, 1003, 999, dev);  // refused by the vectorized rungs
}

TEST_P(matmul_gpu, verifies_again_after_each_reset) {
  auto c = test::prepare(labs::matmul::table(), GetParam(), mm_case(200, 260, 132), dev);
  for (int round = 0; round < 2; ++round) ASSERT_EQ(test::run_and_verify(c), "") << "round " << round;
}

// What the harness's graph timing does: the launches captured on a stream, replayed, still right.
TEST_P(matmul_gpu, launches_can_be_captured_in_a_cuda_graph) {
  auto c = test::prepare(labs::matmul::table(), GetParam(), mm_case(300, 260, 132), dev);
  reset(c);
  cuda_stream s;
  cudaGraph_t graph = nullptr;
  MEMLAB_CUDA_CHECK(cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeThreadLocal));
  c.v->launch(c, s.get());
  MEMLAB_CUDA_CHECK(cudaStreamEndCapture(s.get(), &graph));
  cudaGraphExec_t exec = nullptr;
  MEMLAB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  MEMLAB_CUDA_CHECK(cudaGraphLaunch(exec, s.get()));
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.get()));
  MEMLAB_CUDA_CHECK(cudaGraphExecDestroy(exec));
  MEMLAB_CUDA_CHECK(cudaGraphDestroy(graph));
  EXPECT_EQ(c.l->verify(c), "");
}

TEST_P(matmul_gpu, checker_catches_an_unwritten_output) {
  auto c = test::prepare(labs::matmul::table(), GetParam(), mm_case(129, 132, 68), dev);
  reset(c);  // poisoned, never launched
  const std::string diff = c.l->verify(c);
  EXPECT_NE(diff.find("never written"), std::string::npos) << diff;
}

// A whole 64 x 64 block of a sampled (1024^3) product made wrong after the launch: the grid of one
// checked element per block finds it wherever it is.
TEST_P(matmul_gpu, checker_catches_one_wrong_block) {
  auto c = test::prepare(labs::matmul::table(), GetParam(), mm_case(0, 1024, 0), dev);
  ASSERT_FALSE(labs::matmul::samples_of({1024, 1024, 1024}, 0).full);
  ASSERT_EQ(test::run_and_verify(c), "");
  std::vector<float> block(64);
  for (std::uint64_t r = 320; r < 384; ++r) {
    float* row = c.ptr<float>(2, 4 * (r * 1024 + 448));
    MEMLAB_CUDA_CHECK(cudaMemcpy(block.data(), row, 4 * 64, cudaMemcpyDeviceToHost));
    for (auto& x : block) x += 4.f;  // far past the bounds at k = 1024: f32 ~0.016, TF32 ~0.53
    MEMLAB_CUDA_CHECK(cudaMemcpy(row, block.data(), 4 * 64, cudaMemcpyHostToDevice));
  }
  const std::string diff = c.l->verify(c);
  EXPECT_NE(diff.find("expected"), std::string::npos) << diff;
}

TEST_P(matmul_gpu, checker_catches_a_store_past_the_end_of_c) {
  auto c = test::prepare(labs::matmul::table(), GetParam(), mm_case(33, 36, 20), dev);
  ASSERT_EQ(test::run_and_verify(c), "");
  const std::uint8_t stray = 0x5a;
  MEMLAB_CUDA_CHECK(cudaMemcpy(c.ptr(2, 4 * 33 * 36 + 3), &stray, 1, cudaMemcpyHostToDevice));
  const std::string diff = c.l->verify(c);
  EXPECT_NE(diff.find("out-of-bounds store: byte 3 past the end of C"), std::string::npos) << diff;
}

// The inputs setup wrote: odd multiples of 2^-24 in (-1, 1), never zero, not constant.
TEST_P(matmul_gpu, inputs_are_the_labs_own_well_conditioned_values) {
  auto c = test::prepare(labs::matmul::table(), GetParam(), mm_case(64, 68, 100), dev);
  for (std::size_t b : {0u, 1u}) {
    std::vector<float> host(c.buffers[b].size() / 4);
    MEMLAB_CUDA_CHECK(cudaMemcpy(host.data(), c.buffers[b].data(), c.buffers[b].size(), cudaMemcpyDeviceToHost));
    double sum_sq = 0;
    for (float x : host) {
      ASSERT_TRUE(x > -1.f && x < 1.f && x != 0.f) << x;
      ASSERT_EQ(std::fmod(std::fabs(static_cast<double>(x) * 0x1p24), 2.0), 1.0) << x;
      sum_sq += static_cast<double>(x) * x;
    }
    EXPECT_NEAR(sum_sq / static_cast<double>(host.size()), 1.0 / 3, 0.05);
  }
}

INSTANTIATE_TEST_SUITE_P(variants, matmul_gpu, ::testing::ValuesIn(test::variant_names(labs::matmul::table())),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace memlab
