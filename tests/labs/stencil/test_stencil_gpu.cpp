// Every stencil variant on the GPU against the CPU reference (double, the derived tolerance), over
// edge shapes: the edge sizes, tile boundaries and shapes that are not tile multiples, the smallest
// legal domains (one center point, side domains of 4), thicker side domains (the stencil must read
// their 4 points nearest the center, misaligned for 16-byte copies when side is not a multiple of
// 4), and grids of many CTAs. Cases a variant refuses are asserted as refusals with their reason.
// Without a GPU every test here reports SKIPPED.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "gpu_fixture.hpp"
#include "harness/device.hpp"
#include "harness/error.hpp"
#include "harness/lab.hpp"
#include "lab_helpers.hpp"
#include "labs/stencil/stencil.hpp"

namespace memlab {
namespace {

using labs::stencil::rung_traits;

struct stencil_gpu : test::gpu_test<::testing::TestWithParam<std::string>> {};
using stencil_check_gpu = test::gpu_test<>;

case_params stencil_case(std::uint64_t n, std::uint64_t nx, std::uint64_t ny, std::uint64_t side = 4,
                         std::uint64_t stages = 2) {
  return labs::stencil::table().make_case(dtype::f32, n,
                                          {{"xy", axis_value{{nx, ny, 0}, 2}},
                                           {"side", axis_value{{side, 0, 0}, 1}},
                                           {"stages", axis_value{{stages, 0, 0}, 1}}});
}

const rung_traits& traits_of(const std::string& name) {
  return test::traits_of<rung_traits>(labs::stencil::table(), name);
}

// The first stencil rung (not a copy) of the table with `dims` dimensions, and those that pipeline.
std::string first_rung(int dims) {
  for (const auto& v : labs::stencil::table().variants) {
    const auto& r = v.traits_as<rung_traits>();
    if (r.dims == dims && !r.copy) return std::string(v.name);
  }
  throw std::logic_error("no stencil rung of " + std::to_string(dims) + " dimensions");
}
std::vector<std::string> pipelined_rungs() {
  std::vector<std::string> out;
  for (const auto& v : labs::stencil::table().variants)
    if (v.traits_as<rung_traits>().pipelined) out.emplace_back(v.name);
  return out;
}

void run_and_verify(const std::string& name, const case_params& p, const device_info& dev) {
  auto c = test::prepare(labs::stencil::table(), name, p, dev);
  ASSERT_EQ(test::run_and_verify(c), "");
}

// 1D: the edge sizes, both sides of every tile boundary (2048 points), with side domains of 4
// (the smallest legal), 5 and 7 (the left halo not 16-byte aligned) and 12 points.
void one_d_edge_sizes(const std::string& name, const device_info& dev) {
  std::vector<std::uint64_t> sizes = test::edge_sizes;
  for (std::uint64_t n : {2u, 3u, 4u, 5u, 8u, 2047u, 2048u, 2049u, 2050u, 2051u, 2052u, 2053u, 4099u, 6145u})
    sizes.push_back(n);
  int ran = 0;
  for (const std::uint64_t side : {4u, 5u, 7u, 12u}) {
    for (const std::uint64_t n : sizes) {
      SCOPED_TRACE("n=" + std::to_string(n) + " side=" + std::to_string(side));
      const auto p = stencil_case(n, 512, 512, side);
      const auto why_not = test::refusal(labs::stencil::table(), name, p, dev);
      ASSERT_FALSE(why_not) << *why_not;
      run_and_verify(name, p, dev);
      if (::testing::Test::HasFatalFailure()) return;
      ++ran;
    }
  }
  EXPECT_EQ(ran, 4 * static_cast<int>(sizes.size()));
}

// 3D: single points and lines, planes thinner than the halo, tiles cut in x and y, ny such that the
// second-to-last tile's halo already reaches the right domain (68 = 64 + 4), and side domains of 4
// and 5 planes. The 16-byte rungs refuse nx that is not a multiple of 4, with the reason.
void three_d_shapes(const std::string& name, const device_info& dev) {
  const bool needs_rows16 = traits_of(name).access_bytes == 16 && !traits_of(name).copy;
  const std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> shapes{
      {1, 1, 1},   {4, 1, 1},   {1, 9, 3},   {3, 5, 2},    {4, 4, 4},    {8, 3, 5},    {64, 64, 1},  {64, 68, 2},
      {65, 63, 2}, {68, 65, 3}, {128, 4, 3}, {17, 129, 2}, {132, 69, 2}, {36, 200, 3}, {256, 64, 17}};
  int ran = 0, refused = 0, unaligned = 0;
  for (const std::uint64_t side : {4u, 5u}) {
    for (const auto& [nx, ny, nz] : shapes) {
      SCOPED_TRACE(std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz) +
                   " side=" + std::to_string(side));
      unaligned += nx % 4 != 0;
      const auto p = stencil_case(nx * ny * nz, nx, ny, side);
      if (const auto why = test::refusal(labs::stencil::table(), name, p, dev)) {
        EXPECT_TRUE(needs_rows16 && nx % 4 != 0) << *why;
        EXPECT_NE(why->find("multiple of 4"), std::string::npos) << *why;
        ++refused;
        continue;
      }
      run_and_verify(name, p, dev);
      if (::testing::Test::HasFatalFailure()) return;
      ++ran;
    }
  }
  EXPECT_EQ(refused, needs_rows16 ? unaligned : 0);
  EXPECT_EQ(ran + refused, 2 * static_cast<int>(shapes.size()));
}

TEST_P(stencil_gpu, edge_shapes_and_side_domains) {
  const std::string& name = GetParam();
  if (traits_of(name).dims == 1) {
    one_d_edge_sizes(name, dev);
  } else {
    three_d_shapes(name, dev);
  }
}

// Many CTAs and ragged ends: 1D 2^22 + 3 points; 3D 260 x 200 x 33 (every tile kind, and more tiles
// than the persistent grid of ldgsts_overlap has CTAs, so each CTA runs its pipeline over several).
TEST_P(stencil_gpu, large_grids_with_ragged_ends) {
  const std::string& name = GetParam();
  if (traits_of(name).dims == 1) {
    run_and_verify(name, stencil_case((std::uint64_t{1} << 22) + 3, 512, 512, 6), dev);
  } else {
    run_and_verify(name, stencil_case(260 * 200 * 33, 260, 200, 4), dev);
    if (HasFatalFailure()) return;
    run_and_verify(name, stencil_case(512 * 512 * 8, 512, 512, 4), dev);
  }
}

// The pipelined rungs (ldgsts_overlap) at every stage count, over shapes with fewer tiles than the
// persistent grid has CTAs, about as many, and many more (each CTA's pipeline runs over several tiles,
// and past the end).
TEST_F(stencil_check_gpu, pipelined_rungs_at_every_stage_count) {
  const auto rungs = pipelined_rungs();
  ASSERT_FALSE(rungs.empty());
  for (const auto& name : rungs) {
    for (const std::uint64_t stages : {2u, 3u, 4u}) {
      for (const auto& [nx, ny, nz] : std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>>{
               {68, 65, 3}, {64, 64, 400}, {260, 200, 33}, {512, 512, 8}}) {
        SCOPED_TRACE(name + " stages " + std::to_string(stages) + ", " + std::to_string(nx) + "x" + std::to_string(ny) +
                     "x" + std::to_string(nz));
        run_and_verify(name, stencil_case(nx * ny * nz, nx, ny, 4, stages), dev);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// One prepared case, reset and run twice.
TEST_P(stencil_gpu, verifies_again_after_a_reset) {
  const std::string& name = GetParam();
  const bool one_d = traits_of(name).dims == 1;
  auto c = test::prepare(labs::stencil::table(), name,
                         one_d ? stencil_case(5000, 512, 512) : stencil_case(64 * 70 * 3, 64, 70), dev);
  for (int round = 0; round < 2; ++round) ASSERT_EQ(test::run_and_verify(c), "") << "round " << round;
}

// Poison without a launch: the check must see the unwritten output (it is not vacuous).
TEST_P(stencil_gpu, checker_catches_an_unwritten_output) {
  const std::string& name = GetParam();
  auto c = test::prepare(labs::stencil::table(), name, stencil_case(64 * 70 * 3, 64, 70), dev);
  reset(c);
  const std::string diff = c.l->verify(c);
  EXPECT_NE(diff.find("never written"), std::string::npos) << diff;
}

INSTANTIATE_TEST_SUITE_P(all, stencil_gpu, ::testing::ValuesIn(test::variant_names(labs::stencil::table())),
                         [](const auto& param_info) { return "v" + param_info.param; });

// An error of a few tolerances at a point next to each domain edge is caught, and named by where
// it is: the tolerance is not so loose that an edge bug could hide in it.
TEST_F(stencil_check_gpu, an_error_at_a_domain_edge_is_caught_and_located) {
  const double tol = labs::stencil::check_tolerance().tol;
  for (const std::uint64_t at : {std::uint64_t{1}, std::uint64_t{4998}}) {
    auto c = test::prepare(labs::stencil::table(), first_rung(1), stencil_case(5000, 512, 512), dev);
    reset(c);
    c.v->launch(c, nullptr);
    MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
    float* out = c.ptr<float>(3) + at;
    float value = 0;
    MEMLAB_CUDA_CHECK(cudaMemcpy(&value, out, sizeof value, cudaMemcpyDeviceToHost));
    value += static_cast<float>(4 * tol + 4 * 0x1p-24 * std::fabs(value));
    MEMLAB_CUDA_CHECK(cudaMemcpy(out, &value, sizeof value, cudaMemcpyHostToDevice));
    const std::string diff = c.l->verify(c);
    EXPECT_NE(diff.find("point " + std::to_string(at)), std::string::npos) << diff;
    EXPECT_NE(diff.find(at < 4 ? "from the left domain" : "from the right domain"), std::string::npos) << diff;
  }
}

// The inputs the lab's setup writes: random floats in +-[1, 2), every domain, a fresh seed per case.
TEST_F(stencil_check_gpu, inputs_are_random_floats_within_the_bound) {
  auto a = test::prepare(labs::stencil::table(), first_rung(3), stencil_case(64 * 64 * 4, 64, 64, 5), dev);
  auto b = test::prepare(labs::stencil::table(), first_rung(3), stencil_case(64 * 64 * 4, 64, 64, 5), dev);
  for (std::size_t buf = 0; buf < 3; ++buf) {
    std::vector<float> h(a.buffers[buf].size() / sizeof(float)), other(h.size());
    MEMLAB_CUDA_CHECK(cudaMemcpy(h.data(), a.buffers[buf].data(), h.size() * sizeof(float), cudaMemcpyDeviceToHost));
    MEMLAB_CUDA_CHECK(
        cudaMemcpy(other.data(), b.buffers[buf].data(), h.size() * sizeof(float), cudaMemcpyDeviceToHost));
    int same = 0;
    for (std::size_t k = 0; k < h.size(); ++k) {
      ASSERT_GE(std::fabs(h[k]), 1.0f) << "buffer " << buf << " point " << k;
      ASSERT_LT(std::fabs(h[k]), 2.0f) << "buffer " << buf << " point " << k;
      same += h[k] == other[k];
    }
    EXPECT_LT(same, static_cast<int>(h.size()) / 100) << "buffer " << buf << ": the same values in two cases";
  }
}

}  // namespace
}  // namespace memlab
