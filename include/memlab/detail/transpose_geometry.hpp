// memlab/detail/transpose_geometry.hpp: the geometry behind memlab::transpose (memlab::detail), shared by
// the plan (memlab/transpose_plan.hpp, which includes this header after its public types), the kernels
// (memlab/transpose.cuh), the transpose lab's host model and the tests that replay it: the tiled paths' tiles
// and halos, the few paths' runs, blocks and shared-memory layouts (and their search), the tiled paths'
// shared-memory swizzle and store ownership. Not an API: names and signatures change with the kernels.
// Include memlab/transpose_plan.hpp, never this file alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <type_traits>

#include "memlab/arch/config.cuh"
#include "memlab/copy_plan.hpp"

namespace memlab::detail {

// A tiled path's tiles and launch shape, from the path and the element size alone (plan_transpose fills a
// plan with them; launch_transpose checks a plan against them).
struct transpose_geometry {
  int tile_rows = 0, tile_cols = 0, halo_rows = 0;
  int vectors_per_thread = 0, vec_bytes = 0, min_ctas_per_sm = 0;
  std::uint32_t smem_bytes = 0;
};
constexpr transpose_geometry transpose_geometry_of(transpose_path path, int es) {
  transpose_geometry g;
  if (path == transpose_path::elem8) {
    constexpr int n = transpose_tuning::elem8_edge;
    g.tile_rows = g.tile_cols = n;
    g.halo_rows = transpose_tuning::elem8_halo;
    g.vectors_per_thread = n * n / transpose_tuning::threads;
    g.vec_bytes = 8;
    g.min_ctas_per_sm = 8;
    g.smem_bytes = static_cast<std::uint32_t>((n + g.halo_rows) * transpose_tuning::elem8_pitch * 8);
    return g;
  }
  const bool in = realigns_in(path), out = realigns_out(path);
  g.tile_rows = (out ? transpose_tuning::realigned_out_row_bytes : transpose_tuning::row_bytes) / es;
  g.tile_cols = (in ? transpose_tuning::realigned_row_bytes : transpose_tuning::row_bytes) / es;
  g.halo_rows = out ? 32 / es : 0;
  g.vectors_per_thread = 16 / es;
  g.vec_bytes = 16;
  g.min_ctas_per_sm = transpose_tuning::min_ctas_per_sm(es, in, out);
  g.smem_bytes = static_cast<std::uint32_t>(g.tile_rows + g.halo_rows) * transpose_tuning::row_bytes;
  return g;
}

// ---- the few paths' geometry (transpose_few_kernel in transpose.cuh), here so that host tests replay it ----

// Exact n / d for n < 2^17 and 2 <= d < 2^15 (n x d < 2^32): a multiplication by magic = transpose_magic(d)
// and the high word, instead of a division in the kernel's inner loops. (magic = floor(2^32 / d) + 1 exceeds
// 2^32 / d by at most 1, so n x magic / 2^32 exceeds n / d by less than n / 2^32 < 1 / d.)
constexpr std::uint32_t transpose_magic(std::uint32_t d) { return d < 2 ? 0u : 0xffffffffu / d + 1; }
MEMLAB_HOST_DEVICE constexpr std::uint32_t transpose_div(std::uint32_t n, std::uint32_t magic) {
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(n) * magic) >> 32);
}

// The shared-memory image's XOR swizzle: byte b of the image lives at b ^ ((b >> shift) & mask), mask within
// 0x7c (the 4-byte word inside a 128-byte row, bits 2..6) and its source bits (mask << shift) at bit 7 or above:
// a permutation of each 128-byte row's words, chosen by bits of the row's address. An element stays inside its
// word (8-byte units: mask 0x78, the word pair stays whole and in order); a 16-byte chunk moves to one slot with
// its 4 words XOR-permuted (transpose_few_chunk_words: the kernel permutes them in registers before its STS.128).
//   mask 0, shift 0      none
//   mask 0x70, shift 3   the slot (b / 16) % 8 XOR the row % 8: whole chunks only (transpose_few_swizzle)
//   mask 0x7c, shift s   every word bit XOR 5 bits of the address from bit s + 2 up (0x78: 4 of them)
// transpose_few_layout_of picks one per shape (docs/notes/transpose_skinny.md section 6).
MEMLAB_HOST_DEVICE constexpr unsigned transpose_few_smem(unsigned b, unsigned mask, unsigned shift) {
  return b ^ ((b >> shift) & mask);
}
// The XOR of the word index (0..3) inside the 16-byte chunk that starts at image byte b (16-aligned): the chunk
// goes to slot transpose_few_smem(b, mask, shift) / 16, its word i to word i ^ transpose_few_chunk_words(...).
MEMLAB_HOST_DEVICE constexpr unsigned transpose_few_chunk_words(unsigned b, unsigned mask, unsigned shift) {
  return ((b >> shift) & mask & 0x0cu) >> 2;
}
// Whether a swizzle moves whole 16-byte chunks only (none, or the slot XOR 0x70 at shift 3: the fixed layout's,
// transpose_few_swizzle), no word of a chunk permuted. transpose_few_kernel has an instantiation for these (its
// Fixed parameter): the shift a constant and no permute before the STS.128, the instruction stream of the kernel
// before the per-shape layouts; the word XORs take the general one (docs/notes/transpose_skinny.md section 6).
MEMLAB_HOST_DEVICE constexpr bool transpose_few_whole_chunks(unsigned mask, unsigned shift) {
  return mask == 0 || (mask == 0x70 && shift == 3);
}
// few_cols' swizzle (the lanes of a gather request read addresses 16 x cols bytes apart): where that stride has
// a factor of 2, slots of one column of the image collide without the XOR. Chosen with the bank model
// (tests/library/test_transpose_plan.cpp: at most 2 wavefronts per request for a side of 2..8 elements).
constexpr unsigned transpose_few_swizzle(transpose_path path, std::uint64_t rows, std::uint64_t cols) {
  const bool xor_slots = path == transpose_path::few_rows ? rows >= 24 : cols % 2 == 0;
  return xor_slots ? 0x70u : 0u;
}

// A range of n bytes at any offset from a 16-byte boundary spans at most this many aligned 16-byte chunks.
constexpr std::uint64_t transpose_chunks_spanned(std::uint64_t n) { return (n + 15 + 15) / 16; }

// few_rows' image: `rows` runs at pitch T, 16 bytes of slack for the first run's offset P0, whole 128-byte rows.
constexpr std::uint32_t transpose_few_rows_smem(std::uint64_t rows, std::uint64_t pitch) {
  return static_cast<std::uint32_t>((rows * pitch + 16 + 127) / 128 * 128);
}

