// Host-only checks of the transpose lab: the shared-memory layouts (every element its own bytes), the
// grouped model of a launch against a replay of every tile, the per-request figures the lab page
// quotes, launch planning, and the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string_view>
#include <vector>

#include "harness/fill.hpp"
#include "harness/plan.hpp"
#include "lab_helpers.hpp"
#include "labs/transpose/transpose.hpp"

namespace memlab::labs::transpose {
namespace {

// The lab's own rungs, as the table lists them: those with a tile the model describes (not the peers,
// not memlab::transpose, whose tiles plan_transpose chooses from the pointers).
struct tiled_rung {
  std::string_view name;
  tile_traits tile;
};
std::vector<tiled_rung> tiled_rungs() {
  std::vector<tiled_rung> out;
  for (const auto& v : table().variants) {
    const tile_traits& t = v.traits_as<rung_traits>().tile;
    if (has_tiles(t)) out.push_back({v.name, t});
  }
  return out;
}
const std::vector<tiled_rung> rungs = tiled_rungs();

case_params transpose_case(dtype t, std::uint64_t batch, std::uint64_t rows, std::uint64_t cols) {
  return table().make_case(t, batch, {{"shape", axis_value{{rows, cols, 0}, 2}}});
}

// Every element of a tile at its own, element-aligned bytes inside the tile's shared memory; for the
// 16-byte rungs, a vector's slot (vector_slot) holds its elements, in order or with its two 8-byte halves
// swapped, 16-byte aligned.
TEST(transpose_layouts, every_element_has_its_own_bytes) {
  for (const auto& [name, t] : rungs) {
    if (t.layout == smem_layout::none) continue;
    for (std::size_t es : {2u, 4u, 8u}) {
      SCOPED_TRACE(std::string(name) + " es " + std::to_string(es));
      const std::uint32_t edge = tile_edge(t, es), per = access_elems(t, es);
      std::set<std::uint32_t> seen;
      for (std::uint32_t r = 0; r < edge; ++r) {
        for (std::uint32_t c = 0; c < edge; ++c) {
          const std::uint32_t off = smem_offset(t, es, r, c);
          EXPECT_EQ(off % es, 0u);
          EXPECT_LE(off + es, smem_bytes(t, es));
          EXPECT_TRUE(seen.insert(off).second) << "(" << r << ", " << c << ")";
          const slot s = vector_slot(t, es, r, c - c % per);
          EXPECT_EQ(s.offset % (per * es), 0u) << "a vector's slot is aligned to its size";
          const auto k = static_cast<std::uint32_t>((c % per) * es);  // byte of the element in its vector
          EXPECT_EQ(off, s.offset + (s.swap_halves ? (k + 8) % 16 : k)) << "(" << r << ", " << c << ")";
        }
      }
    }
  }
}

// The 16-byte rungs' steps cover the tile: every input vector loaded once, every output vector stored
// once; a warp's store step covers whole output rows (along_rows) or V rows x 32 / V vectors (down_rows).
TEST(transpose_layouts, vector_steps_cover_the_tile_once) {
  for (const auto& [name, t] : rungs) {
    if (t.vec_bytes == 0) continue;
    for (std::size_t es : {2u, 4u, 8u}) {
      SCOPED_TRACE(std::string(name) + " es " + std::to_string(es));
      const std::uint32_t edge = tile_edge(t, es), per = access_elems(t, es);
      std::set<std::pair<std::uint32_t, std::uint32_t>> loads, stores;
      for (int tid = 0; tid < t.threads; ++tid) {
        for (int i = 0; i < tile_steps(t, es); ++i) {
          const tile_pos l = vector_load_pos(t, es, tid, i), s = vector_store_pos(t, es, tid, i);
          EXPECT_LT(l.r, edge);
          EXPECT_EQ(l.c % per, 0u);
          EXPECT_TRUE(loads.insert({l.r, l.c}).second);
          EXPECT_EQ(s.r % per, 0u);
          EXPECT_LT(s.c, edge);
          EXPECT_TRUE(stores.insert({s.r, s.c}).second);
          const tile_pos first = vector_store_pos(t, es, tid - tid % 32, i);  // lane 0 of the warp
          const auto lane = static_cast<std::uint32_t>(tid % 32);
          if (t.lanes == store_lanes::along_rows) {
            const std::uint32_t per_row = edge / per;
            EXPECT_EQ(s.c, first.c + lane / per_row);
            EXPECT_EQ(s.r, per * (lane % per_row));
          } else {
            EXPECT_EQ(s.c, first.c + lane % per);
            EXPECT_EQ(s.r, first.r + per * (lane / per));
          }
        }
      }
      EXPECT_EQ(loads.size(), edge * edge / per);
      EXPECT_EQ(stores.size(), edge * edge / per);
    }
  }
}

// Every band order visits every tile of a matrix exactly once.
TEST(transpose_layouts, tile_order_is_a_permutation_of_the_tiles) {
  for (std::uint64_t tiles_r : {1u, 2u, 5u, 16u, 17u}) {
    for (std::uint64_t tiles_c : {1u, 3u, 8u}) {
      for (std::uint64_t band : {1u, 2u, 4u, 8u, 100u}) {
        std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
        for (std::uint64_t k = 0; k < tiles_r * tiles_c; ++k) {
          const tile_rc t = tile_order(k, tiles_r, tiles_c, band);
          EXPECT_LT(t.tr, tiles_r);
          EXPECT_LT(t.tc, tiles_c);
          seen.insert({t.tr, t.tc});
        }
        EXPECT_EQ(seen.size(), tiles_r * tiles_c) << tiles_r << " x " << tiles_c << " band " << band;
      }
    }
  }
  // band 1: along the rows of tiles; band 2: down pairs of tile rows.
  EXPECT_EQ(tile_order(1, 4, 4, 1).tc, 1u);
  EXPECT_EQ(tile_order(1, 4, 4, 2).tr, 1u);
  EXPECT_EQ(tile_order(2, 4, 4, 2).tc, 1u);
}

TEST(transpose_model, grouped_model_matches_a_replay_of_every_tile) {
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> shapes{
      {0, 5},   {5, 0},   {1, 1},   {1, 37},  {37, 1},  {15, 17},  {16, 16},  {31, 33}, {32, 32},
      {33, 31}, {64, 64}, {65, 67}, {100, 3}, {3, 100}, {130, 72}, {72, 130}, {8, 200}, {200, 8}};
  for (const auto& [name, t] : rungs) {
    for (std::size_t es : {2u, 4u, 8u}) {
      for (const auto& [rows, cols] : shapes) {
        for (std::uint64_t batch : {1u, 3u}) {
          const dims d{batch, rows, cols};
          if (shape_rule(name, t, es, d)) continue;
          SCOPED_TRACE(std::string(name) + " es " + std::to_string(es) + " " + std::to_string(batch) + " x " +
                       std::to_string(rows) + "x" + std::to_string(cols));
          const launch_cost want = brute_force(t, es, d), got = model(t, es, d);
          EXPECT_EQ(got.gld, want.gld);
          EXPECT_EQ(got.gst, want.gst);
          EXPECT_EQ(got.sst, want.sst);
          EXPECT_EQ(got.sld, want.sld);
        }
      }
    }
  }
}

// The 16-byte rungs need multiples of V; their cases above are few: these are all of them, with odd
// phases.
TEST(transpose_model, vector_rungs_grouped_model_on_vector_multiples) {
  for (const auto& [name, t] : rungs) {
    if (t.vec_bytes == 0) continue;
    for (std::size_t es : {2u, 4u, 8u}) {
      const std::uint64_t per = access_elems(t, es);
      for (std::uint64_t rows : {per, 3 * per, 17 * per, 33 * per}) {
        for (std::uint64_t cols : {per, 5 * per, 33 * per}) {
          for (std::uint64_t batch : {1u, 2u, 5u}) {
            const dims d{batch, rows, cols};
            ASSERT_FALSE(shape_rule(name, t, es, d));
            EXPECT_EQ(model(t, es, d), brute_force(t, es, d))
                << name << " " << es << " " << batch << " x " << rows << "x" << cols;
          }
        }
      }
    }
  }
}

// The figures docs/labs/transpose.md quotes, for every rung from what its tile says: tile multiples,
// every request full.
//   global: a warp request moves 32 lanes x the access width in whole sectors, both ways; without shared
//     memory the stores go down a column of `out`, a sector per lane;
//   shared: the fewest wavefronts a request of 32 lanes x its width can take (a 2-byte access is served by
//     its word; 8-byte ones go by half-warps: 2 at the least), for the stores of every layout and the
//     loads of every one but row-major, whose column reads are conflicted: 32 lanes on one bank (f32),
//     32 halves in 16 words of 2 banks (f16: 16), 16 lanes of each half-warp on one bank pair (f64: 32).
TEST(transpose_model, per_request_figures_of_full_tiles) {
  const dims d{1, 256, 512};
  const auto fewest = [](int width) { return std::max(1.0, 32.0 * width / 128); };
  int conflicted = 0;
  for (const auto& [name, t] : rungs) {
    for (std::size_t es : {2u, 4u, 8u}) {
      SCOPED_TRACE(std::string(name) + " es " + std::to_string(es));
      const int width = t.vec_bytes == 0 ? static_cast<int>(es) : t.vec_bytes;
      const launch_cost c = model(t, es, d);
      EXPECT_EQ(c.gld.per_request(), width);
      if (t.layout == smem_layout::none) {
        EXPECT_EQ(c.gst.per_request(), 32);  // 32 output rows, a sector each
        EXPECT_EQ(c.sst.requests + c.sld.requests, 0u);
        continue;
      }
      EXPECT_EQ(c.gst.per_request(), width);
      EXPECT_EQ(c.sst.per_request(), fewest(width));
      if (t.layout == smem_layout::row_major) {
        EXPECT_EQ(c.sld.per_request(), es == 2 ? 16 : 32);
        ++conflicted;
      } else {
        EXPECT_EQ(c.sld.per_request(), fewest(static_cast<int>(es)));
      }
    }
  }
  EXPECT_GT(conflicted, 0) << "the ladder shows a bank conflict";
}

// A row pitch that is not a whole sector puts a warp's row segment across one more sector.
TEST(transpose_model, rows_off_the_sector_grid_cost_a_sector_more) {
  // 64 x 36 f32: 144-byte rows, every odd row starts mid-sector. Columns 0..31: 64 requests of 128 B,
  // 4 sectors on even rows, 5 on odd ones; columns 32..35: 64 requests of 16 B, one sector each.
  for (const auto& [name, t] : rungs) {
    if (t.vec_bytes != 0) continue;
    const launch_cost c = model(t, 4, {1, 64, 36});
    EXPECT_EQ(c.gld.requests, 128u) << name;
    EXPECT_EQ(c.gld.units, 32u * 4 + 32u * 5 + 64u) << name;
  }
}

TEST(transpose_plan, bytes_grid_model_figures_and_refusals) {
  const lab& l = table();
  EXPECT_EQ(test::find_lab("transpose"), &l);
  const device_info dev;
  const auto p = transpose_case(dtype::f32, 1, 10000, 7000);
  for (const auto& v : l.variants) {
    SCOPED_TRACE(std::string(v.name));
    const tile_traits& t = v.traits_as<rung_traits>().tile;
    ASSERT_FALSE(l.why_not(v, p, dev));
    const case_plan c = l.plan(v, p, dev);
    EXPECT_EQ(c.bytes, 2u * 10000 * 7000 * 4);
    EXPECT_EQ(c.device_bytes(), 2u * 10000 * 7000 * 4 + guard_bytes);
    if (!has_tiles(t)) {  // auto: no sector model (its path depends on the pointers)
      EXPECT_EQ(c.hardware_bytes, 0u);
      EXPECT_TRUE(c.model.empty());
      continue;
    }
    EXPECT_GE(c.hardware_bytes, c.bytes);
    EXPECT_EQ(c.model.size(), t.layout == smem_layout::none ? 2u : 4u);
    // A CTA per tile; f32 tiles of 256-byte rows are 64 x 64.
    const std::uint64_t e = tile_edge(t, 4);
    EXPECT_EQ(c.policy.grid, ((10000 + e - 1) / e) * ((7000 + e - 1) / e));
    EXPECT_EQ(c.policy.vec_bytes, t.vec_bytes == 0 ? 4 : t.vec_bytes);
    EXPECT_EQ(c.policy.threads * c.policy.items_per_thread * (t.vec_bytes == 0 ? 1 : t.vec_bytes / 4),
              static_cast<int>(e * e))
        << "the steps of a CTA cover its tile";
    // A batch is n matrices.
    const case_plan three = l.plan(v, transpose_case(dtype::f16, 3, 104, 48), dev);
    const std::uint64_t e2 = tile_edge(t, 2);
    EXPECT_EQ(three.bytes, 2u * 3 * 104 * 48 * 2);
    EXPECT_EQ(three.policy.grid, 3 * ((104 + e2 - 1) / e2) * ((48 + e2 - 1) / e2));
    // Empty matrices plan nothing to launch.
    EXPECT_EQ(l.plan(v, transpose_case(dtype::f32, 1, 0, 64), dev).policy.grid, 0u);
    EXPECT_EQ(l.plan(v, transpose_case(dtype::f32, 0, 64, 64), dev).policy.grid, 0u);
    // Refusals: the 16-byte rungs need rows and cols multiples of V, with the reason; the others take any
    // shape; any band runs.
    const auto odd = l.why_not(v, transpose_case(dtype::f32, 1, 4097, 4096), dev);
    if (t.vec_bytes == 0) {
      EXPECT_FALSE(odd);
      EXPECT_FALSE(l.why_not(v, transpose_case(dtype::f16, 1, 4097, 17), dev));
    } else {
      ASSERT_TRUE(odd);
      EXPECT_NE(odd->find("multiples of 4"), std::string::npos) << *odd;
      EXPECT_TRUE(l.why_not(v, transpose_case(dtype::f16, 1, 4096, 4100), dev));
      EXPECT_FALSE(l.why_not(v, transpose_case(dtype::f64, 1, 4098, 4096), dev));
    }
  }
  EXPECT_EQ(test::plan_of(l, "auto", p, dev).policy.grid, 157u * 110u);  // 64 x 64 f32 tiles where rows are aligned
  EXPECT_EQ(test::plan_of(l, "auto", transpose_case(dtype::f32, 1, 12289, 3001), dev).policy.grid,
            220u * 51u);  // 56 x 60: rows of 224 bytes (dst's rows realign), columns of 240 (src's do)
  EXPECT_FALSE(test::refusal(l, "auto", transpose_case(dtype::f16, 1, 4097, 17), dev)) << "any shape";
  // The naive rung's stores are a sector per lane: 8x the bytes for f32.
  const case_plan naive = test::plan_of(l, "naive", transpose_case(dtype::f32, 1, 4096, 4096), dev);
  EXPECT_EQ(naive.hardware_bytes, 4096u * 4096 * 4 + 4096u * 4096 * 32);
  const auto huge =
      test::refusal(l, "naive", transpose_case(dtype::f64, std::uint64_t{1} << 40, 1u << 12, 1u << 12), dev);
  ASSERT_TRUE(huge);
  EXPECT_NE(huge->find("2^62"), std::string::npos) << *huge;
  // A rung without tiles of the lab's has none to order: any band but the default is refused, with the
  // reason; every rung with tiles takes any band.
  const auto band_case =
      table().make_case(dtype::f32, 1, {{"shape", axis_value{{64, 64, 0}, 2}}, {"band", axis_value{{8, 0, 0}, 1}}});
  for (const auto& v : l.variants) {
    const auto why = l.why_not(v, band_case, dev);
    if (has_tiles(v.traits_as<rung_traits>().tile)) {
      EXPECT_FALSE(why) << v.name;
    } else {
      ASSERT_TRUE(why) << v.name;
      EXPECT_NE(why->find("--band"), std::string::npos) << *why;
      EXPECT_FALSE(l.why_not(v, transpose_case(dtype::f32, 1, 64, 64), dev)) << "the default band runs";
    }
  }
}

// The lab's dtypes come from its rungs: memlab::transpose and the copy move any element size, the tiles f16, f32
// and f64, cuBLAS likewise; a run of u8 plans the rungs that move u8 and no others.
TEST(transpose_plan, dtypes_come_from_the_rungs_and_u8_runs_the_library) {
  const lab& l = table();
  EXPECT_EQ(l.dtypes, rung_dtypes(l.variants));
  EXPECT_EQ(l.dtypes, (std::vector<dtype>{dtype::u8, dtype::f16, dtype::bf16, dtype::f32, dtype::f64}));
  const std::vector<const lab*> labs{&l};
  run_request r;
  r.labs = {"transpose"};
  r.dtypes = {dtype::u8};
  r.axes = {{"shape", "1000x777"}};
  std::vector<std::string_view> planned;
  for (const auto& c : plan_cases(r, labs)) planned.push_back(c.v->name);
  EXPECT_EQ(planned, (std::vector<std::string_view>{"auto", "copy"}));
  r.variants = {"smem_vec"};
  try {
    (void)plan_cases(r, labs);
    ADD_FAILURE() << "a rung that does not move u8 was planned";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--dtype: no chosen rung of lab transpose moves u8: smem_vec (f16, f32, f64)"),
              std::string::npos)
        << e.what();
  }
  const device_info dev;
  const auto why = l.why_not(*l.find_variant("smem"), transpose_case(dtype::u8, 1, 64, 64), dev);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("smem moves f16, f32, f64 only, not u8"), std::string::npos) << *why;
  EXPECT_FALSE(l.why_not(*l.find_variant("auto"), transpose_case(dtype::u8, 1, 64, 64), dev));
}

TEST(transpose_reference, output_element_e_comes_from_the_transposed_position) {
  // 2 matrices of 3 x 4: out[b][c][r] = in[b][r][c].
  const std::uint64_t rows = 3, cols = 4;
  for (std::uint64_t b = 0; b < 2; ++b)
    for (std::uint64_t c = 0; c < cols; ++c)
      for (std::uint64_t r = 0; r < rows; ++r)
        EXPECT_EQ(source_element(b * 12 + c * rows + r, rows, cols), b * 12 + r * cols + c);
}

}  // namespace
}  // namespace memlab::labs::transpose
