// memlab::transpose's kernels run on the host, unchanged, through the block emulation of
// tests/library/emulation (each thread a fiber, shuffles and __syncthreads as barriers, 16-byte global
// accesses checked for alignment and for the buffer they may touch): byte-exact against a reference, the
// bytes around the output untouched, for every element size and path, misaligned pointers, cut tiles,
// batches, and a grid smaller than the tiles. The GPU tests check the same on the device; these run in CI,
// where there is none. Slow per block: small shapes.
#include "emulation/cuda_emulation.hpp"  // first: replaces the PTX wrappers and the CUDA built-ins
// (the include path puts tests/library/emulation before include/, so memlab/arch/ resolves to the emulation)

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "memlab/transpose.cuh"

namespace memlab::detail {
alignas(128) unsigned char tile[64 * 1024];  // the kernels' extern __shared__ tile, one block at a time
}  // namespace memlab::detail

namespace memlab {
namespace {

// The plan's geometry (memlab/detail/transpose_geometry.hpp): what these tests replay.
using namespace memlab::detail;

constexpr copy_device h100{132, 2048, 9};

template <int Es, bool In, bool Out>
void run_tiles(const transpose_plan& p, const detail::transpose_args& a) {
  emu::launch(static_cast<unsigned>(p.grid), static_cast<unsigned>(p.threads),
              [&] { detail::transpose_tile_kernel<Es, In, Out>(a); });
}

// The few kernels' instantiations that ran (few_cols, few_rows, small_matrices x fixed / general): the emulated
// tests hold both of few_rows' and small_matrices' to every layout they can run.
std::map<std::string, int> few_instantiations;

// The few kernel launch_transpose picks for the plan (launch_few_of: the fixed layout's instantiation where the
// swizzle moves whole chunks, else the general one); `general`: the general one whatever the swizzle (few_rows and
// small_matrices; it runs every layout).
template <int U>
void run_few(const transpose_plan& p, const detail::few_args& a, bool general) {
  const auto grid = static_cast<unsigned>(p.grid), threads = static_cast<unsigned>(p.threads);
  const bool fixed = !general && transpose_few_whole_chunks(p.smem_swizzle, p.smem_swizzle_shift);
  ++few_instantiations[std::string(to_string(p.path)) + (fixed ? " fixed" : " general")];
  using P = transpose_path;
  if constexpr (U == 1) {
    if (transpose_few_has_blocks(p)) {  // launch_few: the blocks' kernel
      ++few_instantiations[std::string(to_string(p.path)) + " blocks"];
      if (p.path == P::few_rows) {
        if (fixed) return emu::launch(grid, threads, [&] { detail::transpose_few_blocks_kernel<P::few_rows, true>(a); });
        return emu::launch(grid, threads, [&] { detail::transpose_few_blocks_kernel<P::few_rows, false>(a); });
      }
      if (fixed) {
        return emu::launch(grid, threads, [&] { detail::transpose_few_blocks_kernel<P::small_matrices, true>(a); });
      }
      return emu::launch(grid, threads, [&] { detail::transpose_few_blocks_kernel<P::small_matrices, false>(a); });
    }
  }
  switch (p.path) {
    case P::few_cols:
      if (!fixed) FAIL() << "few_cols has the fixed layout's kernel only";
      return emu::launch(grid, threads, [&] { detail::transpose_few_kernel<U, P::few_cols, true>(a); });
    case P::few_rows:
      if (fixed) return emu::launch(grid, threads, [&] { detail::transpose_few_kernel<U, P::few_rows, true>(a); });
      return emu::launch(grid, threads, [&] { detail::transpose_few_kernel<U, P::few_rows, false>(a); });
    case P::small_matrices:
      if (fixed) {
        return emu::launch(grid, threads, [&] { detail::transpose_few_kernel<U, P::small_matrices, true>(a); });
      }
      return emu::launch(grid, threads, [&] { detail::transpose_few_kernel<U, P::small_matrices, false>(a); });
    default: FAIL() << "not a few path";
  }
}

template <int Es>
void run_path(const transpose_plan& p, const detail::transpose_args& a) {
  switch (p.path) {
    case transpose_path::elem8:
      return emu::launch(static_cast<unsigned>(p.grid), static_cast<unsigned>(p.threads),
                         [&] { detail::transpose_elem8_kernel<8>(a); });
    case transpose_path::aligned: return run_tiles<Es, false, false>(p, a);
    case transpose_path::realign_in: return run_tiles<Es, true, false>(p, a);
    case transpose_path::realign_out: return run_tiles<Es, false, true>(p, a);
    case transpose_path::realign_both: return run_tiles<Es, true, true>(p, a);
    default: FAIL() << "not a tiled path";
  }
}

// Transposes batch x rows x cols elements of es bytes from src + so to dst + doff (offsets into 16-byte
// aligned buffers) with the kernels the plan picks, emulated; returns "" or what went wrong.
// `adjust` may change the plan before it runs (a few plan's layout: any transpose_few_layout_of could pick);
// `general`: a few plan runs the general instantiation of its kernel, whatever its layout (run_few).
std::string check(unsigned es, std::uint64_t batch, std::uint64_t rows, std::uint64_t cols, unsigned so, unsigned doff,
                  std::uint64_t max_grid = 0, transpose_path* path = nullptr,
                  const std::function<void(transpose_plan&)>& adjust = {}, bool general = false) {
  const std::uint64_t bytes = batch * rows * cols * es, guard = 48;
  std::vector<unsigned char> src_buf(bytes + 64), dst_buf(bytes + 64 + guard);
  auto* src_base = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(src_buf.data()) + 15) / 16 * 16);
  auto* dst_base = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(dst_buf.data()) + 15) / 16 * 16);
  std::mt19937 rng(static_cast<unsigned>(bytes * 31 + so * 7 + doff));
  for (auto& b : src_buf) b = static_cast<unsigned char>(1 + rng() % 255);  // never the poison
  unsigned char* src = src_base + so;
  unsigned char* dst = dst_base + doff;
  const auto s = reinterpret_cast<std::uintptr_t>(src), d = reinterpret_cast<std::uintptr_t>(dst);
  transpose_plan p = plan_transpose(d, s, batch, rows, cols, es, h100);
  if (path != nullptr) *path = p.path;
  if (!is_tiled(p.path) && !is_few(p.path)) return "not a tiled or few path: " + std::string(to_string(p.path));
  if (max_grid != 0 && p.grid > max_grid) p.grid = max_grid;
  if (adjust) adjust(p);
  emu::error.clear();
  emu::load_lo = s;
  emu::load_hi = s + bytes;
  emu::store_lo = d;
  emu::store_hi = d + bytes;
  std::memset(detail::tile, 0xab, sizeof detail::tile);  // stale data a gather must never store
  if (is_few(p.path)) {
    if (!detail::few_plan_fits(p, d, s)) return "the plan does not fit its own pointers";
    const std::uint32_t staging =
        transpose_few_has_blocks(p) ? transpose_few_block_staging(p.path, p.rows, p.cols) : 0u;
    if (p.smem_bytes + staging > sizeof detail::tile) return "the image does not fit the emulated shared memory";
    const detail::few_args a = detail::few_args_of(p, dst, src);
    switch (p.unit_bytes) {
      case 1: run_few<1>(p, a, general); break;
      case 2: run_few<2>(p, a, general); break;
      case 4: run_few<4>(p, a, general); break;
      default: run_few<8>(p, a, general); break;
    }
  } else {
    const detail::transpose_args a{reinterpret_cast<std::byte*>(dst),
                                   reinterpret_cast<const std::byte*>(src),
                                   p.rows,
                                   p.cols,
                                   p.tiles_r,
                                   p.tiles_c,
                                   p.tiles,
                                   bytes};
    switch (es) {
      case 1: run_path<1>(p, a); break;
      case 2: run_path<2>(p, a); break;
      case 4: run_path<4>(p, a); break;
      default: run_path<8>(p, a); break;
    }
  }
  if (!emu::error.empty()) return emu::error;
  for (std::size_t j = 0; j < dst_buf.size(); ++j) {
    const auto at = static_cast<std::int64_t>(dst_buf.data() + j - dst);
    unsigned char want = 0;
    if (at >= 0 && static_cast<std::uint64_t>(at) < bytes) {
      const std::uint64_t e = static_cast<std::uint64_t>(at) / es, per = rows * cols, m = e / per, k = e % per;
      want = src[(m * per + (k % rows) * cols + k / rows) * es + static_cast<std::uint64_t>(at) % es];
    }
    if (dst_buf[j] != want) {
      return "dst" + std::string(at < 0 ? "" : "+") + std::to_string(at) + " is " + std::to_string(dst_buf[j]) +
             ", expected " + std::to_string(want) +
             (at < 0 || static_cast<std::uint64_t>(at) >= bytes ? " (outside)" : "");
    }
  }
  return "";
}