// Tiles of a few path, from the shape, the element size and the address of dst (whether every boundary a
// tile's ownership depends on is a 32-byte sector boundary already: then there is no halo).
struct transpose_few_geometry {
  std::uint32_t per_tile = 0;  // K rows (few_cols), K columns (few_rows), M matrices (small_matrices)
  std::uint32_t halo = 0;      // rows, columns or matrices loaded past the tile (as far as there are any)
  std::uint64_t tiles_per_matrix = 0, tiles = 0;
  std::uint32_t run_chunks = 0, run_pitch = 0;  // few_rows: chunk slots of a run; bytes between runs' images
  std::uint32_t load_chunks = 0;                // 16-byte chunks a tile loads at most
  std::uint32_t smem_bytes = 0;
};
constexpr transpose_few_geometry transpose_few_geometry_of(transpose_path path, std::uint64_t batch, std::uint64_t rows,
                                                           std::uint64_t cols, std::uint64_t es, std::uintptr_t dst) {
  transpose_few_geometry g;
  const std::uint64_t unit = 32 / es;  // K is a multiple: a tile's run of dst is a whole number of sectors
  const auto round_down = [](std::uint64_t x, std::uint64_t m) { return x / m * m; };
  const std::uint64_t tile = transpose_tuning::few_tile_bytes,
                      most = transpose_tuning::threads * static_cast<std::uint64_t>(transpose_tuning::few_load_steps);
  const std::uint64_t matrix = rows * cols * es;  // bytes of one matrix
  if (path == transpose_path::few_cols) {
    const std::uint64_t k = tile / (cols * es) >= unit ? round_down(tile / (cols * es), unit) : unit;
    // Every run of dst starts on a sector boundary and a tile's rows are whole sectors: no halo.
    const bool sectors = dst % 32 == 0 && rows * es % 32 == 0;
    g.per_tile = static_cast<std::uint32_t>(k);
    g.halo = sectors ? 0u : static_cast<std::uint32_t>(unit);
    g.tiles_per_matrix = (rows + k - 1) / k;
    g.tiles = batch * g.tiles_per_matrix;
    const std::uint64_t loaded = k + g.halo < rows ? k + g.halo : rows;
    g.load_chunks = static_cast<std::uint32_t>(transpose_chunks_spanned(loaded * cols * es));
    g.smem_bytes = (g.load_chunks * 16 + 127) / 128 * 128;
  } else if (path == transpose_path::few_rows) {
    std::uint64_t k = tile / (rows * es) >= unit ? round_down(tile / (rows * es), unit) : unit;
    // No sliver: where the matrix's columns fit one and a half tiles and one pass of loads, one tile takes them
    // all (H100 heat map: u8 257 x 33..41, K = 32 and a second tile of 1..9 columns, 0.43-0.50 of a copy).
    if (cols > k && 2 * cols <= 3 * k && rows * transpose_chunks_spanned(cols * es) <= most) k = cols;
    const bool sectors = dst % 32 == 0 && (batch == 1 || matrix % 32 == 0);
    g.per_tile = static_cast<std::uint32_t>(k);
    // The last byte a tile owns is < 31 bytes past its nominal end: floor(30 / es) elements, so many rows on.
    g.halo = sectors ? 0u : static_cast<std::uint32_t>(30 / es / rows + 1);
    g.tiles_per_matrix = (cols + k - 1) / k;
    g.tiles = batch * g.tiles_per_matrix;
    const std::uint64_t loaded = k + g.halo < cols ? k + g.halo : cols;
    g.run_chunks = static_cast<std::uint32_t>(transpose_chunks_spanned(loaded * es));
    // Run r's image starts at P0 + r x T, T = cols x es (mod 16): element k of run r is at P0 + r T + k es,
    // whatever the alignment of the rows of src. The least such T; transpose_few_layout_of may add whole slots.
    g.run_pitch = static_cast<std::uint32_t>(16 * g.run_chunks + 16 + cols * es % 16);
    g.load_chunks = static_cast<std::uint32_t>(rows * g.run_chunks);
    g.smem_bytes = transpose_few_rows_smem(rows, g.run_pitch);
  } else if (path == transpose_path::small_matrices) {
    std::uint64_t m = tile / matrix >= 1 ? tile / matrix : 1;
    std::uint64_t m_unit = 32;  // matrices whose bytes are a multiple of 32
    while (m_unit > 1 && matrix * (m_unit / 2) % 32 == 0) m_unit /= 2;
    if (m >= m_unit) m = round_down(m, m_unit);
    const auto halo_of = [&](std::uint64_t mm) {
      return dst % 32 == 0 && mm * matrix % 32 == 0 ? 0u : static_cast<std::uint32_t>(30 / es / (rows * cols) + 1);
    };
    const auto chunks_of = [&](std::uint64_t mm) {
      const std::uint64_t h = halo_of(mm), loaded = mm + h < batch ? mm + h : batch;
      return transpose_chunks_spanned(loaded * matrix);
    };
    while (m > 1 && chunks_of(m) > most) --m;
    g.per_tile = static_cast<std::uint32_t>(m);
    g.halo = halo_of(m);
    g.tiles_per_matrix = 1;
    g.tiles = (batch + m - 1) / m;
    g.load_chunks = static_cast<std::uint32_t>(chunks_of(m));
    g.smem_bytes = (g.load_chunks * 16 + 127) / 128 * 128;
  }
  return g;
}

// A side a few path can take: at most few_max_side elements, or (a wide side) at most few_max_wider_bytes.
constexpr bool transpose_few_side_fits(std::uint64_t side, std::uint64_t es) {
  return side <= static_cast<std::uint64_t>(transpose_tuning::few_max_side) ||
         side * es <= transpose_tuning::few_max_wider_bytes;
}

// Which few path (transpose_path::none: none) a shape takes, given the tiles the tiled path would use: a
// matrix smaller than one tile and at most 8 KiB (small_matrices); else a side of at most 64 elements that
// is not a whole number of tiles (a tiled CTA would move a sliver), the shorter side if both.
constexpr transpose_path transpose_few_path(std::uint64_t rows, std::uint64_t cols, std::uint64_t es,
                                            const transpose_geometry& tiled) {
  const auto tr = static_cast<std::uint64_t>(tiled.tile_rows), tc = static_cast<std::uint64_t>(tiled.tile_cols);
  constexpr auto side = static_cast<std::uint64_t>(transpose_tuning::few_max_side);
  if (rows * cols * es <= transpose_tuning::small_matrix_max_bytes && rows * cols < tr * tc) {
    return transpose_path::small_matrices;
  }
  const bool few_c = cols <= side && cols % tc != 0, few_r = rows <= side && rows % tr != 0;
  if (few_c && (!few_r || cols <= rows)) return transpose_path::few_cols;
  if (few_r) return transpose_path::few_rows;
  return transpose_path::none;
}

// A side longer than few_max_side that takes its few path anyway (docs/notes/transpose_skinny.md section 5):
// the tiled path realigns it (its rows of bytes not 16-byte aligned) and it spans at most few_wide_tiles of
// that path's tiles (`tile` elements along it), so that every tiled tile along it would be an edge tile
// (realigning stores: narrow stores at both ends of every output row; a cut tile's gathers and shuffles run
// for the whole tile). plan_transpose also needs the few geometry to fit (plan_transpose_few).
constexpr bool transpose_few_wide(std::uint64_t side, bool realigned, int tile) {
  return side > static_cast<std::uint64_t>(transpose_tuning::few_max_side) && realigned &&
         side <= static_cast<std::uint64_t>(transpose_tuning::few_wide_tiles) * static_cast<std::uint64_t>(tile);
}
// Wider: up to few_wider_tiles tiles and few_max_wider_bytes (plan_transpose asks it after the wide rules).
constexpr bool transpose_few_wider(std::uint64_t side, std::uint64_t es, bool realigned, int tile) {
  return side > static_cast<std::uint64_t>(transpose_tuning::few_max_side) && realigned &&
         side <= static_cast<std::uint64_t>(transpose_tuning::few_wider_tiles) * static_cast<std::uint64_t>(tile) &&
         side * es <= transpose_tuning::few_max_wider_bytes;
}

