// Host-only checks of the tile lab: the ladder, the tile rules (edge shapes are refused with a
// reason, never run), alignment contracts, launch planning and run planning.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "harness/fill.hpp"
#include "harness/plan.hpp"
#include "harness/registry.hpp"
#include "lab_helpers.hpp"
#include "labs/tile/tile.hpp"
#include "tile_case.hpp"

namespace memlab::labs::tile {
namespace {

using test::tile_case;

bool mentions(const std::optional<std::string>& why, std::string_view needle) {
  return why && why->find(needle) != std::string::npos;
}

// The value of axis `name` (a number, or a shape's extents) in a planned case.
const axis_value& value(const case_params& p, std::string_view name) {
  for (const auto& [axis_name, v] : p.axes)
    if (axis_name == name) return v;
  throw std::logic_error("the case has no axis " + std::string(name));
}

// A rung of the table by name, as its traits.
const tile_rung& rung(std::string_view name) { return test::variant_of(table(), name).traits_as<tile_rung>(); }

TEST(tile_lab_registry, every_rung_with_its_kernels) {
  const lab& l = table();
  EXPECT_EQ(l.name, "tile");
  std::set<std::string_view> names;
  std::set<const void*> symbols;
  std::size_t kernels = 0;
  for (const auto& v : l.variants) {
    EXPECT_TRUE(names.insert(v.name).second) << v.name << " twice";
    EXPECT_FALSE(v.teaches.empty()) << v.name;
    EXPECT_FALSE(v.peer) << v.name;
    EXPECT_EQ(l.find_variant(v.name), &v) << v.name;
    const auto& r = v.traits_as<tile_rung>();
    ASSERT_NE(r.kernel, nullptr) << v.name;
    EXPECT_TRUE(r.access_bytes == 0 || r.access_bytes == 16) << v.name;
    // A rung with a shape rule beyond the thread layout says so in its needs.
    EXPECT_EQ(!v.needs.shape.empty(), r.static_layout || r.partition == tile_partition::tiled) << v.name;
    // One kernel per dtype (f32, f16), and per compiled shape of a static layout; each by symbol.
    const std::size_t per_dtype = r.static_layout ? static_tiles.size() : 1u;
    EXPECT_EQ(v.kernels.size(), 2 * per_dtype) << v.name;
    for (const auto& k : v.kernels) {
      EXPECT_NE(k.symbol, nullptr) << v.name;
      symbols.insert(k.symbol);
      ++kernels;
    }
    // What setup and launch call is one of the listed kernels.
    for (dtype t : {dtype::f32, dtype::f16}) {
      const auto [rows, cols] = static_tiles[1];
      const void* k = r.kernel(t, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols));
      EXPECT_NE(std::find_if(v.kernels.begin(), v.kernels.end(), [&](const kernel_ref& x) { return x.symbol == k; }),
                v.kernels.end())
          << v.name;
    }
    EXPECT_THROW((void)r.kernel(dtype::f64, 128, 128), std::invalid_argument) << v.name;
  }
  // No kernel belongs to two variants (cute_default vs cute_default_static), nor twice to one.
  EXPECT_EQ(symbols.size(), kernels);
  EXPECT_EQ(test::find_lab("tile"), &l);
  std::vector<std::string_view> axes;
  for (const auto& a : l.axes) axes.push_back(a.name);
  EXPECT_EQ(axes, (std::vector<std::string_view>{"tile", "ctas", "src_offset"}));
}

TEST(tile_rules, a_tile_not_a_multiple_of_the_thread_layout_is_refused_with_the_reason) {
  for (const auto& v : table().variants) {
    const auto& r = v.traits_as<tile_rung>();
    EXPECT_TRUE(mentions(tile_rule(r, 4, 100, 256), "not a multiple of the (8, 32) thread layout")) << v.name;
    EXPECT_TRUE(mentions(tile_rule(r, 4, 128, 250), "not a multiple of the (8, 32) thread layout")) << v.name;
    EXPECT_TRUE(mentions(tile_rule(r, 2, 4, 32), "not a multiple")) << v.name;
    EXPECT_TRUE(mentions(tile_rule(r, 4, 0, 32), "empty")) << v.name;
    EXPECT_TRUE(mentions(tile_rule(r, 4, 1u << 17, 32), "does not fit")) << v.name;
    EXPECT_FALSE(tile_rule(r, 4, 128, 256)) << v.name;
    EXPECT_FALSE(tile_rule(r, 2, 128, 128)) << v.name;
    EXPECT_FALSE(tile_rule(r, 4, 64, 64)) << v.name;
  }
}

TEST(tile_rules, the_contiguous_partition_needs_16_byte_column_pieces) {
  // f32: 8 thread rows x 4 elements = 32 rows; f16: 8 x 8 = 64.
  EXPECT_FALSE(tile_rule(rung("cute_tiled128"), 4, 32, 32));
  EXPECT_TRUE(mentions(tile_rule(rung("cute_tiled128"), 4, 16, 32), "multiple of 32"));
  EXPECT_TRUE(mentions(tile_rule(rung("cute_tiled_autovec128"), 2, 32, 32), "multiple of 64"));
  EXPECT_FALSE(tile_rule(rung("cute_universal"), 2, 32, 32));  // the tutorial's partition takes it
  EXPECT_FALSE(tile_rule(rung("ldgsts_cg16"), 4, 16, 32));
  // Every rung of the contiguous partition, and only those, has the rule.
  for (const auto& v : table().variants) {
    const auto& r = v.traits_as<tile_rung>();
    if (r.static_layout) continue;  // 16x32 is no compiled shape: refused for that first
    EXPECT_EQ(mentions(tile_rule(r, 4, 16, 32), "16-byte column pieces"), r.partition == tile_partition::tiled)
        << v.name;
  }
}

TEST(tile_rules, static_layouts_run_only_the_shapes_they_were_compiled_for) {
  int statics = 0;
  for (const auto& v : table().variants) {
    const auto& r = v.traits_as<tile_rung>();
    if (!r.static_layout) {
      EXPECT_FALSE(tile_rule(r, 4, 64, 128)) << v.name;
      continue;
    }
    for (const auto& [rows, cols] : static_tiles)
      EXPECT_FALSE(tile_rule(r, 4, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols))) << v.name;
    EXPECT_TRUE(mentions(tile_rule(r, 4, 64, 128), "built for 128x256, 128x128, 64x64 only, not 64x128")) << v.name;
    ++statics;
  }
  EXPECT_EQ(statics,
            4);  // cute_universal_static, cute_autovec128_static, cute_default_static, cute_tiled_default_static
  EXPECT_FALSE(rung("cute_default").static_layout);
  EXPECT_TRUE(rung("cute_default_static").static_layout);
}

