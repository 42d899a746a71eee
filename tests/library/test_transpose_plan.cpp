// memlab::plan_transpose and the geometry its kernels share with it (transpose_plan.hpp), on the host:
// which path every element size and alignment takes; the tiles; a replay of every load and store the
// kernels issue, from the same functions, checking that each output byte is written exactly once (by a
// 16-byte store at a 16-byte boundary or a narrow one of this tile's own bytes), that each load is an
// aligned 16-byte chunk inside src except the buffer's first and last, and that every stored vector's
// bytes were loaded by its lane or the next; and the shared-memory requests of the tile, through the bank
// simulator: the fewest wavefronts each. Pure host code: no GPU, no CUDA runtime.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "harness/bank_model.hpp"
#include "memlab/transpose_plan.hpp"

namespace memlab {
namespace {

// The plan's geometry (memlab/detail/transpose_geometry.hpp): what these tests replay.
using namespace memlab::detail;

constexpr copy_device h100{132, 2048, 9};
constexpr std::uintptr_t base = std::uintptr_t{1} << 40;  // 256-byte aligned, as cudaMalloc gives

transpose_path path_at(std::uintptr_t dst_off, std::uintptr_t src_off, std::uint64_t rows, std::uint64_t cols,
                       std::size_t es) {
  return plan_transpose(base + dst_off, 2 * base + src_off, 1, rows, cols, es, h100).path;
}

TEST(transpose_plan, the_acceptance_shapes_take_the_paths_the_notes_say) {
  EXPECT_EQ(path_at(0, 0, 16384, 16384, 4), transpose_path::aligned);
  EXPECT_EQ(path_at(0, 0, 10000, 7000, 4), transpose_path::aligned);
  EXPECT_EQ(path_at(0, 0, 12289, 3001, 4), transpose_path::realign_both);
  EXPECT_EQ(path_at(0, 0, 8191, 8193, 2), transpose_path::realign_both);
  EXPECT_EQ(path_at(0, 0, 16411, 8191, 1), transpose_path::realign_both);
  EXPECT_EQ(path_at(0, 0, 8193, 4099, 8), transpose_path::elem8);
  EXPECT_EQ(path_at(1, 1, 8193, 4099, 8), transpose_path::realign_both);  // elements not 8-byte aligned
  EXPECT_EQ(path_at(0, 0, 4096, 4095, 4), transpose_path::realign_in);    // rows of src 16380 bytes
  EXPECT_EQ(path_at(0, 0, 4095, 4096, 4), transpose_path::realign_out);   // rows of dst 16380 bytes
}

TEST(transpose_plan, every_element_size_and_offset_pair) {
  for (const std::size_t es : {1u, 2u, 4u, 8u}) {
    for (std::uintptr_t so = 0; so < 16; ++so) {
      for (std::uintptr_t doff = 0; doff < 16; ++doff) {
        for (const auto& [rows, cols] :
             {std::pair<std::uint64_t, std::uint64_t>{1000, 1000}, {1000, 999}, {999, 1000}, {1031, 4097}}) {
          SCOPED_TRACE(std::to_string(es) + "-byte, src+" + std::to_string(so) + " dst+" + std::to_string(doff) + " " +
                       std::to_string(rows) + " x " + std::to_string(cols));
          const bool in = so == 0 && cols * es % 16 == 0, out = doff == 0 && rows * es % 16 == 0;
          const transpose_path p = path_at(doff, so, rows, cols, es);
          const bool elem8 = es == 8 && so % 8 == 0 && doff % 8 == 0 && !in && !out;
          EXPECT_EQ(p == transpose_path::elem8, elem8);
          EXPECT_EQ(realigns_in(p), !in && !elem8);
          EXPECT_EQ(realigns_out(p), !out && !elem8);
          EXPECT_EQ(p == transpose_path::aligned, in && out);
        }
      }
    }
  }
}

TEST(transpose_plan, edges_none_copy_and_unsupported) {
  for (const std::size_t es : {0u, 3u, 5u, 16u}) {
    EXPECT_EQ(plan_transpose(base, 2 * base, 1, 4, 4, es, h100).path, transpose_path::unsupported) << es;
  }
  EXPECT_EQ(plan_transpose(base, 2 * base, 0, 4, 4, 4, h100).path, transpose_path::none);
  EXPECT_EQ(plan_transpose(base, 2 * base, 1, 0, 4, 4, h100).path, transpose_path::none);
  EXPECT_EQ(plan_transpose(base, 2 * base, 1, 4, 0, 4, h100).path, transpose_path::none);
  EXPECT_EQ(plan_transpose(base, 2 * base, 1, 4, 0, 4, h100).grid, 0u);
  EXPECT_EQ(plan_transpose(base, 2 * base, std::uint64_t{1} << 40, 1 << 20, 1 << 20, 8, h100).path,
            transpose_path::unsupported)
      << "more than 2^62 bytes";
  // One row or one column: the same bytes in the same order, planned as memlab::copy plans them.
  for (const auto& [batch, rows, cols] : {std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>{1, 1, 1},
                                          {1, 1, 1000},
                                          {1, 1000, 1},
                                          {7, 1, 33},
                                          {7, 33, 1}}) {
    const transpose_plan p = plan_transpose(base + 3, 2 * base + 1, batch, rows, cols, 2, h100);
    EXPECT_EQ(p.path, transpose_path::copy);
    const copy_plan c = plan_copy(base + 3, 2 * base + 1, batch * rows * cols * 2, h100);
    EXPECT_EQ(p.copy.path, c.path);
    EXPECT_EQ(p.copy.head + p.copy.vectors * static_cast<std::size_t>(p.copy.vec_bytes) + p.copy.tail,
              batch * rows * cols * 2);
  }
}

TEST(transpose_plan, tiles_cover_the_batch_and_rows_are_256_bytes) {
  for (const std::size_t es : {1u, 2u, 4u, 8u}) {
    for (std::uintptr_t so : {0u, 1u}) {
      for (std::uintptr_t doff : {0u, 2u}) {
        const transpose_plan p = plan_transpose(base + doff, 2 * base + so, 3, 1000, 777, es, h100);
        if (p.path == transpose_path::elem8) continue;  // transpose_plan.elem8_for_8_byte_elements
        SCOPED_TRACE(std::to_string(es) + "-byte, src+" + std::to_string(so) + " " + to_string(p.path));
        EXPECT_EQ(p.tile_rows * static_cast<int>(es), realigns_out(p.path) ? 224 : 256)
            << "an output row of a tile: 256 bytes, 224 where stores realign";
        EXPECT_EQ(p.tile_cols * static_cast<int>(es), so == 0 && 777 * es % 16 == 0 ? 256 : 240);
        EXPECT_EQ(p.tiles_r,
                  (1000 + static_cast<std::uint64_t>(p.tile_rows) - 1) / static_cast<std::uint64_t>(p.tile_rows));
        EXPECT_EQ(p.tiles_c,
                  (777 + static_cast<std::uint64_t>(p.tile_cols) - 1) / static_cast<std::uint64_t>(p.tile_cols));
        EXPECT_EQ(p.tiles, 3 * p.tiles_r * p.tiles_c);
        EXPECT_EQ(p.grid, p.tiles);
        EXPECT_EQ(p.threads, 256);
        EXPECT_EQ(p.vec_bytes, 16);
        EXPECT_EQ(p.vectors_per_thread, 16 / static_cast<int>(es));
        EXPECT_EQ(p.halo_rows, realigns_out(p.path) ? static_cast<int>(32 / es) : 0);
        EXPECT_EQ(p.smem_bytes, static_cast<std::uint32_t>(p.tile_rows + p.halo_rows) * 256);
        EXPECT_GE(p.min_ctas_per_sm, 2);
      }
    }
  }
  // More tiles than a grid holds: the grid is capped and each CTA takes several (the kernel loops).
  const transpose_plan big = plan_transpose(base, 2 * base, std::uint64_t{1} << 32, 300, 300, 1, h100);
  EXPECT_EQ(big.tiles, (std::uint64_t{1} << 32) * big.tiles_r * big.tiles_c);
  EXPECT_EQ(big.grid, 0x7fffffffu);
  const transpose_plan few = plan_transpose(base, 2 * base, std::uint64_t{1} << 44, 2, 2, 1, h100);
  EXPECT_EQ(few.path, transpose_path::small_matrices);
  EXPECT_GT(few.tiles, 0x7fffffffu);
  EXPECT_EQ(few.grid, 0x7fffffffu);
}

// 8-byte elements take 32 x 32 tiles of single elements wherever src and dst are 8-byte aligned but
// neither side's rows are 16-byte aligned; anything else keeps the 16-byte paths.
TEST(transpose_plan, elem8_for_8_byte_elements) {
  const transpose_plan p = plan_transpose(base, 2 * base, 2, 8193, 4099, 8, h100);
  EXPECT_EQ(p.path, transpose_path::elem8);
  EXPECT_EQ(p.tile_rows, 32);
  EXPECT_EQ(p.tile_cols, 32);
  EXPECT_EQ(p.halo_rows, 3);
  EXPECT_EQ(p.tiles_r, (8193u + 31) / 32);
  EXPECT_EQ(p.tiles_c, (4099u + 31) / 32);
  EXPECT_EQ(p.tiles, 2 * p.tiles_r * p.tiles_c);
  EXPECT_EQ(p.vec_bytes, 8);
  EXPECT_EQ(p.vectors_per_thread, 4);
  EXPECT_EQ(p.smem_bytes, 35u * 33 * 8);
  EXPECT_EQ(plan_transpose(base + 8, 2 * base + 8, 1, 200, 200, 8, h100).path, transpose_path::elem8);
  EXPECT_EQ(plan_transpose(base + 8, 2 * base, 1, 200, 200, 8, h100).path, transpose_path::realign_out);
  EXPECT_EQ(plan_transpose(base, 2 * base, 1, 200, 200, 8, h100).path, transpose_path::aligned);
  EXPECT_EQ(plan_transpose(base + 4, 2 * base, 1, 200, 200, 8, h100).path, transpose_path::realign_out);
  EXPECT_EQ(plan_transpose(base, 2 * base, 1, 1029, 1027, 4, h100).path, transpose_path::realign_both);
  EXPECT_EQ(plan_transpose(base + 8, 2 * base + 8, 1, 64, 64, 8, h100).path, transpose_path::elem8)
      << "64 columns: two whole 32-element tiles";
  // The span: from the first sector boundary to 32 elements on, or the end of the row.
  EXPECT_EQ(transpose_elem8_span(8, false, 1000).lo, 3u);
  EXPECT_EQ(transpose_elem8_span(8, false, 1000).hi, 35u);
  EXPECT_EQ(transpose_elem8_span(8, true, 1000).lo, 0u);
  EXPECT_EQ(transpose_elem8_span(0, false, 20).hi, 20u);
}

// ---- a replay of the kernels' global accesses -----------------------------------------------------------

struct replay_result {
  std::string error;
  int clamped_loads = 0;  // chunks narrowed to the buffer's bytes
  int narrow_stores = 0;  // chunks of dst written partly
};

// Every load and store transpose_tile_kernel issues for this plan, from the functions it uses, checked.
replay_result replay(std::uintptr_t dst, std::uintptr_t src, std::uint64_t batch, std::uint64_t rows,
                     std::uint64_t cols, unsigned es) {
  const transpose_plan p = plan_transpose(dst, src, batch, rows, cols, es, h100);
  replay_result res;
  if (!is_tiled(p.path)) return res;
  const std::uint64_t bytes = batch * rows * cols * es;
  std::vector<int> written(bytes, 0);
  const auto tr = static_cast<unsigned>(p.tile_rows), tc = static_cast<unsigned>(p.tile_cols);
  // Byte `at` of dst stored by tile k: whether another tile stored in its 32-byte sector too, and the
  // sector lies inside one row of dst (the realigning and elem8 stores own whole sectors).
  std::map<std::uint64_t, std::uint64_t> sector_owner;  // a sector of dst, the tile that wrote it first
  const auto shares_a_sector = [&](std::uint64_t at, std::uint64_t k) {
    const std::uint64_t sector = (dst + at) / 32;
    const auto [it, fresh] = sector_owner.emplace(sector, k);
    const std::uint64_t first_row = (sector * 32 - dst) / es / rows, last_row = (sector * 32 + 31 - dst) / es / rows;
    return !fresh && it->second != k && sector * 32 >= dst && first_row == last_row;
  };
  const auto every_byte_once = [&]() -> replay_result {
    for (std::uint64_t j = 0; j < bytes; ++j) {
      if (written[j] != 1)
        return {"byte " + std::to_string(j) + " of dst written " + std::to_string(written[j]) + " times"};
    }
    return res;
  };
  if (p.path == transpose_path::elem8) {
    // transpose_elem8_kernel: tile rows r0 .. r0 + 34 loaded (as far as the matrix goes), each output row's
    // span (transpose_elem8_span) stored element by element, 8-byte accesses; a 32-byte sector of dst
    // written by one tile only, unless it holds the ends of two rows of dst.
    for (std::uint64_t k = 0; k < p.tiles; ++k) {
      const transpose_tile_pos tp = transpose_tile_at(k, rows, cols, p.tiles_r, p.tiles_c, tr, tc);
      const std::uint64_t first = tp.matrix * rows * cols, left = rows - tp.r0;
      const std::uint64_t loaded = std::min<std::uint64_t>(left, tr + static_cast<unsigned>(p.halo_rows));
      for (unsigned c = 0; c < tp.cols; ++c) {
        const std::uint64_t seg = (first + (tp.c0 + c) * rows + tp.r0) * 8;
        const transpose_span s = transpose_elem8_span(static_cast<unsigned>((dst + seg) % 32), tp.r0 == 0, left);
        for (unsigned r = s.lo; r < s.hi; ++r) {
          if (r >= loaded) return {"a store of an element from a row the tile did not load"};
          const std::uint64_t from = (first + (tp.r0 + r) * cols + tp.c0 + c) * 8, to = seg + 8 * r;
          if ((src + from) % 8 != 0 || (dst + to) % 8 != 0) return {"an 8-byte access not 8-byte aligned"};
          if (from + 8 > bytes || to + 8 > bytes) return {"an access outside the buffers"};
          for (unsigned j = 0; j < 8; ++j) ++written[to + j];
          if (shares_a_sector(to, k)) return {"a sector inside a row of dst written by two tiles"};
        }
      }
    }
    return every_byte_once();
  }
  const bool in = realigns_in(p.path), out = realigns_out(p.path);
  for (std::uint64_t k = 0; k < p.tiles; ++k) {
    const transpose_tile_pos tp = transpose_tile_at(k, rows, cols, p.tiles_r, p.tiles_c, tr, tc);
    const std::uint64_t first = tp.matrix * rows * cols;
    // Loads: tile row r, chunk q (a lane of a half-warp) for q with 16 q < off + columns x es; realigned
    // stores also load the halo, the next tile's first rows (as many of them as the matrix has).
    const std::uint64_t halo_end = std::min<std::uint64_t>(tp.r0 + tr + static_cast<unsigned>(p.halo_rows), rows);
    std::vector<bool> row_loaded(tr + 32, false);
    for (unsigned r = 0; tp.r0 + r < halo_end; ++r) {
      row_loaded[r] = true;
      const std::uint64_t row = (first + (tp.r0 + r) * cols + tp.c0) * es;
      const unsigned off = in ? static_cast<unsigned>((src + row) % 16) : 0, need = tp.cols * es;
      std::vector<bool> loaded(17, false);
      for (unsigned q = 0; q < 16; ++q) {
        if (16 * q >= off + need) continue;
        const auto at = static_cast<std::int64_t>(row) - off + 16 * q;
        if ((src + static_cast<std::uint64_t>(at)) % 16 != 0) return {"a 16-byte load not 16-byte aligned"};
        if (at < 0 || static_cast<std::uint64_t>(at) + 16 > bytes) {
          if (!in) return {"an aligned path load outside src"};
          if (at + 16 <= 0 || (at >= 0 && static_cast<std::uint64_t>(at) >= bytes))
            return {"a load wholly outside src"};
          ++res.clamped_loads;
        }
        loaded[q] = true;
      }
      // Vector q (tile bytes [16 q, 16 q + 16), stored where 16 q < need) comes from raw bytes
      // [off + 16 q, off + 16 q + 16): chunk q and, where off > 0, chunk q + 1, lane q + 1's (so q + 1 < 16).
      for (unsigned q = 0; 16 * q < need; ++q) {
        const unsigned last = off + std::min(16 * q + 16, need) - 1;  // the last raw byte of the vector's data
        for (unsigned c = (off + 16 * q) / 16; c <= last / 16; ++c) {
          if (c > 15 || !loaded[c]) return {"a stored vector needs a chunk no lane of its half-warp loaded"};
        }
      }
    }
    // Stores. Aligned: output row c, vector q of each lane. Realigning: the aligned chunks m = -2..13 of
    // the segment (transpose_out_chunk); every byte stored must come from a loaded row, and a 32-byte
    // sector of dst is written by one tile only, unless it holds the ends of two rows of dst.
    const unsigned len = tp.rows * es;
    const std::uint64_t left = (rows - tp.r0) * es;
    for (unsigned c = 0; c < tp.cols; ++c) {
      const std::uint64_t seg = (first + (tp.c0 + c) * rows + tp.r0) * es;
      if (!out && (dst + seg) % 16 != 0) return {"an aligned path output row not 16-byte aligned"};
      const unsigned e = out ? transpose_out_lead(static_cast<unsigned>((dst + seg) % 32)) : 0;
      const unsigned lo = tp.r0 == 0 ? 0u : e, hi = out ? transpose_out_end(e, left) : len;
      for (int m = out ? -2 : 0; m < (out ? 14 : 16); ++m) {
        const chunk_bytes b =
            out ? transpose_out_chunk(m, e, lo, hi) : chunk_bytes{0, 16 * m < static_cast<int>(len) ? 16 : 0};
        if (b.lo >= b.hi) continue;
        if (b.lo != 0 || b.hi != 16) ++res.narrow_stores;
        const std::int64_t chunk = static_cast<std::int64_t>(seg) + e + 16 * m;  // may be before dst: m = -1
        if ((b.lo == 0 && b.hi == 16) && (dst + static_cast<std::uint64_t>(chunk)) % 16 != 0)
          return {"a 16-byte store not 16-byte aligned"};
        for (int j = b.lo; j < b.hi; ++j) {
          const std::int64_t at = chunk + j;
          if (at < 0 || static_cast<std::uint64_t>(at) >= bytes) return {"a store outside dst"};
          const std::uint64_t in_seg = static_cast<std::uint64_t>(at) - seg;  // the segment's byte
          if (static_cast<std::uint64_t>(at) < seg || in_seg / es >= tr + 32 || !row_loaded[in_seg / es])
            return {"a store of a byte from a row the tile did not load"};
          if (in_seg >= left) return {"a store past the end of dst's row"};
          ++written[static_cast<std::uint64_t>(at)];
          if (out && shares_a_sector(static_cast<std::uint64_t>(at), k))
            return {"a sector inside a row of dst written by two tiles"};
        }
      }
    }
  }
  return every_byte_once();
}

TEST(transpose_plan, replay_every_byte_stored_once_every_load_inside_src) {
  int narrow = 0, clamped = 0, cases = 0;
  for (const unsigned es : {1u, 2u, 4u, 8u}) {
    for (const auto& [batch, rows, cols] : {std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>{1, 2, 2},
                                            {1, 3, 5},
                                            {1, 33, 97},
                                            {1, 97, 33},
                                            {2, 64, 64},
                                            {3, 257, 131},
                                            {1, 300, 290},
                                            {2, 17, 600}}) {
      for (std::uintptr_t so : {0u, 1u, 2u, 8u, 15u}) {
        for (std::uintptr_t doff : {0u, 1u, 4u, 8u, 13u}) {
          SCOPED_TRACE(std::to_string(es) + "-byte, " + std::to_string(batch) + " x " + std::to_string(rows) + " x " +
                       std::to_string(cols) + " src+" + std::to_string(so) + " dst+" + std::to_string(doff));
          const replay_result r = replay(base + doff, 2 * base + so, batch, rows, cols, es);
          ASSERT_EQ(r.error, "");
          narrow += r.narrow_stores;
          clamped += r.clamped_loads;
          ++cases;
        }
      }
    }
  }
  EXPECT_GT(narrow, 0);
  EXPECT_GT(clamped, 0);
  EXPECT_EQ(cases, 4 * 8 * 5 * 5);
}

// ---- the few paths: which shapes take them, and a replay of their loads and stores ---------------------

TEST(transpose_plan, few_paths_take_the_skinny_shapes) {
  // The shapes: a tiled CTA would move a sliver.
  EXPECT_EQ(path_at(0, 0, 40000003, 3, 4), transpose_path::few_cols);
  EXPECT_EQ(path_at(0, 0, 3, 40000003, 8), transpose_path::few_rows);
  EXPECT_EQ(path_at(0, 0, 3, 40000003, 2), transpose_path::few_rows);
  for (const std::size_t es : {1u, 2u, 4u, 8u}) {
    for (const std::uint64_t side : {2u, 3u, 4u, 5u, 7u, 8u, 17u, 63u}) {
      SCOPED_TRACE(std::to_string(es) + "-byte, side " + std::to_string(side));
      EXPECT_EQ(path_at(0, 0, 1 << 24, side, es), transpose_path::few_cols);
      EXPECT_EQ(path_at(0, 0, side, 1 << 24, es), transpose_path::few_rows);
      EXPECT_EQ(path_at(3, 1, 1 << 24, side, es), transpose_path::few_cols) << "any alignment";
      if (side * side * es <= 8192) {
        EXPECT_EQ(plan_transpose(base, 2 * base, 1000000, side, side, es, h100).path, transpose_path::small_matrices);
      }
    }
  }
  // Whole tiles of the tiled path stay tiled: 64 f32 and 32 f64 columns, aligned; more than 64 elements.
  EXPECT_EQ(path_at(0, 0, 1 << 20, 64, 4), transpose_path::aligned);
  EXPECT_EQ(path_at(0, 0, 1 << 20, 32, 8), transpose_path::aligned);
  EXPECT_EQ(path_at(0, 0, 64, 1 << 20, 4), transpose_path::aligned);
  EXPECT_EQ(path_at(0, 4, 1 << 20, 64, 4), transpose_path::few_cols) << "realigned loads: 60-column tiles, cut";
  EXPECT_EQ(path_at(0, 0, 1 << 20, 65, 1), transpose_path::few_cols) << "a wide side: 65 of a 240-column tile";
  EXPECT_EQ(path_at(0, 0, 1 << 20, 121, 4), transpose_path::realign_in) << "121 f32: more than two tiles of 60";
  EXPECT_EQ(path_at(0, 0, 1 << 20, 96, 4), transpose_path::aligned);
  EXPECT_EQ(plan_transpose(base, 2 * base, 1000, 64, 64, 4, h100).path, transpose_path::aligned) << "16 KiB: a tile";
  EXPECT_EQ(plan_transpose(base, 2 * base, 1000, 80, 80, 1, h100).path, transpose_path::small_matrices);
  // A path on request (tools that compare them): the tiled plan, or a few one where the shape fits it.
  EXPECT_EQ(plan_transpose_tiled(base, 2 * base, 1, 40000003, 3, 4, h100).path, transpose_path::realign_both);
  EXPECT_EQ(plan_transpose_few(transpose_path::few_rows, base, 2 * base, 1, 40, 1000, 4).path,
            transpose_path::few_rows);
  EXPECT_EQ(plan_transpose_few(transpose_path::few_cols, base, 2 * base, 1, 1000, 65, 4).path,
            transpose_path::few_cols)
      << "a wide side: 260 bytes";
  EXPECT_EQ(plan_transpose_few(transpose_path::few_cols, base, 2 * base, 1, 1000, 129, 4).path,
            transpose_path::unsupported)
      << "516 bytes: wider than few_max_wider_bytes";
  EXPECT_EQ(plan_transpose_few(transpose_path::few_rows, base, 2 * base, 1, 1, 60, 4).path, transpose_path::unsupported)
      << "one row: a copy";
  EXPECT_EQ(plan_transpose_few(transpose_path::small_matrices, base, 2 * base, 9, 64, 64, 4).path,
            transpose_path::unsupported)
      << "16 KiB matrices";
  EXPECT_EQ(plan_transpose_few(transpose_path::aligned, base, 2 * base, 1, 64, 64, 4).path,
            transpose_path::unsupported);
  // The shorter side wins where both are few.
  EXPECT_EQ(path_at(0, 0, 60, 7, 8), transpose_path::small_matrices);
  EXPECT_EQ(path_at(0, 0, 60, 40, 8), transpose_path::few_cols);
  EXPECT_EQ(path_at(0, 0, 40, 60, 8), transpose_path::few_rows);
}

// Wide sides (transpose_few_wide, docs/notes/transpose_skinny.md section 5): a side of more than 64 elements
// takes its few path where the tiled path would realign it and it spans at most two tiles of that path (H100 heat
// map before: 1996 x 67 x 251 u8 realign_both 0.15 of a copy, 4003 x 131 x 64 u8 few_cols 0.32, 1972 x 67 x 127
// f16 0.31, 1869 x 67 x 67 f32 0.43). Rows first: few_rows writes one block of dst per tile.
TEST(transpose_plan, wide_sides_take_the_few_paths) {
  const auto batched = [](std::uintptr_t doff, std::uintptr_t soff, std::uint64_t b, std::uint64_t r,
                          std::uint64_t c, std::size_t es) {
    return plan_transpose(base + doff, 2 * base + soff, b, r, c, es, h100).path;
  };
  EXPECT_EQ(batched(0, 0, 1996, 67, 251, 1), transpose_path::few_rows);
  EXPECT_EQ(batched(0, 0, 4003, 131, 64, 1), transpose_path::few_rows) << "rows wide: preferred over few_cols";
  EXPECT_EQ(batched(0, 0, 1972, 67, 127, 2), transpose_path::few_rows);
  EXPECT_EQ(batched(0, 0, 1869, 67, 67, 4), transpose_path::few_rows);
  EXPECT_EQ(batched(0, 0, 8, 67, 65536, 1), transpose_path::few_rows) << "was realign_out";
  EXPECT_EQ(batched(3, 5, 1996, 67, 251, 1), transpose_path::few_rows) << "misaligned pointers";
  EXPECT_EQ(batched(0, 0, 1, 8191, 67, 1), transpose_path::few_cols) << "cols wide, rows long";
  EXPECT_EQ(batched(0, 0, 962, 521, 67, 1), transpose_path::few_cols);
  EXPECT_EQ(batched(0, 0, 1, 8191, 251, 1), transpose_path::few_cols) << "K = 64 rows, a halo of 32: half";
  EXPECT_EQ(batched(0, 0, 1, 8191, 257, 1), transpose_path::few_cols)
      << "K = 32 rows, the halo as large, where the tiled path realigns both sides (H100: 1.16-1.41x)";
  EXPECT_EQ(batched(0, 0, 1, 8208, 257, 1), transpose_path::realign_in)
      << "the same halo (8208 rows: runs of dst 16 bytes off their sectors), stores aligned: not measured, kept";
  EXPECT_EQ(batched(0, 0, 1, 8192, 257, 1), transpose_path::few_cols) << "rows of whole sectors: no halo";
  // Wider sides (up to three tiles and 512 bytes; H100, section 10 of docs/notes/transpose_skinny.md).
  const struct {
    std::uint64_t batch, rows, cols;
    std::size_t es;
    transpose_path path;
    const char* why;
  } wider[] = {
      {257, 509, 257, 1, transpose_path::few_rows, "509 rows: ahead of few_cols' whole halo"},
      {130, 509, 509, 1, transpose_path::few_rows, "the heat map's last cell under 0.5"},
      {520, 509, 127, 1, transpose_path::few_cols, "few_cols with a halo of half its tile first"},
      {251, 521, 257, 1, transpose_path::few_cols, "521 bytes: not wider"},
      {1, 4099, 251, 2, transpose_path::few_cols, "502 bytes of columns, both sides realign"},
      {1, 4096, 251, 2, transpose_path::realign_in, "only the loads realign: not"},
      {1033, 127, 64, 4, transpose_path::few_rows, "508 bytes of rows, the stores realign"},
      {504, 521, 128, 1, transpose_path::few_cols, "128 u8 columns: half a tile, every tile cut"},
      {1, 512, 128, 1, transpose_path::aligned, "the same columns, stores aligned: not"},
      {1, 509, 8192, 1, transpose_path::few_rows, "509 u8 rows: three tiles of 224"},
      {1, 251, 8192, 2, transpose_path::few_rows, "251 f16 rows: three tiles of 112"},
  };
  for (const auto& w : wider) EXPECT_EQ(batched(0, 0, w.batch, w.rows, w.cols, w.es), w.path) << w.why;
  // Not wide: aligned rows of bytes (the tiled path does not realign them), over 512 bytes, 8-byte elements.
  EXPECT_EQ(batched(0, 0, 1, 128, 8192, 1), transpose_path::aligned);
  EXPECT_EQ(batched(0, 0, 1, 521, 8192, 1), transpose_path::realign_out) << "521 u8 rows: over 512 bytes";
  EXPECT_EQ(batched(0, 0, 1, 257, 8192, 2), transpose_path::realign_out) << "257 f16 rows: 514 bytes";
  EXPECT_EQ(batched(0, 0, 1, 67, 65521, 8), transpose_path::elem8);
  EXPECT_EQ(batched(0, 0, 1, 40000003, 3, 4), transpose_path::few_cols) << "the skinny shapes as before";
  EXPECT_EQ(batched(0, 0, 1, 3, 40000003, 1), transpose_path::few_rows);
  // The rule's pieces.
  EXPECT_TRUE(transpose_few_wide(448, true, 224));
  EXPECT_FALSE(transpose_few_wide(449, true, 224));
  EXPECT_FALSE(transpose_few_wide(64, true, 224)) << "64 and less: transpose_few_path's rule";
  EXPECT_FALSE(transpose_few_wide(100, false, 224)) << "not realigned";
  EXPECT_TRUE(transpose_few_side_fits(512, 1));
  EXPECT_FALSE(transpose_few_side_fits(513, 1));
  EXPECT_TRUE(transpose_few_side_fits(64, 8));
  // Every wide few plan fits its loads in one pass and its magic divisions stay exact.
  for (const std::size_t es : {1u, 2u, 4u, 8u}) {
    for (std::uint64_t side = 65; side * es <= 512; ++side) {
      for (const std::uint64_t other : {3u, 64u, 67u, 251u, 4099u}) {
        for (const auto& [r, c] : {std::pair{side, other}, std::pair{other, side}}) {
          const transpose_plan p = plan_transpose(base + 3, 2 * base + 1, 5, r, c, es, h100);
          if (!is_few(p.path)) continue;
          SCOPED_TRACE(std::to_string(es) + "-byte " + std::to_string(r) + " x " + std::to_string(c));
          EXPECT_LE(p.load_chunks, static_cast<std::uint32_t>(transpose_tuning::threads * transpose_tuning::few_load_steps));
          EXPECT_LE(p.smem_bytes, 48u * 1024);
        }
      }
    }
  }
}

TEST(transpose_plan, few_tiles_geometry) {
  // 40000003 x 3 f32: K rows of 12 bytes per ~16 KiB, a multiple of 8 (32 bytes of each output row).
  const transpose_plan c = plan_transpose(base, 2 * base, 1, 40000003, 3, 4, h100);
  ASSERT_EQ(c.path, transpose_path::few_cols);
  EXPECT_EQ(c.tile_rows, 1360);
  EXPECT_EQ(c.tile_cols, 3);
  EXPECT_EQ(c.halo_rows, 8) << "rows of dst 4 bytes off a sector: the halo";
  EXPECT_EQ(c.tiles, (40000003u + 1359) / 1360);
  EXPECT_EQ(c.unit_bytes, 4);
  EXPECT_EQ(c.vec_bytes, 16);
  EXPECT_LE(c.load_chunks, 256u * 6);
  EXPECT_LE(c.smem_bytes, 48u * 1024) << "no opt-in needed";
  // The halo goes where every run of dst starts on a sector boundary.
  EXPECT_EQ(plan_transpose(base, 2 * base, 1, 40000000, 3, 4, h100).halo_rows, 0);
  EXPECT_EQ(plan_transpose(base + 16, 2 * base, 1, 40000000, 3, 4, h100).halo_rows, 8);
  // 3 x 40000003 f64: 3 runs of K elements, K x 3 x 8 ~ 16 KiB.
  const transpose_plan r = plan_transpose(base, 2 * base, 1, 3, 40000003, 8, h100);
  ASSERT_EQ(r.path, transpose_path::few_rows);
  EXPECT_EQ(r.tile_rows, 3);
  EXPECT_EQ(r.tile_cols, 680);
  EXPECT_EQ(r.halo_rows, 0) << "one matrix, dst aligned: every tile's block starts on a sector";
  EXPECT_EQ(r.run_pitch % 16, 40000003u * 8 % 16) << "element k of run r at P0 + r T + k es";
  EXPECT_GE(r.run_pitch, 16 * r.run_chunks + 16);
  EXPECT_EQ(r.load_chunks, 3 * r.run_chunks);
  // A million 3 x 3 f32: 9 x 36 bytes... M a multiple of 8 (36 M % 32 == 0), no halo.
  const transpose_plan m = plan_transpose(base, 2 * base, 1000000, 3, 3, 4, h100);
  ASSERT_EQ(m.path, transpose_path::small_matrices);
  EXPECT_EQ(m.tile_matrices % 8, 0u);
  EXPECT_EQ(m.halo_rows, 0);
  EXPECT_EQ(m.tiles, (1000000 + m.tile_matrices - 1) / m.tile_matrices);
  for (const std::size_t es : {1u, 2u, 4u, 8u}) {
    for (const std::uint64_t side : {2u, 3u, 7u, 16u, 64u}) {
      for (const transpose_plan& p : {plan_transpose(base + 3, 2 * base + 1, 1, 100003, side, es, h100),
                                      plan_transpose(base + 3, 2 * base + 1, 1, side, 100003, es, h100),
                                      plan_transpose(base + 3, 2 * base + 1, 99991, side, side, es, h100)}) {
        SCOPED_TRACE(std::to_string(es) + "-byte, side " + std::to_string(side) + " " + to_string(p.path));
        ASSERT_TRUE(is_few(p.path));
        EXPECT_EQ(p.unit_bytes, 1);
        EXPECT_LE(p.load_chunks, 256u * 6) << "six 16-byte loads per thread at most";
        EXPECT_LE(p.smem_bytes, 48u * 1024);
        EXPECT_GE(p.load_chunks * 16, 16384u / 2) << "a tile of at least 8 KiB";
      }
    }
  }
}

struct few_replay_result {
  std::string error;
  int clamped_loads = 0;   // chunks narrowed to the buffer's bytes
  int partial_chunks = 0;  // output chunks stored unit by unit
};

// Every load and store transpose_few_kernel issues for this plan, from the functions it uses, checked: each
// load an aligned 16-byte chunk inside src (the buffer's first and last narrowed), whole chunks into
// distinct 16-byte slots of the image; each output byte stored exactly once, its source (the image byte
// transpose_few_source names) the right byte of src; every full chunk a 16-byte aligned store; the chunks
// of a run within its slots; no 32-byte sector inside a run of dst written by two tiles; the magic
// divisions inside their exact range.
few_replay_result replay_few(std::uintptr_t dst, std::uintptr_t src, std::uint64_t batch, std::uint64_t rows,
                             std::uint64_t cols, unsigned es) {
  const transpose_plan p = plan_transpose(dst, src, batch, rows, cols, es, h100);
  few_replay_result res;
  if (!is_few(p.path)) return {"not a few path: " + std::string(to_string(p.path))};
  const transpose_few_map m = transpose_few_map_of(p);
  const std::uint32_t per_tile = p.path == transpose_path::few_cols   ? static_cast<std::uint32_t>(p.tile_rows)
                                 : p.path == transpose_path::few_rows ? static_cast<std::uint32_t>(p.tile_cols)
                                                                      : p.tile_matrices;
  const std::uint64_t tpm = p.path == transpose_path::few_cols ? p.tiles_r : p.tiles_c;
  const std::uint64_t bytes = batch * rows * cols * es, rc = rows * cols;
  if (m.rows >= (1u << 15) || m.cols >= (1u << 15) || p.run_chunks >= (1u << 15)) return {"a divisor past 2^15"};
  std::vector<int> written(bytes, 0);
  std::map<std::uint64_t, std::uint64_t> sector_owner;
  for (std::uint64_t k = 0; k < p.tiles; ++k) {
    const transpose_few_tile tp =
        transpose_few_tile_at(p.path, k, batch, rows, cols, tpm, per_tile, static_cast<std::uint32_t>(p.halo_rows));
    const transpose_few_input in = transpose_few_input_of(p.path, tp, rows, cols, es);
    const auto p0 = static_cast<std::uint32_t>((src + in.in) % 16);
    std::vector<std::int64_t> image(p.smem_bytes, -1);  // the src offset each image byte holds
    for (std::uint32_t f = 0; f < 256 * 6; ++f) {
      const transpose_few_slot sl = transpose_few_slot_at(p.path, f, src, in, rows, cols, es, p.run_chunks,
                                                          transpose_magic(p.run_chunks), p.run_pitch);
      if (!sl.valid) continue;
      if ((src + static_cast<std::uint64_t>(sl.at)) % 16 != 0) return {"a load not 16-byte aligned"};
      if (sl.at <= -16 || sl.at >= static_cast<std::int64_t>(bytes)) return {"a load wholly outside src"};
      if (sl.at < 0 || static_cast<std::uint64_t>(sl.at) + 16 > bytes) ++res.clamped_loads;
      if (sl.image % 16 != 0 || sl.image + 16 > p.smem_bytes) return {"an image slot outside shared memory"};
      for (std::uint32_t b = 0; b < 16; ++b) {
        if (image[sl.image + b] != -1) return {"two chunks in one image slot"};
        image[sl.image + b] = sl.at + b;
      }
    }
    const std::uint32_t runs = p.path == transpose_path::few_cols ? static_cast<std::uint32_t>(cols) : 1u;
    if (p.path == transpose_path::few_cols) {  // the store slots: every (run, chunk) exactly once
      const std::uint32_t per_run =
          transpose_few_run_slots(transpose_few_run_of(p.path, tp, 0, batch, rows, cols, es, per_tile), per_tile, es);
      if (per_run % 2 != 0) return {"an odd number of chunk slots per run"};
      std::vector<int> seen(std::size_t{runs} * per_run, 0);
      for (std::uint32_t f = 0; f < runs * per_run; ++f) {
        const transpose_few_store_slot sl = transpose_few_cols_slot(f, runs, transpose_magic(runs));
        if (sl.c >= runs || sl.m >= per_run || seen[sl.c * per_run + sl.m]++ != 0)
          return {"a store slot twice or outside"};
      }
    }
    for (std::uint32_t c = 0; c < runs; ++c) {
      const transpose_few_run r = transpose_few_run_of(p.path, tp, c, batch, rows, cols, es, per_tile);
      const std::uint64_t lo = transpose_few_bound(dst, r.run, r.run_bytes, r.at0);
      const std::uint64_t hi = transpose_few_bound(dst, r.run, r.run_bytes, r.at1);
      if (lo > hi) return {"a tile's bounds out of order"};
      if (lo == hi) continue;
      const auto g0 = static_cast<std::int64_t>((dst + lo) / 16 * 16 - dst);
      const std::int64_t chunks = (static_cast<std::int64_t>(hi) - g0 + 15) / 16;
      if (p.path == transpose_path::few_cols && chunks > transpose_few_run_slots(r, per_tile, es))
        return {"a run needs more chunks than its slots"};
      for (std::int64_t q = 0; q < chunks; ++q) {
        const std::int64_t g = g0 + 16 * q;
        const bool full = g >= static_cast<std::int64_t>(lo) && g + 16 <= static_cast<std::int64_t>(hi);
        if (full && (dst + static_cast<std::uint64_t>(g)) % 16 != 0) return {"a 16-byte store not aligned"};
        if (!full) ++res.partial_chunks;
        for (std::int64_t x = std::max<std::int64_t>(g, static_cast<std::int64_t>(lo));
             x < std::min<std::int64_t>(g + 16, static_cast<std::int64_t>(hi)); ++x) {
          const auto at = static_cast<std::uint64_t>(x);
          if (at >= bytes) return {"a store outside dst"};
          ++written[at];
          const std::uint64_t o = at - (r.run + r.at0);
          if (o >> m.es_shift >= (1u << 17)) return {"an output element past the magic divisions' range"};
          const std::uint32_t logical = p0 + transpose_few_source(p.path, m, static_cast<std::uint32_t>(o), c);
          const std::uint64_t e = at / es, mm = e / rc, kk = e % rc;
          const auto want = static_cast<std::int64_t>((mm * rc + kk % rows * cols + kk / rows) * es + at % es);
          if (logical >= p.smem_bytes || image[logical] != want)
            return {"dst+" + std::to_string(at) + " from image byte " + std::to_string(logical) + ", which holds src+" +
                    std::to_string(logical < p.smem_bytes ? image[logical] : -1) + ", not src+" + std::to_string(want)};
          const std::uint64_t sector = (dst + at) / 32;
          const auto [it, fresh] = sector_owner.emplace(sector, k);
          const bool inside_run = sector * 32 >= dst + r.run && sector * 32 + 32 <= dst + r.run + r.run_bytes;
          if (!fresh && it->second != k && inside_run) return {"a sector inside a run of dst written by two tiles"};
        }
      }
    }
  }
  for (std::uint64_t j = 0; j < bytes; ++j) {
    if (written[j] != 1)
      return {"byte " + std::to_string(j) + " of dst written " + std::to_string(written[j]) + " times"};
  }
  return res;
}

TEST(transpose_plan, few_replay_every_byte_once_from_the_right_source) {
  int cases = 0, clamped = 0, partial = 0;
  std::map<transpose_path, int> paths;
  for (const unsigned es : {1u, 2u, 4u, 8u}) {
    for (const auto& [batch, rows, cols] : {std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>{1, 4097, 3},
                                            {1, 3, 4097},
                                            {2, 2000, 7},
                                            {2, 7, 2000},
                                            {1, 1500, 48},
                                            {1, 48, 1500},
                                            {3, 129, 5},
                                            {1000, 3, 3},
                                            {333, 4, 4},
                                            {40, 16, 16},
                                            {17, 5, 7},
                                            {3, 40, 100},
                                            {2, 67, 251},
                                            {1, 131, 65},
                                            {1, 600, 97}}) {
      for (std::uintptr_t so : {0u, 1u, 8u, 15u}) {
        for (std::uintptr_t doff : {0u, 2u, 13u}) {
          SCOPED_TRACE(std::to_string(es) + "-byte, " + std::to_string(batch) + " x " + std::to_string(rows) + " x " +
                       std::to_string(cols) + " src+" + std::to_string(so) + " dst+" + std::to_string(doff));
          if (rows > 64 && cols > 64 && !is_few(plan_transpose(base + doff, 2 * base + so, batch, rows, cols, es,
                                                               h100).path)) {
            continue;  // a wide shape that this element size moves on a tiled path (f64 67 x 251: elem8)
          }
          const few_replay_result r = replay_few(base + doff, 2 * base + so, batch, rows, cols, es);
          ASSERT_EQ(r.error, "");
          clamped += r.clamped_loads;
          partial += r.partial_chunks;
          ++paths[plan_transpose(base + doff, 2 * base + so, batch, rows, cols, es, h100).path];
          ++cases;
        }
      }
    }
  }
  EXPECT_GT(clamped, 0);
  EXPECT_GT(partial, 0);
  EXPECT_GT(paths[transpose_path::few_cols], 0);
  EXPECT_GT(paths[transpose_path::few_rows], 0);
  EXPECT_GT(paths[transpose_path::small_matrices], 0);
  EXPECT_GT(cases, 4 * 12 * 4 * 3);
}

// The gather's shared-memory requests: for the acceptance shapes (a side of 2..8, every element size) and
// the batched 3x3..16x16, each warp's request of its first store step, unit by unit, through the bank model,
// every few_cols run from the tile's nominal row (with aligned rows, as here, each run's first owned sector; where
// rows are not whole sectors each run has its own phase: few_cols_layout_follows_the_runs_phases):
// at most 2 wavefronts per request for a few side (the run-first lane order and transpose_few_swizzle). Small
// matrices read around each lane's own 16 bytes in a pattern that repeats every matrix: up to 4 (4x4 u8:
// every lane reads the same word of its slot at each step), which the u8 gather's ~0.2 requests per clock
// per SM (H100, at 90% of a copy) keep below the shared-memory pipe's 1 wavefront per clock.
TEST(transpose_plan, few_gather_requests_take_few_wavefronts) {
  for (const unsigned es : {1u, 2u, 4u, 8u}) {
    for (const auto& [batch, rows, cols] : {std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>{1, 1 << 20, 2},
                                            {1, 1 << 20, 3},
                                            {1, 1 << 20, 4},
                                            {1, 1 << 20, 5},
                                            {1, 1 << 20, 7},
                                            {1, 1 << 20, 8},
                                            {1, 2, 1 << 20},
                                            {1, 3, 1 << 20},
                                            {1, 4, 1 << 20},
                                            {1, 5, 1 << 20},
                                            {1, 7, 1 << 20},
                                            {1, 8, 1 << 20},
                                            {1 << 16, 3, 3},
                                            {1 << 16, 4, 4},
                                            {1 << 16, 8, 8},
                                            {1 << 16, 16, 16}}) {
      const transpose_plan p = plan_transpose(base, 2 * base, batch, rows, cols, es, h100);
      SCOPED_TRACE(std::to_string(es) + "-byte " + std::to_string(batch) + " x " + std::to_string(rows) + " x " +
                   std::to_string(cols) + " " + to_string(p.path));
      ASSERT_TRUE(is_few(p.path));
      const transpose_few_map m = transpose_few_map_of(p);
      const std::uint32_t per_tile = p.path == transpose_path::few_cols   ? static_cast<std::uint32_t>(p.tile_rows)
                                     : p.path == transpose_path::few_rows ? static_cast<std::uint32_t>(p.tile_cols)
                                                                          : p.tile_matrices;
      const std::uint64_t tpm = p.path == transpose_path::few_cols ? p.tiles_r : p.tiles_c;
      const transpose_few_tile tp =
          transpose_few_tile_at(p.path, 1, batch, rows, cols, tpm, per_tile, static_cast<std::uint32_t>(p.halo_rows));
      const std::uint32_t p0 =
          static_cast<std::uint32_t>((2 * base + transpose_few_input_of(p.path, tp, rows, cols, es).in) % 16);
      int worst = 0;
      for (unsigned w = 0; w < 8; ++w) {
        for (unsigned u = 0; u < 16 / es; ++u) {
          warp_addresses lds{};
          for (unsigned l = 0; l < 32; ++l) {
            const unsigned f = 32 * w + l;
            std::uint32_t c = 0;
            std::uint64_t g = 16 * std::uint64_t{f};  // from the tile's nominal start (sector-aligned here)
            if (p.path == transpose_path::few_cols) {
              const transpose_few_store_slot sl = transpose_few_cols_slot(
                  f, static_cast<std::uint32_t>(cols), transpose_magic(static_cast<std::uint32_t>(cols)));
              c = sl.c;
              g = 16 * std::uint64_t{sl.m};
            }
            const std::uint32_t o = static_cast<std::uint32_t>(g) + es * u;
            const std::uint32_t at =
                transpose_few_smem(p0 + transpose_few_source(p.path, m, o, c), m.swizzle, m.swizzle_shift);
            lds[l] = es == 8 ? at : at / 4 * 4;  // sub-word units: the word they read
          }
          const bank_request b = shared_request(lds, es == 8 ? 8 : 4);
          worst = std::max(worst, b.wavefronts / b.ideal);
        }
      }
      EXPECT_LE(worst, p.path == transpose_path::small_matrices ? 4 : 2);
    }
  }
}

// The gather of a whole tile (the first of several, else the only one), every warp and unit step, through the
// bank model: the mean wavefronts per request (1 is conflict-free), for the layout the plan holds.
double few_tile_wavefronts(const transpose_plan& p, std::uintptr_t dst, std::uintptr_t src) {
  const auto es = static_cast<unsigned>(p.elem_size), unit = static_cast<unsigned>(p.unit_bytes);
  const transpose_few_map m = transpose_few_map_of(p);
  const std::uint32_t per_tile =
      p.path == transpose_path::few_rows ? static_cast<std::uint32_t>(p.tile_cols) : p.tile_matrices;
  const transpose_few_tile tp = transpose_few_tile_at(p.path, 0, p.batch, p.rows, p.cols, p.tiles_c, per_tile,
                                                      static_cast<std::uint32_t>(p.halo_rows));
  const auto p0 = static_cast<std::uint32_t>((src + transpose_few_input_of(p.path, tp, p.rows, p.cols, es).in) % 16);
  const std::uint64_t out = tp.count * p.rows * (p.path == transpose_path::few_rows ? 1 : p.cols) * es;
  const auto lead = static_cast<std::uint32_t>((16 - dst % 16) % 16);  // chunk 1 (chunk 0 may be partial)
  double sum = 0;
  int requests = 0;
  for (std::uint64_t w = 0; lead + 16 * 32 * w + 16 <= out; ++w) {
    for (unsigned u = 0; u < 16 / unit; ++u) {
      warp_addresses lds{};
      for (unsigned l = 0; l < 32; ++l) {
        const std::uint64_t chunk = lead + 16 * (32 * w + l);
        if (chunk + 16 > out) continue;
        const auto o = static_cast<std::uint32_t>(chunk + unit * u);
        const std::uint32_t at =
            transpose_few_smem(p0 + transpose_few_source(p.path, m, o, 0), m.swizzle, m.swizzle_shift);
        lds[l] = unit == 8 ? at : at / 4 * 4;
      }
      const bank_request b = shared_request(lds, unit == 8 ? 8 : 4);
      sum += static_cast<double>(b.wavefronts) / b.ideal;
      ++requests;
    }
  }
  return requests == 0 ? 0.0 : sum / requests;
}

// few_cols' gather of a whole tile (the second of the first matrix), as the kernel's store loop addresses it
// (transpose_few_cols_slot, each run's owned sectors from transpose_few_bound, whole chunks only), unit step by
// unit step, through the bank model: the mean wavefronts per request for the layout the plan holds.
double few_cols_tile_wavefronts(const transpose_plan& p, std::uintptr_t dst, std::uintptr_t src) {
  const auto es = static_cast<std::uint64_t>(p.elem_size);
  const auto unit = static_cast<unsigned>(p.unit_bytes);
  const transpose_few_map m = transpose_few_map_of(p);
  const auto cols = static_cast<std::uint32_t>(p.cols), per_tile = static_cast<std::uint32_t>(p.tile_rows);
  const transpose_few_tile tp = transpose_few_tile_at(p.path, p.tiles_r > 1 ? 1 : 0, p.batch, p.rows, p.cols,
                                                      p.tiles_r, per_tile, static_cast<std::uint32_t>(p.halo_rows));
  const auto p0 = static_cast<std::uint32_t>((src + transpose_few_input_of(p.path, tp, p.rows, p.cols, es).in) % 16);
  const unsigned slots = transpose_few_run_slots(
                             transpose_few_run_of(p.path, tp, 0, p.batch, p.rows, p.cols, es, per_tile), per_tile, es) *
                         cols;
  double sum = 0;
  int requests = 0;
  for (unsigned w = 0; 32 * w < slots; ++w) {
    for (unsigned u = 0; u < 16 / unit; ++u) {
      warp_addresses lds{};
      bool any = false;
      for (unsigned l = 0; l < 32 && 32 * w + l < slots; ++l) {
        const transpose_few_store_slot sl = transpose_few_cols_slot(32 * w + l, cols, transpose_magic(cols));
        const transpose_few_run r = transpose_few_run_of(p.path, tp, sl.c, p.batch, p.rows, p.cols, es, per_tile);
        const std::uint64_t lo = transpose_few_bound(dst, r.run, r.run_bytes, r.at0);
        const std::uint64_t hi = transpose_few_bound(dst, r.run, r.run_bytes, r.at1);
        const std::uint64_t g = (dst + lo) / 16 * 16 - dst + 16 * std::uint64_t{sl.m};
        if (g + dst < lo + dst || g + 16 > hi) continue;
        const auto o = static_cast<std::uint32_t>(g - (r.run + r.at0)) + unit * u;
        const std::uint32_t at =
            transpose_few_smem(p0 + transpose_few_source(p.path, m, o, sl.c), m.swizzle, m.swizzle_shift);
        lds[l] = unit == 8 ? at : at / 4 * 4;
        any = true;
      }
      if (!any) continue;
      const bank_request b = shared_request(lds, unit == 8 ? 8 : 4);
      sum += static_cast<double>(b.wavefronts) / b.ideal;
      ++requests;
    }
  }
  return requests == 0 ? 0.0 : sum / requests;
}

// few_cols' layout (docs/notes/transpose_skinny.md section 8): each run of a tile is owned from the first sector
// boundary in it, so where a run is 32 k - 1 elements long consecutive runs start one element further along, and a
// warp's lanes (consecutive runs) read (cols + 1) elements apart: at 127 u8 columns, one bank for all 16 runs. The
// H100 heat map's worst cell, 33 x 8191 x 127 u8, read 0.41 of a copy (4095, 12287, 16383 rows too; 8192 rows
// 0.93). The plan's search (from 4 MiB a job) counts few_cols' sample with those phases and takes the slot XOR
// there: the whole tile's gather from ~15 to ~4 wavefronts a request; the aligned rows keep their layout.
TEST(transpose_plan, few_cols_layout_follows_the_runs_phases) {
  for (const auto& [rows, cols] : {std::pair<std::uint64_t, std::uint64_t>{8191, 127}, {4095, 127}, {8159, 127},
                                   {8191, 63}}) {
    const std::uint64_t batch = (32ull << 20) / (rows * cols) + 1;
    const transpose_plan p = plan_transpose(base, 2 * base, batch, rows, cols, 1, h100);
    SCOPED_TRACE(std::to_string(batch) + " x " + std::to_string(rows) + " x " + std::to_string(cols));
    ASSERT_EQ(p.path, transpose_path::few_cols);
    transpose_plan fixed = p;
    const transpose_few_layout f = transpose_few_layout_fixed(p);
    fixed.smem_swizzle = f.swizzle;
    fixed.smem_swizzle_shift = f.swizzle_shift;
    const double before = few_cols_tile_wavefronts(fixed, base, 2 * base), after = few_cols_tile_wavefronts(p, base, 2 * base);
    EXPECT_GE(before, cols == 127 ? 14.0 : 7.0) << "the conflict the phases make";
    EXPECT_EQ(p.smem_swizzle, 0x70u) << "the slot XOR";
    EXPECT_LE(after, 0.6 * before);
    EXPECT_TRUE(transpose_few_whole_chunks(p.smem_swizzle, p.smem_swizzle_shift)) << "few_cols' kernel has it";
  }
  // Rows of a whole number of sectors: every run at the same phase, no conflict to lift, the layout kept.
  const transpose_plan aligned = plan_transpose(base, 2 * base, 33, 8192, 127, 1, h100);
  ASSERT_EQ(aligned.path, transpose_path::few_cols);
  EXPECT_EQ(aligned.smem_swizzle, transpose_few_layout_fixed(aligned).swizzle);
  EXPECT_LE(few_cols_tile_wavefronts(aligned, base, 2 * base), 2.0);
}

// The layout search (transpose_few_layout_of; docs/notes/transpose_skinny.md section 6) on the H100 heat map's u8
// cells under half a copy and the acceptance's u8 misses: the fixed layout's gathers at 3..17 wavefronts a
// request, the chosen one's at the numbers section 6 quotes. And the search only from 4 MiB a buffer: smaller
// jobs keep the fixed layout.
TEST(transpose_plan, few_layout_search_takes_the_gathers_down) {
  const struct {
    std::uint64_t batch, rows, cols;
    double fixed_at_least, chosen_at_most;
  } cells[] = {{7681, 17, 257, 15, 2.6},   {8523, 31, 127, 15, 2.4},  {17614, 15, 127, 15, 2.5},
               {274, 15, 8191, 14, 2.8},   {2577, 25, 521, 13, 4.7},  {3957, 257, 33, 2, 2.1},
               {1, 3, 44739243, 4.9, 2.2}, {1000000, 3, 3, 2.9, 2.6}, {1000000, 4, 4, 3.9, 1.1}};
  for (const auto& c : cells) {
    SCOPED_TRACE(std::to_string(c.batch) + " x " + std::to_string(c.rows) + " x " + std::to_string(c.cols) + " u8");
    const transpose_plan p = plan_transpose(base, 2 * base, c.batch, c.rows, c.cols, 1, h100);
    ASSERT_TRUE(p.path == transpose_path::few_rows || p.path == transpose_path::small_matrices) << to_string(p.path);
    transpose_plan fixed = p;
    const transpose_few_layout l = transpose_few_layout_fixed(p);
    fixed.smem_swizzle = l.swizzle;
    fixed.smem_swizzle_shift = l.swizzle_shift;
    if (p.path == transpose_path::few_rows) {
      fixed.run_pitch = l.pitch;
      EXPECT_EQ(l.pitch / 16 % 2, 1u) << "the fixed pitch: an odd number of slots";
    }
    EXPECT_GE(few_tile_wavefronts(fixed, base, 2 * base), c.fixed_at_least);
    EXPECT_LE(few_tile_wavefronts(p, base, 2 * base), c.chosen_at_most)
        << "swizzle " << p.smem_swizzle << " >> " << p.smem_swizzle_shift << ", pitch " << p.run_pitch;
    EXPECT_TRUE(transpose_few_swizzle_valid(p.smem_swizzle, p.smem_swizzle_shift, 1));
    EXPECT_LE(p.smem_bytes, 48u * 1024);
  }
  // Below transpose_tuning::few_layout_search_bytes: the fixed layout, whatever its conflicts.
  const transpose_plan small = plan_transpose(base, 2 * base, 900, 17, 257, 1, h100);  // 3.9 MB
  ASSERT_EQ(small.path, transpose_path::small_matrices);
  const transpose_few_layout l = transpose_few_layout_fixed(small);
  EXPECT_EQ(small.smem_swizzle, l.swizzle);
  EXPECT_EQ(small.smem_swizzle_shift, l.swizzle_shift);
  // few_cols keeps transpose_few_swizzle at any size.
  const transpose_plan tall = plan_transpose(base, 2 * base, 1, 1 << 24, 4, 1, h100);
  ASSERT_EQ(tall.path, transpose_path::few_cols);
  EXPECT_EQ(tall.smem_swizzle, 0x70u);
  EXPECT_EQ(tall.smem_swizzle_shift, 3u);
}

// The layout search as first written (f1be2b1): every candidate's sample counted whole, lane by lane through
// transpose_few_source, the words of each bank in a bitmap (bit word / 32 % 64). transpose_few_layout_search cuts
// it short (a candidate's count stops once it cannot beat the best, the search once the best is at its floor, a
// lane's words compared only when its bank has one) and transpose_few_layout_of memoizes it: neither may change a
// choice.
transpose_few_layout whole_count_layout(transpose_plan p, std::uintptr_t dst, std::uintptr_t src) {
  p.run_pitch = transpose_few_geometry_of(p.path, p.batch, p.rows, p.cols, static_cast<std::uint64_t>(p.elem_size), dst)
                    .run_pitch;  // the least pitch, as plan_transpose_few has it before the layout
  const auto unit = static_cast<unsigned>(p.unit_bytes);
  transpose_plan q = p;
  q.run_pitch = 0;
  const transpose_few_map m0 = transpose_few_map_of(q);
  q.run_pitch = 1;
  const transpose_few_map m1 = transpose_few_map_of(q);
  const auto es = static_cast<std::uint64_t>(p.elem_size);
  const std::uint64_t out = p.path == transpose_path::few_rows
                                ? std::min<std::uint64_t>(p.cols, static_cast<std::uint64_t>(p.tile_cols)) * p.rows * es
                                : std::min<std::uint64_t>(p.batch, p.tile_matrices) * p.rows * p.cols * es;
  const auto p0 = static_cast<std::uint32_t>(src % 16), lead = static_cast<std::uint32_t>(16 - dst % 16);
  std::uint32_t run[4][32] = {}, rest[4][32] = {};
  bool active[4][32] = {};
  for (unsigned i = 0; i < 4; ++i) {
    for (unsigned l = 0; l < 32; ++l) {
      const std::uint64_t chunk = lead + 16 * (32 * (i / 2) + l);
      active[i][l] = chunk + 16 <= out;
      if (!active[i][l]) continue;
      const auto o = static_cast<std::uint32_t>(chunk + 8 * (i % 2));
      const std::uint32_t at0 = transpose_few_source(p.path, m0, o, 0), at1 = transpose_few_source(p.path, m1, o, 0);
      run[i][l] = at1 - at0;
      rest[i][l] = p0 + at0;
    }
  }
  const auto count = [&](const transpose_few_layout& c) {
    const unsigned groups = unit == 8 ? 2 : 1, words = unit == 8 ? 2 : 1, lanes = 32 / groups;
    unsigned total = 0;
    for (unsigned i = 0; i < 4; ++i) {
      for (unsigned g = 0; g < groups; ++g) {
        std::uint64_t seen[32] = {};
        unsigned per_bank[32] = {}, most = 0;
        for (unsigned l = g * lanes; l < (g + 1) * lanes; ++l) {
          if (!active[i][l]) continue;
          const unsigned at = transpose_few_smem(run[i][l] * c.pitch + rest[i][l], c.swizzle, c.swizzle_shift);
          for (unsigned k = 0; k < words; ++k) {
            const unsigned word = at / 4 + k, bank = word % 32;
            const std::uint64_t bit = std::uint64_t{1} << (word / 32 % 64);
            if ((seen[bank] & bit) == 0) ++per_bank[bank];
            seen[bank] |= bit;
            most = std::max(most, per_bank[bank]);
          }
        }
        total += most;
      }
    }
    return total;
  };
  transpose_few_layout best = transpose_few_layout_fixed(p);
  unsigned least = count(best);
  const auto consider = [&](const transpose_few_layout& c) {
    const unsigned cost = count(c);
    if (cost < least) {
      least = cost;
      best = c;
    }
  };
  if (p.path == transpose_path::few_rows) {
    const transpose_few_layout w = transpose_few_swizzle_at(2, unit);
    for (std::uint32_t k = 0; k < 8; ++k) {
      const std::uint32_t pitch = p.run_pitch + 16 * k;
      if (k > 0 && transpose_few_rows_smem(p.rows, pitch) > 48 * 1024) break;
      consider({w.swizzle, w.swizzle_shift, pitch});
    }
  }
  const std::uint32_t pitch = best.pitch;
  for (int i = 0; i < transpose_few_swizzles; ++i) {
    transpose_few_layout c = transpose_few_swizzle_at(i, unit);
    c.pitch = pitch;
    consider(c);
  }
  return best;
}

// Every few_rows and small_matrices plan of a grid (sides 2..64 and a few long ones, primes among them, every element
// size, 5 pointer offsets, 8 MiB a buffer): the layout the plan holds (memoized), a second plan of the same job
// (from the memo), transpose_few_layout_search's and the whole count's, all one; and 4 threads planning the grid at
// once, in different orders through the one memo, get the same.
TEST(transpose_plan, few_layout_search_cut_short_and_memoized_chooses_as_the_whole_count) {
  struct job {
    std::uint64_t batch, rows, cols;
    std::size_t es;
    std::uintptr_t dst, src;
    transpose_few_layout want;
  };
  std::vector<job> jobs;
  const std::uint64_t sides[] = {2,  3,  4,  5,  7,  8,  11, 15,  16,  17,   20,
                                 25, 31, 33, 36, 47, 64, 97, 127, 257, 2048, 8191};
  const std::uintptr_t offsets[][2] = {{0, 0}, {1, 0}, {0, 3}, {8, 4}, {5, 13}};
  int searched = 0;
  for (const std::uint64_t rows : sides) {
    for (const std::uint64_t cols : sides) {
      for (const std::size_t es : {1u, 2u, 4u, 8u}) {
        for (const auto& o : offsets) {
          const std::uint64_t matrix = rows * cols * es, batch = ((8u << 20) + matrix - 1) / matrix;
          const std::uintptr_t dst = base + o[0], src = 2 * base + o[1];
          const transpose_plan p = plan_transpose(dst, src, batch, rows, cols, es, h100);
          if (p.path != transpose_path::few_rows && p.path != transpose_path::small_matrices) continue;
          SCOPED_TRACE(std::to_string(es) + "-byte " + std::to_string(batch) + " x " + std::to_string(rows) + " x " +
                       std::to_string(cols) + " dst+" + std::to_string(o[0]) + " src+" + std::to_string(o[1]));
          const transpose_few_layout want = whole_count_layout(p, dst, src);
          ASSERT_EQ(p.smem_swizzle, want.swizzle);
          ASSERT_EQ(p.smem_swizzle_shift, want.swizzle_shift);
          if (p.path == transpose_path::few_rows) {
            ASSERT_EQ(p.run_pitch, want.pitch);
          }
          transpose_plan least = p;
          least.run_pitch = transpose_few_geometry_of(p.path, batch, rows, cols, es, dst).run_pitch;
          const transpose_few_layout cut = transpose_few_layout_search(least, dst, src);
          ASSERT_EQ(cut.swizzle, want.swizzle);
          ASSERT_EQ(cut.swizzle_shift, want.swizzle_shift);
          ASSERT_EQ(cut.pitch, want.pitch);
          const transpose_plan again = plan_transpose(dst, src, batch, rows, cols, es, h100);
          ASSERT_EQ(again.smem_swizzle, p.smem_swizzle);
          ASSERT_EQ(again.smem_swizzle_shift, p.smem_swizzle_shift);
          ASSERT_EQ(again.run_pitch, p.run_pitch);
          searched += (p.smem_swizzle != transpose_few_layout_fixed(least).swizzle ||
                       p.smem_swizzle_shift != transpose_few_layout_fixed(least).swizzle_shift ||
                       (p.path == transpose_path::few_rows && p.run_pitch != transpose_few_layout_fixed(least).pitch));
          jobs.push_back({batch, rows, cols, es, dst, src, want});
        }
      }
    }
  }
  EXPECT_GT(jobs.size(), 3000u);
  EXPECT_GT(searched, 1000) << "the search should move many layouts off the fixed one";
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t n = 0; n < jobs.size(); ++n) {
        const job& j = jobs[(n * (2 * t + 1) + 977 * t) % jobs.size()];  // each thread its own order
        const transpose_plan p = plan_transpose(j.dst, j.src, j.batch, j.rows, j.cols, j.es, h100);
        wrong[t] += p.smem_swizzle != j.want.swizzle || p.smem_swizzle_shift != j.want.swizzle_shift ||
                    (p.path == transpose_path::few_rows && p.run_pitch != j.want.pitch);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (unsigned t = 0; t < 4; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
}

// No sliver tile (few_rows): where a matrix's columns fit one and a half tiles and one pass of loads, one tile.
TEST(transpose_plan, few_rows_takes_a_short_matrix_in_one_tile) {
  const transpose_plan p = plan_transpose(base, 2 * base, 3957, 257, 33, 1, h100);  // K would be 32 + 1
  ASSERT_EQ(p.path, transpose_path::few_rows);
  EXPECT_EQ(p.tile_cols, 33);
  EXPECT_EQ(p.tiles_c, 1u);
  EXPECT_EQ(p.tiles, 3957u);
  EXPECT_LE(p.load_chunks, 256u * 6);
  const transpose_plan q = plan_transpose(base, 2 * base, 1, 5, 4093, 1, h100);  // K 3264: one tile of 4093
  EXPECT_EQ(q.tile_cols, 4093);
  const transpose_plan r = plan_transpose(base, 2 * base, 1, 3, 8191, 1, h100);  // K 5440 < 8191 / 1.5: two
  EXPECT_EQ(r.tile_cols, 5440);
  EXPECT_EQ(r.tiles_c, 2u);
}

// The swizzles a few plan may hold: permutations of each 128-byte row of the image (so the image's rounding to
// 128 bytes holds every byte), a unit of the plan's size kept whole and in order, a 16-byte chunk kept in one
// slot with its words XOR-permuted as transpose_few_chunk_words says (what the kernel's STS.128 does).
TEST(transpose_plan, few_swizzles_keep_rows_chunks_and_units) {
  for (const unsigned unit : {1u, 2u, 4u, 8u}) {
    for (int i = 0; i < transpose_few_swizzles; ++i) {
      const transpose_few_layout l = transpose_few_swizzle_at(i, unit);
      SCOPED_TRACE("unit " + std::to_string(unit) + ", swizzle " + std::to_string(l.swizzle) + " >> " +
                   std::to_string(l.swizzle_shift));
      ASSERT_TRUE(transpose_few_swizzle_valid(l.swizzle, l.swizzle_shift, unit));
      std::vector<int> hit(48 * 1024, 0);
      for (unsigned b = 0; b < 48 * 1024; ++b) {
        const unsigned x = transpose_few_smem(b, l.swizzle, l.swizzle_shift);
        ASSERT_EQ(x / 128, b / 128) << "byte " << b << " left its 128-byte row";
        ++hit[x];
        if (b % unit == 0) {
          for (unsigned k = 1; k < unit; ++k)
            ASSERT_EQ(transpose_few_smem(b + k, l.swizzle, l.swizzle_shift), x + k) << "a unit split at " << b;
        }
        const unsigned chunk = b / 16 * 16, words = transpose_few_chunk_words(chunk, l.swizzle, l.swizzle_shift);
        const unsigned slot = transpose_few_smem(chunk, l.swizzle, l.swizzle_shift) & ~15u;
        ASSERT_EQ(x, slot + 4 * ((b % 16 / 4) ^ words) + b % 4) << "byte " << b << " of its chunk";
      }
      EXPECT_EQ(std::count(hit.begin(), hit.end(), 1), 48 * 1024) << "not a permutation";
    }
  }
  EXPECT_FALSE(transpose_few_swizzle_valid(0x7c, 5, 8)) << "8-byte units: the word pair must stay whole";
  EXPECT_FALSE(transpose_few_swizzle_valid(0x70, 4, 1));
}

// ---- shared memory --------------------------------------------------------------------------------------

// A vector stored whole into its slot (halves swapped where the plan says) puts each byte where the
// gathers look for it.
TEST(transpose_plan, slots_and_element_offsets_agree) {
  for (const unsigned es : {1u, 2u, 4u, 8u}) {
    for (unsigned r = 0; r < 256 / es; ++r) {
      for (unsigned q = 0; q < 16; ++q) {
        for (unsigned b = 0; b < 16; ++b) {
          const unsigned in_slot = transpose_smem_swapped(es, r) ? (b + 8) % 16 : b;
          ASSERT_EQ(transpose_smem_slot(es, r, q) + in_slot, transpose_smem_offset(es, r, 16 * q + b))
              << es << "-byte, row " << r << " vector " << q << " byte " << b;
          const transpose_smem_vector v = transpose_smem_vector_at(es, r, 16 * q);
          ASSERT_EQ(v.slot, transpose_smem_slot(es, r, q));
          ASSERT_EQ(v.swapped, transpose_smem_swapped(es, r));
        }
      }
    }
  }
}

// Load steps: each warp's STS.128 (two tile rows, 16 slots each) takes 4 wavefronts, the fewest. Store
// steps: each gather request (one LDS per element row k; LDS.64 for 8-byte elements) the fewest.
TEST(transpose_plan, shared_requests_take_the_fewest_wavefronts) {
  for (const unsigned es : {1u, 2u, 4u, 8u}) {
    const unsigned steps = 16 / es, group = transpose_gather_group(es), v = 16 / es;
    for (unsigned w = 0; w < 8; ++w) {
      for (unsigned i = 0; i < steps; ++i) {
        warp_addresses sts{};
        for (unsigned l = 0; l < 32; ++l) {
          const unsigned t = 32 * w + l;
          sts[l] = transpose_smem_slot(es, t / 16 + 16 * i, t % 16);
        }
        const bank_request b = shared_request(sts, 16);
        EXPECT_EQ(b.wavefronts, b.ideal) << es << "-byte STS.128, warp " << w << " step " << i;
      }
      for (unsigned j = 0; j < steps / group; ++j) {
        for (unsigned k = 0; k < v; ++k) {
          warp_addresses lds{};
          for (unsigned l = 0; l < 32; ++l) {
            const unsigned t = 32 * w + l, c = transpose_store_row(es, t, j), q = t % 16;
            lds[l] = transpose_smem_offset(es, v * q + k, c * es);
          }
          const bank_request b = shared_request(lds, es == 8 ? 8 : 4);
          EXPECT_EQ(b.wavefronts, b.ideal) << es << "-byte gather, warp " << w << " step " << j << " row " << k;
        }
      }
    }
  }
}

// The store steps of a CTA serve every output row of a tile once, `group` rows a gather.
TEST(transpose_plan, store_steps_cover_every_output_row_once) {
  for (const unsigned es : {1u, 2u, 4u, 8u}) {
    const unsigned steps = 16 / es, group = transpose_gather_group(es);
    std::vector<int> served(256 / es, 0);
    for (unsigned t = 0; t < 256; t += 16) {  // one lane per half-warp: the row is the half-warp's
      for (unsigned j = 0; j < steps / group; ++j) {
        for (unsigned g = 0; g < group; ++g) ++served.at(transpose_store_row(es, t, j) + g);
      }
    }
    for (std::size_t c = 0; c < served.size(); ++c) EXPECT_EQ(served[c], 1) << es << "-byte, output row " << c;
  }
}

}  // namespace
}  // namespace memlab