// The map from an output byte to the byte of the shared-memory image that holds it (before the swizzle,
// after the image's first element at P0), shared by the kernel and the host replay.
struct transpose_few_map {
  std::uint32_t es_shift = 0;        // log2 elem_size
  std::uint32_t rows = 0, cols = 0;  // few_rows: rows; small_matrices: both; few_cols: cols (others unused)
  std::uint32_t pitch = 0;           // few_rows: the runs' pitch T
  std::uint32_t magic_rows = 0;      // transpose_magic(rows)
  std::uint32_t magic_matrix = 0;    // small_matrices: transpose_magic(rows x cols)
  std::uint32_t swizzle = 0;         // the image's swizzle mask and shift (transpose_few_smem)
  std::uint32_t swizzle_shift = 0;
};
// `o`: bytes from the tile's nominal output start (few_cols: in output row `c`, at input row `first`;
// few_rows: at column `first` of its matrix; small_matrices: at matrix `first`).
//   few_cols        output byte o of row c is element (o / es, c) of the tile's block: input row o / es.
//   few_rows        output element j = o / es is (column j / rows, row j % rows) of the tile: run j % rows.
//   small_matrices  output element j is matrix j / (rows x cols), its column (j % rc) / rows, row (j % rc) % rows.
MEMLAB_HOST_DEVICE constexpr std::uint32_t transpose_few_source(transpose_path path, const transpose_few_map& m,
                                                                std::uint32_t o, std::uint32_t c) {
  const std::uint32_t j = o >> m.es_shift, part = o & ((1u << m.es_shift) - 1);
  if (path == transpose_path::few_cols) return ((j * m.cols + c) << m.es_shift) + part;
  if (path == transpose_path::few_rows) {
    const std::uint32_t col = transpose_div(j, m.magic_rows), r = j - col * m.rows;
    return r * m.pitch + (col << m.es_shift) + part;
  }
  const std::uint32_t rc = m.rows * m.cols, mm = transpose_div(j, m.magic_matrix), rem = j - mm * rc;
  const std::uint32_t col = transpose_div(rem, m.magic_rows), r = rem - col * m.rows;
  return ((mm * rc + r * m.cols + col) << m.es_shift) + part;
}

// Tile k of a few path: its matrix (few_cols, few_rows), its first row (few_cols), column (few_rows) or
// matrix (small_matrices), how many it has and how many it loads (with the halo, as far as there are).
struct transpose_few_tile {
  std::uint64_t matrix = 0, first = 0;
  std::uint32_t count = 0, loaded = 0;
};
MEMLAB_HOST_DEVICE constexpr transpose_few_tile transpose_few_tile_at(transpose_path path, std::uint64_t k,
                                                                      std::uint64_t batch, std::uint64_t rows,
                                                                      std::uint64_t cols,
                                                                      std::uint64_t tiles_per_matrix,
                                                                      std::uint32_t per_tile, std::uint32_t halo) {
  transpose_few_tile p;
  std::uint64_t n = batch;
  if (path == transpose_path::small_matrices) {
    p.first = k * per_tile;
  } else {
    p.matrix = k / tiles_per_matrix;
    p.first = k % tiles_per_matrix * per_tile;
    n = path == transpose_path::few_cols ? rows : cols;
  }
  const std::uint64_t left = n - p.first;
  p.count = static_cast<std::uint32_t>(left < per_tile ? left : per_tile);
  p.loaded = static_cast<std::uint32_t>(left < std::uint64_t{per_tile} + halo ? left : std::uint64_t{per_tile} + halo);
  return p;
}

// What a tile reads: one block of `len` bytes at src offset `in` (few_cols: its rows and halo; small_matrices:
// its matrices and halo), or (few_rows) `rows` runs of `len` bytes, run r at in + r x cols x es.
struct transpose_few_input {
  std::uint64_t in = 0;
  std::uint32_t len = 0;
};
MEMLAB_HOST_DEVICE constexpr transpose_few_input transpose_few_input_of(transpose_path path,
                                                                        const transpose_few_tile& tp,
                                                                        std::uint64_t rows, std::uint64_t cols,
                                                                        std::uint64_t es) {
  const std::uint64_t rc = rows * cols;
  if (path == transpose_path::few_cols) {
    return {(tp.matrix * rc + tp.first * cols) * es, static_cast<std::uint32_t>(tp.loaded * cols * es)};
  }
  if (path == transpose_path::few_rows) {
    return {(tp.matrix * rc + tp.first) * es, static_cast<std::uint32_t>(tp.loaded * es)};
  }
  return {tp.first * rc * es, static_cast<std::uint32_t>(tp.loaded * rc * es)};
}

// Load slot f of a tile (thread t, step i: f = t + threads x i): chunk f of the block, or (few_rows) chunk q
// of run r, f = r x run_chunks + q. Whether the slot holds a chunk, the chunk's src offset `at` (16-byte
// aligned as an address; outside [0, bytes) only for the buffer's own first and last chunk, which the kernel
// narrows) and its place in the image (before the swizzle). p0 = (src + in) % 16: the image keeps every
// byte's offset modulo 16, so the block's first byte is at p0, run r's at p0 + r x run_pitch.
struct transpose_few_slot {
  bool valid = false;
  std::int64_t at = 0;
  std::uint32_t image = 0;
};
MEMLAB_HOST_DEVICE constexpr transpose_few_slot transpose_few_slot_at(transpose_path path, std::uint32_t f,
                                                                      std::uintptr_t src, const transpose_few_input& in,
                                                                      std::uint64_t rows, std::uint64_t cols,
                                                                      std::uint64_t es, std::uint32_t run_chunks,
                                                                      std::uint32_t magic_run_chunks,
                                                                      std::uint32_t run_pitch) {
  const auto p0 = static_cast<std::uint32_t>((src + in.in) % 16);
  if (path == transpose_path::few_rows) {
    const std::uint32_t r = transpose_div(f, magic_run_chunks), q = f - r * run_chunks;
    const std::uint64_t run = in.in + r * cols * es;
    const auto pr = static_cast<std::uint32_t>((src + run) % 16);
    return {r < rows && 16 * q < pr + in.len, static_cast<std::int64_t>(run) - pr + 16 * std::int64_t{q},
            (p0 + r * run_pitch) / 16 * 16 + 16 * q};
  }
  return {16 * f < p0 + in.len, static_cast<std::int64_t>(in.in) - p0 + 16 * std::int64_t{f}, 16 * f};
}

// A run of dst a tile writes: `run` (its offset from dst) and `run_bytes`, the tile's nominal start and end
// in it (at0, at1: bytes from the run's start). few_cols: output row c of the tile's matrix (rows x es);
// few_rows: the matrix's transpose, from column `first` (the c argument unused); small_matrices: all of dst.
struct transpose_few_run {
  std::uint64_t run = 0, run_bytes = 0, at0 = 0, at1 = 0;
};
MEMLAB_HOST_DEVICE constexpr transpose_few_run transpose_few_run_of(transpose_path path, const transpose_few_tile& tp,
                                                                    std::uint32_t c, std::uint64_t batch,
                                                                    std::uint64_t rows, std::uint64_t cols,
                                                                    std::uint64_t es, std::uint32_t per_tile) {
  const std::uint64_t rc = rows * cols;
  if (path == transpose_path::few_cols) {
    return {(tp.matrix * rc + c * rows) * es, rows * es, tp.first * es, (tp.first + per_tile) * es};
  }
  if (path == transpose_path::few_rows) {
    return {tp.matrix * rc * es, rc * es, tp.first * rows * es, (tp.first + per_tile) * rows * es};
  }
  return {0, batch * rc * es, tp.first * rc * es, (tp.first + per_tile) * rc * es};
}

// few_cols: the chunk slots a tile gives each output run. An inner tile owns exactly per_tile x es / 16
// chunks (both its bounds are sector boundaries, per_tile x es apart; per_tile x es is a multiple of 32);
// the first and the last of a run own at most 3 more (an unaligned end: at most per_tile x es + 31 bytes,
// over chunks that start up to 15 bytes before them): 4, to keep the count even.
MEMLAB_HOST_DEVICE constexpr std::uint32_t transpose_few_run_slots(const transpose_few_run& r, std::uint32_t per_tile,
                                                                   std::uint64_t es) {
  const bool inner = r.at0 != 0 && r.at1 + 32 <= r.run_bytes;
  return static_cast<std::uint32_t>(per_tile * es / 16) + (inner ? 0u : 4u);  // even: sector pairs
}

// few_cols: store slot f of a tile -> output run c, chunk m of it. Pairs of lanes take the two 16-byte chunks
// of one 32-byte sector (a warp stores whole sectors), pairs take consecutive runs (a warp's gathers read
// neighbouring elements: at most 2 wavefronts, with transpose_few_swizzle). `slots_per_run` is even.
struct transpose_few_store_slot {
  std::uint32_t c = 0, m = 0;
};
MEMLAB_HOST_DEVICE constexpr transpose_few_store_slot transpose_few_cols_slot(std::uint32_t f, std::uint32_t cols,
                                                                              std::uint32_t magic_cols) {
  const std::uint32_t pair = f / 2, q = transpose_div(pair, magic_cols);
  return {pair - q * cols, 2 * q + f % 2};
}

