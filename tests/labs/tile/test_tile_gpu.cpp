// Every tile variant x dtype x tile shape x grid x source offset, on the GPU, compared byte for
// byte with the CPU reference (the output matrix is the input matrix; the poisoned guard after it
// must be untouched). Edge shapes must be refused with a reason, never run.
// Without a GPU every test here reports SKIPPED.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "gpu_fixture.hpp"
#include "harness/device.hpp"
#include "harness/lab.hpp"
#include "lab_helpers.hpp"
#include "labs/tile/tile.hpp"
#include "tile_case.hpp"

namespace memlab {
namespace {

struct tile_gpu : test::gpu_test<::testing::TestWithParam<std::tuple<std::string, dtype>>> {};

using test::tile_case;

void run_and_verify(const lab& l, const std::string& variant_name, const case_params& p) {
  auto c = test::prepare(l, variant_name, p, tile_gpu::dev);
  ASSERT_EQ(test::run_and_verify(c), "");
}

// Tiles: the tutorial's, the 64 KiB default, a small static one, and one no static variant is
// compiled for (the static variants must refuse it, the others run it). A matrix of 5 tiles:
// the full grid (5 CTAs), one CTA, and 3 of the 5.
TEST_P(tile_gpu, shapes_grids_and_offsets) {
  const auto& [name, type] = GetParam();
  const lab& l = labs::tile::table();
  const variant& info = test::variant_of(l, name);
  const auto& rung = info.traits_as<labs::tile::tile_rung>();
  const std::uint64_t es = size_of(type);
  const int align = info.needs.alignment;
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> tiles{{128, 256}, {128, 128}, {64, 64}, {64, 160}};
  int ran = 0, expected = 0;
  for (const auto& [rows, cols] : tiles) {
    for (const std::uint64_t ctas : {0u, 1u, 3u}) {
      for (const std::uint64_t so : {std::uint64_t{0}, es, std::uint64_t{8}, std::uint64_t{16}}) {
        const auto p = tile_case(type, rows, cols, 5, ctas, so);
        SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " ctas=" + std::to_string(ctas) + " src+" +
                     std::to_string(so));
        // The only refusals allowed: a shape no static variant is built for, an offset below the contract.
        const bool static_shape = rung.static_layout && rows == 64 && cols == 160;
        const bool misaligned = align > 0 && so % static_cast<std::uint64_t>(align) != 0;
        if (!static_shape && !misaligned) ++expected;
        if (const auto why_not = l.why_not(info, p, dev)) {
          EXPECT_TRUE(static_shape || misaligned) << *why_not;
          continue;
        }
        run_and_verify(l, name, p);
        if (HasFatalFailure()) return;
        ++ran;
      }
    }
  }
  // Every case within the variant's contract ran; those that assume no alignment ran misaligned too.
  EXPECT_EQ(ran, expected);
  EXPECT_GE(ran, 3 * 3 * 2);
}

// A grid over a matrix several times the L2 (64 MiB of f32, 128 MiB moved): every CTA's own tile.
TEST_P(tile_gpu, full_grid_over_a_matrix_larger_than_l2) {
  const auto& [name, type] = GetParam();
  const lab& l = labs::tile::table();
  case_params p = tile_case(type, 128, 128, 0, 0, 0);
  p.n = (std::uint64_t{64} << 20) / size_of(type);
  ASSERT_FALSE(test::refusal(l, name, p, dev));
  run_and_verify(l, name, p);
}

// One prepared case, reset and run twice: each run verifies against its own fresh input.
TEST_P(tile_gpu, verifies_again_after_each_reset) {
  const auto& [name, type] = GetParam();
  auto c = test::prepare(labs::tile::table(), name, tile_case(type, 64, 64, 2, 0, 0), dev);
  for (int round = 0; round < 2; ++round) ASSERT_EQ(test::run_and_verify(c), "") << "round " << round;
}

// Poison without a launch: the checker must see the unwritten output (the check is not vacuous).
TEST_P(tile_gpu, checker_catches_an_unwritten_output) {
  const auto& [name, type] = GetParam();
  auto c = test::prepare(labs::tile::table(), name, tile_case(type, 64, 64, 2, 0, 0), dev);
  reset(c);
  const std::string diff = c.l->verify(c);
  EXPECT_NE(diff.find("never written"), std::string::npos) << diff;
}

// Edge shapes: refused with the reason by the lab, and preparing one throws rather than run it.
TEST_P(tile_gpu, a_tile_not_a_multiple_of_the_thread_layout_is_rejected) {
  const auto& [name, type] = GetParam();
  const lab& l = labs::tile::table();
  for (const auto& [rows, cols] :
       std::vector<std::pair<std::uint64_t, std::uint64_t>>{{100, 256}, {128, 100}, {4, 32}}) {
    const auto p = tile_case(type, rows, cols, 2, 0, 0);
    const auto why = test::refusal(l, name, p, dev);
    ASSERT_TRUE(why) << rows << "x" << cols;
    EXPECT_NE(why->find("thread layout"), std::string::npos) << *why;
    EXPECT_THROW((void)test::prepare(l, name, p, dev), std::invalid_argument);
  }
}

// A tile larger than the device's opt-in shared memory (227 KiB on sm_90) is refused, not launched:
// for its size by the dynamic variants, for its shape (no compile-time layout for it) by the
// static ones, which check that first.
TEST_P(tile_gpu, a_tile_larger_than_shared_memory_is_refused) {
  const auto& [name, type] = GetParam();
  const lab& l = labs::tile::table();
  const bool static_layout = test::variant_of(l, name).traits_as<labs::tile::tile_rung>().static_layout;
  const auto p = tile_case(type, 512, 256, 1, 0, 0);  // 512 KiB f32, 256 KiB f16
  const auto why = test::refusal(l, name, p, dev);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find(static_layout ? "static layouts need the tile shape" : "shared memory"), std::string::npos)
      << *why;
}

INSTANTIATE_TEST_SUITE_P(all, tile_gpu,
                         ::testing::Combine(::testing::ValuesIn(test::variant_names(labs::tile::table())),
                                            ::testing::Values(dtype::f32, dtype::f16)),
                         test::variant_dtype_name{});

}  // namespace
}  // namespace memlab
