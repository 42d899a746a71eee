// The transpose lab's host-side model: launch policies, shape rules, and what every warp request of a
// launch costs (32-byte sectors of global memory, bank wavefronts of shared memory). Host-only; held
// to a brute-force replay of every tile in tests/labs/transpose/test_transpose_plan.cpp.
//
// One tile's warp requests are replayed lane by lane from the functions the kernels use
// (transpose.hpp). A launch repeats few distinct tiles: shifting a tile by a whole tile along a row of
// `in` moves its load addresses by E x sizeof(T) bytes (whole sectors: 64 at the least) and leaves its
// shared-memory addresses alone, so all tiles of one tile row cost the same loads except the last one
// (which may be cut); likewise every tile of one tile column costs the same stores. model() replays
// two tiles per tile row for the loads, two per tile column for the stores, four (one per edge class)
// for shared memory, and the batch in at most 32 classes of matrices whose start has the same phase
// in a sector.
#include <cuda/cmath>

#include <algorithm>
#include <numeric>
#include <vector>

#include "harness/bank_model.hpp"
#include "labs/transpose/transpose.hpp"

namespace memlab::labs::transpose {

std::uint64_t tiles_of(const tile_traits& t, std::size_t es, dims d) {
  const std::uint64_t e = tile_edge(t, es);
  if (e == 0 || d.rows == 0 || d.cols == 0) return 0;
  return d.batch * cuda::ceil_div(d.rows, e) * cuda::ceil_div(d.cols, e);
}

launch_policy plan(const tile_traits& t, std::size_t es, dims d) {
  if (!has_tiles(t)) return {};
  const int width = t.vec_bytes == 0 ? static_cast<int>(es) : t.vec_bytes;
  return {.threads = t.threads, .items_per_thread = tile_steps(t, es), .vec_bytes = width, .grid = tiles_of(t, es, d)};
}

std::optional<std::string> shape_rule(std::string_view name, const tile_traits& t, std::size_t es, dims d) {
  if (t.vec_bytes == 0) return std::nullopt;
  const std::uint64_t per = access_elems(t, es);
  if (d.rows % per != 0 || d.cols % per != 0) {
    return std::string(name) + " moves " + std::to_string(t.vec_bytes) +
           "-byte vectors along the rows of in and of out, so every row of both must start " +
           std::to_string(t.vec_bytes) + "-byte aligned: rows and cols multiples of " + std::to_string(per) + " (got " +
           std::to_string(d.rows) + " x " + std::to_string(d.cols) + ")";
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

// Calls f(access) for every warp request of tile (tr, tc) of matrix b, in no particular order: the
// steps of the tile's kernel (transpose.cu), lane by lane, from the functions it uses.
template <class F>
void for_each_request(const tile_traits& t, std::size_t es, dims d, std::uint64_t b, std::uint64_t tr, std::uint64_t tc,
                      F&& f) {
  const std::uint64_t base = b * d.rows * d.cols;  // first element of matrix b, in `in` and in `out`
  const std::uint64_t edge = tile_edge(t, es), r0 = tr * edge, c0 = tc * edge;
  const int width = t.vec_bytes == 0 ? static_cast<int>(es) : t.vec_bytes, steps = tile_steps(t, es);
  const auto at_in = [&](std::uint64_t r, std::uint64_t c) { return (base + r * d.cols + c) * es; };
  const auto at_out = [&](std::uint64_t c, std::uint64_t r) { return (base + c * d.rows + r) * es; };
  const auto lane = [](int l) { return static_cast<std::size_t>(l); };
  for (int w = 0; w < t.threads / 32; ++w) {
    if (t.vec_bytes == 0) {
      // A thread per element: thread tid loads column x = tid % E of tile row tid / E + block_rows j;
      // through shared memory it stores output row tid / E + block_rows j (a tile column), column x;
      // without, what it loaded, down column x of the output.
      const auto e = static_cast<std::uint32_t>(edge);
      for (int j = 0; j < steps; ++j) {
        warp_access gl{access_kind::gld, width, {}}, ss{access_kind::sst, width, {}};
        warp_access sl{access_kind::sld, width, {}}, gs{access_kind::gst, width, {}};
        for (int l = 0; l < 32; ++l) {
          const auto tid = static_cast<std::uint32_t>(32 * w + l), x = tid % e;
          const std::uint32_t row = tid / e + static_cast<std::uint32_t>(block_rows(t, es) * j);
          if (r0 + row < d.rows && c0 + x < d.cols) {  // input (r0 + row, c0 + x)
            gl.at[lane(l)] = at_in(r0 + row, c0 + x);
            ss.at[lane(l)] = smem_offset(t, es, row, x);
            if (t.layout == smem_layout::none) gs.at[lane(l)] = at_out(c0 + x, r0 + row);  // what it loaded
          }
          if (t.layout != smem_layout::none && c0 + row < d.cols && r0 + x < d.rows) {  // output (c0 + row, r0 + x)
            sl.at[lane(l)] = smem_offset(t, es, x, row);
            gs.at[lane(l)] = at_out(c0 + row, r0 + x);
          }
        }
        f(gl);
        f(gs);
        if (t.layout != smem_layout::none) {
          f(ss);
          f(sl);
        }
      }
      continue;
    }
    // 16-byte vectors: V elements per access.
    const std::uint32_t per = access_elems(t, es);
    for (int i = 0; i < steps; ++i) {
      warp_access g{access_kind::gld, width, {}}, s{access_kind::sst, width, {}};
      for (int l = 0; l < 32; ++l) {
        const tile_pos p = vector_load_pos(t, es, 32 * w + l, i);
        if (r0 + p.r >= d.rows || c0 + p.c >= d.cols) continue;
        g.at[lane(l)] = at_in(r0 + p.r, c0 + p.c);
        s.at[lane(l)] = vector_slot(t, es, p.r, p.c).offset;
      }
      f(g);
      f(s);
    }
    for (int j = 0; j < steps; ++j) {
      warp_access g{access_kind::gst, width, {}};
      std::vector<warp_access> reads(per, warp_access{access_kind::sld, static_cast<int>(es), {}});
      for (int l = 0; l < 32; ++l) {
        const tile_pos p = vector_store_pos(t, es, 32 * w + l, j);  // p.r: first input row, p.c: output row
        if (c0 + p.c >= d.cols || r0 + p.r >= d.rows) continue;
        g.at[lane(l)] = at_out(c0 + p.c, r0 + p.r);
        for (std::uint32_t k = 0; k < per; ++k) reads[k].at[lane(l)] = smem_offset(t, es, p.r + k, p.c);
      }
      for (const auto& r : reads) f(r);
      f(g);
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
launch_cost tile_cost(const tile_traits& t, std::size_t es, dims d, std::uint64_t b, std::uint64_t tr, std::uint64_t tc,
                      kinds k) {
  launch_cost c;
  for_each_request(t, es, d, b, tr, tc, [&](const warp_access& a) {
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

}  // namespace

launch_cost model(const tile_traits& t, std::size_t es, dims d) {
  launch_cost total;
  if (tiles_of(t, es, d) == 0) return total;
  const std::uint64_t e = tile_edge(t, es), tiles_r = cuda::ceil_div(d.rows, e), tiles_c = cuda::ceil_div(d.cols, e);
  // Shared memory: one tile per edge class (cut or not along rows, along columns), times its count.
  for (int last_r = 0; last_r < 2; ++last_r) {
    for (int last_c = 0; last_c < 2; ++last_c) {
      const std::uint64_t nr = last_r ? 1 : tiles_r - 1, nc = last_c ? 1 : tiles_c - 1;
      if (nr == 0 || nc == 0) continue;
      add(total, tile_cost(t, es, d, 0, last_r ? tiles_r - 1 : 0, last_c ? tiles_c - 1 : 0, {false, false, true}),
          nr * nc * d.batch);
    }
  }
  // Global memory: matrices whose first byte has the same phase in a sector cost the same; there are
  // 32 / gcd(matrix bytes mod 32, 32) phases, repeating along the batch.
  const std::uint64_t phases = sector_bytes / std::gcd(d.rows * d.cols * es % sector_bytes, sector_bytes);
  for (std::uint64_t k = 0; k < std::min(phases, d.batch); ++k) {
    const std::uint64_t matrices = d.batch / phases + (k < d.batch % phases ? 1 : 0);
    for (std::uint64_t tr = 0; tr < tiles_r; ++tr) {  // loads: along each tile row
      if (tiles_c > 1) add(total, tile_cost(t, es, d, k, tr, 0, {true, false, false}), (tiles_c - 1) * matrices);
      add(total, tile_cost(t, es, d, k, tr, tiles_c - 1, {true, false, false}), matrices);
    }
    for (std::uint64_t tc = 0; tc < tiles_c; ++tc) {  // stores: down each tile column
      if (tiles_r > 1) add(total, tile_cost(t, es, d, k, 0, tc, {false, true, false}), (tiles_r - 1) * matrices);
      add(total, tile_cost(t, es, d, k, tiles_r - 1, tc, {false, true, false}), matrices);
    }
  }
  return total;
}

launch_cost brute_force(const tile_traits& t, std::size_t es, dims d) {
  launch_cost total;
  if (tiles_of(t, es, d) == 0) return total;
  const std::uint64_t e = tile_edge(t, es);
  for (std::uint64_t b = 0; b < d.batch; ++b)
    for (std::uint64_t tr = 0; tr < cuda::ceil_div(d.rows, e); ++tr)
      for (std::uint64_t tc = 0; tc < cuda::ceil_div(d.cols, e); ++tc)
        add(total, tile_cost(t, es, d, b, tr, tc, {true, true, true}), 1);
  return total;
}

}  // namespace memlab::labs::transpose
