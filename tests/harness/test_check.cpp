// The harness's tolerance check (check_close) and its parallel scan, on host arrays. The byte-exact
// check (check_bytes) reads device memory: the GPU tests of every lab exercise it, including its
// "never written" and out-of-bounds messages.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "harness/check.hpp"

namespace memlab {
namespace {

TEST(first_where, finds_the_first_match_also_when_split_over_threads) {
  EXPECT_EQ(first_where(0, [](std::uint64_t) { return true; }), 0u);
  EXPECT_EQ(first_where(10, [](std::uint64_t i) { return i == 7; }), 7u);
  EXPECT_EQ(first_where(10, [](std::uint64_t) { return false; }), 10u);
  const std::uint64_t big = 5u << 20;  // large enough for several workers
  EXPECT_EQ(first_where(big, [](std::uint64_t i) { return i == 3 || i == big - 1; }), 3u);
  EXPECT_EQ(first_where(big, [&](std::uint64_t i) { return i >= big - 2; }), big - 2);
}

TEST(check_close, accepts_within_tol_plus_relative_eps) {
  const std::vector<double> ref{1.0, -2.0, 1000.0, 0.0};
  const std::vector<float> got{1.0f + 1e-6f, -2.0f, 1000.0f + 1e-3f, 1e-7f};
  EXPECT_EQ(check_close(got.data(), ref.data(), ref.size(), 1e-6, 2e-6), "");
}

TEST(check_close, names_the_first_element_off_and_by_how_much) {
  const std::vector<double> ref{1.0, 2.0, 3.0};
  const std::vector<double> got{1.0, 2.5, 9.0};
  const std::string diff = check_close(got.data(), ref.data(), 3, 1e-3, 1e-6,
                                       [](std::uint64_t i) { return "(row " + std::to_string(i) + ")"; });
  EXPECT_NE(diff.find("element 1 is 2.5, expected 2"), std::string::npos) << diff;
  EXPECT_NE(diff.find("|error| 0.5"), std::string::npos) << diff;
  EXPECT_NE(diff.find("(row 1)"), std::string::npos) << diff;
}

TEST(check_close, nan_and_infinity_never_pass) {
  const std::vector<double> ref{1.0, std::numeric_limits<double>::infinity()};
  for (const double bad : {std::nan(""), std::numeric_limits<double>::infinity()}) {
    const std::vector<double> got{bad, std::numeric_limits<double>::infinity()};
    EXPECT_NE(check_close(got.data(), ref.data(), 1, 1e300, 1e300), "") << bad;
  }
}

}  // namespace
}  // namespace memlab
