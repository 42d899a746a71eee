// The transpose lab's geometry and host-side model. The kernels (transpose.cu) and the model
// (model.cpp) share the functions below, so the addresses the model counts are the addresses the
// kernels touch: which elements a thread moves in each step, and where an element of a tile lives in
// shared memory.
//
// The job: a batch of n row-major matrices of rows x cols elements, `in`, one after the other; `out`
// receives their transposes (cols x rows, row-major), in the same order:
//   out[b][c][r] = in[b][r][c].
// Each CTA moves one tile: it reads a tile_rows x tile_cols block of `in` and writes the tile's
// transpose into `out`. Tiles are numbered along the rows of `in` (tc fastest), then down, then over
// the batch.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "harness/lab.hpp"
#include "harness/result.hpp"
#include "memlab/arch/config.cuh"

namespace memlab::labs::transpose {

// library: memlab::transpose (include/memlab/transpose.cuh), the rung `auto`.
enum class variant_id { naive, smem, smem_padded, smem_swizzled, smem_vec, smem_vec_rows, library, cublas, copy };

// A batch of `batch` matrices, each rows x cols.
struct dims {
  std::uint64_t batch = 1, rows = 0, cols = 0;
};

// The CPU reference (transpose.cu): output element e of the batch holds input element
// source_element(e, rows, cols).
std::uint64_t source_element(std::uint64_t e, std::uint64_t rows, std::uint64_t cols);

// ---- the 32 x 32 rungs (naive, smem, smem_padded, smem_swizzled) --------------------------------------
// A CTA of 32 x 8 threads moves a 32 x 32 tile; thread (tx, ty) = (t % 32, t / 32) moves the 4
// elements of rows ty, ty + 8, ty + 16, ty + 24, column tx. Every warp access is 32 lanes x one
// element: one row segment of the tile.
inline constexpr int tile32 = 32;
inline constexpr int block_rows = 8;
inline constexpr int threads32 = tile32 * block_rows;  // 256
inline constexpr int items32 = tile32 / block_rows;    // 4 elements per thread

// Elements of one 4-byte bank word: 2 for f16, 1 for f32 and f64. The unit of padding and swizzle,
// so that a padded row moves its column reads to the next bank and a swizzle permutes whole words.
MEMLAB_HOST_DEVICE constexpr std::uint32_t word_elems(std::size_t es) {
  return es >= 4 ? 1u : static_cast<std::uint32_t>(4 / es);
}

// Byte offset of element (r, c) of the 32 x 32 tile in shared memory:
//   smem           row-major, 32 elements a row: a column is 32 rows x 128 B (f32) apart, one bank;
//   smem_padded    each row one word longer: column reads walk across the banks;
//   smem_swizzled  row-major, the word index XORed with the row (in words): no padding, every row
//                  and every column of the tile covers all 32 banks once.
MEMLAB_HOST_DEVICE constexpr std::uint32_t smem32_offset(variant_id v, std::size_t es, std::uint32_t r,
                                                         std::uint32_t c) {
  const std::uint32_t u = word_elems(es), e = static_cast<std::uint32_t>(es);
  if (v == variant_id::smem_padded) return (r * (tile32 + u) + c) * e;
  if (v == variant_id::smem_swizzled) {
    const std::uint32_t unit = (c / u) ^ ((r / u) % (tile32 / u));
    return (r * tile32 + unit * u + c % u) * e;
  }
  return (r * tile32 + c) * e;
}
MEMLAB_HOST_DEVICE constexpr std::uint32_t smem32_bytes(variant_id v, std::size_t es) {
  return static_cast<std::uint32_t>(tile32 * (tile32 + (v == variant_id::smem_padded ? word_elems(es) : 0u)) * es);
}

// ---- smem_vec: 64 x 64 tiles, 16-byte global accesses -------------------------------------------------
// V = 16 / sizeof(T) elements per 16-byte vector (4 f32, 8 f16, 2 f64); 256 threads.
//   load step i (0 .. es - 1): thread t moves vector q = t + 256 i of the tile's rows: row q / (64 / V),
//     vector q % (64 / V) (LDG.128); it stores the vector whole into shared memory (STS.128), in the
//     row's 16-byte slot (vector ^ g(row)), g(row) = (row / V) % 8.
//   store step j (0 .. es - 1): warp w takes block b = w + 8 j of the output tile: V output rows x
//     32 / V output vectors; lane l builds output vector (c, v): output row c = V (b % (64 / V)) + l % V,
//     its elements V v .. V v + V - 1 (= input rows) from V element reads of shared memory, then
//     stores it whole (STG.128). Per warp: V rows x 512 / V contiguous bytes.
// The XOR keeps both shared-memory phases at their fewest wavefronts: a quarter-warp's 16-byte stores
// land on 8 distinct slots of one row (a permutation of 8 consecutive slots), and a warp's element
// reads of one row-group (fixed k) see 32 / V different values of g across its lanes.
inline constexpr int vec_tile = 64;
inline constexpr int vec_threads = 256;
MEMLAB_HOST_DEVICE constexpr std::uint32_t vec_elems(std::size_t es) { return static_cast<std::uint32_t>(16 / es); }
MEMLAB_HOST_DEVICE constexpr std::uint32_t vec_swizzle(std::size_t es, std::uint32_t row) {
  return (row / vec_elems(es)) % 8;
}
MEMLAB_HOST_DEVICE constexpr std::uint32_t vec_offset(std::size_t es, std::uint32_t r, std::uint32_t c) {
  const std::uint32_t v = vec_elems(es), e = static_cast<std::uint32_t>(es);
  return r * vec_tile * e + (((c / v) ^ vec_swizzle(es, r)) * v + c % v) * e;
}
MEMLAB_HOST_DEVICE constexpr std::uint32_t vec_smem_bytes(std::size_t es) {
  return static_cast<std::uint32_t>(vec_tile * vec_tile * es);
}
// Load / store steps per thread: 64 x 64 / V vectors over 256 threads = sizeof(T).
MEMLAB_HOST_DEVICE constexpr int vec_steps(std::size_t es) { return static_cast<int>(es); }

struct tile_pos {
  std::uint32_t r = 0, c = 0;  // in the tile, of the input element (load) or its vector's first element
};
// Load step i of thread t: the input vector (row, first column).
MEMLAB_HOST_DEVICE constexpr tile_pos vec_load_pos(std::size_t es, int t, int i) {
  const auto q = static_cast<std::uint32_t>(t + vec_threads * i), per_row = vec_tile / vec_elems(es);
  return {q / per_row, (q % per_row) * vec_elems(es)};
}
// Store step j of thread t: output row c (an input column) and the first of its V input rows.
MEMLAB_HOST_DEVICE constexpr tile_pos vec_store_pos(std::size_t es, int t, int j) {
  const std::uint32_t v = vec_elems(es), lane = static_cast<std::uint32_t>(t % 32);
  const auto b = static_cast<std::uint32_t>(t / 32 + 8 * j), groups = vec_tile / v;  // output-row groups of V
  return {v * ((32 / v) * (b / groups) + lane / v), v * (b % groups) + lane % v};    // {first input row, column}
}

// ---- smem_vec_rows: tiles of 256-byte rows, each warp access two whole rows --------------------------------
// smem_vec's store steps write 4 output rows x 128 B per warp (f32), 8 x 64 B (f16). This rung makes
// every tile row 256 bytes, E = 256 / sizeof(T) elements (128 f16, 64 f32, 32 f64; the tile E x E), and
// every warp access two whole rows of it, both ways. 256 threads, 16 / sizeof(T) steps each way:
//   load step i: thread t moves vector q = t + 256 i: row q / 16, vector q % 16 (LDG.128), stored whole
//     (STS.128) into its swizzled slot;
//   store step j: warp w writes output rows 2 b and 2 b + 1, b = w + 8 j; lane l builds vector l % 16 of
//     row 2 b + l / 16 (input rows V (l % 16) .. + V - 1) from V element reads, stores it (STG.128).
// The swizzle is on 8-byte units: 8-byte unit h of row r lives at unit h ^ (r / V) (r / V < 16, h < 32).
// A whole 16-byte slot moves to slot q ^ (r / V / 2), its two halves swapped when r / V is odd: a
// quarter-warp's 16-byte stores still hit 8 distinct slots of one row. The element reads of one step
// (fixed k, rows V v + k for v = 0..15, two adjacent output rows) land on 32 distinct banks for 4-byte
// elements; 2-byte elements share words pairwise; 8-byte ones go by half-warps, 16 distinct bank pairs.
MEMLAB_HOST_DEVICE constexpr std::uint32_t rows_edge(std::size_t es) { return static_cast<std::uint32_t>(256 / es); }
MEMLAB_HOST_DEVICE constexpr int rows_steps(std::size_t es) { return static_cast<int>(16 / es); }
MEMLAB_HOST_DEVICE constexpr std::uint32_t rows_smem_bytes(std::size_t es) { return 256 * rows_edge(es); }
MEMLAB_HOST_DEVICE constexpr std::uint32_t rows_offset(std::size_t es, std::uint32_t r, std::uint32_t c) {
  const std::uint32_t byte = c * static_cast<std::uint32_t>(es);
  return r * 256 + (((byte / 8) ^ (r / vec_elems(es))) * 8) + byte % 8;
}
// Where load step i of thread t stores its vector: the slot's byte offset, and whether the vector's two
// 8-byte halves trade places (rows_offset of the vector's first element, whole).
struct slot {
  std::uint32_t offset = 0;
  bool swap_halves = false;
};
MEMLAB_HOST_DEVICE constexpr slot rows_slot(std::size_t es, std::uint32_t r, std::uint32_t c) {
  const std::uint32_t g = r / vec_elems(es), q = c * static_cast<std::uint32_t>(es) / 16;
  return {r * 256 + (q ^ (g / 2)) * 16, g % 2 == 1};
}
MEMLAB_HOST_DEVICE constexpr tile_pos rows_load_pos(std::size_t es, int t, int i) {
  const auto q = static_cast<std::uint32_t>(t + vec_threads * i);
  return {q / 16, (q % 16) * vec_elems(es)};
}
// {first of V input rows, output row}.
MEMLAB_HOST_DEVICE constexpr tile_pos rows_store_pos(std::size_t es, int t, int j) {
  const auto lane = static_cast<std::uint32_t>(t % 32), b = static_cast<std::uint32_t>(t / 32 + 8 * j);
  return {vec_elems(es) * (lane % 16), 2 * b + lane / 16};
}

// ---- tiles -----------------------------------------------------------------------------------------------

MEMLAB_HOST_DEVICE constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// The order CTAs take a matrix's tiles in (CTAs are scheduled roughly in index order, so this decides
// which tiles are in flight together): bands of `band` tile rows; inside a band, consecutive CTAs walk
// down its rows, then move one tile right. band 1: along each row of tiles (the reads of a wave of
// CTAs cover whole rows of `in`, its writes short pieces of many rows of `out`); larger bands trade
// read runs for write runs. Tile k of the matrix (0 <= k < tiles_r x tiles_c) -> (tile row, column).
struct tile_rc {
  std::uint64_t tr = 0, tc = 0;
};
MEMLAB_HOST_DEVICE constexpr tile_rc tile_order(std::uint64_t k, std::uint64_t tiles_r, std::uint64_t tiles_c,
                                                std::uint64_t band) {
  const std::uint64_t per_band = band * tiles_c, first = k / per_band * band;  // the band's first tile row
  const std::uint64_t rows = tiles_r - first < band ? tiles_r - first : band;  // the last band may be thinner
  const std::uint64_t i = k % per_band;
  return {first + i % rows, i / rows};
}

// The tile edge of a variant in elements: 32 for the 32 x 32 rungs, 64 for smem_vec, 256 / sizeof(T) for
// smem_vec_rows (0 for the peers).
int tile_edge(variant_id v, std::size_t elem_size);
// CTAs a variant launches for `d`: tiles of every matrix of the batch.
std::uint64_t tiles_of(variant_id v, std::size_t elem_size, dims d);

launch_policy plan(variant_id v, std::size_t elem_size, dims d);

// Why variant v cannot move d (host rules; nullopt when it can).
std::optional<std::string> shape_rule(variant_id v, std::size_t elem_size, dims d);

// ---- the model: what each warp request costs ---------------------------------------------------------------
// For each kind of warp request a kernel issues, the requests (warp instructions with at least one
// active lane) and what they cost, summed over the whole launch:
//   global loads / stores: 32-byte sectors (the distinct sectors of the bytes the active lanes touch);
//   shared stores / loads: wavefronts, from the bank simulator (harness/bank_model.hpp) on the lanes'
//   shared-memory addresses; a 2-byte access is served by its 4-byte word and simulated as that word.
struct request_cost {
  std::uint64_t requests = 0, units = 0;
  [[nodiscard]] double per_request() const {
    return requests == 0 ? 0.0 : static_cast<double>(units) / static_cast<double>(requests);
  }
  request_cost& operator+=(const request_cost& o) {
    requests += o.requests;
    units += o.units;
    return *this;
  }
  friend bool operator==(const request_cost&, const request_cost&) = default;
};
struct launch_cost {
  request_cost gld, gst;  // global loads, stores: sectors
  request_cost sst, sld;  // shared stores, loads: wavefronts
  friend bool operator==(const launch_cost&, const launch_cost&) = default;
};

// The whole launch, computed by grouping tiles that cost the same (a tile's cost depends only on which
// of its rows and columns exist and on the sector phase of its rows): O(32 x (rows + cols) / tile)
// tiles simulated, whatever the batch.
launch_cost model(variant_id v, std::size_t elem_size, dims d);
// The same by simulating every tile of the launch: the reference the tests hold model() to.
launch_cost brute_force(variant_id v, std::size_t elem_size, dims d);

inline constexpr std::uint64_t sector_bytes = 32;

const lab& table();

}  // namespace memlab::labs::transpose