std::string name(unsigned es, std::uint64_t b, std::uint64_t r, std::uint64_t c, unsigned so, unsigned doff) {
  return std::to_string(es) + "-byte " + std::to_string(b) + " x " + std::to_string(r) + " x " + std::to_string(c) +
         " src+" + std::to_string(so) + " dst+" + std::to_string(doff);
}

// Every path of every element size, one and several tiles, rows cut, pointers off by less than an element,
// by a whole one and by more. (Sides of more than two tiles: at most two, a realigned side is a wide few side.)
TEST(transpose_emulated, every_element_size_and_path) {
  int paths[16] = {};
  for (const unsigned es : {1u, 2u, 4u, 8u}) {
    const std::uint64_t e = 256 / es;  // a tile's rows
    for (const auto& [rows, cols] :
         {std::pair<std::uint64_t, std::uint64_t>{e, e}, {2 * e + 3, e}, {5, 7}, {e / 2, 2 * e + 5}}) {
      for (const auto& [so, doff] :
           {std::pair<unsigned, unsigned>{0, 0}, {1, 0}, {0, 3}, {8, 2}, {es, 16 - es}, {15, 9}}) {
        transpose_path path{};
        ASSERT_EQ(check(es, 1, rows, cols, so, doff, 0, &path), "")
            << name(es, 1, rows, cols, so, doff) << " (" << to_string(path) << ")";
        ++paths[static_cast<int>(path)];
      }
    }
  }
  for (const auto p : {transpose_path::aligned, transpose_path::realign_in, transpose_path::realign_out,
                       transpose_path::realign_both, transpose_path::elem8}) {
    EXPECT_GT(paths[static_cast<int>(p)], 0) << to_string(p);
  }
}