// The first byte of a run of dst (`run`: its offset from dst, `run_bytes` long) that a tile whose nominal
// start is `at` bytes into the run owns: the run's start for at == 0, its end for at >= run_bytes, else the
// first 32-byte sector boundary at or after the nominal byte, at most the run's end. `dst` is dst's address:
// sectors are absolute. A tile owns [bound(its start), bound(its end)): every byte of a run exactly once.
MEMLAB_HOST_DEVICE constexpr std::uint64_t transpose_few_bound(std::uintptr_t dst, std::uint64_t run,
                                                               std::uint64_t run_bytes, std::uint64_t at) {
  if (at == 0) return run;
  if (at >= run_bytes) return run + run_bytes;
  const std::uint64_t up = (dst + run + at + 31) / 32 * 32 - dst;
  return up < run + run_bytes ? up : run + run_bytes;
}

// 1-byte elements: the shapes whose few-path tiles go out in blocks of a compile-time byte permutation
// (transpose.cuh, transpose_few_blocks_kernel; docs/notes/transpose_skinny.md section 7). few_rows of R rows: the
// block's width in columns, the least with whole 4-byte words of each run and whole 16-byte chunks of dst (16 for
// odd R), or 0 (no block: more than 8 rows are not compiled). small_matrices: 3 x 3 and 4 x 4 (blocks of lcm(R C,
// 16) bytes: 144 and 16).
MEMLAB_HOST_DEVICE constexpr unsigned transpose_few_block_columns(std::uint64_t rows) {
  if (rows < 2 || rows > 8) return 0;
  return rows % 2 != 0 ? 16u : rows % 4 != 0 ? 8u : 4u;
}
MEMLAB_HOST_DEVICE constexpr bool transpose_few_small_block(std::uint64_t rows, std::uint64_t cols) {
  return rows == cols && (rows == 3 || rows == 4);
}
// A block's bytes (0: the shape has none), for 1-byte elements.
MEMLAB_HOST_DEVICE constexpr std::uint32_t transpose_few_block_bytes(transpose_path path, std::uint64_t rows,
                                                                     std::uint64_t cols) {
  if (path == transpose_path::few_rows) return static_cast<std::uint32_t>(transpose_few_block_columns(rows) * rows);
  if (path != transpose_path::small_matrices || !transpose_few_small_block(rows, cols)) return 0;
  const auto m = static_cast<std::uint32_t>(rows * cols);
  return m % 16 == 0 ? m : m % 8 == 0 ? 2 * m : m % 4 == 0 ? 4 * m : m % 2 == 0 ? 8 * m : 16 * m;
}
// Blocks of five chunks or more (5 and 7 rows, 3 x 3) are staged: each warp writes its 32 blocks to shared memory
// and stores them from there, lane after lane on consecutive chunks (stored straight from the lanes, a warp's
// STG.E.128 would touch 20 to 36 lines of 128 bytes). The staging area follows the image: this many bytes a CTA.
MEMLAB_HOST_DEVICE constexpr std::uint32_t transpose_few_block_staging(transpose_path path, std::uint64_t rows,
                                                                       std::uint64_t cols) {
  const std::uint32_t b = transpose_few_block_bytes(path, rows, cols);
  return b >= 5 * 16 ? static_cast<std::uint32_t>(transpose_tuning::threads) * b : 0u;
}
constexpr bool transpose_few_has_blocks(const transpose_plan& p) {
  return p.elem_size == 1 && p.unit_bytes == 1 && transpose_few_block_bytes(p.path, p.rows, p.cols) != 0;
}

// The few paths' output map of a plan (transpose_few_source).
constexpr transpose_few_map transpose_few_map_of(const transpose_plan& p) {
  transpose_few_map m;
  m.es_shift = p.elem_size == 8 ? 3u : p.elem_size == 4 ? 2u : p.elem_size == 2 ? 1u : 0u;
  const bool rows_used = p.path == transpose_path::few_rows || p.path == transpose_path::small_matrices;
  const bool cols_used = p.path == transpose_path::few_cols || p.path == transpose_path::small_matrices;
  m.rows = rows_used ? static_cast<std::uint32_t>(p.rows) : 0u;
  m.cols = cols_used ? static_cast<std::uint32_t>(p.cols) : 0u;
  m.pitch = p.run_pitch;
  m.magic_rows = transpose_magic(m.rows);
  m.magic_matrix = p.path == transpose_path::small_matrices ? transpose_magic(m.rows * m.cols) : 0u;
  m.swizzle = p.smem_swizzle;
  m.swizzle_shift = p.smem_swizzle_shift;
  return m;
}

// ---- the image's layout: the bank conflicts of the gather, chosen on the host -------------------------------

// The image's layout (few_rows, small_matrices): of a few candidate swizzles and, for few_rows, 8 pitches (T plus
// 0..7 slots, each a different offset modulo 128 between runs, as long as the image stays within 48 KiB), the one
// whose gather takes the fewest wavefronts in a sample of its requests: two warps (the first tile's chunks 1..32
// and 33..64; chunk 0 may be partly another tile's) at unit offsets 0 and 8 bytes, counted as the bank model does
// (harness/bank_model.hpp: a bank serves one 4-byte word per wavefront, lanes reading one word share it; 8-byte
// units by half-warps). Ties: the earlier candidate; few_rows: the pitch first (under the first word swizzle),
// then the swizzle. Over the H100 heat map's shapes (docs/notes/transpose_skinny.md section 6) the choice leaves
// the worst u8 gather request of a tile at 3.6 wavefronts on average where the fixed rule (transpose_few_swizzle)
// left up to 16. few_cols keeps transpose_few_swizzle (at most 2.5 there already).
struct transpose_few_layout {
  std::uint32_t swizzle = 0, swizzle_shift = 0;  // transpose_few_smem's mask and shift
  std::uint32_t pitch = 0;                       // few_rows: the runs' pitch T
};
constexpr int transpose_few_swizzles = 6;
constexpr transpose_few_layout transpose_few_swizzle_at(int i, unsigned unit) {
  const std::uint32_t words = unit == 8 ? 0x78u : 0x7cu;  // 8-byte units: the word pair stays whole
  constexpr std::uint32_t shifts[transpose_few_swizzles] = {0, 3, 5, 6, 7, 8};
  return {i == 0 ? 0u : i == 1 ? 0x70u : words, shifts[i], 0};
}
// Whether (mask, shift) is one of the candidates for this unit (launch_transpose checks a plan with it).
constexpr bool transpose_few_swizzle_valid(std::uint32_t mask, std::uint32_t shift, unsigned unit) {
  for (int i = 0; i < transpose_few_swizzles; ++i) {
    const transpose_few_layout c = transpose_few_swizzle_at(i, unit);
    if (c.swizzle == mask && c.swizzle_shift == shift) return true;
  }
  return false;
}

