// Host-only checks of the tile lab: the ladder, the tile rules (edge shapes are refused with a
// reason, never run), alignment contracts, launch planning and run planning.
#include <gtest/gtest.h>

#include "harness/runner.hpp"
#include "labs/tile/tile.hpp"
#include "tile_case.hpp"

namespace memlab::labs::tile {
namespace {

using test::tile_case;

bool mentions(const std::optional<std::string>& why, std::string_view needle) {
  return why && why->find(needle) != std::string::npos;
}

TEST(tile_lab_registry, ladder_in_order_with_kernel_names) {
  const lab& l = tile_lab();
  EXPECT_EQ(l.name(), "tile");
  std::vector<std::string_view> names;
  for (const auto& v : l.variants()) names.push_back(v.name);
  EXPECT_EQ(names, (std::vector<std::string_view>{
                       "cute_universal", "cute_autovec64", "cute_autovec128", "cute_default", "cute_universal_static",
                       "cute_autovec128_static", "cute_default_static", "cute_tiled_universal", "cute_tiled_default",
                       "cute_tiled_default_static", "cute_tiled_autovec128", "cute_tiled128", "ldg_sts16", "ldgsts16"}));
  for (const auto& v : l.variants()) {
    EXPECT_FALSE(v.teaches.empty()) << v.name;
    ASSERT_EQ(v.kernel_name_contains.size(), 1u) << v.name;
    EXPECT_FALSE(v.peer) << v.name;
    EXPECT_EQ(variant_by_name(v.name).has_value(), true) << v.name;
  }
  // No kernel fragment matches another variant's kernel (cute_default vs cute_default_static).
  for (const auto& a : l.variants())
    for (const auto& b : l.variants())
      if (a.name != b.name) {
        const std::string kernel_b = "tile_kernel<memlab::labs::tile::" + std::string(b.name) + (is_static(*variant_by_name(b.name)) ? "<128, 256>, float>" : ", float>");
        EXPECT_EQ(kernel_b.find(a.kernel_name_contains[0]), std::string::npos) << a.name << " matches " << b.name;
      }
  EXPECT_EQ(find_lab("tile"), &l);
  const auto axes = l.axes();
  EXPECT_EQ(std::vector<axis>(axes.begin(), axes.end()), (std::vector<axis>{axis::tile, axis::ctas, axis::src_offset}));
}

TEST(tile_rules, a_tile_not_a_multiple_of_the_thread_layout_is_refused_with_the_reason) {
  for (std::size_t v = 0; v < variant_count; ++v) {
    const auto id = static_cast<variant_id>(v);
    EXPECT_TRUE(mentions(tile_rule(id, 4, 100, 256), "not a multiple of the (8, 32) thread layout")) << v;
    EXPECT_TRUE(mentions(tile_rule(id, 4, 128, 250), "not a multiple of the (8, 32) thread layout")) << v;
    EXPECT_TRUE(mentions(tile_rule(id, 2, 4, 32), "not a multiple")) << v;
    EXPECT_TRUE(mentions(tile_rule(id, 4, 0, 32), "empty")) << v;
    EXPECT_TRUE(mentions(tile_rule(id, 4, 1u << 17, 32), "does not fit")) << v;
    EXPECT_FALSE(tile_rule(id, 4, 128, 256)) << v;
    EXPECT_FALSE(tile_rule(id, 2, 128, 128)) << v;
    EXPECT_FALSE(tile_rule(id, 4, 64, 64)) << v;
  }
}

TEST(tile_rules, the_contiguous_partition_needs_16_byte_column_pieces) {
  // f32: 8 thread rows x 4 elements = 32 rows; f16: 8 x 8 = 64.
  EXPECT_FALSE(tile_rule(variant_id::cute_tiled128, 4, 32, 32));
  EXPECT_TRUE(mentions(tile_rule(variant_id::cute_tiled128, 4, 16, 32), "multiple of 32"));
  EXPECT_TRUE(mentions(tile_rule(variant_id::cute_tiled_autovec128, 2, 32, 32), "multiple of 64"));
  EXPECT_FALSE(tile_rule(variant_id::cute_universal, 2, 32, 32));  // the tutorial's partition takes it
  EXPECT_FALSE(tile_rule(variant_id::ldgsts16, 4, 16, 32));
}

TEST(tile_rules, static_layouts_run_only_the_shapes_they_were_compiled_for) {
  for (auto v : {variant_id::cute_universal_static, variant_id::cute_autovec128_static, variant_id::cute_default_static,
                 variant_id::cute_tiled_default_static}) {
    EXPECT_TRUE(is_static(v));
    for (const auto& [r, c] : static_tiles) EXPECT_FALSE(tile_rule(v, 4, static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(c)));
    EXPECT_TRUE(mentions(tile_rule(v, 4, 64, 128), "built for 128x256, 128x128, 64x64 only, not 64x128"));
  }
  EXPECT_FALSE(is_static(variant_id::cute_default));
  EXPECT_FALSE(tile_rule(variant_id::cute_default, 4, 64, 128));
}

TEST(tile_lab_unsupported, sizes_must_be_whole_tiles_and_ctas_at_most_the_tiles) {
  const lab& l = tile_lab();
  const device_info dev;
  EXPECT_FALSE(l.unsupported("ldgsts16", tile_case(dtype::f32, 128, 256, 3), dev));
  case_params ragged = tile_case(dtype::f32, 128, 256, 3);
  ragged.n += 1;
  EXPECT_TRUE(mentions(l.unsupported("ldgsts16", ragged, dev), "not a whole number of 128x256 tiles"));
  case_params none = tile_case(dtype::f32, 128, 256, 0);
  EXPECT_TRUE(mentions(l.unsupported("cute_universal", none, dev), "smaller than one 128x256 tile"));
  EXPECT_FALSE(l.unsupported("ldgsts16", tile_case(dtype::f32, 128, 256, 3, 3), dev));
  EXPECT_TRUE(mentions(l.unsupported("ldgsts16", tile_case(dtype::f32, 128, 256, 3, 4), dev), "exceeds the 3 tiles"));
  EXPECT_TRUE(mentions(l.unsupported("nope", tile_case(dtype::f32, 128, 256, 1), dev), "unknown variant"));
  EXPECT_TRUE(mentions(l.unsupported("cute_universal", tile_case(dtype::f64, 128, 256, 1), dev), "f32 and f16"));
}

TEST(tile_lab_unsupported, variants_that_assume_alignment_refuse_a_misaligned_source) {
  const lab& l = tile_lab();
  const device_info dev;
  for (const auto& info : l.variants()) {
    const auto v = *variant_by_name(info.name);
    const int align = required_alignment(v);
    const auto p4 = tile_case(dtype::f32, 128, 128, 2, 0, 4);
    const auto p8 = tile_case(dtype::f32, 128, 128, 2, 0, 8);
    const auto p16 = tile_case(dtype::f32, 128, 128, 2, 0, 16);
    EXPECT_FALSE(l.unsupported(info.name, p16, dev)) << info.name;
    EXPECT_EQ(l.unsupported(info.name, p4, dev).has_value(), align > 4) << info.name;
    EXPECT_EQ(l.unsupported(info.name, p8, dev).has_value(), align > 8) << info.name;
    if (align > 4) {
      EXPECT_TRUE(mentions(l.unsupported(info.name, p4, dev), "-byte aligned source")) << info.name;
    }
    // An offset that is not a whole element is refused by every variant.
    EXPECT_TRUE(mentions(l.unsupported(info.name, tile_case(dtype::f32, 128, 128, 2, 0, 2), dev), "not a whole")) << info.name;
  }
  // The contracts: the tutorial's copies run anywhere; what assumes alignment says so.
  EXPECT_EQ(required_alignment(variant_id::cute_universal), 0);
  EXPECT_EQ(required_alignment(variant_id::cute_default), 0);
  EXPECT_EQ(required_alignment(variant_id::cute_autovec64), 8);
  EXPECT_EQ(required_alignment(variant_id::cute_autovec128), 16);
  EXPECT_EQ(required_alignment(variant_id::cute_default_static), 16);
  EXPECT_EQ(required_alignment(variant_id::cute_tiled128), 16);
  EXPECT_EQ(required_alignment(variant_id::ldg_sts16), 16);
  EXPECT_EQ(required_alignment(variant_id::ldgsts16), 16);
}

TEST(tile_lab_bytes, read_plus_write_of_the_tiles_moved) {
  const lab& l = tile_lab();
  // Full grid: every tile; --ctas c: c tiles. Allocation: both copies of what is moved, the
  // source offset, the output guard.
  const auto full = tile_case(dtype::f32, 128, 256, 8);
  const auto one = tile_case(dtype::f32, 128, 256, 8, 1, 4);
  EXPECT_EQ(l.device_bytes(full), 2u * 8u * 128u * 256u * 4u + 256u);
  EXPECT_EQ(l.device_bytes(one), 4u + 2u * 128u * 256u * 4u + 256u);
}

TEST(tile_plan, policy_reports_the_compiled_access_width_and_the_grid) {
  const auto p = plan(variant_id::ldgsts16, 4, 128, 256, 8192);
  EXPECT_EQ(p.threads, 256);
  EXPECT_EQ(p.vec_bytes, 16);
  EXPECT_EQ(p.items_per_thread, 32);  // 128 KiB / 256 threads / 16 B
  EXPECT_EQ(p.grid, 8192u);
  const auto u = plan(variant_id::cute_universal, 4, 128, 256, 1);
  EXPECT_EQ(u.vec_bytes, 4);
  EXPECT_EQ(u.items_per_thread, 128);
  EXPECT_EQ(u.grid, 1u);
  EXPECT_EQ(plan(variant_id::cute_autovec128, 2, 128, 128, 1).vec_bytes, 2);
  EXPECT_EQ(plan(variant_id::cute_tiled128, 2, 128, 128, 1).vec_bytes, 16);
}

TEST(tile_run_planning, defaults_sweep_two_tiles_and_both_grids) {
  run_request r;
  r.labs = {"tile"};
  const auto cases = plan_cases(r);
  ASSERT_EQ(cases.size(), variant_count * 2u * 2u);  // variants x tiles x ctas
  EXPECT_EQ(cases.front().p.rows, 128u);
  EXPECT_EQ(cases.front().p.cols, 256u);
  EXPECT_EQ(cases.front().p.ctas, 0u);
  EXPECT_EQ(cases.front().p.n, 1u << 28);
  EXPECT_EQ(cases.back().p.cols, 128u);
  EXPECT_EQ(cases.back().p.ctas, 1u);
}

TEST(tile_run_planning, user_tiles_ctas_and_offsets_replace_the_defaults) {
  run_request r;
  r.labs = {"tile"};
  r.variants = {"ldgsts16"};
  r.dtypes = {dtype::f16};
  r.sizes = "2^20";
  r.axes.tile = {{64, 64}};
  r.axes.ctas = {1};
  r.axes.src_offset = {0, 2};
  const auto cases = plan_cases(r);
  ASSERT_EQ(cases.size(), 2u);
  for (const auto& c : cases) {
    EXPECT_EQ(c.p.rows, 64u);
    EXPECT_EQ(c.p.ctas, 1u);
  }
  EXPECT_EQ(cases.back().p.src_offset, 2u);
}

}  // namespace
}  // namespace memlab::labs::tile