// The acceptance shapes' alignment classes, scaled down: rows and cols x elem_size modulo 16 as at
// 12289 x 3001 f32, 8191 x 8193 f16, 16411 x 8191 u8, 8193 x 4099 f64; tiles cut at both edges.
TEST(transpose_emulated, acceptance_alignment_classes) {
  const struct {
    unsigned es;
    std::uint64_t rows, cols;
  } cases[] = {{4, 65, 61}, {4, 129, 121}, {2, 135, 121}, {1, 267, 255}, {8, 33, 35}};
  for (const auto& c : cases) {
    for (const auto& [so, doff] : {std::pair<unsigned, unsigned>{0, 0}, {2, 1}}) {
      ASSERT_EQ(check(c.es, 1, c.rows, c.cols, so, doff), "") << name(c.es, 1, c.rows, c.cols, so, doff);
    }
  }
}

// Batches (each matrix's tiles after the previous one's), and a grid capped below the tile count: each
// block then moves several tiles in turn.
TEST(transpose_emulated, batches_and_a_capped_grid) {
  for (const unsigned es : {1u, 4u, 8u}) {
    for (const auto& [so, doff] : {std::pair<unsigned, unsigned>{0, 0}, {3, 5}}) {
      ASSERT_EQ(check(es, 3, 9, 13, so, doff), "") << name(es, 3, 9, 13, so, doff);
      ASSERT_EQ(check(es, 2, 70, 33, so, doff, 2), "") << name(es, 2, 70, 33, so, doff) << ", grid 2";
    }
  }
  ASSERT_EQ(check(2, 2, 130, 3, 1, 1, 1), "") << "grid 1";
}