// The sample: 4 requests of 32 lanes (request i: warp i / 2, unit offset 8 x (i % 2) bytes), as the bank model
// groups them (8-byte units: two half-warps a request, each lane 2 words; else the warp, 1 word a lane). Each
// group lists its active lanes first (an idle lane's chunk is past the tile's output), each lane's image byte
// (before the swizzle) as run x pitch + rest (few_rows; small_matrices: run 0).
constexpr unsigned transpose_few_sample_requests = 4;  // 2 warps x 2 unit offsets
constexpr unsigned transpose_few_sample_groups = 2 * transpose_few_sample_requests;
struct transpose_few_sample {
  std::uint32_t run[transpose_few_sample_groups][32]{}, rest[transpose_few_sample_groups][32]{};  // lanes[g] of each
  std::uint32_t lanes[transpose_few_sample_groups] = {};  // group g's active lanes: run[g][0 .. lanes[g] - 1]
  unsigned groups = 0;                                    // 4, or 8 for 8-byte units
  unsigned words = 0;                                     // 4-byte words a lane reads: 1, or 2 for 8-byte units
  unsigned floor = 0;  // groups with an active lane: no layout takes fewer wavefronts than this
};
// few_cols' sample: the kernel's store slots (transpose_few_cols_slot: lane pairs on one sector, pairs on
// consecutive runs) of the second tile of the first matrix where there is one (a first tile owns its runs from
// their starts, the others from the first sector boundary in each: every run at its own phase, which the lanes'
// image addresses follow), each lane's chunk only where all of it is the tile's, as the kernel gathers it.
// Runs of rows x es = 32 k - es bytes put consecutive runs' phases one element apart, so lanes of consecutive runs
// read (cols + 1) elements apart: at 127 u8 columns all 16 runs of a warp in one bank (15 wavefronts a request).
constexpr transpose_few_sample transpose_few_cols_sample_of(const transpose_plan& p, std::uintptr_t dst,
                                                            std::uintptr_t src) {
  const auto es = static_cast<std::uint64_t>(p.elem_size);
  const bool pairs = p.unit_bytes == 8;
  const unsigned per_group = pairs ? 16 : 32;
  const auto cols = static_cast<std::uint32_t>(p.cols), per_tile = static_cast<std::uint32_t>(p.tile_rows);
  const transpose_few_tile tp = transpose_few_tile_at(p.path, p.tiles_r > 1 ? 1 : 0, p.batch, p.rows, p.cols, p.tiles_r,
                                                      per_tile, static_cast<std::uint32_t>(p.halo_rows));
  const auto p0 = static_cast<std::uint32_t>((src + transpose_few_input_of(p.path, tp, p.rows, p.cols, es).in) % 16);
  const transpose_few_map m = transpose_few_map_of(p);  // few_cols' source reads its es_shift and cols
  const std::uint32_t magic = transpose_magic(cols);
  const unsigned per_run =
      transpose_few_run_slots(transpose_few_run_of(p.path, tp, 0, p.batch, p.rows, p.cols, es, per_tile), per_tile, es);
  const unsigned slots = per_run * cols;
  transpose_few_sample s;
  s.groups = transpose_few_sample_requests * (pairs ? 2 : 1);
  s.words = pairs ? 2 : 1;
  for (unsigned i = 0; i < transpose_few_sample_requests; ++i) {
    for (unsigned l = 0; l < 32; ++l) {
      const unsigned f = 32 * (i / 2) + l;
      if (f >= slots) break;
      const transpose_few_store_slot sl = transpose_few_cols_slot(f, cols, magic);
      const transpose_few_run r = transpose_few_run_of(p.path, tp, sl.c, p.batch, p.rows, p.cols, es, per_tile);
      const std::uint64_t lo = transpose_few_bound(dst, r.run, r.run_bytes, r.at0);
      const std::uint64_t hi = transpose_few_bound(dst, r.run, r.run_bytes, r.at1);
      const std::uint64_t g = (dst + lo) / 16 * 16 - dst + 16 * std::uint64_t{sl.m};  // wraps where dst is misaligned
      if (g + dst < lo + dst || g + 16 > hi) continue;  // a chunk partly (or not) the tile's
      const auto o = static_cast<std::uint32_t>(g - (r.run + r.at0)) + 8 * (i % 2);
      const unsigned grp = i * (pairs ? 2 : 1) + l / per_group, n = s.lanes[grp]++;
      s.run[grp][n] = 0;
      s.rest[grp][n] = p0 + transpose_few_source(p.path, m, o, sl.c);
    }
  }
  for (unsigned g = 0; g < s.groups; ++g) s.floor += s.lanes[g] != 0 ? 1u : 0u;
  return s;
}
constexpr transpose_few_sample transpose_few_sample_of(const transpose_plan& p, std::uintptr_t dst,
                                                       std::uintptr_t src) {
  if (p.path == transpose_path::few_cols) return transpose_few_cols_sample_of(p, dst, src);
  const auto es = static_cast<std::uint64_t>(p.elem_size);
  const std::uint32_t es_shift = es == 8 ? 3u : es == 4 ? 2u : es == 2 ? 1u : 0u;
  const bool few_rows = p.path == transpose_path::few_rows;
  const std::uint64_t out =
      few_rows ? (p.cols < std::uint64_t(p.tile_cols) ? p.cols : std::uint64_t(p.tile_cols)) * p.rows * es
               : (p.batch < p.tile_matrices ? p.batch : p.tile_matrices) * p.rows * p.cols * es;
  const auto p0 = static_cast<std::uint32_t>(src % 16), lead = static_cast<std::uint32_t>(16 - dst % 16);
  const bool pairs = p.unit_bytes == 8;
  const unsigned per_group = pairs ? 16 : 32;
  const auto rows = static_cast<std::uint32_t>(p.rows), cols = static_cast<std::uint32_t>(p.cols);
  transpose_few_sample s;
  s.groups = transpose_few_sample_requests * (pairs ? 2 : 1);
  s.words = pairs ? 2 : 1;
  // Lane l + 1's output byte is 16 past lane l's: V = 16 / es elements on, the same byte of its element. Output
  // element j is (few_rows) element j / rows of run j % rows; (small_matrices) of matrix j / (rows cols), its
  // column and row from the rest (transpose_few_source), stepped here without a division a lane.
  const std::uint32_t v = 16u >> es_shift, rc = rows * cols;
  for (unsigned i = 0; i < transpose_few_sample_requests; ++i) {
    const std::uint64_t first = lead + 16 * (32 * (i / 2));  // lane 0's chunk, from the tile's start
    if (first + 16 > out) continue;
    const auto o = static_cast<std::uint32_t>(first + 8 * (i % 2));
    const std::uint32_t part = o & ((1u << es_shift) - 1);
    std::uint32_t j = o >> es_shift;
    // few_rows: (col, r) of j = col x rows + r; small_matrices: (mm, col, r) of j = mm x rc + col x rows + r.
    std::uint32_t mm = few_rows ? 0u : j / rc, rem = few_rows ? j : j - mm * rc;
    std::uint32_t col = rem / rows, r = rem - col * rows;
    const std::uint32_t dm = few_rows ? 0u : v / rc, vr = few_rows ? v : v % rc;  // v = dm rc + dc rows + dr
    const std::uint32_t dc = vr / rows, dr = vr - dc * rows;
    for (unsigned l = 0; l < 32; ++l, j += v) {
      if (first + 16 * l + 16 > out) break;  // and every later lane
      const unsigned g = i * (pairs ? 2 : 1) + l / per_group, n = s.lanes[g]++;
      if (few_rows) {
        s.run[g][n] = r;
        s.rest[g][n] = p0 + (col << es_shift) + part;
      } else {
        s.run[g][n] = 0;
        s.rest[g][n] = p0 + ((mm * rc + r * cols + col) << es_shift) + part;
      }
      // step to j + v
      r += dr;
      col += dc;
      if (r >= rows) {
        r -= rows;
        ++col;
      }
      if (!few_rows) {
        mm += dm;
        if (col >= cols) {
          col -= cols;
          ++mm;
        }
      }
    }
  }
  for (unsigned g = 0; g < s.groups; ++g) s.floor += s.lanes[g] != 0 ? 1u : 0u;
  return s;
}
// The sample's wavefronts under one layout: per group, the most distinct words of one bank (words 8 KiB apart
// count as one: a rare undercount), summed; `limit` as soon as they cannot come out below `limit` (the search keeps
// a candidate only where it takes fewer than the best so far: stopping there changes no choice and skips most of
// the work). 8-byte units: a lane's two words are an even word and the next, in two banks that count alike, so
// only the first is counted. A lane costs ~10 instructions unless its bank has a word already (a conflict, or a
// word shared): only then are the words compared.
constexpr unsigned transpose_few_sample_wavefronts(const transpose_few_sample& s, std::uint32_t pitch,
                                                   std::uint32_t mask, std::uint32_t shift, unsigned limit = ~0u) {
  unsigned total = 0, left = s.floor;  // left: the fewest the groups not yet counted add (1 each)
  for (unsigned g = 0; g < s.groups; ++g) {
    const unsigned n = s.lanes[g];
    if (n == 0) continue;
    --left;
    const unsigned stop = limit - total - left;  // a group this many wavefronts deep: the candidate is out
    // Per bank, each written before it is read: its first word; once a second word comes, its distinct words and
    // which they are (bit word / 32 % 64).
    std::uint32_t banks = 0, multi = 0, first[32]{}, count[32]{};  // initialized: a C++17 constexpr function
    std::uint64_t seen[32]{};
    unsigned most = 1;
    for (unsigned l = 0; l < n; ++l) {
      const std::uint32_t w = transpose_few_smem(s.run[g][l] * pitch + s.rest[g][l], mask, shift) / 4;
      const std::uint32_t bank = w % 32, b = 1u << bank;
      if ((banks & b) == 0) {
        banks |= b;
        first[bank] = w;
        continue;
      }
      if ((multi & b) == 0) {
        multi |= b;
        seen[bank] = std::uint64_t{1} << (first[bank] / 32 % 64);
        count[bank] = 1;
      }
      const std::uint64_t bit = std::uint64_t{1} << (w / 32 % 64);
      if ((seen[bank] & bit) != 0) continue;  // a word the group reads already
      seen[bank] |= bit;
      const std::uint32_t c = ++count[bank];
      if (c > most) {
        most = c;
        if (most >= stop) return limit;
      }
    }
    total += most;
    if (total + left >= limit) return limit;
  }
  return total;
}
// The fixed layout (before the search, and where a job is too small for it to pay): transpose_few_swizzle, and
// for few_rows the least pitch rounded to an odd number of 16-byte slots.
constexpr transpose_few_layout transpose_few_layout_fixed(const transpose_plan& p) {
  transpose_few_layout l = transpose_few_swizzle_at(transpose_few_swizzle(p.path, p.rows, p.cols) != 0 ? 1 : 0,
                                                    static_cast<unsigned>(p.unit_bytes));
  if (p.path == transpose_path::few_rows) {  // from the least pitch (transpose_few_geometry_of), whatever p holds
    const auto least =
        static_cast<std::uint32_t>(16 * p.run_chunks + 16 + p.cols * static_cast<std::uint64_t>(p.elem_size) % 16);
    l.pitch = least / 16 % 2 == 0 ? least + 16 : least;
  }
  return l;
}
// The search of transpose_few_layout_of for a few plan whose geometry is filled in (plan_transpose_few), for these
// pointers, whatever the job's size: the fixed layout unless a candidate's sample takes fewer wavefronts. Cut short
// where that changes no choice: a candidate's count stops once it cannot beat the best so far, a candidate equal
// to the best is not counted again, and the search ends once the best takes one wavefront a group.
constexpr transpose_few_layout transpose_few_layout_search(const transpose_plan& p, std::uintptr_t dst,
                                                           std::uintptr_t src) {
  const auto unit = static_cast<unsigned>(p.unit_bytes);
  transpose_few_layout best = transpose_few_layout_fixed(p);  // p.run_pitch: the least pitch
  const transpose_few_sample s = transpose_few_sample_of(p, dst, src);
  unsigned least = transpose_few_sample_wavefronts(s, best.pitch, best.swizzle, best.swizzle_shift);
  const auto consider = [&](const transpose_few_layout& c) {  // whether the search is over
    if (c.swizzle != best.swizzle || c.swizzle_shift != best.swizzle_shift || c.pitch != best.pitch) {
      const unsigned cost = transpose_few_sample_wavefronts(s, c.pitch, c.swizzle, c.swizzle_shift, least);
      if (cost < least) {
        least = cost;
        best = c;
      }
    }
    return least <= s.floor;
  };
  if (least <= s.floor) return best;
  if (p.path == transpose_path::few_cols) {  // its kernel has the whole-chunk swizzles only: none, the slot XOR
    for (int i = 0; i < 2; ++i) {
      if (consider(transpose_few_swizzle_at(i, unit))) return best;
    }
    return best;
  }
  if (p.path == transpose_path::few_rows) {         // the pitch, under the first word swizzle
    constexpr std::uint32_t most_smem = 48 * 1024;  // no opt-in beyond the default
    const transpose_few_layout w = transpose_few_swizzle_at(2, unit);
    for (std::uint32_t k = 0; k < 8; ++k) {
      const std::uint32_t pitch = p.run_pitch + 16 * k;
      if (k > 0 && transpose_few_rows_smem(p.rows, pitch) > most_smem) break;
      if (consider({w.swizzle, w.swizzle_shift, pitch})) return best;
    }
  }
  const std::uint32_t pitch = best.pitch;  // then the swizzle
  for (int i = 0; i < transpose_few_swizzles; ++i) {
    // few_rows: the first word swizzle was counted at this pitch already (the best's pitch is one of the 8: the
    // fixed one is the least or the next, which always fits, the loads' 24 KiB keeping the image under 40 KiB), and
    // did not beat the best, or is the best.
    if (i == 2 && p.path == transpose_path::few_rows) continue;
    transpose_few_layout c = transpose_few_swizzle_at(i, unit);
    c.pitch = pitch;
    if (consider(c)) return best;
  }
  return best;
}

