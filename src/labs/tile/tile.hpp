// The tile lab's host-side view of its variants: tile rules, launch policies and the launcher.
// Kernels live in kernels.cu (CuTe's copies, then memlab's tile movers).
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "harness/dtype.hpp"
#include "harness/lab.hpp"
#include "harness/result.hpp"

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

std::optional<variant_id> variant_by_name(std::string_view name);
bool is_static(variant_id v);

// Alignment in bytes the variant assumes of the global source (0: any element-aligned pointer).
// It is the copy's contract, whatever the compiler made of it: AutoVectorizingCopyWithAssumedAlignment
// <64> assumes 8 bytes, <128> and CuTe's copy() on static layouts assume 16.
int required_alignment(variant_id v);

// Why the tile (rows x cols of elem_size bytes) cannot run variant v; nullopt when it can.
// Device limits (shared memory) are checked by the lab, not here.
std::optional<std::string> tile_rule(variant_id v, std::size_t elem_size, std::uint64_t rows, std::uint64_t cols);

// The launch of `ctas` CTAs (already resolved: >= 1), each moving one tile.
launch_policy plan(variant_id v, std::size_t elem_size, std::uint64_t rows, std::uint64_t cols, std::uint64_t ctas);

// Lets the variant's kernel use `smem_bytes` of dynamic shared memory (above 48 KiB needs opt-in).
void configure_kernel(variant_id v, dtype t, std::uint64_t rows, std::uint64_t cols);

// Enqueues `grid` CTAs; CTA b moves tile b of src (column-major, rows x cols, tiles back to back)
// into shared memory with the variant's copy, then writes it to tile b of dst. Checks the launch.
void launch_kernel(variant_id v, dtype t, void* dst, const void* src, std::uint64_t rows, std::uint64_t cols,
                   std::uint64_t grid, cudaStream_t s);

const lab& tile_lab();

}  // namespace memlab::labs::tile