TEST(tile_lab_unsupported, sizes_must_be_whole_tiles_and_ctas_at_most_the_tiles) {
  const lab& l = table();
  const device_info dev;
  EXPECT_FALSE(test::refusal(l, "ldgsts_cg16", tile_case(dtype::f32, 128, 256, 3), dev));
  case_params ragged = tile_case(dtype::f32, 128, 256, 3);
  ragged.n += 1;
  EXPECT_TRUE(mentions(test::refusal(l, "ldgsts_cg16", ragged, dev), "not a whole number of 128x256 tiles"));
  case_params none = tile_case(dtype::f32, 128, 256, 0);
  EXPECT_TRUE(mentions(test::refusal(l, "cute_universal", none, dev), "smaller than one 128x256 tile"));
  EXPECT_FALSE(test::refusal(l, "ldgsts_cg16", tile_case(dtype::f32, 128, 256, 3, 3), dev));
  EXPECT_TRUE(
      mentions(test::refusal(l, "ldgsts_cg16", tile_case(dtype::f32, 128, 256, 3, 4), dev), "exceeds the 3 tiles"));
  // An unknown variant: the lab has none by that name, and asking for it is an error naming it.
  EXPECT_EQ(l.find_variant("nope"), nullptr);
  try {
    (void)test::refusal(l, "nope", tile_case(dtype::f32, 128, 256, 1), dev);
    ADD_FAILURE() << "an unknown variant was planned";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no variant nope"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(mentions(test::refusal(l, "cute_universal", tile_case(dtype::f64, 128, 256, 1), dev), "f32 and f16"));
  // Shared memory is checked against the device's opt-in limit (227 KiB on sm_90); a device_info
  // without one (0, on the host) checks none.
  device_info small = dev;
  small.smem_per_block_optin = 64 * 1024;
  EXPECT_FALSE(test::refusal(l, "ldgsts_cg16", tile_case(dtype::f32, 128, 128, 1), small));  // exactly 64 KiB
  EXPECT_TRUE(mentions(test::refusal(l, "ldgsts_cg16", tile_case(dtype::f32, 128, 256, 1), small), "shared memory"));
  EXPECT_FALSE(test::refusal(l, "ldgsts_cg16", tile_case(dtype::f32, 128, 256, 1), dev));
}

TEST(tile_lab_unsupported, variants_that_assume_alignment_refuse_a_misaligned_source) {
  const lab& l = table();
  const device_info dev;
  for (const auto& info : l.variants) {
    const int align = info.needs.alignment;  // the contract the lab checks the source against
    const auto p4 = tile_case(dtype::f32, 128, 128, 2, 0, 4);
    const auto p8 = tile_case(dtype::f32, 128, 128, 2, 0, 8);
    const auto p16 = tile_case(dtype::f32, 128, 128, 2, 0, 16);
    EXPECT_FALSE(l.why_not(info, p16, dev)) << info.name;
    EXPECT_EQ(l.why_not(info, p4, dev).has_value(), align > 4) << info.name;
    EXPECT_EQ(l.why_not(info, p8, dev).has_value(), align > 8) << info.name;
    if (align > 4) {
      EXPECT_TRUE(mentions(l.why_not(info, p4, dev), "-byte aligned source")) << info.name;
      EXPECT_TRUE(mentions(l.why_not(info, p4, dev), std::string(info.name) + " assumes a " + std::to_string(align)))
          << info.name;
    }
    // An offset that is not a whole element is refused by every variant.
    EXPECT_TRUE(mentions(l.why_not(info, tile_case(dtype::f32, 128, 128, 2, 0, 2), dev), "not a whole")) << info.name;
  }
  // The contracts: the tutorial's copies run anywhere; what assumes alignment says so.
  const auto alignment = [&](std::string_view name) { return test::variant_of(l, name).needs.alignment; };
  EXPECT_EQ(alignment("cute_universal"), 0);
  EXPECT_EQ(alignment("cute_default"), 0);
  EXPECT_EQ(alignment("cute_autovec64"), 8);
  EXPECT_EQ(alignment("cute_autovec128"), 16);
  EXPECT_EQ(alignment("cute_default_static"), 16);
  EXPECT_EQ(alignment("cute_tiled128"), 16);
  EXPECT_EQ(alignment("ldg_sts16"), 16);
  EXPECT_EQ(alignment("ldgsts_cg16"), 16);
  // No rung of this lab needs more than its alignment: no architecture floor.
  for (const auto& v : l.variants) EXPECT_EQ(v.needs.min_cc, 0) << v.name;
}

TEST(tile_lab_bytes, read_plus_write_of_the_tiles_moved) {
  const lab& l = table();
  const device_info dev;
  // Full grid: every tile; --ctas c: c tiles. Allocation: both copies of what is moved, the
  // source offset, the output guard. The same for every variant that runs the case.
  const auto full = tile_case(dtype::f32, 128, 256, 8);
  const auto one = tile_case(dtype::f32, 128, 256, 8, 1, 4);
  static_assert(guard_bytes == 256);
  int planned_one = 0;
  for (const auto& v : l.variants) {
    ASSERT_FALSE(l.why_not(v, full, dev)) << v.name;
    const case_plan f = l.plan(v, full, dev);
    EXPECT_EQ(f.device_bytes(), 2u * 8u * 128u * 256u * 4u + 256u) << v.name;
    EXPECT_EQ(f.bytes, 2u * 8u * 128u * 256u * 4u) << v.name;
    EXPECT_EQ(f.policy.grid, 8u) << v.name;
    if (l.why_not(v, one, dev)) continue;  // assumes an 8- or 16-byte aligned source
    const case_plan o = l.plan(v, one, dev);
    EXPECT_EQ(o.device_bytes(), 4u + 2u * 128u * 256u * 4u + 256u) << v.name;
    EXPECT_EQ(o.bytes, 2u * 128u * 256u * 4u) << v.name;
    EXPECT_EQ(o.policy.grid, 1u) << v.name;
    ++planned_one;
  }
  EXPECT_GE(planned_one, 1);
}

TEST(tile_plan, policy_reports_the_compiled_access_width_and_the_grid) {
  const auto p = plan(rung("ldgsts_cg16"), 4, 128, 256, 8192);
  EXPECT_EQ(p.threads, 256);
  EXPECT_EQ(p.vec_bytes, 16);
  EXPECT_EQ(p.items_per_thread, 32);  // 128 KiB / 256 threads / 16 B
  EXPECT_EQ(p.grid, 8192u);
  const auto u = plan(rung("cute_universal"), 4, 128, 256, 1);
  EXPECT_EQ(u.vec_bytes, 4);
  EXPECT_EQ(u.items_per_thread, 128);
  EXPECT_EQ(u.grid, 1u);
  EXPECT_EQ(plan(rung("cute_autovec128"), 2, 128, 128, 1).vec_bytes, 2);
  EXPECT_EQ(plan(rung("cute_tiled128"), 2, 128, 128, 1).vec_bytes, 16);
  // Every rung: its traits' width, or one element.
  for (const auto& v : table().variants) {
    const auto& r = v.traits_as<tile_rung>();
    EXPECT_EQ(plan(r, 2, 128, 128, 1).vec_bytes, r.access_bytes != 0 ? r.access_bytes : 2) << v.name;
  }
}

TEST(tile_run_planning, defaults_sweep_two_tiles_and_both_grids) {
  run_request r;
  r.labs = {"tile"};
  const auto cases = plan_cases(r, all_labs());
  ASSERT_EQ(cases.size(), table().variants.size() * 2u * 2u);  // variants x tiles x ctas
  EXPECT_EQ(value(cases.front().p, "tile")[0], 128u);          // rows
  EXPECT_EQ(value(cases.front().p, "tile")[1], 256u);          // cols
  EXPECT_EQ(value(cases.front().p, "ctas")[0], 0u);
  EXPECT_EQ(cases.front().p.n, 1u << 28);
  EXPECT_EQ(value(cases.back().p, "tile")[1], 128u);
  EXPECT_EQ(value(cases.back().p, "ctas")[0], 1u);
}

TEST(tile_run_planning, user_tiles_ctas_and_offsets_replace_the_defaults) {
  run_request r;
  r.labs = {"tile"};
  r.variants = {"ldgsts_cg16"};
  r.dtypes = {dtype::f16};
  r.sizes = "2^20";
  r.axes = {{"tile", "64x64"}, {"ctas", "1"}, {"src_offset", "0,2"}};
  const auto cases = plan_cases(r, all_labs());
  ASSERT_EQ(cases.size(), 2u);
  for (const auto& c : cases) {
    EXPECT_EQ(value(c.p, "tile")[0], 64u);
    EXPECT_EQ(value(c.p, "ctas")[0], 1u);
  }
  EXPECT_EQ(value(cases.back().p, "src_offset")[0], 2u);
}

}  // namespace
}  // namespace memlab::labs::tile
