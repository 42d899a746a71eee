// memlab/transpose_plan.hpp: how memlab::transpose moves a batch of matrices, decided on the host from
// the two real addresses, the shape, the element size and the device. Pure C++ (no CUDA needed), so a
// host test or a tool can ask what a transpose will do without a GPU.
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
//   copy          rows == 1 or cols == 1: the transpose is the same bytes in the same order:
//                 memlab::copy (`copy` holds its plan).
//   none          a zero extent: nothing to move.
//   unsupported   an element size other than 1, 2, 4 or 8 bytes, or a batch of more than 2^62 bytes.
// Any pointer alignment is accepted, even one that is not a multiple of elem_size: the realigning
// paths shift bytes, not elements.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memlab/arch/config.cuh"
#include "memlab/copy_plan.hpp"

namespace memlab {

enum class transpose_path : int { none, unsupported, copy, aligned, realign_in, realign_out, realign_both, elem8 };

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
  }
  return "?";
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
};

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

// What memlab::transpose will do. `dev` only tunes the copy path, never correctness.
constexpr transpose_plan plan_transpose(std::uintptr_t dst, std::uintptr_t src, std::uint64_t batch, std::uint64_t rows,
                                        std::uint64_t cols, std::size_t elem_size, const copy_device& dev) {
  transpose_plan p;
  p.batch = batch;
  p.rows = rows;
  p.cols = cols;
  p.elem_size = static_cast<int>(elem_size <= 8 ? elem_size : 0);
  if (elem_size != 1 && elem_size != 2 && elem_size != 4 && elem_size != 8) {
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

// ---- the geometry the kernels use (transpose.cuh), here so that host tests replay it -------------------

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

}  // namespace memlab
