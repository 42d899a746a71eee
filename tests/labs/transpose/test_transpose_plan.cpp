// Host-only checks of the transpose lab: the shared-memory layouts (every element its own bytes), the
// grouped model of a launch against a replay of every tile, the per-request figures the lab page
// quotes, launch planning, and the refusals.
#include <gtest/gtest.h>

#include <set>
#include <string_view>
#include <vector>

#include "harness/fill.hpp"
#include "lab_helpers.hpp"
#include "labs/transpose/transpose.hpp"

namespace memlab::labs::transpose {
namespace {

// The lab's own tiled rungs, as the table lists them: those the model describes (not the peers, not
// memlab::transpose, whose tiles plan_transpose chooses from the pointers).
std::vector<variant_id> tiled_rungs() {
  std::vector<variant_id> out;
  for (const auto& v : table().variants)
    if (!v.peer && tile_edge(v.traits_as<variant_id>(), 4) > 0) out.push_back(v.traits_as<variant_id>());
  return out;
}
const std::vector<variant_id> kernels = tiled_rungs();

case_params transpose_case(dtype t, std::uint64_t batch, std::uint64_t rows, std::uint64_t cols) {
  return table().make_case(t, batch, {{"shape", axis_value{{rows, cols, 0}, 2}}});
}

// Every element of a tile at its own, element-aligned bytes inside the tile's shared memory.
TEST(transpose_layouts, every_element_has_its_own_bytes) {
  for (std::size_t es : {2u, 4u, 8u}) {
    for (auto v : {variant_id::smem, variant_id::smem_padded, variant_id::smem_swizzled}) {
      std::set<std::uint32_t> seen;
      for (std::uint32_t r = 0; r < tile32; ++r) {
        for (std::uint32_t c = 0; c < tile32; ++c) {
          const std::uint32_t off = smem32_offset(v, es, r, c);
          EXPECT_EQ(off % es, 0u);
          EXPECT_LE(off + es, smem32_bytes(v, es));
          EXPECT_TRUE(seen.insert(off).second) << "es " << es << " (" << r << ", " << c << ")";
        }
      }
    }
    std::set<std::uint32_t> seen;
    for (std::uint32_t r = 0; r < vec_tile; ++r) {
      for (std::uint32_t c = 0; c < vec_tile; ++c) {
        const std::uint32_t off = vec_offset(es, r, c);
        EXPECT_LE(off + es, vec_smem_bytes(es));
        EXPECT_TRUE(seen.insert(off).second) << "es " << es << " (" << r << ", " << c << ")";
        if (c % vec_elems(es) == 0) {
          EXPECT_EQ(off % 16, 0u) << "a vector's slot is 16-byte aligned";
        } else {
          EXPECT_EQ(off, vec_offset(es, r, c - 1) + es) << "a vector's elements stay together, in order";
        }
      }
    }
  }
}

// smem_vec_rows: every element its own bytes; a vector's slot holds its elements, in order or with its
// two 8-byte halves swapped, as rows_slot says.
TEST(transpose_layouts, smem_vec_rows_slots_hold_their_vectors) {
  for (std::size_t es : {2u, 4u, 8u}) {
    const std::uint32_t edge = rows_edge(es), per = vec_elems(es);
    std::set<std::uint32_t> seen;
    for (std::uint32_t r = 0; r < edge; ++r) {
      for (std::uint32_t c = 0; c < edge; ++c) {
        const std::uint32_t off = rows_offset(es, r, c);
        EXPECT_LE(off + es, rows_smem_bytes(es));
        EXPECT_TRUE(seen.insert(off).second) << "es " << es << " (" << r << ", " << c << ")";
        const slot s = rows_slot(es, r, c - c % per);
        EXPECT_EQ(s.offset % 16, 0u);
        const auto k = static_cast<std::uint32_t>((c % per) * es);  // byte of the element in its vector
        EXPECT_EQ(off, s.offset + (s.swap_halves ? (k + 8) % 16 : k)) << "es " << es << " (" << r << ", " << c << ")";
      }
    }
  }
}

// smem_vec's steps cover the tile: every input vector loaded once, every output vector stored once.
TEST(transpose_layouts, smem_vec_steps_cover_the_tile_once) {
  for (std::size_t es : {2u, 4u, 8u}) {
    const std::uint32_t per = vec_elems(es);
    std::set<std::pair<std::uint32_t, std::uint32_t>> loads, stores;
    for (int t = 0; t < vec_threads; ++t) {
      for (int i = 0; i < vec_steps(es); ++i) {
        const tile_pos l = vec_load_pos(es, t, i), s = vec_store_pos(es, t, i);
        EXPECT_LT(l.r, 64u);
        EXPECT_EQ(l.c % per, 0u);
        EXPECT_TRUE(loads.insert({l.r, l.c}).second);
        EXPECT_EQ(s.r % per, 0u);
        EXPECT_LT(s.c, 64u);
        EXPECT_TRUE(stores.insert({s.r, s.c}).second);
      }
    }
    EXPECT_EQ(loads.size(), 64u * 64u / per);
    EXPECT_EQ(stores.size(), 64u * 64u / per);
    // The same for smem_vec_rows' E x E tile; and each warp's store step is two whole output rows.
    const std::uint32_t edge = rows_edge(es);
    loads.clear();
    stores.clear();
    for (int t = 0; t < vec_threads; ++t) {
      for (int i = 0; i < rows_steps(es); ++i) {
        const tile_pos l = rows_load_pos(es, t, i), s = rows_store_pos(es, t, i);
        EXPECT_LT(l.r, edge);
        EXPECT_LT(s.c, edge);
        EXPECT_TRUE(loads.insert({l.r, l.c}).second);
        EXPECT_TRUE(stores.insert({s.r, s.c}).second);
        EXPECT_EQ(s.c, rows_store_pos(es, t - t % 32, i).c + static_cast<std::uint32_t>(t % 32 / 16));
      }
    }
    EXPECT_EQ(loads.size(), edge * edge / per);
    EXPECT_EQ(stores.size(), edge * edge / per);
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
  for (auto v : kernels) {
    for (std::size_t es : {2u, 4u, 8u}) {
      for (const auto& [rows, cols] : shapes) {
        for (std::uint64_t batch : {1u, 3u}) {
          const dims d{batch, rows, cols};
          if (shape_rule(v, es, d)) continue;
          SCOPED_TRACE("v" + std::to_string(static_cast<int>(v)) + " es " + std::to_string(es) + " " +
                       std::to_string(batch) + " x " + std::to_string(rows) + "x" + std::to_string(cols));
          const launch_cost want = brute_force(v, es, d), got = model(v, es, d);
          EXPECT_EQ(got.gld, want.gld);
          EXPECT_EQ(got.gst, want.gst);
          EXPECT_EQ(got.sst, want.sst);
          EXPECT_EQ(got.sld, want.sld);
        }
      }
    }
  }
}

// smem_vec and smem_vec_rows need multiples of V; their cases above are few: these are all of them,
// with odd phases.
TEST(transpose_model, vector_rungs_grouped_model_on_vector_multiples) {
  for (auto v : {variant_id::smem_vec, variant_id::smem_vec_rows}) {
    for (std::size_t es : {2u, 4u, 8u}) {
      const std::uint64_t per = vec_elems(es);
      for (std::uint64_t rows : {per, 3 * per, 17 * per, 33 * per}) {
        for (std::uint64_t cols : {per, 5 * per, 33 * per}) {
          for (std::uint64_t batch : {1u, 2u, 5u}) {
            const dims d{batch, rows, cols};
            ASSERT_FALSE(shape_rule(v, es, d));
            EXPECT_EQ(model(v, es, d), brute_force(v, es, d)) << es << " " << batch << " x " << rows << "x" << cols;
          }
        }
      }
    }
  }
}

struct figures {
  double ld, st, sst, sld;
};

figures per_request(variant_id v, std::size_t es, dims d) {
  const launch_cost c = model(v, es, d);
  return {c.gld.per_request(), c.gst.per_request(), c.sst.per_request(), c.sld.per_request()};
}

// The figures docs/labs/transpose.md quotes: tile multiples, every request full.
TEST(transpose_model, per_request_figures_of_full_tiles) {
  const dims d{1, 256, 512};
  // f32: a warp's 32 elements are 128 B, 4 sectors; a column of a 32-word row-major tile is one bank.
  auto f = per_request(variant_id::naive, 4, d);
  EXPECT_EQ(f.ld, 4);
  EXPECT_EQ(f.st, 32);  // 32 output rows, a sector each
  EXPECT_EQ(f.sst, 0);
  f = per_request(variant_id::smem, 4, d);
  EXPECT_EQ(f.ld, 4);
  EXPECT_EQ(f.st, 4);
  EXPECT_EQ(f.sst, 1);
  EXPECT_EQ(f.sld, 32);
  for (auto v : {variant_id::smem_padded, variant_id::smem_swizzled}) {
    f = per_request(v, 4, d);
    EXPECT_EQ(f.sst, 1);
    EXPECT_EQ(f.sld, 1);
  }
  f = per_request(variant_id::smem_vec, 4, d);
  EXPECT_EQ(f.ld, 16);  // 2 rows x 256 B
  EXPECT_EQ(f.st, 16);  // 4 output rows x 128 B
  EXPECT_EQ(f.sst, 4);  // 512 B of 16-byte stores: 4 wavefronts, the fewest
  EXPECT_EQ(f.sld, 1);
  // f16: 2-byte elements share words. The row-major tile's column: 32 halves in 16 words of 2 banks.
  f = per_request(variant_id::smem, 2, d);
  EXPECT_EQ(f.ld, 2);
  EXPECT_EQ(f.sst, 1);
  EXPECT_EQ(f.sld, 16);
  EXPECT_EQ(per_request(variant_id::smem_padded, 2, d).sld, 1);
  EXPECT_EQ(per_request(variant_id::smem_swizzled, 2, d).sld, 1);
  f = per_request(variant_id::smem_vec, 2, d);
  EXPECT_EQ(f.ld, 16);
  EXPECT_EQ(f.st, 16);  // 8 output rows x 64 B
  EXPECT_EQ(f.sst, 4);
  EXPECT_EQ(f.sld, 1);
  // f64: 8-byte accesses go by half-warps, 2 wavefronts at the least; a column: 16 lanes on one bank pair.
  f = per_request(variant_id::smem, 8, d);
  EXPECT_EQ(f.ld, 8);
  EXPECT_EQ(f.sst, 2);
  EXPECT_EQ(f.sld, 32);
  EXPECT_EQ(per_request(variant_id::smem_padded, 8, d).sld, 2);
  EXPECT_EQ(per_request(variant_id::smem_swizzled, 8, d).sld, 2);
  f = per_request(variant_id::smem_vec, 8, d);
  EXPECT_EQ(f.sst, 4);
  EXPECT_EQ(f.sld, 2);
  EXPECT_EQ(f.st, 16);  // 2 output rows x 256 B
  // smem_vec_rows: every warp request two whole 256-byte rows, the fewest wavefronts both ways.
  for (std::size_t es : {2u, 4u, 8u}) {
    f = per_request(variant_id::smem_vec_rows, es, d);
    EXPECT_EQ(f.ld, 16) << es;
    EXPECT_EQ(f.st, 16) << es;
    EXPECT_EQ(f.sst, 4) << es;
    EXPECT_EQ(f.sld, es == 8 ? 2 : 1) << es;
  }
}

// A row pitch that is not a whole sector puts a warp's row segment across one more sector.
TEST(transpose_model, rows_off_the_sector_grid_cost_a_sector_more) {
  // 64 x 36 f32: 144-byte rows, every odd row starts mid-sector. Tile column 0: 64 requests of 128 B,
  // 4 sectors on even rows, 5 on odd ones; tile column 1: 64 requests of the last 4 elements (16 B),
  // one sector each.
  const launch_cost c = model(variant_id::smem, 4, {1, 64, 36});
  EXPECT_EQ(c.gld.requests, 128u);
  EXPECT_EQ(c.gld.units, 32u * 4 + 32u * 5 + 64u);
}

TEST(transpose_plan, bytes_grid_model_figures_and_refusals) {
  const lab& l = table();
  EXPECT_EQ(test::find_lab("transpose"), &l);
  // The kernels' enum and the table agree: each value is one record's traits, in the enum's order.
  for (std::size_t i = 0; i < l.variants.size(); ++i) {
    EXPECT_EQ(l.variants[i].traits_as<variant_id>(), static_cast<variant_id>(i)) << l.variants[i].name;
  }
  EXPECT_EQ(l.variants.size(), static_cast<std::size_t>(variant_id::copy) + 1);
  const device_info dev;
  const auto p = transpose_case(dtype::f32, 1, 10000, 7000);
  for (const auto& v : l.variants) {
    SCOPED_TRACE(std::string(v.name));
    ASSERT_FALSE(l.why_not(v, p, dev));
    const case_plan c = l.plan(v, p, dev);
    EXPECT_EQ(c.bytes, 2u * 10000 * 7000 * 4);
    EXPECT_EQ(c.device_bytes(), 2u * 10000 * 7000 * 4 + guard_bytes);
    if (v.peer || v.name == "auto") {  // auto: no sector model (its path depends on the pointers)
      EXPECT_EQ(c.hardware_bytes, 0u);
      EXPECT_TRUE(c.model.empty());
    } else {
      EXPECT_GE(c.hardware_bytes, c.bytes);
      EXPECT_GE(c.model.size(), 2u);
    }
  }
  const case_plan vec = test::plan_of(l, "smem_vec", p, dev);
  EXPECT_EQ(vec.policy.grid, 157u * 110u);  // ceil(10000 / 64) x ceil(7000 / 64)
  EXPECT_EQ(vec.policy.vec_bytes, 16);
  EXPECT_EQ(test::plan_of(l, "smem", p, dev).policy.grid, 313u * 219u);
  EXPECT_EQ(test::plan_of(l, "smem_vec_rows", p, dev).policy.grid, 157u * 110u);  // 64 x 64 f32 tiles
  EXPECT_EQ(test::plan_of(l, "auto", p, dev).policy.grid, 157u * 110u);  // the same tiles where rows are aligned
  EXPECT_EQ(test::plan_of(l, "auto", transpose_case(dtype::f32, 1, 12289, 3001), dev).policy.grid,
            220u * 51u);  // 56 x 60: rows of 224 bytes (dst's rows realign), columns of 240 (src's do)
  EXPECT_FALSE(test::refusal(l, "auto", transpose_case(dtype::f16, 1, 4097, 17), dev)) << "any shape";
  EXPECT_EQ(test::plan_of(l, "smem_vec_rows", transpose_case(dtype::f16, 1, 1000, 1000), dev).policy.grid, 8u * 8u);
  EXPECT_EQ(test::plan_of(l, "smem_vec_rows", transpose_case(dtype::f64, 1, 1000, 1000), dev).policy.grid, 32u * 32u);
  // The naive rung's stores are a sector per lane: 8x the bytes for f32.
  const case_plan naive = test::plan_of(l, "naive", transpose_case(dtype::f32, 1, 4096, 4096), dev);
  EXPECT_EQ(naive.hardware_bytes, 4096u * 4096 * 4 + 4096u * 4096 * 32);
  // A batch is n matrices.
  EXPECT_EQ(test::plan_of(l, "smem", transpose_case(dtype::f16, 3, 100, 50), dev).bytes, 2u * 3 * 100 * 50 * 2);
  EXPECT_EQ(test::plan_of(l, "smem", transpose_case(dtype::f16, 3, 100, 50), dev).policy.grid, 3u * 4 * 2);
  // Refusals: smem_vec needs rows and cols multiples of V, with the reason.
  const auto odd = test::refusal(l, "smem_vec", transpose_case(dtype::f32, 1, 4097, 4096), dev);
  ASSERT_TRUE(odd);
  EXPECT_NE(odd->find("multiples of 4"), std::string::npos) << *odd;
  EXPECT_TRUE(test::refusal(l, "smem_vec", transpose_case(dtype::f16, 1, 4096, 4100), dev));
  EXPECT_FALSE(test::refusal(l, "smem_vec", transpose_case(dtype::f64, 1, 4098, 4096), dev));
  EXPECT_FALSE(test::refusal(l, "smem", transpose_case(dtype::f32, 1, 4097, 17), dev));
  const auto huge =
      test::refusal(l, "naive", transpose_case(dtype::f64, std::uint64_t{1} << 40, 1u << 12, 1u << 12), dev);
  ASSERT_TRUE(huge);
  EXPECT_NE(huge->find("2^62"), std::string::npos) << *huge;
  // The peers have no tiles to order: any band but the default is refused, with the reason.
  const auto band_case =
      table().make_case(dtype::f32, 1, {{"shape", axis_value{{64, 64, 0}, 2}}, {"band", axis_value{{8, 0, 0}, 1}}});
  EXPECT_FALSE(test::refusal(l, "smem_vec", band_case, dev));
  const auto peer_band = test::refusal(l, "cublas", band_case, dev);
  ASSERT_TRUE(peer_band);
  EXPECT_NE(peer_band->find("--band"), std::string::npos) << *peer_band;
  EXPECT_FALSE(test::refusal(l, "copy", transpose_case(dtype::f32, 1, 64, 64), dev)) << "the default band runs";
  // Empty matrices plan nothing to launch.
  EXPECT_EQ(test::plan_of(l, "smem_vec", transpose_case(dtype::f32, 1, 0, 64), dev).policy.grid, 0u);
  EXPECT_EQ(test::plan_of(l, "naive", transpose_case(dtype::f32, 0, 64, 64), dev).policy.grid, 0u);
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