// The few paths (few_cols, few_rows, small_matrices): one short side of 2, 3, 7 or 64 elements against the
// edge sizes on the other, both ways round, every element size; src and dst 16-byte aligned, misaligned by
// whole elements, and misaligned by bytes (units smaller than the element).
TEST(transpose_emulated, few_paths_edge_sizes_every_element_size) {
  std::map<transpose_path, int> paths;
  std::map<unsigned, int> units;
  for (const unsigned es : {1u, 2u, 4u, 8u}) {
    for (const std::uint64_t shorter : {2u, 3u, 7u, 64u}) {
      for (const std::uint64_t longer : {15u, 16u, 17u, 127u, 128u, 129u, 4095u, 4096u, 4097u, 40009u}) {
        if (shorter * longer * es > 200000) continue;  // the emulation runs a block at a time
        for (const bool tall : {true, false}) {
          const std::uint64_t rows = tall ? longer : shorter, cols = tall ? shorter : longer;
          for (const auto& [so, doff] : {std::pair<unsigned, unsigned>{0, 0}, {es % 16, 3 * es % 16}, {1, 7}}) {
            transpose_path path{};
            ASSERT_EQ(check(es, 1, rows, cols, so, doff, 0, &path), "")
                << name(es, 1, rows, cols, so, doff) << " (" << to_string(path) << ")";
            ++paths[path];
            if (is_few(path)) {
              ++units[static_cast<unsigned>(
                  plan_transpose(std::uintptr_t{1} << 40 | doff, std::uintptr_t{1} << 41 | so, 1, rows, cols, es, h100)
                      .unit_bytes)];
            }
          }
        }
      }
    }
  }
  EXPECT_GT(paths[transpose_path::few_cols], 20);
  EXPECT_GT(paths[transpose_path::few_rows], 20);
  EXPECT_GT(paths[transpose_path::small_matrices], 20);
  for (const unsigned u : {1u, 2u, 4u, 8u}) EXPECT_GT(units[u], 0) << "no case ran with " << u << "-byte units";
}

// Batches: of small matrices (each CTA transposes many, whole), and of skinny ones (tiles inside each
// matrix); the batch's edge sizes; a grid capped below the tiles (each CTA loops over several).
TEST(transpose_emulated, few_paths_batches_and_a_capped_grid) {
  std::map<transpose_path, int> paths;
  for (const unsigned es : {1u, 2u, 4u, 8u}) {
    for (const auto& [rows, cols] : {std::pair<std::uint64_t, std::uint64_t>{3, 3},
                                     {4, 4},
                                     {8, 8},
                                     {16, 16},
                                     {5, 7},
                                     {2, 33},
                                     {64, 100},
                                     {1000, 3},
                                     {3, 1000}}) {
      for (const std::uint64_t batch : {1u, 15u, 16u, 17u, 129u, 1000u}) {
        if (batch * rows * cols * es > 300000) continue;
        for (const auto& [so, doff] : {std::pair<unsigned, unsigned>{0, 0}, {es % 16, 3 * es % 16}, {1, 7}}) {
          transpose_path path{};
          ASSERT_EQ(check(es, batch, rows, cols, so, doff, 0, &path), "")
              << name(es, batch, rows, cols, so, doff) << " (" << to_string(path) << ")";
          ++paths[path];
          if (batch == 129) {
            ASSERT_EQ(check(es, batch, rows, cols, so, doff, 2), "")
                << name(es, batch, rows, cols, so, doff) << ", grid 2";
          }
        }
      }
    }
  }
  EXPECT_GT(paths[transpose_path::small_matrices], 50);
  EXPECT_GT(paths[transpose_path::few_cols] + paths[transpose_path::few_rows], 10);
}

