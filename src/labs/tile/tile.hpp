// The tile lab's host-side model (model.cpp): tile rules, alignment contracts and launch policies.
// The lab itself (kernels, reference, table): tile.cu.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "harness/lab.hpp"

namespace memlab::labs::tile {

// The tutorial's CTA: 256 threads laid out (8, 32), column-major (thread t -> row t % 8, column t / 8).
inline constexpr int threads_per_cta = 256;
inline constexpr int thr_rows = 8;
inline constexpr int thr_cols = 32;

// Tile shapes the *_static variants are compiled for (a static layout needs its shape at compile time).
inline constexpr std::array<std::pair<int, int>, 3> static_tiles{{{128, 256}, {128, 128}, {64, 64}}};

std::string tile_text(std::uint64_t rows, std::uint64_t cols);  // "128x256"

// How a rung's 256 threads split the tile between them.
enum class tile_partition {
  local,       // the tutorial's local_partition over (8, 32): a thread owns every 8th element of a column
  tiled,       // make_tiled_copy, values (16 B / sizeof(T), 1): a thread owns 16 contiguous bytes of a column
  byte_range,  // memlab's movers: the tile as one contiguous byte range, 16-byte chunks
};

// A rung's kernel for a dtype and a tile shape (tile.cu): its address, for cudaFuncSetAttribute and
// cudaLaunchKernel. Throws std::invalid_argument for a dtype or a static shape that is not built.
using kernel_picker = const void* (*)(dtype t, std::uint64_t rows, std::uint64_t cols);

// A rung, by its properties (its traits in the table): what the model below reads. The alignment a
// rung assumes of the global source is its record's needs.alignment: the copy's contract, whatever
// the compiler made of it (AutoVectorizingCopyWithAssumedAlignment<64> assumes 8 bytes, <128> and
// CuTe's copy() on static layouts 16).
struct tile_rung {
  tile_partition partition = tile_partition::local;
  // Global access width it compiles to, in bytes (asserted by tests/labs/tile/test_tile_sass.cpp):
  // 0 for one element (a partition without contiguity, or a policy that assumes no alignment), 16
  // where CuTe may vectorize or memlab moves 16-byte chunks.
  int access_bytes = 0;
  bool static_layout = false;  // compiled for the static_tiles shapes only
  bool async_copy = false;     // cp.async global -> shared (LDGSTS): the data never enters registers
  kernel_picker kernel = nullptr;
};

// Why the tile (rows x cols of elem_size bytes) cannot run rung r; nullopt when it can.
// Device limits (shared memory) are checked by the lab, not here.
std::optional<std::string> tile_rule(const tile_rung& r, std::size_t elem_size, std::uint64_t rows, std::uint64_t cols);

// The launch of `ctas` CTAs (already resolved: >= 1), each moving one tile.
launch_policy plan(const tile_rung& r, std::size_t elem_size, std::uint64_t rows, std::uint64_t cols,
                   std::uint64_t ctas);

const lab& table();

}  // namespace memlab::labs::tile
