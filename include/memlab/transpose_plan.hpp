// memlab/transpose_plan.hpp: how memlab::transpose moves a batch of matrices, decided on the host from
// the two real addresses, the shape, the element size and the device. Pure C++ (no CUDA needed), so a
// host test or a tool can ask what a transpose will do without a GPU.
//
// The public pieces (namespace memlab), what a user calls and what a plan says:
//   plan_transpose(dst, src, batch, rows, cols, elem_size, dev)  what memlab::transpose will do: a transpose_plan
//   transpose_plan      the path, the tiles, the launch shape (threads, vectors per thread, grid, shared memory)
//   transpose_path      which path (below), with to_string, realigns_in, realigns_out, is_tiled, is_few
//   transpose_moves(elem_size)  whether it moves elements of that size (1, 2, 4 or 8 bytes)
//   transpose_tuning    the tuned constants, each with the GPU it was measured on
// Everything else, the geometry the kernels and the plan share (tiles, halos, the few paths' runs and blocks,
// the shared-memory layouts and their search), is memlab::detail's, in memlab/detail/transpose_geometry.hpp:
// the kernels (memlab/transpose.cuh), the transpose lab's host model and the tests replay it; a user needs none
// of it.
//
// The job: `batch` row-major matrices of rows x cols elements of elem_size bytes (1, 2, 4 or 8), one
// after the other in `src`; `dst` receives their transposes (cols x rows), in the same order:
//   dst[b][c][r] = src[b][r][c].
//
// Each CTA moves one tile through shared memory: tile_rows input rows x tile_cols input columns, read
// as 16-byte chunks along the rows of src and written as 16-byte chunks along the rows of dst. A tile
// row of src and a tile row of dst are 256 bytes (the transpose lab's smem_vec_rows: a warp request
// covers two whole 256-byte rows both ways):
//
//            src (rows x cols)                          dst (cols x rows)
//         c0       c0 + tile_cols                   r0        r0 + tile_rows
//   r0    +----------+  <- 256 B per tile row   c0   +----------+  <- 256 B per tile row
//         |   tile   |     (240 B: realign_in)       |  tile^T  |
//         +----------+                               +----------+
//
// Which path depends only on where the rows of src and of dst start modulo 16:
//   aligned       every row of src and of dst starts 16-byte aligned (src and dst 16-byte aligned,
//                 cols x elem_size and rows x elem_size multiples of 16): 16-byte loads and stores of
//                 whole rows of the tile, nothing realigned.
//   realign_in    the rows of src do not start aligned: each tile row is loaded as the aligned 16-byte
//                 chunks that cover it (16 loads for a 240-byte tile row, hence tile_cols = 240 /
//                 elem_size) and shifted into place in registers (a lane borrows its neighbour's chunk
//                 with a shuffle, a funnel shift picks the 16 bytes), then stored whole into shared
//                 memory. The buffer's first and last chunk are narrowed to its bytes: no load touches a
//                 byte outside [src, src + bytes).
//   realign_out   the rows of dst do not start aligned: a tile row of dst is 224 bytes (tile_rows =
//                 224 / elem_size), and the tile owns the 7 whole 32-byte sectors of dst that start
//                 within it, so that no sector is written by two CTAs (a sector stored in parts by two
//                 CTAs cost a fifth of the bandwidth on the H100: docs/notes/transpose_any_shape.md).
//                 The last reaches up to 31 bytes into the next tile's rows, so the tile also loads
//                 32 / elem_size halo rows below it (loaded again by that tile): 256 bytes of rows in
//                 all, 16 vectors of a half-warp. Each lane gathers its 16 bytes of an output row,
//                 borrows the next lanes' with shuffles, and lanes 0..13 store the aligned chunk they
//                 straddle with one 16-byte store. Only at the two ends of a row of dst (the first and
//                 the last tile of a column of src) are sectors shared with another row: there, narrow
//                 stores of this tile's bytes only. No CTA writes a byte another CTA owns.
//   realign_both  both.
//   elem8         8-byte elements, src and dst 8-byte aligned, where neither the rows of src nor those of
//                 dst are 16-byte aligned: every element is an aligned 8-byte access, so nothing is
//                 realigned (where one side is aligned, realign_in or realign_out are as fast).
//                 32 x 32 tiles, a lane an element (LDG.E.64, STG.E.64: 256 bytes a warp request).
//                 A tile owns the 32 elements of each output row that start at its first 32-byte
//                 sector boundary, so it also loads 3 halo rows below it, and no sector of dst is
//                 stored in parts by two CTAs (as realign_out). Fewer instructions per byte than
//                 realigning 16-byte vectors (H100: docs/notes/transpose_any_shape.md section 6).
//   few_cols      at most 64 columns, not a whole number of the tiled path's tiles (N x 3): a tiled CTA would
//                 move a sliver. A CTA reads K whole rows of src (one contiguous block of K x cols elements,
//                 ~16 KiB) and writes `cols` runs of K elements of dst; K x elem_size is a multiple of 32.
//   few_rows      at most 64 rows, likewise (3 x N): a CTA reads `rows` runs of K elements of src and writes
//                 K whole rows of dst (one contiguous block of K x rows elements).
//                 Also a longer side (up to 480 bytes) that the tiled path would realign and that spans at most
//                 two of its tiles (transpose_few_wide): few_rows first, whose output blocks have no per-row ends;
//                 then (transpose_few_wider) rows of up to three tiles and 512 bytes, columns of that width where
//                 the tiled path realigns both sides, and aligned columns of less than a tile under realigning
//                 stores: a cut tile of the tiled path costs about a whole one (docs/notes/transpose_skinny.md 9, 10).
//   small_matrices  a matrix of at most 8 KiB and smaller than one tile of the tiled path (a batch of 3 x 3,
//                 16 x 16): a CTA reads M whole matrices (one contiguous block) and writes their M transposes
//                 (one contiguous block).
//                 The three are one kernel (transpose_few_kernel; docs/notes/transpose_skinny.md): the aligned
//                 16-byte chunks that cover what a CTA reads are loaded whole (LDG.E.128) into shared memory
//                 (STS.128, an XOR swizzle picked per shape against bank conflicts: transpose_few_layout_of),
//                 unshifted: a range that starts p bytes into a chunk starts p bytes into its image, so any
//                 alignment is an offset of the gather's addresses. Each
//                 thread gathers whole aligned 16-byte chunks of dst element by element and stores each with
//                 one STG.E.128. A tile owns the bytes of each run (or block) of dst from the first 32-byte
//                 sector boundary at or after its nominal start to the first at or after its nominal end (the
//                 first tile from the run's start, the last to its end), so no sector inside a run is stored
//                 by two CTAs; for that it loads a halo past its rows (32 / elem_size), columns or matrices,
//                 none where every boundary is a sector boundary already. Partly owned chunks (the ends of a
//                 run) are gathered whole and stored with the widest aligned narrow stores. A unit is U = the largest power of two dividing elem_size,
//                 src and dst (elem_size for element-aligned pointers); the kernel is compiled per U.
//   copy          rows == 1 or cols == 1: the transpose is the same bytes in the same order:
//                 memlab::copy (`copy` holds its plan).
//   none          a zero extent: nothing to move.
//   unsupported   an element size other than 1, 2, 4 or 8 bytes, or a batch of more than 2^62 bytes.
// Any pointer alignment is accepted, even one that is not a multiple of elem_size: the realigning
// paths shift bytes, not elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <type_traits>

