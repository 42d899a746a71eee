// memlab::plan_transpose and the geometry its kernels share with it (transpose_plan.hpp), on the host:
// which path every element size and alignment takes; the tiles; a replay of every load and store the
// kernels issue, from the same functions, checking that each output byte is written exactly once (by a
// 16-byte store at a 16-byte boundary or a narrow one of this tile's own bytes), that each load is an
// aligned 16-byte chunk inside src except the buffer's first and last, and that every stored vector's
// bytes were loaded by its lane or the next; and the shared-memory requests of the tile, through the bank
// simulator: the fewest wavefronts each. Pure host code: no GPU, no CUDA runtime.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/bank_model.hpp"
#include "memlab/transpose_plan.hpp"

namespace memlab {
namespace {

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
             {std::pair<std::uint64_t, std::uint64_t>{64, 64}, {64, 63}, {63, 64}, {33, 4097}}) {
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
  const transpose_plan big = plan_transpose(base, 2 * base, std::uint64_t{1} << 32, 2, 2, 1, h100);
  EXPECT_EQ(big.tiles, std::uint64_t{1} << 32);
  EXPECT_EQ(big.grid, 0x7fffffffu);
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
  EXPECT_EQ(plan_transpose(base + 8, 2 * base + 8, 1, 64, 64, 8, h100).path, transpose_path::elem8);
  EXPECT_EQ(plan_transpose(base + 8, 2 * base, 1, 64, 64, 8, h100).path, transpose_path::realign_out);
  EXPECT_EQ(plan_transpose(base, 2 * base, 1, 64, 64, 8, h100).path, transpose_path::aligned);
  EXPECT_EQ(plan_transpose(base + 4, 2 * base, 1, 64, 64, 8, h100).path, transpose_path::realign_out);
  EXPECT_EQ(plan_transpose(base, 2 * base, 1, 65, 63, 4, h100).path, transpose_path::realign_both);
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
