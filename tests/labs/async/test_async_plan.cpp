// Host-only checks of the async lab: the ladder, the split of the payload, every refusal (with its
// reason: alignment, stages, tiles, shared memory, device features) and the launch policies.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "harness/sizes.hpp"
#include "lab_helpers.hpp"
#include "labs/async/async.hpp"

namespace memlab::labs::async {
namespace {

bool mentions(const std::optional<std::string>& why, std::string_view needle) {
  return why && why->find(needle) != std::string::npos;
}

case_params async_case(dtype t, std::uint64_t n, std::uint64_t src_offset = 0, std::uint64_t smem_offset = 0,
                       std::uint64_t stages = 1, std::uint64_t tile = default_tile_bytes) {
  return table().make_case(t, n,
                           {{"src_offset", axis_value{{src_offset, 0, 0}, 1}},
                            {"smem_offset", axis_value{{smem_offset, 0, 0}, 1}},
                            {"stages", axis_value{{stages, 0, 0}, 1}},
                            {"tile_bytes", axis_value{{tile, 0, 0}, 1}}});
}

device_info h100() {
  device_info d;
  d.cc_major = 9;
  d.sm_count = 132;
  d.max_threads_per_sm = 2048;
  d.smem_per_block_optin = 227 * 1024;
  return d;
}

const variant& rung(std::string_view name) { return test::variant_of(table(), name); }

TEST(async_lab, every_rung_of_memlab_has_a_path_and_its_kernels_the_peers_come_last) {
  const lab& l = table();
  bool seen_peer = false;
  for (const auto& v : l.variants) {
    const auto& t = v.traits_as<rung_traits>();
    EXPECT_EQ(v.peer, t.path == tile_path::library) << v.name;
    EXPECT_EQ(v.peer, t.kernel == nullptr) << v.name;
    if (!v.peer) {
      EXPECT_FALSE(seen_peer) << v.name << " comes after a peer";
      EXPECT_FALSE(v.kernels.empty()) << v.name;
      EXPECT_EQ(v.needs.alignment, t.access_bytes) << v.name << ": the needs state the path's access width";
    }
    seen_peer = seen_peer || v.peer;
    for (const auto& k : v.kernels) EXPECT_TRUE(k.symbol != nullptr || k.instantiated_with != nullptr) << v.name;
  }
  // One kernel per write-back width the path can meet, per stage count, or one.
  const auto kernels = [&](std::string_view name) { return test::variant_of(l, name).kernels.size(); };
  EXPECT_EQ(kernels("ldg_sts4"), 3u);
  EXPECT_EQ(kernels("ldgsts_ca8"), 2u);
  EXPECT_EQ(kernels("ldgsts_cg16"), 1u);
  EXPECT_EQ(kernels("pipelined"), 4u);
  EXPECT_EQ(kernels("divergent_commit"), 4u);
  EXPECT_EQ(kernels("tma_tensor"), 1u);
  EXPECT_EQ(kernels("memcpy"), 0u);
  // The tile axis's default is the constant the peers' rule compares with.
  const auto tiles = parse_axis(*l.find_axis("tile_bytes"), l.find_axis("tile_bytes")->defaults);
  ASSERT_EQ(tiles.size(), 1u);
  EXPECT_EQ(tiles[0][0], default_tile_bytes);
}

TEST(async_model, the_payload_splits_into_tiles_and_a_short_tail) {
  // 17 f32 = 68 bytes: 64 through shared memory, 4 byte by byte.
  auto g = geometry(rung("ldgsts_cg16"), 68, 16384);
  EXPECT_EQ(g.main, 64u);
  EXPECT_EQ(g.tiles, 1u);
  g = geometry(rung("tma_tensor"), 68, 16384);  // rows of 256 bytes: all tail
  EXPECT_EQ(g.main, 0u);
  EXPECT_EQ(g.tiles, 0u);
  g = geometry(rung("tma_tensor"), 4097 * 4, 4096);
  EXPECT_EQ(g.main, 16384u);
  EXPECT_EQ(g.tiles, 4u);
  g = geometry(rung("ldg_sts4"), (1u << 20) + 20, 16384);
  EXPECT_EQ(g.main, (1u << 20) + 16);
  EXPECT_EQ(g.tiles, 65u);  // 64 whole tiles and one of 16 bytes
  EXPECT_EQ(geometry(rung("memcpy"), 100, 16384).main, 0u);
}

TEST(async_model, writeback_is_as_wide_as_the_tiles_alignment_allows) {
  EXPECT_EQ(writeback_bytes(0), 16);
  EXPECT_EQ(writeback_bytes(48), 16);
  EXPECT_EQ(writeback_bytes(8), 8);
  EXPECT_EQ(writeback_bytes(24), 8);
  EXPECT_EQ(writeback_bytes(4), 4);
  EXPECT_EQ(writeback_bytes(100), 4);
}

TEST(async_lab, alignment_refusals_say_which_address_and_why) {
  const lab& l = table();
  const device_info d = h100();
  // cp.async 16 B: both addresses 16-byte aligned.
  EXPECT_TRUE(mentions(test::refusal(l, "ldgsts_cg16", async_case(dtype::f32, 1024, 4), d), "16-byte aligned"));
  EXPECT_TRUE(mentions(test::refusal(l, "ldgsts_cg16", async_case(dtype::f32, 1024, 4), d), "cp.async of 16 bytes"));
  EXPECT_TRUE(mentions(test::refusal(l, "ldgsts_ca16", async_case(dtype::f32, 1024, 0, 8), d), "shared tile 16-byte"));
  EXPECT_TRUE(mentions(test::refusal(l, "ldg_sts16", async_case(dtype::f32, 1024, 8), d), "16-byte vectors"));
  EXPECT_TRUE(mentions(test::refusal(l, "ldgsts_ca8", async_case(dtype::f32, 1024, 4), d), "8-byte aligned"));
  EXPECT_TRUE(mentions(test::refusal(l, "tma_bulk", async_case(dtype::f32, 1024, 0, 4), d), "cp.async.bulk"));
  EXPECT_TRUE(mentions(test::refusal(l, "tma_tensor", async_case(dtype::f32, 1024, 0, 16), d), "128-byte"));
  // What runs: 4-byte paths at any word offset, 16-byte paths at multiples of 16, TMA tensor's
  // shared tile at multiples of 128.
  for (std::uint64_t off = 0; off <= 128; off += 4) {
    EXPECT_FALSE(test::refusal(l, "ldg_sts4", async_case(dtype::f32, 1024, off, off), d)) << off;
    EXPECT_FALSE(test::refusal(l, "ldgsts_ca4", async_case(dtype::f32, 1024, off, off), d)) << off;
    for (const char* v : {"ldg_sts16", "ldgsts_ca16", "ldgsts_cg16", "tma_bulk"})
      EXPECT_EQ(test::refusal(l, v, async_case(dtype::f32, 1024, off, off), d).has_value(), off % 16 != 0) << v << off;
    EXPECT_EQ(test::refusal(l, "tma_tensor", async_case(dtype::f32, 1024, 16, off), d).has_value(), off % 128 != 0);
  }
  // Element alignment comes first, for every variant, the peers too.
  for (const auto& v : l.variants)
    EXPECT_TRUE(mentions(test::refusal(l, v.name, async_case(dtype::f64, 100, 4), d), "whole 8-byte element"))
        << v.name;
}

TEST(async_lab, stages_tiles_and_peers) {
  const lab& l = table();
  const device_info d = h100();
  for (const char* v : {"ldg_sts16", "ldgsts_cg16", "tma_bulk"})
    EXPECT_TRUE(mentions(test::refusal(l, v, async_case(dtype::f32, 1024, 0, 0, 2), d), "one tile per CTA")) << v;
  for (std::uint64_t s = 1; s <= 4; ++s) {
    EXPECT_FALSE(test::refusal(l, "pipelined", async_case(dtype::f32, 1024, 0, 0, s), d));
    EXPECT_FALSE(test::refusal(l, "divergent_commit", async_case(dtype::f32, 1024, 0, 0, s), d));
  }
  EXPECT_TRUE(
      mentions(test::refusal(l, "ldgsts_cg16", async_case(dtype::f32, 1024, 0, 0, 1, 100), d), "multiple of 16"));
  EXPECT_TRUE(
      mentions(test::refusal(l, "tma_tensor", async_case(dtype::f32, 1024, 0, 0, 1, 4112), d), "256-byte rows"));
  EXPECT_TRUE(
      mentions(test::refusal(l, "tma_tensor", async_case(dtype::f32, 1024, 0, 0, 1, 128 * 1024), d), "at most 256"));
  EXPECT_FALSE(test::refusal(l, "tma_tensor", async_case(dtype::f32, 1024, 0, 0, 1, 64 * 1024), d));
  // Shared memory: 4 stages of 64 KiB do not fit in 227 KiB; one tile of 226 KiB does.
  EXPECT_TRUE(mentions(test::refusal(l, "pipelined", async_case(dtype::f32, 1024, 0, 0, 4, 64 * 1024), d),
                       "4 stages x 65536 B"));
  EXPECT_FALSE(test::refusal(l, "ldgsts_cg16", async_case(dtype::f32, 1024, 0, 0, 1, 226 * 1024), d));
  EXPECT_TRUE(mentions(test::refusal(l, "tma_bulk", async_case(dtype::f32, 1024, 0, 128, 1, 227 * 1024), d),
                       "this device allows"));
  // The peers: any element offset, nothing of memlab's shared memory, stages or tiles.
  for (const char* v : {"cub", "memcpy"}) {
    EXPECT_FALSE(test::refusal(l, v, async_case(dtype::f32, 1024, 4), d)) << v;
    EXPECT_TRUE(mentions(test::refusal(l, v, async_case(dtype::f32, 1024, 0, 16), d), "--smem-offset")) << v;
    EXPECT_TRUE(mentions(test::refusal(l, v, async_case(dtype::f32, 1024, 0, 0, 4), d), "--stages")) << v;
    EXPECT_TRUE(
        mentions(test::refusal(l, v, async_case(dtype::f32, 1024, 0, 0, 1, 2 * default_tile_bytes), d), "--tile-bytes"))
        << v;
  }
}

TEST(async_lab, tma_needs_sm_90) {
  device_info a100 = h100();
  a100.cc_major = 8;
  for (const char* v : {"tma_bulk", "tma_tensor"})
    EXPECT_TRUE(mentions(test::refusal(table(), v, async_case(dtype::f32, 1024), a100), "sm_90 or newer")) << v;
  EXPECT_FALSE(test::refusal(table(), "ldgsts_cg16", async_case(dtype::f32, 1024), a100));
}

TEST(async_model, launch_policies) {
  const case_shape big{4, 1u << 28, 0, 0, 1, 16384};
  // One CTA per 16 KiB tile: 1 GiB / 16 KiB.
  auto p = plan(rung("ldgsts_cg16"), big, 132);
  EXPECT_EQ(p.grid, 65536u);
  EXPECT_EQ(p.threads, threads_per_cta);
  EXPECT_EQ(p.vec_bytes, 16);
  EXPECT_EQ(p.items_per_thread, 4);  // 16 KiB / 256 threads / 16 B
  EXPECT_EQ(plan(rung("ldg_sts4"), big, 132).items_per_thread, 16);
  // The pipeline: one CTA per SM, its stages in the policy.
  case_shape staged = big;
  staged.stages = 3;
  p = plan(rung("pipelined"), staged, 132);
  EXPECT_EQ(p.grid, 132u);
  EXPECT_EQ(p.stages, 3);
  // TMA: a warp per CTA, one instruction per tile.
  p = plan(rung("tma_bulk"), big, 132);
  EXPECT_EQ(p.threads, tma_threads);
  EXPECT_EQ(p.vec_bytes, 16384);
  EXPECT_EQ(p.grid, 65536u);
  // Only a tail: one CTA; nothing at all: none. A few tiles: never more pipelined CTAs than tiles.
  EXPECT_EQ(plan(rung("tma_tensor"), case_shape{4, 17, 0, 0, 1, 16384}, 132).grid, 1u);
  EXPECT_EQ(plan(rung("ldgsts_cg16"), case_shape{4, 0, 0, 0, 1, 16384}, 132).grid, 0u);
  staged.n = 3 * 16384 / 4;
  EXPECT_EQ(plan(rung("pipelined"), staged, 132).grid, 3u);
  EXPECT_EQ(plan(rung("cub"), big, 132).grid, 0u);
}

TEST(async_lab, plans_declare_two_bytes_per_payload_byte) {
  const auto p = async_case(dtype::f16, 1000, 6);
  for (const auto& v : table().variants) {
    if (test::refusal(table(), v.name, p, h100())) continue;
    const case_plan c = test::plan_of(table(), v.name, p, h100());
    EXPECT_EQ(c.bytes, 4000u) << v.name;
    ASSERT_EQ(c.buffers.size(), 2u);
    EXPECT_EQ(c.buffers[0].bytes, 2006u) << "the source to its exact end";
    EXPECT_EQ(c.buffers[1].bytes, 2000u);
  }
}

}  // namespace
}  // namespace memlab::labs::async
