// The transpose lab's geometry and host-side model. The kernels (transpose.cu) and the model
// (model.cpp) share the functions below, so the addresses the model counts are the addresses the
// kernels touch: which elements a thread moves in each step, and where an element of a tile lives in
// shared memory. Both read them from a rung's tile (tile_traits): its record in the lab's table
// (transpose.cu) is the only place a rung's tile, layout and access width are written.
//
// The job: a batch of n row-major matrices of rows x cols elements, `in`, one after the other; `out`
// receives their transposes (cols x rows, row-major), in the same order:
//   out[b][c][r] = in[b][r][c].
// Each CTA moves one tile: it reads an E x E block of `in` and writes the tile's transpose into
// `out`. Tiles are numbered along the rows of `in` (tc fastest), then down, then over the batch.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "harness/lab.hpp"
#include "harness/result.hpp"
#include "harness/sectors.hpp"
#include "memlab/arch/config.cuh"
#include "memlab/transpose_plan.hpp"

namespace memlab::labs::transpose {

// A batch of `batch` matrices, each rows x cols.
struct dims {
  std::uint64_t batch = 1, rows = 0, cols = 0;
};

// The CPU reference (transpose.cu): output element e of the batch holds input element
// source_element(e, rows, cols).
std::uint64_t source_element(std::uint64_t e, std::uint64_t rows, std::uint64_t cols);

// ---- a rung's tile: the facts its kernel is instantiated from ------------------------------------------

// How the tile lives in shared memory (smem_offset below; V = 16 / sizeof(T), the elements of a
// 16-byte vector):
enum class smem_layout {
  none,        // no shared memory: each thread stores what it loaded, down a column of `out`
  row_major,   // the tile's rows one after the other
  padded,      // each row one 4-byte word longer: a column's words walk across the banks
  xor_words,   // row-major, the word index XORed with the row (in words): no padding
  xor_slots,   // the 16-byte slot index XORed with (row / V) % 8
  xor_halves,  // memlab::transpose's (transpose_plan.hpp): 256-byte rows, the 8-byte unit index XORed with
               // row / V; a 16-byte vector moves whole, its two halves swapped on odd row groups
};

// Which output vectors a warp's lanes store together, for the rungs of 16-byte accesses (those of one
// element per access store one output row segment per warp):
enum class store_lanes {
  down_rows,   // V output rows x 32 / V vectors, lane l in row l % V (a warp: V rows x 512 / V bytes)
  along_rows,  // whole output rows of 16 vectors (256 bytes), lane l vector l % 16 of row l / 16
};

// A count that depends on the element size: its value for 2-, 4- and 8-byte elements.
struct by_elem_size {
  int b2 = 0, b4 = 0, b8 = 0;
  MEMLAB_HOST_DEVICE constexpr int operator()(std::size_t es) const { return es == 2 ? b2 : es == 4 ? b4 : b8; }
};

// The tile of one of the lab's kernels, and how its threads cover it. A kernel is instantiated from
// one of these (tile_t below), so every figure here is a compile-time constant in its code.
//   vec_bytes 0:  a thread per element: thread t moves column t % E of rows t / E + (threads / E) j, one
//                 element per access (a warp access is one row segment of the tile, both ways).
//   vec_bytes 16: 16-byte vectors of V elements: load step i of thread t moves vector q = t + threads i
//                 of the tile's rows (row q / (E / V)), stores it whole into shared memory; a store step
//                 gathers V elements of one tile column (V consecutive input rows) into one output
//                 vector, the lanes as `lanes` says. Rows and columns must be multiples of V.
struct tile_traits {
  int edge = 0;       // E, elements per tile row and column; 0: row_bytes / sizeof(T)
  int row_bytes = 0;  // with edge 0: bytes per tile row (E = row_bytes / sizeof(T))
  int threads = 256;
  int vec_bytes = 0;  // bytes of every global access: 0 for one element
  smem_layout layout = smem_layout::none;
  store_lanes lanes = store_lanes::down_rows;  // 16-byte rungs only
  by_elem_size min_ctas_per_sm{};              // __launch_bounds__'s second argument (0: none asked)
};
// A tile as a type, for a kernel's template argument (nvcc instantiates kernels of class-type
// arguments through a type only), and the same handed to the geometry below, whose functions take
// either this or a runtime_tile (the host model's): `get()` gives the traits. Inside every function a
// kernel calls, its tile's figures are then compile-time constants, as the kernel's own constants were
// before the tile became a record: nvcc simplifies each function before inlining it, and what it
// knows there decides the instructions.
template <tile_traits T>
struct tile_t {
  static constexpr tile_traits value = T;
  MEMLAB_HOST_DEVICE static constexpr tile_traits get() {
    constexpr tile_traits t = T;
    return t;
  }
};
struct runtime_tile {
  tile_traits t;
  MEMLAB_HOST_DEVICE constexpr tile_traits get() const { return t; }
};

// The tile's edge E in elements; 0 for a rung with no tile of the lab's (a library's).
MEMLAB_HOST_DEVICE constexpr std::uint32_t tile_edge(const tile_traits& t, std::size_t es) {
  return static_cast<std::uint32_t>(t.edge != 0 ? t.edge : t.row_bytes / static_cast<int>(es));
}
// Elements per global access: V = 16 / sizeof(T) for the 16-byte rungs, else 1.
MEMLAB_HOST_DEVICE constexpr std::uint32_t access_elems(const tile_traits& t, std::size_t es) {
  return t.vec_bytes == 0 ? 1u : static_cast<std::uint32_t>(t.vec_bytes / static_cast<int>(es));
}
// Accesses per thread each way (load steps = store steps): E x E / (V x threads).
MEMLAB_HOST_DEVICE constexpr int tile_steps(const tile_traits& t, std::size_t es) {
  const std::uint32_t e = tile_edge(t, es);
  return static_cast<int>(e * e / (access_elems(t, es) * static_cast<std::uint32_t>(t.threads)));
}
// One element per access: the tile rows a CTA's threads cover in one step.
MEMLAB_HOST_DEVICE constexpr int block_rows(const tile_traits& t, std::size_t es) {
  return t.threads / static_cast<int>(tile_edge(t, es));
}

// Elements of one 4-byte bank word: 2 for f16, 1 for f32 and f64. The unit of padding and of the word
// swizzle, so that a padded row moves its column reads to the next bank and a swizzle permutes whole words.
MEMLAB_HOST_DEVICE constexpr std::uint32_t word_elems(std::size_t es) {
  return es >= 4 ? 1u : static_cast<std::uint32_t>(4 / es);
}
// The elements of a 16-byte vector: 8 f16, 4 f32, 2 f64.
MEMLAB_HOST_DEVICE constexpr std::uint32_t vec_elems(std::size_t es) { return static_cast<std::uint32_t>(16 / es); }

// Byte offset of element (r, c) of the tile in shared memory:
//   row_major   E elements a row: a column of a 32 x 32 f32 tile is 32 rows x 128 B apart, one bank;
//   padded      each row one word longer: column reads walk across the banks;
//   xor_words   the word index XORed with the row (in words): no padding, every row and every column of
//               the tile covers all 32 banks once (E = 32);
//   xor_slots   16-byte slot (c / V) ^ g(row), g(row) = (row / V) % 8: a quarter-warp's 16-byte stores
//               land on 8 distinct slots of one row, and a warp's element reads of one row group (fixed
//               k) see 32 / V different values of g across its lanes;
//   xor_halves  memlab::transpose's: 8-byte unit h of row r at unit h ^ (r / V) (r / V < 16, h < 32). The
//               element reads of one step land on 32 distinct banks for 4-byte elements; 2-byte elements
//               share words pairwise; 8-byte ones go by half-warps, 16 distinct bank pairs.
// The layouts of the rungs of one element per access, for an edge given as a value or, by a kernel, as
// a std::integral_constant.
template <class Edge>
MEMLAB_HOST_DEVICE constexpr std::uint32_t element_offset(smem_layout layout, Edge edge, std::size_t es,
                                                          std::uint32_t r, std::uint32_t c) {
  const std::uint32_t u = word_elems(es), e = static_cast<std::uint32_t>(es);
  if (layout == smem_layout::padded) return (r * (edge + u) + c) * e;
  if (layout == smem_layout::xor_words) {
    const std::uint32_t unit = (c / u) ^ ((r / u) % (edge / u));
    return (r * edge + unit * u + c % u) * e;
  }
  return (r * edge + c) * e;
}
// The 16-byte slot swizzle g(row) of xor_slots.
MEMLAB_HOST_DEVICE constexpr std::uint32_t slot_swizzle(std::size_t es, std::uint32_t row) {
  return (row / vec_elems(es)) % 8;
}
template <class Tile>
MEMLAB_HOST_DEVICE constexpr std::uint32_t smem_offset(Tile tile, std::size_t es, std::uint32_t r, std::uint32_t c) {
  const tile_traits t = tile.get();
  const std::uint32_t e = static_cast<std::uint32_t>(es), edge = tile_edge(t, es);
  if (t.layout == smem_layout::xor_slots) {
    const std::uint32_t v = vec_elems(es);
    return r * edge * e + (((c / v) ^ slot_swizzle(es, r)) * v + c % v) * e;
  }
  if (t.layout == smem_layout::xor_halves) return memlab::detail::transpose_smem_offset(e, r, c * e);
  return element_offset(t.layout, edge, es, r, c);
}
MEMLAB_HOST_DEVICE constexpr std::uint32_t smem_offset(const tile_traits& t, std::size_t es, std::uint32_t r,
                                                       std::uint32_t c) {
  return smem_offset(runtime_tile{t}, es, r, c);
}
// Bytes of shared memory the tile takes (0: none).
MEMLAB_HOST_DEVICE constexpr std::uint32_t smem_bytes(const tile_traits& t, std::size_t es) {
  const std::uint32_t edge = tile_edge(t, es);
  if (t.layout == smem_layout::none) return 0;
  return static_cast<std::uint32_t>(edge * (edge + (t.layout == smem_layout::padded ? word_elems(es) : 0u)) * es);
}

// Where a load step stores the vector of V elements that starts at (r, c): its byte offset in shared
// memory, and whether its two 8-byte halves trade places (xor_halves, on odd row groups); one element
// per access: the element's offset.
struct slot {
  std::uint32_t offset = 0;
  bool swap_halves = false;
};
template <class Tile>
MEMLAB_HOST_DEVICE constexpr slot vector_slot(Tile tile, std::size_t es, std::uint32_t r, std::uint32_t c) {
  if (tile.get().layout == smem_layout::xor_halves) {  // memlab::transpose's slots (detail/transpose_geometry.hpp)
    const auto e = static_cast<std::uint32_t>(es);
    const memlab::detail::transpose_smem_vector v = memlab::detail::transpose_smem_vector_at(e, r, c * e);
    return {v.slot, v.swapped};
  }
  return {smem_offset(tile, es, r, c), false};
}
MEMLAB_HOST_DEVICE constexpr slot vector_slot(const tile_traits& t, std::size_t es, std::uint32_t r, std::uint32_t c) {
  return vector_slot(runtime_tile{t}, es, r, c);
}

struct tile_pos {
  std::uint32_t r = 0, c = 0;  // in the tile, of the input element (load) or its vector's first element
};
// 16-byte rungs: the vectors of a tile row (E / V; row_bytes / 16 for tiles of rows of bytes).
MEMLAB_HOST_DEVICE constexpr std::uint32_t vectors_per_row(const tile_traits& t, std::size_t es) {
  return t.edge != 0 ? static_cast<std::uint32_t>(t.edge) / vec_elems(es)
                     : static_cast<std::uint32_t>(t.row_bytes / t.vec_bytes);
}
// 16-byte rungs, load step i of thread t: the input vector (row, first column).
template <class Tile>
MEMLAB_HOST_DEVICE constexpr tile_pos vector_load_pos(Tile tile, std::size_t es, int tid, int i) {
  const tile_traits t = tile.get();
  const auto q = static_cast<std::uint32_t>(tid + t.threads * i), per_row = vectors_per_row(t, es);
  return {q / per_row, (q % per_row) * vec_elems(es)};
}
MEMLAB_HOST_DEVICE constexpr tile_pos vector_load_pos(const tile_traits& t, std::size_t es, int tid, int i) {
  return vector_load_pos(runtime_tile{t}, es, tid, i);
}
// 16-byte rungs, store step j of thread t: the first of V input rows (r) and the output row (c).
template <class Tile>
MEMLAB_HOST_DEVICE constexpr tile_pos vector_store_pos(Tile tile, std::size_t es, int tid, int j) {
  const tile_traits t = tile.get();
  const std::uint32_t v = vec_elems(es), lane = static_cast<std::uint32_t>(tid % 32);
  const auto b = static_cast<std::uint32_t>(tid / 32 + t.threads / 32 * j);  // the warp's block of the tile
  if (t.lanes == store_lanes::along_rows) {
    const std::uint32_t per_row = vectors_per_row(t, es), rows = 32 / per_row;  // rows of a warp
    return {v * (lane % per_row), rows * b + lane / per_row};
  }
  const std::uint32_t groups = vectors_per_row(t, es);                             // output-row groups of V
  return {v * ((32 / v) * (b / groups) + lane / v), v * (b % groups) + lane % v};  // {first input row, column}
}
MEMLAB_HOST_DEVICE constexpr tile_pos vector_store_pos(const tile_traits& t, std::size_t es, int tid, int j) {
  return vector_store_pos(runtime_tile{t}, es, tid, j);
}

// ---- tiles -----------------------------------------------------------------------------------------------

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

// ---- a rung --------------------------------------------------------------------------------------------

// What the table's record says of a rung besides its kernels: its tile, or, for a rung that launches a
// library (memlab::transpose, cuBLAS, memlab::copy), how that one is planned, prepared and checked.
struct rung_traits {
  tile_traits tile{};  // the lab's kernel's tile; edge and row_bytes 0 for a library's rung
  // A library's rung (nullptr: none, or as the lab's kernels):
  launch_policy (*policy)(const case_params& p, const device_info& dev) = nullptr;  // the library's plan
  void (*setup)(case_ctx& c) = nullptr;                                             // outside any timing
  std::string (*verify)(const case_ctx& c) = nullptr;  // else byte for byte against the reference
  bool cublas = false;                                 // calls cuBLAS: refused where it cannot be loaded
};

// Whether the rung launches a kernel of the lab's (with a tile the model replays).
MEMLAB_HOST_DEVICE constexpr bool has_tiles(const tile_traits& t) { return t.edge != 0 || t.row_bytes != 0; }

// CTAs a rung launches for `d`: tiles of every matrix of the batch.
std::uint64_t tiles_of(const tile_traits& t, std::size_t elem_size, dims d);

launch_policy plan(const tile_traits& t, std::size_t elem_size, dims d);

// Why the lab's kernel of tile t cannot move d (host rules; nullopt when it can); `name` is the rung's.
std::optional<std::string> shape_rule(std::string_view name, const tile_traits& t, std::size_t elem_size, dims d);

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
launch_cost model(const tile_traits& t, std::size_t elem_size, dims d);
// The same by simulating every tile of the launch: the reference the tests hold model() to.
launch_cost brute_force(const tile_traits& t, std::size_t elem_size, dims d);

const lab& table();

}  // namespace memlab::labs::transpose