#include "memlab/arch/config.cuh"
#include "memlab/copy_plan.hpp"

namespace memlab {

enum class transpose_path : int {
  none,
  unsupported,
  copy,
  aligned,
  realign_in,
  realign_out,
  realign_both,
  elem8,
  few_cols,
  few_rows,
  small_matrices,
};

constexpr const char* to_string(transpose_path p) {
  switch (p) {
    case transpose_path::none: return "none";
    case transpose_path::unsupported: return "unsupported";
    case transpose_path::copy: return "copy";
    case transpose_path::aligned: return "aligned";
    case transpose_path::realign_in: return "realign_in";
    case transpose_path::realign_out: return "realign_out";
    case transpose_path::realign_both: return "realign_both";
    case transpose_path::elem8: return "elem8";
    case transpose_path::few_cols: return "few_cols";
    case transpose_path::few_rows: return "few_rows";
    case transpose_path::small_matrices: return "small_matrices";
  }
  return "?";
}

// The element sizes memlab::transpose moves (any other plans as unsupported).
constexpr bool transpose_moves(std::size_t elem_size) {
  return elem_size == 1 || elem_size == 2 || elem_size == 4 || elem_size == 8;
}

constexpr bool realigns_in(transpose_path p) {
  return p == transpose_path::realign_in || p == transpose_path::realign_both;
}
constexpr bool realigns_out(transpose_path p) {
  return p == transpose_path::realign_out || p == transpose_path::realign_both;
}
constexpr bool is_tiled(transpose_path p) {
  return p == transpose_path::aligned || realigns_in(p) || realigns_out(p) || p == transpose_path::elem8;
}
// The paths of transpose_few_kernel (few rows, few columns, small matrices): contiguous blocks and runs.
MEMLAB_HOST_DEVICE constexpr bool is_few(transpose_path p) {
  return p == transpose_path::few_cols || p == transpose_path::few_rows || p == transpose_path::small_matrices;
}

namespace transpose_tuning {
inline constexpr int threads = 256;
// Bytes of a tile row, in src and in dst: a warp request moves two whole rows (the transpose lab,
// docs/notes/transpose.md section 4: 256-byte rows per request lifted f32 from 92.9% to 95.9% of a
// copy at 16384^2 on an H100, against 128-byte halves).
inline constexpr int row_bytes = 256;
// A realigning load covers a tile row with 16 aligned chunks, one per lane of a half-warp: 240 bytes
// of data at any offset fit in 16 chunks, 256 would need 17.
inline constexpr int realigned_row_bytes = 240;
// A realigning store: 7 sectors of dst (14 aligned chunks) from the 16 vectors of a half-warp (224 bytes
// of the tile and 32 of the halo: a sector boundary is up to 31 bytes in).
inline constexpr int realigned_out_row_bytes = 224;
// CTAs per SM the kernels are compiled for (__launch_bounds__). H100 (prediction, docs/notes/
// transpose_any_shape.md): ~32-40 KiB of loads in flight per SM saturate HBM3. A CTA loads
// 256 threads x 16 B x (16 / elem_size) = 64 KiB / elem_size of its tile at once:
//   1-byte elements: 64 KiB tiles (shared memory allows 3 per SM), 64 registers of loads per thread: 2;
//           3 where loads realign (80 registers, no spill; H100 16411 x 8191: 83.4 -> 85.1% of a copy,
//           16384 x 8191: 92.2 -> 93.7%; realigning stores alone spilled 20 bytes at 80 and lost 9 points);
//   2-byte: 32 KiB tiles, 32 registers of loads: 4 (128 KiB of tiles, 64 KiB of loads in flight);
//   4-byte: 16 KiB tiles: 8 aligned (smem_vec_rows' bound: 32 registers), 4 realigning (the shuffles
//           and funnel shifts need ~60 registers; 4 x 16 KiB of loads in flight);
//   8-byte: 8 KiB tiles, 2 loads per thread: 8 aligned (32 KiB in flight), 6 realigning (at 8, i.e.
//           32 registers, ptxas spilled on sm_80; 6 keep 24 KiB of loads in flight, each CTA's gathers
//           overlapping the others' loads).
constexpr int min_ctas_per_sm(int elem_size, bool realign_in, bool realign_out) {
  const bool realigning = realign_in || realign_out;
  return elem_size == 1   ? (realign_in ? 3 : 2)
         : elem_size == 2 ? 4
         : elem_size == 4 ? (realigning ? 4 : 8)
                          : (realigning ? 6 : 8);
}
// The elem8 path: 32 x 32 tiles of 8-byte elements and 3 halo rows (a sector boundary is up to 24 bytes
// into an output row), shared rows of 33 elements (an odd pitch: the 32 lanes reading a column hit
// distinct bank pairs), 8 CTAs per SM.
inline constexpr int elem8_edge = 32;
inline constexpr int elem8_halo = 3;
inline constexpr int elem8_pitch = 33;
// The few paths (predictions for the H100 in docs/notes/transpose_skinny.md, to be checked there):
// a side of at most few_max_side elements; ~few_tile_bytes of dst per tile (4 stores per thread), at most
// few_load_steps 16-byte loads per thread (24 KiB of src per tile, all in flight); 4 CTAs per SM at least
// (~40 registers: 6 or more fit, with ~25 KiB of shared memory each).
inline constexpr int few_max_side = 64;
// A longer side still takes its few path where the tiled path realigns it and it spans at most
// few_wide_tiles of the tiled path's tiles (every tile along it an edge tile: docs/notes/transpose_skinny.md
// section 5), up to few_max_wide_bytes (2 x 240: the realigning loads' tiles; 2 x 224 for the stores' lies inside).
// H100 heat map before the rule: u8 67 x 251 realign_both 0.15 of a copy, 131 x 64 few_cols 0.32.
inline constexpr int few_wide_tiles = 2;
inline constexpr std::uint64_t few_max_wide_bytes = 480;
// Wider still: a side of up to few_wider_tiles tiles and few_max_wider_bytes takes its few path where the tiled path
// realigns it and the columns' few path is not better placed (H100, every such cell of a sweep, both rounds: rows that
// realign 1.14-1.61x on few_rows; columns 1.04-1.39x on few_cols where both sides realign, 0.92-1.03x where only the
// loads do, so not there: docs/notes/transpose_skinny.md section 10).
inline constexpr int few_wider_tiles = 3;
inline constexpr std::uint64_t few_max_wider_bytes = 512;
inline constexpr int few_tile_bytes = 16384;
inline constexpr int few_load_steps = 6;
inline constexpr int few_min_ctas_per_sm = 4;
inline constexpr std::uint64_t small_matrix_max_bytes = 8192;
// Jobs from this many bytes a buffer search the few paths' shared-memory layout (transpose_few_layout_of): the
// search costs 1-10 us of host time the first time a shape comes (the development machine: 7 or 15 candidates x
// 128 sampled addresses; later calls ~0.1 us, from a memo), about what an H100 takes to move 2 x 4 MiB; the
// acceptance's 10^6 batched 3 x 3 u8 (9 MB) is above it. Smaller jobs keep the fixed layout.
inline constexpr std::uint64_t few_layout_search_bytes = std::uint64_t{4} << 20;
}  // namespace transpose_tuning

struct transpose_plan {
  transpose_path path = transpose_path::none;
  std::uint64_t batch = 0, rows = 0, cols = 0;  // of the job: batch matrices of rows x cols
  int elem_size = 0;
  // The tiled paths. Tiles are numbered along the rows of src (fastest), then down, then over the batch.
  int tile_rows = 0;  // input rows per tile: 256 / elem_size (one 256-byte tile row of dst), 224 / elem_size
                      // where stores realign
  int tile_cols = 0;  // input columns per tile: 256 / elem_size, or 240 / elem_size where loads realign
  std::uint64_t tiles_r = 0, tiles_c = 0;  // per matrix, down the rows and along the columns
  std::uint64_t tiles = 0;                 // all of them: batch x tiles_r x tiles_c
  // Launch policy, printed with every result.
  int threads = 0;               // per CTA
  int vectors_per_thread = 0;    // 16-byte loads per thread per tile (and as many stores): 16 / elem_size
  int vec_bytes = 0;             // 16 (elem8: 8)
  int min_ctas_per_sm = 0;       // the kernel's __launch_bounds__
  std::uint32_t smem_bytes = 0;  // dynamic shared memory per CTA: (tile_rows + halo_rows) x 256 bytes
  int halo_rows = 0;             // rows of src below the tile that realigning stores read: 32 / elem_size
  std::uint64_t grid = 0;        // CTAs: one per tile, at most 2^31 - 1 (then each takes several)
  copy_plan copy{};              // path copy: how memlab::copy moves the bytes
  // The few paths (transpose_few_geometry): tile_rows x tile_cols is a tile's extent in src (K x cols,
  // rows x K, or rows x cols for small_matrices); halo_rows the rows, columns or matrices it loads past it.
  int unit_bytes = 0;               // U: each access of an element's bytes is U-aligned
  std::uint32_t tile_matrices = 0;  // small_matrices: matrices per tile (M)
  std::uint32_t run_chunks = 0;     // few_rows: 16-byte chunk slots a run of src takes in shared memory
  std::uint32_t run_pitch = 0;      // few_rows: bytes from one run's image to the next's (T)
  std::uint32_t load_chunks = 0;    // 16-byte chunks a tile loads at most (<= threads x few_load_steps)
  std::uint32_t smem_swizzle = 0;   // transpose_few_smem's mask and shift (transpose_few_layout_of)
  std::uint32_t smem_swizzle_shift = 0;
};

}  // namespace memlab

