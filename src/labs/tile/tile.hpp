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

// Ladder order: the tutorial's four copies (local_partition), the same on static layouts, a
// contiguous partition (make_tiled_copy) under each copy policy, then memlab's own movers.
enum class variant_id {
  cute_universal,
  cute_autovec64,
  cute_autovec128,
  cute_default,
  cute_universal_static,
  cute_autovec128_static,
  cute_default_static,
  cute_tiled_universal,
  cute_tiled_default,
  cute_tiled_default_static,
  cute_tiled_autovec128,
  cute_tiled128,
  ldg_sts16,
  ldgsts16,
};
inline constexpr std::size_t variant_count = 14;

// The tutorial's CTA: 256 threads laid out (8, 32), column-major (thread t -> row t % 8, column t / 8).
inline constexpr int threads_per_cta = 256;
inline constexpr int thr_rows = 8;
inline constexpr int thr_cols = 32;

// Tile shapes the *_static variants are compiled for (a static layout needs its shape at compile time).
inline constexpr std::array<std::pair<int, int>, 3> static_tiles{{{128, 256}, {128, 128}, {64, 64}}};

bool is_static(variant_id v);
std::string tile_text(std::uint64_t rows, std::uint64_t cols);  // "128x256"

// Alignment in bytes the variant assumes of the global source (0: any element-aligned pointer).
// It is the copy's contract, whatever the compiler made of it: AutoVectorizingCopyWithAssumedAlignment
// <64> assumes 8 bytes, <128> and CuTe's copy() on static layouts assume 16.
int required_alignment(variant_id v);

// Why the tile (rows x cols of elem_size bytes) cannot run variant v; nullopt when it can.
// Device limits (shared memory) are checked by the lab, not here.
std::optional<std::string> tile_rule(variant_id v, std::size_t elem_size, std::uint64_t rows, std::uint64_t cols);

// The launch of `ctas` CTAs (already resolved: >= 1), each moving one tile.
launch_policy plan(variant_id v, std::size_t elem_size, std::uint64_t rows, std::uint64_t cols, std::uint64_t ctas);

const lab& table();

}  // namespace memlab::labs::tile
