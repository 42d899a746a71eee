// The transpose lab's host-side model: launch policies, shape rules, and what every warp request of a
// launch costs (32-byte sectors of global memory, bank wavefronts of shared memory). Host-only; held
// to a brute-force replay of every tile in tests/labs/transpose/test_transpose_plan.cpp.
//
// One tile's warp requests are replayed lane by lane from the functions the kernels use
// (transpose.hpp). A launch repeats few distinct tiles: shifting a tile by a whole tile along a row of
// `in` moves its load addresses by 32 x sizeof(T) or 64 x sizeof(T) bytes (whole sectors) and leaves its
// shared-memory addresses alone, so all tiles of one tile row cost the same loads except the last one
// (which may be cut); likewise every tile of one tile column costs the same stores. model() replays
// two tiles per tile row for the loads, two per tile column for the stores, four (one per edge class)
// for shared memory, and the batch in at most 32 classes of matrices whose start has the same phase
// in a sector.
#include <algorithm>
#include <numeric>
#include <vector>

#include "harness/bank_model.hpp"
#include "labs/transpose/transpose.hpp"

namespace memlab::labs::transpose {

int tile_edge(variant_id v, std::size_t es) {
  switch (v) {
    case variant_id::naive:
    case variant_id::smem:
    case variant_id::smem_padded:
    case variant_id::smem_swizzled: return tile32;
    case variant_id::smem_vec: return vec_tile;
    case variant_id::smem_vec_rows: return static_cast<int>(rows_edge(es));
    case variant_id::library:  // its tiles depend on the pointers' alignment: plan_transpose's
    case variant_id::cublas:
    case variant_id::copy: return 0;
  }
  return 0;
}

std::uint64_t tiles_of(variant_id v, std::size_t es, dims d) {
  const auto t = static_cast<std::uint64_t>(tile_edge(v, es));
  if (t == 0 || d.rows == 0 || d.cols == 0) return 0;
  return d.batch * ceil_div(d.rows, t) * ceil_div(d.cols, t);
}

launch_policy plan(variant_id v, std::size_t elem_size, dims d) {
  switch (v) {
    case variant_id::naive:
    case variant_id::smem:
    case variant_id::smem_padded:
    case variant_id::smem_swizzled:
      return {threads32, items32, static_cast<int>(elem_size), 0, tiles_of(v, elem_size, d)};
    case variant_id::smem_vec: return {vec_threads, vec_steps(elem_size), 16, 0, tiles_of(v, elem_size, d)};
    case variant_id::smem_vec_rows: return {vec_threads, rows_steps(elem_size), 16, 0, tiles_of(v, elem_size, d)};
    case variant_id::library:  // plan_transpose's, from the real addresses (transpose.cu, plan_case)
    case variant_id::cublas:
    case variant_id::copy: return {};  // the libraries choose their own
  }
  return {};
}

std::optional<std::string> shape_rule(variant_id v, std::size_t elem_size, dims d) {
  if (v == variant_id::smem_vec || v == variant_id::smem_vec_rows) {
    const std::uint64_t per = vec_elems(elem_size);
    if (d.rows % per != 0 || d.cols % per != 0) {
      return std::string(v == variant_id::smem_vec ? "smem_vec" : "smem_vec_rows") +
             " moves 16-byte vectors along the rows of in and of out, so every row of both must start "
             "16-byte aligned: rows and cols multiples of " +
             std::to_string(per) + " (got " + std::to_string(d.rows) + " x " + std::to_string(d.cols) + ")";
    }
  }
  return std::nullopt;
}

namespace {

enum class access_kind { gld, sst, sld, gst };

// One warp request: each lane's byte address (global: from the start of `in` or `out`; shared: in the
// tile), or nothing for an inactive lane.
struct warp_access {
  access_kind kind;
  int width;  // bytes per lane
  std::array<std::optional<std::uint64_t>, 32> at{};
};

// Calls f(access) for every warp request of tile (tr, tc) of matrix b, in no particular order.
template <class F>
void for_each_request(variant_id v, std::size_t es, dims d, std::uint64_t b, std::uint64_t tr, std::uint64_t tc,
                      F&& f) {
  const std::uint64_t base = b * d.rows * d.cols;  // first element of matrix b, in `in` and in `out`
  const int w_es = static_cast<int>(es);
  if (v == variant_id::smem_vec_rows) {
    const std::uint64_t edge = rows_edge(es), r0 = tr * edge, c0 = tc * edge;
    const std::uint32_t per = vec_elems(es);
    for (int w = 0; w < vec_threads / 32; ++w) {
      for (int i = 0; i < rows_steps(es); ++i) {
        warp_access g{access_kind::gld, 16, {}}, s{access_kind::sst, 16, {}};
        for (int l = 0; l < 32; ++l) {
          const tile_pos p = rows_load_pos(es, 32 * w + l, i);
          if (r0 + p.r >= d.rows || c0 + p.c >= d.cols) continue;
          g.at[static_cast<std::size_t>(l)] = (base + (r0 + p.r) * d.cols + c0 + p.c) * es;
          s.at[static_cast<std::size_t>(l)] = rows_slot(es, p.r, p.c).offset;
        }
        f(g);
        f(s);
      }
      for (int j = 0; j < rows_steps(es); ++j) {
        warp_access g{access_kind::gst, 16, {}};
        std::vector<warp_access> reads(per, warp_access{access_kind::sld, w_es, {}});
        for (int l = 0; l < 32; ++l) {
          const tile_pos p = rows_store_pos(es, 32 * w + l, j);  // p.r: first input row, p.c: output row
          if (c0 + p.c >= d.cols || r0 + p.r >= d.rows) continue;
          g.at[static_cast<std::size_t>(l)] = (base + (c0 + p.c) * d.rows + r0 + p.r) * es;
          for (std::uint32_t k = 0; k < per; ++k)
            reads[k].at[static_cast<std::size_t>(l)] = rows_offset(es, p.r + k, p.c);
        }
        for (const auto& r : reads) f(r);
        f(g);
      }
    }
    return;
  }
  if (v == variant_id::smem_vec) {
    const std::uint64_t r0 = tr * vec_tile, c0 = tc * vec_tile;
    const std::uint32_t per = vec_elems(es);
    for (int w = 0; w < vec_threads / 32; ++w) {
      for (int i = 0; i < vec_steps(es); ++i) {
        warp_access g{access_kind::gld, 16, {}}, s{access_kind::sst, 16, {}};
        for (int l = 0; l < 32; ++l) {
          const tile_pos p = vec_load_pos(es, 32 * w + l, i);
          if (r0 + p.r >= d.rows || c0 + p.c >= d.cols) continue;
          g.at[static_cast<std::size_t>(l)] = (base + (r0 + p.r) * d.cols + c0 + p.c) * es;
          s.at[static_cast<std::size_t>(l)] = vec_offset(es, p.r, p.c);
        }
        f(g);
        f(s);
      }
      for (int j = 0; j < vec_steps(es); ++j) {
        warp_access g{access_kind::gst, 16, {}};
        std::vector<warp_access> reads(per, warp_access{access_kind::sld, w_es, {}});
        for (int l = 0; l < 32; ++l) {
          const tile_pos p = vec_store_pos(es, 32 * w + l, j);  // p.r: first input row, p.c: output row
          if (c0 + p.c >= d.cols || r0 + p.r >= d.rows) continue;
          g.at[static_cast<std::size_t>(l)] = (base + (c0 + p.c) * d.rows + r0 + p.r) * es;
          for (std::uint32_t k = 0; k < per; ++k)
            reads[k].at[static_cast<std::size_t>(l)] = vec_offset(es, p.r + k, p.c);
        }
        for (const auto& r : reads) f(r);
        f(g);
      }
    }
    return;
  }
  const std::uint64_t r0 = tr * tile32, c0 = tc * tile32;
  for (std::uint32_t w = 0; w < threads32 / 32; ++w) {  // warp w is the thread row ty = w
    for (std::uint32_t j = 0; j < items32; ++j) {
      const std::uint32_t row = w + block_rows * j;  // the tile row this step loads, the tile column it stores
      warp_access gl{access_kind::gld, w_es, {}}, ss{access_kind::sst, w_es, {}};
      warp_access sl{access_kind::sld, w_es, {}}, gs{access_kind::gst, w_es, {}};
      for (std::uint32_t x = 0; x < 32; ++x) {       // lane x = tx
        if (r0 + row < d.rows && c0 + x < d.cols) {  // input (r0 + row, c0 + x)
          gl.at[x] = (base + (r0 + row) * d.cols + c0 + x) * es;
          ss.at[x] = smem32_offset(v, es, row, x);
          if (v == variant_id::naive) gs.at[x] = (base + (c0 + x) * d.rows + r0 + row) * es;
        }
        if (v != variant_id::naive && c0 + row < d.cols && r0 + x < d.rows) {  // output (c0 + row, r0 + x)
          sl.at[x] = smem32_offset(v, es, x, row);
          gs.at[x] = (base + (c0 + row) * d.rows + r0 + x) * es;
        }
      }
      f(gl);
      f(gs);
      if (v != variant_id::naive) {
        f(ss);
        f(sl);
      }
    }
  }
}

bool any_lane(const warp_access& a) {
  return std::any_of(a.at.begin(), a.at.end(), [](const auto& x) { return x.has_value(); });
}

std::uint64_t sectors(const warp_access& a) {
  std::vector<std::uint64_t> s;
  for (const auto& x : a.at) {
    if (!x) continue;
    for (std::uint64_t k = *x / sector_bytes; k <= (*x + static_cast<std::uint64_t>(a.width) - 1) / sector_bytes; ++k)
      s.push_back(k);
  }
  std::sort(s.begin(), s.end());
  return static_cast<std::uint64_t>(std::unique(s.begin(), s.end()) - s.begin());
}

std::uint64_t wavefronts(const warp_access& a) {
  warp_addresses lanes;
  int width = a.width;
  for (std::size_t l = 0; l < 32; ++l) {
    if (!a.at[l]) continue;
    auto off = static_cast<std::uint32_t>(*a.at[l]);
    if (a.width < bank_bytes) off -= off % bank_bytes;  // a sub-word access is served by its word
    lanes[l] = off;
  }
  if (width < bank_bytes) width = bank_bytes;
  return static_cast<std::uint64_t>(shared_request(lanes, width).wavefronts);
}

struct kinds {
  bool loads = false, stores = false, shared = false;  // which requests to cost
};

// What tile (tr, tc) of matrix b costs, for the kinds asked.
launch_cost tile_cost(variant_id v, std::size_t es, dims d, std::uint64_t b, std::uint64_t tr, std::uint64_t tc,
                      kinds k) {
  launch_cost c;
  for_each_request(v, es, d, b, tr, tc, [&](const warp_access& a) {
    if (!any_lane(a)) return;
    switch (a.kind) {
      case access_kind::gld:
        if (k.loads) c.gld += {1, sectors(a)};
        break;
      case access_kind::gst:
        if (k.stores) c.gst += {1, sectors(a)};
        break;
      case access_kind::sst:
        if (k.shared) c.sst += {1, wavefronts(a)};
        break;
      case access_kind::sld:
        if (k.shared) c.sld += {1, wavefronts(a)};
        break;
    }
  });
  return c;
}

request_cost times(request_cost c, std::uint64_t k) { return {c.requests * k, c.units * k}; }

void add(launch_cost& to, const launch_cost& c, std::uint64_t k) {
  to.gld += times(c.gld, k);
  to.gst += times(c.gst, k);
  to.sst += times(c.sst, k);
  to.sld += times(c.sld, k);
}

bool has_kernel(variant_id v) { return tile_edge(v, 4) > 0; }

}  // namespace

launch_cost model(variant_id v, std::size_t es, dims d) {
  launch_cost total;
  if (!has_kernel(v) || tiles_of(v, es, d) == 0) return total;
  const auto t = static_cast<std::uint64_t>(tile_edge(v, es));
  const std::uint64_t tiles_r = ceil_div(d.rows, t), tiles_c = ceil_div(d.cols, t);
  // Shared memory: one tile per edge class (cut or not along rows, along columns), times its count.
  for (int last_r = 0; last_r < 2; ++last_r) {
    for (int last_c = 0; last_c < 2; ++last_c) {
      const std::uint64_t nr = last_r ? 1 : tiles_r - 1, nc = last_c ? 1 : tiles_c - 1;
      if (nr == 0 || nc == 0) continue;
      add(total, tile_cost(v, es, d, 0, last_r ? tiles_r - 1 : 0, last_c ? tiles_c - 1 : 0, {false, false, true}),
          nr * nc * d.batch);
    }
  }
  // Global memory: matrices whose first byte has the same phase in a sector cost the same; there are
  // 32 / gcd(matrix bytes mod 32, 32) phases, repeating along the batch.
  const std::uint64_t phases = sector_bytes / std::gcd(d.rows * d.cols * es % sector_bytes, sector_bytes);
  for (std::uint64_t k = 0; k < std::min(phases, d.batch); ++k) {
    const std::uint64_t matrices = d.batch / phases + (k < d.batch % phases ? 1 : 0);
    for (std::uint64_t tr = 0; tr < tiles_r; ++tr) {  // loads: along each tile row
      if (tiles_c > 1) add(total, tile_cost(v, es, d, k, tr, 0, {true, false, false}), (tiles_c - 1) * matrices);
      add(total, tile_cost(v, es, d, k, tr, tiles_c - 1, {true, false, false}), matrices);
    }
    for (std::uint64_t tc = 0; tc < tiles_c; ++tc) {  // stores: down each tile column
      if (tiles_r > 1) add(total, tile_cost(v, es, d, k, 0, tc, {false, true, false}), (tiles_r - 1) * matrices);
      add(total, tile_cost(v, es, d, k, tiles_r - 1, tc, {false, true, false}), matrices);
    }
  }
  return total;
}

launch_cost brute_force(variant_id v, std::size_t es, dims d) {
  launch_cost total;
  if (!has_kernel(v) || tiles_of(v, es, d) == 0) return total;
  const auto t = static_cast<std::uint64_t>(tile_edge(v, es));
  for (std::uint64_t b = 0; b < d.batch; ++b)
    for (std::uint64_t tr = 0; tr < ceil_div(d.rows, t); ++tr)
      for (std::uint64_t tc = 0; tc < ceil_div(d.cols, t); ++tc)
        add(total, tile_cost(v, es, d, b, tr, tc, {true, true, true}), 1);
  return total;
}

}  // namespace memlab::labs::transpose
