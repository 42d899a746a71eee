// The tile lab's host-side model: which tiles each variant can move (shapes, alignment), the access
// width each compiles to, and its launch policy. Host-only; tested in tests/labs/tile/test_tile_plan.cpp.
#include <string>

#include "labs/tile/tile.hpp"

namespace memlab::labs::tile {

namespace {

bool is_tiled(variant_id v) {
  switch (v) {
    case variant_id::cute_tiled_universal:
    case variant_id::cute_tiled_default:
    case variant_id::cute_tiled_default_static:
    case variant_id::cute_tiled_autovec128:
    case variant_id::cute_tiled128: return true;
    default: return false;
  }
}

// Global access width the variant compiles to, in bytes (asserted for f32 by tests/labs/tile/
// test_tile_sass.cpp): an element for a partition without contiguity or a policy that assumes no
// alignment, 16 bytes where CuTe may vectorize or memlab moves 16-byte chunks.
int access_bytes(variant_id v, std::size_t elem_size) {
  switch (v) {
    case variant_id::cute_tiled_default_static:
    case variant_id::cute_tiled_autovec128:
    case variant_id::cute_tiled128:
    case variant_id::ldg_sts16:
    case variant_id::ldgsts16: return 16;
    default: return static_cast<int>(elem_size);
  }
}

}  // namespace

std::string tile_text(std::uint64_t rows, std::uint64_t cols) { return std::to_string(rows) + "x" + std::to_string(cols); }

bool is_static(variant_id v) {
  return v == variant_id::cute_universal_static || v == variant_id::cute_autovec128_static ||
         v == variant_id::cute_default_static || v == variant_id::cute_tiled_default_static;
}

int required_alignment(variant_id v) {
  switch (v) {
    case variant_id::cute_autovec64: return 8;
    case variant_id::cute_autovec128:
    case variant_id::cute_autovec128_static:
    case variant_id::cute_default_static:
    case variant_id::cute_tiled_default_static:
    case variant_id::cute_tiled_autovec128:
    case variant_id::cute_tiled128:
    case variant_id::ldg_sts16:
    case variant_id::ldgsts16: return 16;
    default: return 0;
  }
}

std::optional<std::string> tile_rule(variant_id v, std::size_t elem_size, std::uint64_t rows, std::uint64_t cols) {
  const std::string tile = tile_text(rows, cols);
  if (rows == 0 || cols == 0) return "a " + tile + " tile is empty";
  // Far above any shared memory (227 KiB on sm_90); keeps rows x cols x size in int range.
  if (rows > (1u << 16) || cols > (1u << 16) || rows * cols * elem_size > (1u << 20)) {
    return "a " + tile + " tile does not fit in shared memory";
  }
  if (rows % thr_rows != 0 || cols % thr_cols != 0) {
    return "a " + tile + " tile is not a multiple of the (" + std::to_string(thr_rows) + ", " + std::to_string(thr_cols) +
           ") thread layout: rows must be a multiple of " + std::to_string(thr_rows) + " and cols of " +
           std::to_string(thr_cols);
  }
  if (is_tiled(v)) {
    const std::uint64_t per_thread = 16 / elem_size;  // elements of a thread's 16 contiguous bytes
    if (rows % (thr_rows * per_thread) != 0) {
      return "a " + tile + " tile does not split into 16-byte column pieces over 8 thread rows: rows must be a multiple of " +
             std::to_string(thr_rows * per_thread) + " (8 x " + std::to_string(per_thread) + " elements)";
    }
  }
  if (is_static(v)) {
    bool built = false;
    std::string shapes;
    for (const auto& [r, c] : static_tiles) {
      built = built || (rows == static_cast<std::uint64_t>(r) && cols == static_cast<std::uint64_t>(c));
      shapes += (shapes.empty() ? "" : ", ") + tile_text(static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(c));
    }
    if (!built) return "static layouts need the tile shape at compile time: built for " + shapes + " only, not " + tile;
  }
  return std::nullopt;
}

launch_policy plan(variant_id v, std::size_t elem_size, std::uint64_t rows, std::uint64_t cols, std::uint64_t ctas) {
  const int vb = access_bytes(v, elem_size);
  const std::uint64_t tile_bytes = rows * cols * elem_size;
  const auto accesses = tile_bytes / threads_per_cta / static_cast<std::uint64_t>(vb);  // per thread
  return {threads_per_cta, static_cast<int>(accesses), vb, 0, ctas};
}

}  // namespace memlab::labs::tile
