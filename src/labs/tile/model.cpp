// The tile lab's host-side model: which tiles each rung can move (shapes), read from its traits, and
// its launch policy. Host-only; tested in tests/labs/tile/test_tile_plan.cpp.
#include <string>

#include "labs/tile/tile.hpp"

namespace memlab::labs::tile {

std::string tile_text(std::uint64_t rows, std::uint64_t cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

std::optional<std::string> tile_rule(const tile_rung& r, std::size_t elem_size, std::uint64_t rows,
                                     std::uint64_t cols) {
  const std::string tile = tile_text(rows, cols);
  if (rows == 0 || cols == 0) return "a " + tile + " tile is empty";
  // Far above any shared memory (227 KiB on sm_90); keeps rows x cols x size in int range.
  if (rows > (1u << 16) || cols > (1u << 16) || rows * cols * elem_size > (1u << 20)) {
    return "a " + tile + " tile does not fit in shared memory";
  }
  if (rows % thr_rows != 0 || cols % thr_cols != 0) {
    return "a " + tile + " tile is not a multiple of the (" + std::to_string(thr_rows) + ", " +
           std::to_string(thr_cols) + ") thread layout: rows must be a multiple of " + std::to_string(thr_rows) +
           " and cols of " + std::to_string(thr_cols);
  }
  if (r.partition == tile_partition::tiled) {
    const std::uint64_t per_thread = 16 / elem_size;  // elements of a thread's 16 contiguous bytes
    if (rows % (thr_rows * per_thread) != 0) {
      return "a " + tile +
             " tile does not split into 16-byte column pieces over 8 thread rows: rows must be a multiple of " +
             std::to_string(thr_rows * per_thread) + " (8 x " + std::to_string(per_thread) + " elements)";
    }
  }
  if (r.static_layout) {
    bool built = false;
    std::string shapes;
    for (const auto& [sr, sc] : static_tiles) {
      built = built || (rows == static_cast<std::uint64_t>(sr) && cols == static_cast<std::uint64_t>(sc));
      shapes +=
          (shapes.empty() ? "" : ", ") + tile_text(static_cast<std::uint64_t>(sr), static_cast<std::uint64_t>(sc));
    }
    if (!built) return "static layouts need the tile shape at compile time: built for " + shapes + " only, not " + tile;
  }
  return std::nullopt;
}

launch_policy plan(const tile_rung& r, std::size_t elem_size, std::uint64_t rows, std::uint64_t cols,
                   std::uint64_t ctas) {
  const int vb = r.access_bytes != 0 ? r.access_bytes : static_cast<int>(elem_size);
  const std::uint64_t tile_bytes = rows * cols * elem_size;
  const auto accesses = tile_bytes / threads_per_cta / static_cast<std::uint64_t>(vb);  // per thread
  return {.threads = threads_per_cta, .items_per_thread = static_cast<int>(accesses), .vec_bytes = vb, .grid = ctas};
}

}  // namespace memlab::labs::tile