// Wide sides (transpose_few_wide: a side of 65..480 bytes that the tiled path would realign, at most two of its
// tiles): the heat map's weakest cells scaled to a few matrices, byte-exact, aligned and misaligned pointers, a
// capped grid.
TEST(transpose_emulated, few_paths_wide_sides) {
  std::map<transpose_path, int> paths;
  const struct {
    unsigned es;
    std::uint64_t batch, rows, cols;
  } cases[] = {{1, 3, 67, 251}, {1, 2, 131, 64}, {1, 2, 257, 33}, {1, 1, 448, 97}, {1, 1, 509, 67},
               {1, 1, 2000, 251}, {1, 2, 521, 257}, {1, 1, 509, 257}, {1, 1, 600, 128}, {2, 3, 67, 127},
               {2, 2, 131, 131}, {2, 1, 300, 251}, {4, 2, 67, 67}, {4, 1, 97, 300}};
  // 521 x 257 u8: few_cols with a halo as large as its tile (both sides realign); 509 rows of u8: few_rows, wider than
  // two tiles; 600 x 128 u8: few_cols, the columns half a tile of the realigning stores; 300 x 251 f16: few_cols, 502
  // bytes of columns.
  for (const auto& c : cases) {
    for (const auto& [so, doff] : {std::pair<unsigned, unsigned>{0, 0}, {c.es % 16, 3 * c.es % 16}, {1, 7}}) {
      transpose_path path{};
      ASSERT_EQ(check(c.es, c.batch, c.rows, c.cols, so, doff, 0, &path), "")
          << name(c.es, c.batch, c.rows, c.cols, so, doff) << " (" << to_string(path) << ")";
      ++paths[path];
    }
    ASSERT_EQ(check(c.es, c.batch, c.rows, c.cols, 0, 0, 1), "") << name(c.es, c.batch, c.rows, c.cols, 0, 0) << ", grid 1";
  }
  EXPECT_GT(paths[transpose_path::few_rows], 10);
  EXPECT_GT(paths[transpose_path::few_cols], 2);
  const transpose_plan wide = plan_transpose((1u << 20) + 7, 2u << 20, 2, 521, 257, 1, h100);
  EXPECT_EQ(wide.path, transpose_path::few_cols);
  EXPECT_EQ(wide.halo_rows, wide.tile_rows) << "521 x 257 u8: a halo of the tile's 32 rows again";
  EXPECT_EQ(plan_transpose(1u << 20, 2u << 20, 1, 509, 257, 1, h100).path, transpose_path::few_rows);
  EXPECT_EQ(plan_transpose(1u << 20, 2u << 20, 1, 600, 128, 1, h100).path, transpose_path::few_cols);
  EXPECT_EQ(plan_transpose(1u << 20, 2u << 20, 1, 300, 251, 2, h100).path, transpose_path::few_cols);
}

// Candidate layout i of transpose_few_swizzle_at and, for few_rows, the pitch T + 16 k (T: the least, as
// transpose_few_geometry_of gives it), onto a few plan: a layout transpose_few_layout_of may pick, forced.
transpose_few_layout force_few_layout(transpose_plan& p, int i, unsigned k) {
  const transpose_few_layout l = transpose_few_swizzle_at(i, static_cast<unsigned>(p.unit_bytes));
  p.smem_swizzle = l.swizzle;
  p.smem_swizzle_shift = l.swizzle_shift;
  if (p.path == transpose_path::few_rows) {
    const auto least = static_cast<std::uint32_t>(16 * p.run_chunks + 16 + p.cols * static_cast<std::uint64_t>(p.elem_size) % 16);
    p.run_pitch = least + 16 * k;
    p.smem_bytes = transpose_few_rows_smem(p.rows, p.run_pitch);
  }
  return l;
}

