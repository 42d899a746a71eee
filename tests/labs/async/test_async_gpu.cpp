// Every async variant x dtype x edge size x source and shared offsets (and stages, tile sizes) on the
// GPU, compared byte for byte with the CPU reference (guard and poison checked). An offset a path
// cannot take is asserted as a refusal that names the alignment. Without a GPU every test here
// reports SKIPPED.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_fixture.hpp"
#include "harness/device.hpp"
#include "lab_helpers.hpp"
#include "labs/async/async.hpp"

namespace memlab {
namespace {

using labs::async::default_tile_bytes;
using test::edge_sizes;

case_params async_case(dtype t, std::uint64_t n, std::uint64_t so, std::uint64_t mo, std::uint64_t stages,
                       std::uint64_t tile) {
  return labs::async::table().make_case(t, n,
                                        {{"src_offset", axis_value{{so, 0, 0}, 1}},
                                         {"smem_offset", axis_value{{mo, 0, 0}, 1}},
                                         {"stages", axis_value{{stages, 0, 0}, 1}},
                                         {"tile_bytes", axis_value{{tile, 0, 0}, 1}}});
}

struct async_gpu : test::gpu_test<::testing::TestWithParam<std::tuple<std::string, dtype>>> {
  // Runs and verifies the case, or asserts that its refusal is an alignment one.
  void run_or_refused(const std::string& name, const case_params& p, int& ran, int& refused) {
    const lab& l = labs::async::table();
    if (const auto why = test::refusal(l, name, p, dev)) {
      EXPECT_TRUE(why->find("aligned") != std::string::npos || why->find("element") != std::string::npos) << *why;
      ++refused;
      return;
    }
    auto c = test::prepare(l, name, p, dev);
    ASSERT_EQ(test::run_and_verify(c), "");
    ++ran;
  }
};

bool is_peer(const std::string& name) { return test::variant_of(labs::async::table(), name).peer; }
bool is_staged(const std::string& name) {
  return test::variant_of(labs::async::table(), name).traits_as<labs::async::rung_traits>().pipelined;
}

TEST_P(async_gpu, edge_sizes_and_offsets) {
  const auto& [name, type] = GetParam();
  const std::uint64_t es = size_of(type);
  int ran = 0, refused = 0;
  // Source offsets: every element up to 16 bytes, and the 16-byte steps of the alignment sweep.
  std::vector<std::uint64_t> src;
  for (std::uint64_t o = 0; o < 16; o += es) src.push_back(o);
  for (std::uint64_t o : {16u, 48u, 128u}) src.push_back(o);
  const std::vector<std::uint64_t> smem =
      is_peer(name) ? std::vector<std::uint64_t>{0} : std::vector<std::uint64_t>{0, 4, 8, 16, 128};
  const std::uint64_t stages = is_staged(name) ? 3 : 1;
  for (const std::uint64_t so : src) {
    for (const std::uint64_t mo : smem) {
      for (const std::uint64_t n : edge_sizes) {
        SCOPED_TRACE("n=" + std::to_string(n) + " src+" + std::to_string(so) + " smem+" + std::to_string(mo));
        run_or_refused(name, async_case(type, n, so, mo, stages, default_tile_bytes), ran, refused);
      }
    }
  }
  EXPECT_GE(ran, static_cast<int>(edge_sizes.size()));
}

// Tiles that are not powers of two, a tile smaller than a CTA's chunks, many tiles with a partial
// last one, and every stage count of the pipelines. The peers refuse every tile but the default and
// every stage count but 1, with the flag in the reason.
TEST_P(async_gpu, tiles_and_stages) {
  const auto& [name, type] = GetParam();
  const lab& l = labs::async::table();
  const std::uint64_t es = size_of(type);
  const std::uint64_t n = (3u << 20) / es + 37;  // 3 MiB and a few elements: a partial tile, a tail
  int ran = 0, refused = 0;
  for (std::uint64_t tile : {256u, 4096u, 12288u, 65536u}) {
    for (std::uint64_t stages = 1; stages <= 4; ++stages) {
      SCOPED_TRACE("tile=" + std::to_string(tile) + " stages=" + std::to_string(stages));
      const case_params p = async_case(type, n, 0, 0, stages, tile);
      if ((is_peer(name) && (tile != default_tile_bytes || stages > 1)) || (!is_staged(name) && stages > 1)) {
        const auto why = test::refusal(l, name, p, dev);
        ASSERT_TRUE(why);
        EXPECT_TRUE(why->find(stages > 1 ? "--stages" : "--tile-bytes") != std::string::npos) << *why;
        continue;
      }
      if (stages * tile > static_cast<std::uint64_t>(dev.smem_per_block_optin)) {
        const auto why = test::refusal(l, name, p, dev);  // 4 stages of 64 KiB: more than a CTA may have
        ASSERT_TRUE(why);
        EXPECT_NE(why->find("B of shared memory per CTA"), std::string::npos) << *why;
        continue;
      }
      run_or_refused(name, p, ran, refused);
    }
  }
  EXPECT_EQ(refused, 0);
}

// A DRAM-sized copy, 64 MiB and 3 elements (more CTAs than fit at once; the pipelines' CTAs stream
// many tiles each), the source 16 bytes off.
TEST_P(async_gpu, a_large_copy) {
  const auto& [name, type] = GetParam();
  int ran = 0, refused = 0;
  run_or_refused(name,
                 async_case(type, (std::uint64_t{64} << 20) / size_of(type) + 3, 16, 0, is_staged(name) ? 4 : 1,
                            default_tile_bytes),
                 ran, refused);
  EXPECT_EQ(ran, 1);
}

// Poison without a launch: the checker must see the unwritten output (the check is not vacuous).
TEST_P(async_gpu, checker_catches_an_unwritten_output) {
  const auto& [name, type] = GetParam();
  auto c = test::prepare(labs::async::table(), name, async_case(type, 129, 0, 0, 1, default_tile_bytes), dev);
  reset(c);
  const std::string diff = c.l->verify(c);
  EXPECT_NE(diff.find("never written"), std::string::npos) << diff;
}

INSTANTIATE_TEST_SUITE_P(all, async_gpu,
                         ::testing::Combine(::testing::ValuesIn(test::variant_names(labs::async::table())),
                                            ::testing::ValuesIn(all_dtypes().begin(), all_dtypes().end())),
                         test::variant_dtype_name{});

}  // namespace
}  // namespace memlab
