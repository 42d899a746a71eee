// Every transpose variant x dtype x edge shapes (0, 1, 15, 16, 17, 127, 128, 129, 4095, 4096, 4097
// rows against a few column counts, and the other way round), batches, and the default non-square
// shape, on the GPU, compared with the CPU reference: byte for byte for memlab's kernels and the copy,
// value for value for cuBLAS (a NaN for a NaN). Shapes the 16-byte rungs cannot move are asserted
// as refusals with their reason. Without a GPU every test here reports SKIPPED.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_fixture.hpp"
#include "harness/device.hpp"
#include "harness/lab.hpp"
#include "lab_helpers.hpp"
#include "labs/transpose/transpose.hpp"

namespace memlab {
namespace {

using labs::transpose::table;

struct transpose_gpu : test::gpu_test<::testing::TestWithParam<std::tuple<std::string, dtype>>> {};

case_params transpose_case(dtype t, std::uint64_t batch, std::uint64_t rows, std::uint64_t cols) {
  return table().make_case(t, batch, {{"shape", axis_value{{rows, cols, 0}, 2}}});
}

case_params banded_case(dtype t, std::uint64_t batch, std::uint64_t rows, std::uint64_t cols, std::uint64_t band) {
  return table().make_case(t, batch,
                           {{"shape", axis_value{{rows, cols, 0}, 2}}, {"band", axis_value{{band, 0, 0}, 1}}});
}

// Runs the case, or, where the variant refuses it, checks that the refusal is the 16-byte rungs'
// alignment rule (the only one an edge shape meets) or, for a rung without tiles of the lab's, the
// band's. Returns whether it ran.
bool run_or_refused(const std::string& name, const case_params& p, const device_info& dev) {
  const std::size_t es = size_of(p.type);
  if (const auto why = test::refusal(table(), name, p, dev)) {
    const auto& tile = test::traits_of<labs::transpose::rung_traits>(table(), name).tile;
    if (!labs::transpose::has_tiles(tile)) {  // they take the default --band only
      EXPECT_NE(why->find("--band"), std::string::npos) << *why;
      return false;
    }
    EXPECT_NE(tile.vec_bytes, 0) << name << ": " << *why;
    EXPECT_NE(why->find("multiples of " + std::to_string(16 / es)), std::string::npos) << *why;
    const auto s = p.shape(*table().find_axis("shape"));
    EXPECT_TRUE(s[0] % (16 / es) != 0 || s[1] % (16 / es) != 0) << *why;
    return false;
  }
  auto c = test::prepare(table(), name, p, dev);
  EXPECT_EQ(test::run_and_verify(c), "");
  return true;
}

TEST_P(transpose_gpu, edge_shapes) {
  const auto& [name, type] = GetParam();
  const std::vector<std::uint64_t> edges{0, 1, 15, 16, 17, 127, 128, 129, 4095, 4096, 4097};
  const std::vector<std::uint64_t> others{1, 17, 128, 129};
  int ran = 0;
  for (const std::uint64_t a : edges) {
    for (const std::uint64_t b : others) {
      for (const auto& [rows, cols] : {std::pair{a, b}, std::pair{b, a}}) {
        SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
        ran += run_or_refused(name, transpose_case(type, 1, rows, cols), dev) ? 1 : 0;
      }
    }
  }
  EXPECT_GT(ran, 0);
}

// Square and near-square shapes around a 64-element tile edge, batches of them, and the default
// non-square shape.
TEST_P(transpose_gpu, batches_and_large_shapes) {
  const auto& [name, type] = GetParam();
  for (const std::uint64_t batch : {0u, 1u, 3u}) {
    for (const auto& [rows, cols] : {std::pair<std::uint64_t, std::uint64_t>{64, 64}, {63, 65}, {96, 40}, {200, 328}}) {
      for (const std::uint64_t band : {1u, 3u}) {
        SCOPED_TRACE(std::to_string(batch) + " x " + std::to_string(rows) + " x " + std::to_string(cols) + " band " +
                     std::to_string(band));
        run_or_refused(name, banded_case(type, batch, rows, cols, band), dev);
      }
    }
  }
  SCOPED_TRACE("a band taller than the matrix, a last band thinner than the others");
  run_or_refused(name, banded_case(type, 2, 1000, 520, 64), dev);
  run_or_refused(name, banded_case(type, 1, 2000, 1000, 7), dev);
  SCOPED_TRACE("4096 x 4100 and 10000 x 7000");
  run_or_refused(name, transpose_case(type, 1, 4096, 4100), dev);
  if (type == dtype::f32) {
    EXPECT_TRUE(run_or_refused(name, transpose_case(type, 1, 10000, 7000), dev));
  }
}

// Poison without a launch: the checker must see the unwritten output (the check is not vacuous).
TEST_P(transpose_gpu, checker_catches_an_unwritten_output) {
  const auto& [name, type] = GetParam();
  auto c = test::prepare(table(), name, transpose_case(type, 2, 64, 72), dev);
  reset(c);
  const std::string diff = c.l->verify(c);
  EXPECT_FALSE(diff.empty());
  if (diff.find("values compared") == std::string::npos) {  // cuBLAS's check compares values, not bytes
    EXPECT_NE(diff.find("never written"), std::string::npos) << diff;
  }
}

INSTANTIATE_TEST_SUITE_P(all, transpose_gpu,
                         ::testing::Combine(::testing::ValuesIn(test::variant_names(table())),
                                            ::testing::Values(dtype::f16, dtype::f32, dtype::f64)),
                         test::variant_dtype_name{});
// The element types only memlab::transpose and the copy move (the lab's kernels are f16, f32, f64).
INSTANTIATE_TEST_SUITE_P(library_types, transpose_gpu,
                         ::testing::Combine(::testing::Values(std::string("auto"), std::string("copy")),
                                            ::testing::Values(dtype::u8, dtype::bf16)),
                         test::variant_dtype_name{});

}  // namespace
}  // namespace memlab