// Every shared-memory layout transpose_few_layout_of may pick (docs/notes/transpose_skinny.md section 6), forced
// on shapes small enough to emulate (the search itself runs from 4 MiB): each swizzle (none, the slot XOR, the
// word XORs, whose chunks are word-permuted before their STS.128) and, for few_rows, every pitch T + 16 k; every
// element size and unit, cut tiles, batches, run ends in partial chunks, few_rows matrices of up to 1.5 tiles in
// one (5 x 4093 u8, 7 x 1500 f16). Byte-exact. Each layout through the kernel launch_transpose picks for it (the
// fixed layout's instantiation for none and the slot XOR, the general one for the word XORs), and the fixed layout's
// swizzles also through the general instantiation (which runs every layout).
TEST(transpose_emulated, few_paths_every_layout) {
  std::map<std::string, int> layouts;
  few_instantiations.clear();
  const struct {
    unsigned es;
    std::uint64_t batch, rows, cols;
  } cases[] = {{1, 1, 3, 4097}, {1, 2, 15, 300}, {1, 3, 257, 33}, {1, 40, 17, 37}, {1, 300, 3, 3}, {1, 100, 4, 4},
               {2, 1, 5, 2000}, {2, 7, 25, 41},  {2, 60, 7, 9},   {4, 1, 7, 1001}, {4, 33, 9, 5},  {8, 1, 3, 700},
               {8, 21, 5, 6},   {1, 2, 97, 128}, {2, 1, 64, 129}, {1, 1, 5, 4093}, {2, 2, 7, 1500}};
  for (const auto& c : cases) {
    for (const auto& [so, doff] : {std::pair<unsigned, unsigned>{0, 0}, {c.es % 16, 3 * c.es % 16}, {1, 7}}) {
      const transpose_plan base_plan = plan_transpose(std::uintptr_t{1} << 40 | doff, std::uintptr_t{1} << 41 | so,
                                                      c.batch, c.rows, c.cols, c.es, h100);
      if (base_plan.path != transpose_path::few_rows && base_plan.path != transpose_path::small_matrices) continue;
      const int pitches = base_plan.path == transpose_path::few_rows ? 8 : 1;
      for (int i = 0; i < transpose_few_swizzles; ++i) {
        for (int k = 0; k < pitches; k += (i == 2 ? 1 : 3)) {  // every pitch under one swizzle, some under the rest
          const transpose_few_layout l = transpose_few_swizzle_at(i, static_cast<unsigned>(base_plan.unit_bytes));
          const auto adjust = [&](transpose_plan& p) { force_few_layout(p, i, static_cast<unsigned>(k)); };
          transpose_path path{};
          for (const bool general : {false, true}) {
            if (general && !transpose_few_whole_chunks(l.swizzle, l.swizzle_shift)) continue;  // the same run again
            ASSERT_EQ(check(c.es, c.batch, c.rows, c.cols, so, doff, 0, &path, adjust, general), "")
                << name(c.es, c.batch, c.rows, c.cols, so, doff) << " (" << to_string(path) << "), swizzle "
                << l.swizzle << " >> " << l.swizzle_shift << ", pitch + " << 16 * k
                << (general ? ", the general kernel" : "");
          }
          ++layouts[std::to_string(l.swizzle) + ">>" + std::to_string(l.swizzle_shift) + " " + to_string(path)];
        }
      }
    }
  }
  for (const char* l : {"0>>0", "112>>3", "124>>5", "124>>6", "124>>7", "124>>8", "120>>5"}) {
    EXPECT_GT(layouts[std::string(l) + " few_rows"] + layouts[std::string(l) + " small_matrices"], 0) << l;
  }
  EXPECT_GT(layouts["124>>5 small_matrices"], 0);
  for (const char* k : {"few_rows fixed", "few_rows general", "small_matrices fixed", "small_matrices general"}) {
    EXPECT_GT(few_instantiations[k], 0) << k;
  }
}

