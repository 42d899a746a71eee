// The shared-memory bank simulator against cases whose answer is known by hand.
#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>

#include "harness/bank_model.hpp"

namespace memlab {
namespace {

// Lane l at byte `base + l * stride_bytes`.
warp_addresses strided(std::uint32_t stride_bytes, std::uint32_t base = 0) {
  warp_addresses a;
  for (std::uint32_t l = 0; l < 32; ++l) a[l] = base + l * stride_bytes;
  return a;
}

TEST(bank_model, four_byte_strides_conflict_by_their_gcd_with_32) {
  for (std::uint32_t s = 1; s <= 64; ++s) {
    const auto r = shared_request(strided(4 * s), 4);
    EXPECT_EQ(r.wavefronts, static_cast<int>(std::gcd(s, 32u))) << "stride " << s << " words";
    EXPECT_EQ(r.ideal, 1);
  }
  EXPECT_DOUBLE_EQ(shared_request(strided(4 * 32), 4).conflict_degree(), 32.0);
}

TEST(bank_model, one_word_of_padding_per_row_removes_a_32_way_conflict) {
  EXPECT_EQ(shared_request(strided(4 * 33), 4).wavefronts, 1);
}

TEST(bank_model, lanes_reading_one_word_share_it) {
  warp_addresses same;
  same.fill(std::uint32_t{64});
  EXPECT_EQ(shared_request(same, 4).wavefronts, 1);
  warp_addresses two_words;
  for (std::uint32_t l = 0; l < 32; ++l) two_words[l] = l % 2 == 0 ? 0u : 128u;  // bank 0, two words
  EXPECT_EQ(shared_request(two_words, 4).wavefronts, 2);
}

TEST(bank_model, wide_accesses_need_their_minimum_of_wavefronts) {
  EXPECT_EQ(shared_request(strided(8), 8).wavefronts, 2);    // 256 B: half-warps
  EXPECT_EQ(shared_request(strided(16), 16).wavefronts, 4);  // 512 B: quarter-warps
  EXPECT_EQ(shared_request(strided(16), 16).ideal, 4);
  // A 16-byte access per lane, rows of 128 B apart: every lane of a quarter-warp on banks 0..3.
  EXPECT_EQ(shared_request(strided(128), 16).wavefronts, 4 * 8);
  // Padding each 128-byte row by 16 bytes restores the minimum.
  EXPECT_EQ(shared_request(strided(144), 16).wavefronts, 4);
}

TEST(bank_model, inactive_lanes_take_nothing_and_bad_requests_are_refused) {
  warp_addresses one;
  one[5] = 40;
  EXPECT_EQ(shared_request(one, 4).wavefronts, 1);
  EXPECT_EQ(shared_request(warp_addresses{}, 4).wavefronts, 0);
  EXPECT_EQ(shared_request(warp_addresses{}, 4).ideal, 0);
  EXPECT_THROW((void)shared_request(strided(4), 2), std::invalid_argument);
  EXPECT_THROW((void)shared_request(strided(4), 8), std::invalid_argument);  // not 8-byte aligned
}

}  // namespace
}  // namespace memlab