// What transpose_few_layout_search reads of a plan and its pointers: equal keys, equal layouts.
struct transpose_few_layout_key {
  std::uint64_t rows = 0, cols = 0, matrices = 0;  // matrices: small_matrices, min(batch, tile_matrices)
  std::uint32_t tile_cols = 0, tile_matrices = 0, run_chunks = 0, run_pitch = 0;
  std::uint8_t path = 0, elem_size = 0, unit = 0, src16 = 0, dst32 = 0;  // dst32: few_cols' runs end on sectors
  bool used = false;                                                     // a slot of the memo that holds a layout
  // Spelled out: the header is C++17 (memlab::memlab requires cxx_std_17), which defaults no comparison.
  bool operator==(const transpose_few_layout_key& o) const {
    return rows == o.rows && cols == o.cols && matrices == o.matrices && tile_cols == o.tile_cols &&
           tile_matrices == o.tile_matrices && run_chunks == o.run_chunks && run_pitch == o.run_pitch &&
           path == o.path && elem_size == o.elem_size && unit == o.unit && src16 == o.src16 && dst32 == o.dst32 &&
           used == o.used;
  }
};
// The search's choices, memoized: a transpose of one shape is usually called again and again, the search costs
// 1-10 us of host time (the development machine; median 2, p99 6.5 over the heat map's grid), a lookup ~0.1 us
// (p99 over the grid; the mutex's lock and unlock are most of it). 64 slots, one per hash of the key (a collision
// replaces the older), under one mutex held for the lookup or the store, not for the search (two threads missing
// on one key both search, and store the same layout). Nothing is allocated; the slots live as long as the process.
inline transpose_few_layout transpose_few_layout_memo(const transpose_plan& p, std::uintptr_t dst, std::uintptr_t src) {
  transpose_few_layout_key k;
  k.rows = p.rows;
  k.cols = p.cols;
  k.matrices = p.path == transpose_path::small_matrices ? (p.batch < p.tile_matrices ? p.batch : p.tile_matrices) : 0;
  k.tile_cols = static_cast<std::uint32_t>(p.tile_cols);
  k.tile_matrices = p.tile_matrices;
  k.run_chunks = p.run_chunks;
  k.run_pitch = p.run_pitch;
  k.path = static_cast<std::uint8_t>(p.path);
  k.elem_size = static_cast<std::uint8_t>(p.elem_size);
  k.unit = static_cast<std::uint8_t>(p.unit_bytes);
  k.src16 = static_cast<std::uint8_t>(src % 16);
  k.dst32 = static_cast<std::uint8_t>(dst % 32);
  k.used = true;
  std::uint64_t h = k.rows * 0x9e3779b97f4a7c15u ^ k.cols * 0xc2b2ae3d27d4eb4fu ^ k.matrices * 0x165667b19e3779f9u;
  h ^= (std::uint64_t{k.elem_size} << 8 | k.unit << 16 | std::uint64_t{k.src16} << 24 | std::uint64_t{k.dst32} << 32 |
        std::uint64_t{k.path} << 40) *
       0x27d4eb2f165667c5u;
  h ^= h >> 29;
  constexpr unsigned slots = 64;
  struct slot {
    transpose_few_layout_key key;
    transpose_few_layout layout;
  };
  static std::mutex lock;
  static slot memo[slots];
  slot& at = memo[(h * 0x94d049bb133111ebu) >> 58];
  {
    const std::lock_guard<std::mutex> hold(lock);
    if (at.key == k) return at.layout;
  }
  const transpose_few_layout l = transpose_few_layout_search(p, dst, src);
  const std::lock_guard<std::mutex> hold(lock);
  at = {k, l};
  return l;
}

