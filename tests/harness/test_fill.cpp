// The random test data: fresh seeds, never-zero bytes, host and device agreeing by construction.
#include <gtest/gtest.h>

#include <set>

#include "harness/fill.hpp"

namespace memlab {
namespace {

TEST(fill_seed, next_seed_never_repeats) {
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 10000; ++i) EXPECT_TRUE(seen.insert(next_seed()).second) << "draw " << i;
}

TEST(fill_bytes, random_bytes_are_never_the_poison_and_differ_between_seeds) {
  int same = 0;
  for (std::uint64_t k = 0; k < 100000; ++k) {
    EXPECT_NE(random_byte(1, k), poison_byte) << k;
    same += random_byte(1, k) == random_byte(2, k);
  }
  EXPECT_LT(same, 100000 / 100);  // about 1 in 255 by chance
}

}  // namespace
}  // namespace memlab