// 1-byte elements, few_rows of 2..8 rows and batches of 3 x 3 and 4 x 4 (docs/notes/transpose_skinny.md section 7):
// the tile's output in blocks whose byte permutation is compiled in (store_few_block), the chunks around them one
// by one. Byte-exact for every row count (and 9, which has no block), one and several tiles a matrix, two
// matrices, every pointer offset class (a block may start at any chunk: odd R reaches every phase, even R only
// some), batches of every size class, under every layout and some pitches, both kernels. The blocks ran: their
// PRMTs are counted (the element-by-element gather has none).
TEST(transpose_emulated, u8_blocks_every_row_count_and_layout) {
  std::map<std::string, std::uint64_t> prmts;
  const auto run = [&](std::uint64_t batch, std::uint64_t rows, std::uint64_t cols, const std::string& key) {
    for (const auto& [so, doff] : {std::pair<unsigned, unsigned>{0, 0}, {1, 7}, {0, 3}, {5, 0}, {15, 9}, {4, 8}}) {
      const transpose_plan base_plan = plan_transpose(std::uintptr_t{1} << 40 | doff, std::uintptr_t{1} << 41 | so,
                                                      batch, rows, cols, 1, h100);
      ASSERT_TRUE(base_plan.path == transpose_path::few_rows || base_plan.path == transpose_path::small_matrices)
          << name(1, batch, rows, cols, so, doff) << ": " << to_string(base_plan.path);
      for (int i = 0; i < transpose_few_swizzles; ++i) {
        const transpose_few_layout l = transpose_few_swizzle_at(i, 1);
        const int k = i % 3;  // a pitch T + 16 k for few_rows
        const auto adjust = [&](transpose_plan& p) { force_few_layout(p, i, static_cast<unsigned>(k)); };
        for (const bool general : {false, true}) {
          if (general && !transpose_few_whole_chunks(l.swizzle, l.swizzle_shift)) continue;
          const std::uint64_t before = emu::byte_perms;
          ASSERT_EQ(check(1, batch, rows, cols, so, doff, 0, nullptr, adjust, general), "")
              << name(1, batch, rows, cols, so, doff) << ", swizzle " << l.swizzle << " >> " << l.swizzle_shift
              << (general ? ", the general kernel" : "");
          prmts[key] += emu::byte_perms - before;
        }
      }
    }
  };
  for (std::uint64_t rows = 2; rows <= 9; ++rows) {
    for (const std::uint64_t cols : {4099u, 9001u}) run(1, rows, cols, "rows " + std::to_string(rows));
    run(2, rows, 4111, "rows " + std::to_string(rows));
  }
  for (const std::uint64_t side : {3u, 4u}) {
    for (const std::uint64_t batch : {1u, 15u, 16u, 17u, 1000u, 4001u}) run(batch, side, side, "small " + std::to_string(side));
  }
  for (std::uint64_t rows = 2; rows <= 8; ++rows) EXPECT_GT(prmts["rows " + std::to_string(rows)], 0u) << rows << " rows";
  EXPECT_EQ(prmts["rows 9"], 0u) << "9 rows has no block";
  EXPECT_GT(prmts["small 3"], 0u);
  EXPECT_GT(prmts["small 4"], 0u);
}

// few_cols under both of its kernel's swizzles (none, the slot XOR), whichever the plan would pick: the layout search
// (from 4 MiB, not reached by shapes this small) may now give an odd number of columns the slot XOR and an even one
// none (docs/notes/transpose_skinny.md section 8). Runs of 32 k - 1 elements (each one phase on), others, every
// element size, aligned and misaligned pointers. Byte-exact.
TEST(transpose_emulated, few_cols_both_swizzles) {
  const struct {
    unsigned es;
    std::uint64_t batch, rows, cols;
  } cases[] = {{1, 2, 1023, 127}, {1, 1, 2047, 63}, {1, 2, 2111, 10}, {2, 1, 1023, 11}, {4, 2, 2047, 5}, {8, 1, 415, 3}};
  int ran = 0;
  for (const auto& c : cases) {
    for (const auto& [so, doff] : {std::pair<unsigned, unsigned>{0, 0}, {c.es % 16, 3 * c.es % 16}, {1, 7}}) {
      for (const std::uint32_t mask : {0u, 0x70u}) {
        transpose_path path{};
        const auto adjust = [&](transpose_plan& p) {
          if (p.path != transpose_path::few_cols) return;
          p.smem_swizzle = mask;
          p.smem_swizzle_shift = mask == 0 ? 0u : 3u;
        };
        ASSERT_EQ(check(c.es, c.batch, c.rows, c.cols, so, doff, 0, &path, adjust), "")
            << name(c.es, c.batch, c.rows, c.cols, so, doff) << " (" << to_string(path) << "), swizzle " << mask;
        ASSERT_EQ(path, transpose_path::few_cols) << name(c.es, c.batch, c.rows, c.cols, so, doff);
        ++ran;
      }
    }
  }
  EXPECT_EQ(ran, 36);
}