// The layout of a few plan whose geometry is filled in (plan_transpose_few), for these pointers: the fixed one for
// jobs below transpose_tuning::few_layout_search_bytes, else transpose_few_layout_search's (few_cols: none or the
// slot XOR, the swizzles its kernel has).
// memlab::transpose_bytes plans on every call, on the host, where the GPU may wait for it
// (docs/notes/transpose_skinny.md section 6: the search inside every call cost the H100 heat map up to 5x on
// its 64 MiB cells), so outside constant evaluation the choice is memoized (transpose_few_layout_memo).
constexpr transpose_few_layout transpose_few_layout_of(const transpose_plan& p, std::uintptr_t dst,
                                                       std::uintptr_t src) {
  const std::uint64_t bytes = p.batch * p.rows * p.cols * static_cast<std::uint64_t>(p.elem_size);
  if (bytes < transpose_tuning::few_layout_search_bytes) return transpose_few_layout_fixed(p);
#if !defined(__CUDA_ARCH__)
  // __builtin_is_constant_evaluated: std::is_constant_evaluated is C++20, this header C++17 (GCC, Clang and nvcc
  // have the builtin in both).
  if (!__builtin_is_constant_evaluated()) return transpose_few_layout_memo(p, dst, src);
#endif
  return transpose_few_layout_search(p, dst, src);
}

// The plan of a few path for this shape, whichever plan_transpose would pick: for tools that compare paths
// (tools/studies/transpose_shapes_bench.cu) and tests. transpose_path::unsupported where the shape does
// not fit the path (few_cols: 2..64 columns and 2 or more rows; few_rows: likewise; small_matrices: rows and
// cols 2 or more, at most 8 KiB a matrix), or the job is none, a copy or unsupported.
constexpr transpose_plan plan_transpose_few(transpose_path few, std::uintptr_t dst, std::uintptr_t src,
                                            std::uint64_t batch, std::uint64_t rows, std::uint64_t cols,
                                            std::size_t elem_size) {
  transpose_plan p;
  p.batch = batch;
  p.rows = rows;
  p.cols = cols;
  p.elem_size = static_cast<int>(elem_size <= 8 ? elem_size : 0);
  constexpr std::uint64_t limit = std::uint64_t{1} << 62;
  const bool sized = (elem_size == 1 || elem_size == 2 || elem_size == 4 || elem_size == 8) && batch != 0 &&
                     rows >= 2 && cols >= 2 && batch <= limit / elem_size / rows / cols;
  const bool fits = few == transpose_path::few_cols ? transpose_few_side_fits(cols, elem_size)
                    : few == transpose_path::few_rows
                        ? transpose_few_side_fits(rows, elem_size)
                        : few == transpose_path::small_matrices &&
                              rows * cols * elem_size <= transpose_tuning::small_matrix_max_bytes;
  if (!sized || !fits) {
    p.path = transpose_path::unsupported;
    return p;
  }
  const transpose_few_geometry f = transpose_few_geometry_of(few, batch, rows, cols, elem_size, dst);
  constexpr std::uint64_t budget =
      transpose_tuning::threads * static_cast<std::uint64_t>(transpose_tuning::few_load_steps);
  if (f.load_chunks > budget) {  // a wide side whose tile does not fit the loads of one pass
    p.path = transpose_path::unsupported;
    return p;
  }
  p.path = few;
  const std::uintptr_t all = dst | src | elem_size;
  p.unit_bytes = static_cast<int>(all & (~all + 1));  // the lowest set bit
  p.tile_rows = static_cast<int>(few == transpose_path::few_cols ? f.per_tile : rows);
  p.tile_cols = static_cast<int>(few == transpose_path::few_rows ? f.per_tile : cols);
  p.tile_matrices = few == transpose_path::small_matrices ? f.per_tile : 1;
  p.halo_rows = static_cast<int>(f.halo);
  p.tiles_r = few == transpose_path::few_cols ? f.tiles_per_matrix : 1;
  p.tiles_c = few == transpose_path::few_rows ? f.tiles_per_matrix : 1;
  p.tiles = f.tiles;
  p.threads = transpose_tuning::threads;
  p.vectors_per_thread = transpose_tuning::few_tile_bytes / 16 / transpose_tuning::threads;
  p.vec_bytes = 16;
  p.min_ctas_per_sm = transpose_tuning::few_min_ctas_per_sm;
  p.smem_bytes = f.smem_bytes;
  p.run_chunks = f.run_chunks;
  p.run_pitch = f.run_pitch;
  p.load_chunks = f.load_chunks;
  const transpose_few_layout layout = transpose_few_layout_of(p, dst, src);
  p.smem_swizzle = layout.swizzle;
  p.smem_swizzle_shift = layout.swizzle_shift;
  if (few == transpose_path::few_rows) {
    p.run_pitch = layout.pitch;
    p.smem_bytes = transpose_few_rows_smem(rows, layout.pitch);
  }
  constexpr std::uint64_t max_grid = 0x7fffffff;
  p.grid = p.tiles < max_grid ? p.tiles : max_grid;
  return p;
}