// The geometry behind the plan (memlab::detail): after the public types it reads, before plan_transpose.
#include "memlab/detail/transpose_geometry.hpp"  // IWYU pragma: export

namespace memlab {

// What memlab::transpose will do: a few path where transpose_few_path says so, else the tiled paths (or
// none, copy, unsupported). `dev` only tunes the copy path, never correctness.
constexpr transpose_plan plan_transpose(std::uintptr_t dst, std::uintptr_t src, std::uint64_t batch, std::uint64_t rows,
                                        std::uint64_t cols, std::size_t elem_size, const copy_device& dev) {
  const transpose_plan tiled = detail::plan_transpose_tiled(dst, src, batch, rows, cols, elem_size, dev);
  if (!is_tiled(tiled.path)) return tiled;
  const detail::transpose_geometry g = detail::transpose_geometry_of(tiled.path, static_cast<int>(elem_size));
  const transpose_path few = detail::transpose_few_path(rows, cols, elem_size, g);
  if (few == transpose_path::small_matrices || few == transpose_path::few_rows) {
    return detail::plan_transpose_few(few, dst, src, batch, rows, cols, elem_size);
  }
  // Wide sides (transpose_few_wide): rows first, where few_rows' one output block per tile has no per-row ends
  // (few_cols' runs of `rows` bytes would each end in partial chunks), then cols.
  if (detail::transpose_few_wide(rows, realigns_out(tiled.path), g.tile_rows)) {
    const transpose_plan p =
        detail::plan_transpose_few(transpose_path::few_rows, dst, src, batch, rows, cols, elem_size);
    if (p.path == transpose_path::few_rows) return p;
  }
  if (few == transpose_path::few_cols) return detail::plan_transpose_few(few, dst, src, batch, rows, cols, elem_size);
  const bool both = tiled.path == transpose_path::realign_both;
  transpose_plan wide_cols;  // few_cols' plan for a wide side of columns, where there is one
  if (detail::transpose_few_wide(cols, realigns_in(tiled.path), g.tile_cols)) {
    wide_cols = detail::plan_transpose_few(transpose_path::few_cols, dst, src, batch, rows, cols, elem_size);
    if (wide_cols.path == transpose_path::few_cols &&
        2 * static_cast<std::uint64_t>(wide_cols.halo_rows) <= static_cast<std::uint64_t>(wide_cols.tile_rows)) {
      return wide_cols;  // its halo at most half its tile
    }
  }
  // Wider rows (transpose_few_wider): few_rows, ahead of a few_cols whose halo is as large as its tile (u8 509 x 257:
  // 0.71 of a copy against 0.62; docs/notes/transpose_skinny.md section 10).
  if (detail::transpose_few_wider(rows, elem_size, realigns_out(tiled.path), g.tile_rows)) {
    const transpose_plan p =
        detail::plan_transpose_few(transpose_path::few_rows, dst, src, batch, rows, cols, elem_size);
    if (p.path == transpose_path::few_rows) return p;
  }
  // Where the tiled path realigns both sides, few_cols wins even with a halo as large as its tile (u8, 257 columns:
  // K = 32 rows and 32 halo rows; H100, 1.16-1.41x: section 9), and at wider columns too (section 10).
  if (both && wide_cols.path == transpose_path::few_cols) return wide_cols;
  if (both && detail::transpose_few_wider(cols, elem_size, true, g.tile_cols)) {
    const transpose_plan p =
        detail::plan_transpose_few(transpose_path::few_cols, dst, src, batch, rows, cols, elem_size);
    if (p.path == transpose_path::few_cols) return p;
  }
  // Aligned columns that fill less than one tile where the stores realign: every tile is cut along the columns and
  // costs a whole one (u8, 128 columns: few_cols 1.22-1.43x; section 10).
  if (tiled.path == transpose_path::realign_out && cols > static_cast<std::uint64_t>(transpose_tuning::few_max_side) &&
      cols < static_cast<std::uint64_t>(g.tile_cols)) {
    const transpose_plan p =
        detail::plan_transpose_few(transpose_path::few_cols, dst, src, batch, rows, cols, elem_size);
    if (p.path == transpose_path::few_cols) return p;
  }
  return tiled;
}

}  // namespace memlab