// Which instantiation a layout takes: the fixed layout's for none and the slot XOR (and every few_cols plan), the
// general one for the word XORs; a few_cols plan with a word XOR is refused (its kernel has the fixed layout only).
TEST(transpose_emulated, few_kernel_instantiation_per_layout) {
  for (int i = 0; i < transpose_few_swizzles; ++i) {
    for (const unsigned unit : {1u, 2u, 4u, 8u}) {
      const transpose_few_layout l = transpose_few_swizzle_at(i, unit);
      EXPECT_EQ(transpose_few_whole_chunks(l.swizzle, l.swizzle_shift), i < 2) << i << ", unit " << unit;
    }
  }
  const std::uintptr_t base = std::uintptr_t{1} << 40;
  for (const auto& [rows, cols] : {std::pair<std::uint64_t, std::uint64_t>{100000, 3}, {100000, 8}}) {
    transpose_plan p = plan_transpose(base, 2 * base, 1, rows, cols, 1, h100);
    ASSERT_EQ(p.path, transpose_path::few_cols);
    EXPECT_TRUE(transpose_few_whole_chunks(p.smem_swizzle, p.smem_swizzle_shift));
    EXPECT_TRUE(detail::few_plan_fits(p, base, 2 * base));
    const transpose_few_layout w = transpose_few_swizzle_at(2, 1);
    p.smem_swizzle = w.swizzle;
    p.smem_swizzle_shift = w.swizzle_shift;
    EXPECT_FALSE(detail::few_plan_fits(p, base, 2 * base)) << "few_cols under a word swizzle";
  }
  // Jobs below the search's 4 MiB keep the fixed layout, so the fixed layout's kernel.
  for (const auto& [rows, cols] : {std::pair<std::uint64_t, std::uint64_t>{3, 1000}, {8, 8}, {30, 1000}}) {
    const transpose_plan p = plan_transpose(base, 2 * base, 4, rows, cols, 1, h100);
    ASSERT_TRUE(p.path == transpose_path::few_rows || p.path == transpose_path::small_matrices) << to_string(p.path);
    EXPECT_TRUE(transpose_few_whole_chunks(p.smem_swizzle, p.smem_swizzle_shift)) << rows << " x " << cols;
  }
}

// The checks catch what they are for: an access outside the buffers is reported.
TEST(transpose_emulated, the_checks_are_not_vacuous) {
  emu::error.clear();
  emu::load_lo = 64;
  emu::load_hi = 128;
  emu::check(reinterpret_cast<const void*>(std::uintptr_t{128}), 16, 16, false);
  EXPECT_NE(emu::error.find("outside"), std::string::npos) << emu::error;
  emu::error.clear();
  emu::check(reinterpret_cast<const void*>(std::uintptr_t{72}), 16, 16, false);
  EXPECT_NE(emu::error.find("misaligned"), std::string::npos) << emu::error;
  emu::error.clear();
}

// The emulation's barriers are the GPU's: a whole warp may skip shuffles the other warps make (the tiled
// kernel's warps past a cut tile's columns do); a warp whose lanes part at a shuffle, or a thread that misses
// __syncthreads, is an error.
TEST(transpose_emulated, barriers_of_the_warp_and_of_the_block) {
  emu::error.clear();
  std::vector<unsigned> got(64, 0);
  emu::launch(1, 64, [&] {
    const unsigned t = threadIdx.x;
    unsigned v = 1000 + t;
    if (t / 32 == 0) v = arch::shfl_down1_half(t);  // warp 0 only
    __syncthreads();
    got[t] = v;
  });
  EXPECT_TRUE(emu::error.empty()) << emu::error;
  for (unsigned t = 0; t < 64; ++t) {
    EXPECT_EQ(got[t], t >= 32 ? 1000 + t : (t % 16 == 15 ? t : t + 1)) << "thread " << t;
  }
  emu::launch(1, 64, [&] {
    if (threadIdx.x % 32 < 16) (void)arch::shfl_down1_half(threadIdx.x);  // half of each warp
  });
  EXPECT_NE(emu::error.find("warp barrier"), std::string::npos) << emu::error;
  emu::error.clear();
  emu::launch(1, 64, [&] {
    if (threadIdx.x != 5) __syncthreads();
  });
  EXPECT_NE(emu::error.find("block"), std::string::npos) << emu::error;
  emu::error.clear();
}

}  // namespace
}  // namespace memlab