// The plan of the tiled paths (or none, copy, unsupported) for this job, never a few path: what
// plan_transpose picks where no side is few. `dev` only tunes the copy path, never correctness.
constexpr transpose_plan plan_transpose_tiled(std::uintptr_t dst, std::uintptr_t src, std::uint64_t batch,
                                              std::uint64_t rows, std::uint64_t cols, std::size_t elem_size,
                                              const copy_device& dev) {
  transpose_plan p;
  p.batch = batch;
  p.rows = rows;
  p.cols = cols;
  p.elem_size = static_cast<int>(elem_size <= 8 ? elem_size : 0);
  if (!transpose_moves(elem_size)) {
    p.path = transpose_path::unsupported;
    return p;
  }
  if (batch == 0 || rows == 0 || cols == 0) return p;      // none
  constexpr std::uint64_t limit = std::uint64_t{1} << 62;  // every byte offset the kernels form stays far from overflow
  if (batch > limit / elem_size / rows / cols) {
    p.path = transpose_path::unsupported;
    return p;
  }
  const std::uint64_t bytes = batch * rows * cols * elem_size;
  if (rows == 1 || cols == 1) {
    p.path = transpose_path::copy;
    p.copy = plan_copy(dst, src, static_cast<std::size_t>(bytes), dev);
    return p;
  }
  const bool in_aligned = src % 16 == 0 && cols * elem_size % 16 == 0;
  const bool out_aligned = dst % 16 == 0 && rows * elem_size % 16 == 0;
  p.path = in_aligned ? (out_aligned ? transpose_path::aligned : transpose_path::realign_out)
                      : (out_aligned ? transpose_path::realign_in : transpose_path::realign_both);
  if (elem_size == 8 && p.path == transpose_path::realign_both && src % 8 == 0 && dst % 8 == 0) {
    p.path = transpose_path::elem8;
  }
  const transpose_geometry g = transpose_geometry_of(p.path, static_cast<int>(elem_size));
  p.tile_rows = g.tile_rows;
  p.tile_cols = g.tile_cols;
  p.halo_rows = g.halo_rows;
  p.tiles_r = (rows + static_cast<std::uint64_t>(p.tile_rows) - 1) / static_cast<std::uint64_t>(p.tile_rows);
  p.tiles_c = (cols + static_cast<std::uint64_t>(p.tile_cols) - 1) / static_cast<std::uint64_t>(p.tile_cols);
  p.tiles = batch * p.tiles_r * p.tiles_c;
  p.threads = transpose_tuning::threads;
  p.vectors_per_thread = g.vectors_per_thread;
  p.vec_bytes = g.vec_bytes;
  p.min_ctas_per_sm = g.min_ctas_per_sm;
  p.smem_bytes = g.smem_bytes;
  constexpr std::uint64_t max_grid = 0x7fffffff;
  p.grid = p.tiles < max_grid ? p.tiles : max_grid;
  return p;
}
// The tile in shared memory: tile_rows rows of 256 bytes, input row r in row r. The 8-byte unit h of a
// row lives at unit h ^ (r / V), V = 16 / elem_size the elements of a 16-byte vector.
MEMLAB_HOST_DEVICE constexpr unsigned transpose_smem_offset(unsigned elem_size, unsigned r, unsigned byte) {
  return r * 256 + (((byte / 8) ^ (r / (16 / elem_size))) * 8) + byte % 8;
}
// A 16-byte vector q of row r (bytes 16 q .. 16 q + 15) moves whole into slot q ^ (r / V / 2), its two
// 8-byte halves swapped when r / V is odd: a quarter-warp's STS.128 of one row hit 8 distinct slots.
MEMLAB_HOST_DEVICE constexpr unsigned transpose_smem_slot(unsigned elem_size, unsigned r, unsigned q) {
  return r * 256 + ((q ^ (r / (16 / elem_size) / 2)) * 16);
}
MEMLAB_HOST_DEVICE constexpr bool transpose_smem_swapped(unsigned elem_size, unsigned r) {
  return (r / (16 / elem_size)) % 2 == 1;
}
// Both at once for the vector that starts at byte `byte` of row r (q = byte / 16): the transpose lab's
// smem_vec_rows asks this way. Its own body, not the two above: how nvcc simplifies the arithmetic
// depends on how it is split into functions, and each caller's instructions stay as they were measured
// (tests/library/test_transpose_plan.cpp holds the three equal).
struct transpose_smem_vector {
  unsigned slot = 0;  // byte offset of the vector's slot in the tile
  bool swapped = false;
};
MEMLAB_HOST_DEVICE constexpr transpose_smem_vector transpose_smem_vector_at(unsigned elem_size, unsigned r,
                                                                            unsigned byte) {
  const unsigned g = r / (16 / elem_size), q = byte / 16;
  return {r * 256 + ((q ^ (g / 2)) * 16), g % 2 == 1};
}

// Output rows one gather serves (sub-word elements are read as words of several columns): 4 for 1-byte
// elements, 2 for 2-byte ones, else 1. Store step j of thread t serves output rows c .. c + group - 1 of
// the tile, c = group x (2 (t / 32 + 8 j) + t / 16 % 2), vector t % 16 of each.
MEMLAB_HOST_DEVICE constexpr unsigned transpose_gather_group(unsigned elem_size) {
  return elem_size == 1 ? 4u : elem_size == 2 ? 2u : 1u;
}
MEMLAB_HOST_DEVICE constexpr unsigned transpose_store_row(unsigned elem_size, unsigned t, unsigned j) {
  return transpose_gather_group(elem_size) * (2 * (t / 32 + 8 * j) + t / 16 % 2);
}

// Tile k of a launch: its matrix, its first row and column, and how many rows and columns of it exist.
struct transpose_tile_pos {
  std::uint64_t matrix = 0, r0 = 0, c0 = 0;
  unsigned rows = 0, cols = 0;
};
MEMLAB_HOST_DEVICE constexpr transpose_tile_pos transpose_tile_at(std::uint64_t k, std::uint64_t rows,
                                                                  std::uint64_t cols, std::uint64_t tiles_r,
                                                                  std::uint64_t tiles_c, unsigned tile_rows,
                                                                  unsigned tile_cols) {
  const std::uint64_t per_matrix = tiles_r * tiles_c, i = k % per_matrix;
  transpose_tile_pos p;
  p.matrix = k / per_matrix;
  p.r0 = i / tiles_c * tile_rows;
  p.c0 = i % tiles_c * tile_cols;
  p.rows = static_cast<unsigned>(rows - p.r0 < tile_rows ? rows - p.r0 : tile_rows);
  p.cols = static_cast<unsigned>(cols - p.c0 < tile_cols ? cols - p.c0 : tile_cols);
  return p;
}

// The stores of a tile's output row where the rows of dst are not 16-byte aligned. The row's segment of
// this tile starts at dst byte S (its first byte, input row r0); e = (32 - S % 32) % 32 bytes later the
// first sector starts. The tile owns the row's bytes [a, b) of its segment: a = e (0 for the first tile of
// a column, r0 == 0), b = min(224 + e, bytes from S to the end of dst's row); the next tile's a is this
// one's b. Chunk m (-2..13) is the aligned 16-byte chunk at segment bytes [e + 16 m, e + 16 m + 16): its
// bytes [lo, hi) are the tile's (all 16: one 16-byte store; fewer: narrow stores; none: nothing).
// Chunks -2 and -1 hold bytes only for the first tile of a column; chunk 13 needs the halo rows (up to
// byte 224 + e of the segment).
struct chunk_bytes {
  int lo = 0, hi = 0;
};
MEMLAB_HOST_DEVICE constexpr chunk_bytes transpose_out_chunk(int m, unsigned e, unsigned a, unsigned b) {
  const int first = static_cast<int>(e) + 16 * m;  // the segment's byte at the chunk's byte 0
  const int lo = static_cast<int>(a) - first, hi = static_cast<int>(b) - first;
  return {lo > 0 ? lo : 0, hi < 16 ? hi : 16};
}
// e of transpose_out_chunk from the segment's start modulo 32, and b from e and the bytes from the
// segment's start to the end of dst's row (`left`).
MEMLAB_HOST_DEVICE constexpr unsigned transpose_out_lead(unsigned s_mis32) { return (32 - s_mis32) % 32; }
MEMLAB_HOST_DEVICE constexpr unsigned transpose_out_end(unsigned e, std::uint64_t left) {
  constexpr unsigned row = 224;  // transpose_tuning::realigned_out_row_bytes
  return left < row + e ? static_cast<unsigned>(left) : row + e;
}

// The elements [lo, hi) of a tile's output row segment (its input rows r0 + lo .. r0 + hi - 1) that the
// elem8 kernel stores: from e8 = the elements before the segment's first 32-byte sector boundary (0 for
// the first tile of a column) to 32 + e8 or the end of dst's row (`left` rows from r0), whichever comes
// first. The next tile's lo is this one's hi.
struct transpose_span {
  unsigned lo = 0, hi = 0;
};
MEMLAB_HOST_DEVICE constexpr transpose_span transpose_elem8_span(unsigned s_mis32, bool first_tile,
                                                                 std::uint64_t left) {
  const unsigned e8 = (32 - s_mis32) % 32 / 8;
  const unsigned end = 32 + e8;
  return {first_tile ? 0u : e8, left < end ? static_cast<unsigned>(left) : end};
}

}  // namespace memlab::detail
