// memlab::transpose on the GPU, byte-exact: edge shapes (0 x N, 1 x 1, 1 x N, N x 1, 33 x 4097, 4097 x 33,
// shapes around a tile), batches, the acceptance shapes' alignment classes at small sizes and the
// acceptance shapes themselves, for every element size, with src and dst misaligned (+1, +2, +8, every
// pair 0..15 at two shapes), a grid smaller than the tiles (each CTA loops), and the caller's stream. The
// output is poisoned (zero bytes; the input has none) with a guard before and after it, and compared on
// the device: every byte of the output must be its source byte, every other byte of the allocation still
// poison. Tests named small_* are the ones compute-sanitizer runs (tools/gpu/device_library.sh; the few paths':
// tools/gpu/measure_transpose_shapes.sh). Without a
// GPU every test here reports SKIPPED; the error tests at the end need none.
#include <gtest/gtest.h>
#include <algorithm>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpu_fixture.hpp"
#include "harness/buffer.hpp"
#include "harness/error.hpp"
#include "harness/fill.hpp"
#include "memlab/transpose.cuh"

namespace memlab {
namespace {

// The plan's geometry (memlab/detail/transpose_geometry.hpp): what these tests replay.
using namespace memlab::detail;

struct shape {
  std::uint64_t batch, rows, cols;
};
std::string str(const shape& s) {
  return std::to_string(s.batch) + " x " + std::to_string(s.rows) + " x " + std::to_string(s.cols);
}

// Counts the bytes of the dst allocation [0, span) that differ from what a correct transpose leaves
// there (the output at dst_offset, poison elsewhere), and keeps the lowest such index.
__global__ void count_transpose_mismatches(const std::byte* dst_alloc, std::size_t span, std::size_t dst_offset,
                                           const std::byte* src, shape s, std::uint64_t es,
                                           unsigned long long* mismatches, unsigned long long* first) {
  const std::uint64_t bytes = s.batch * s.rows * s.cols * es, per = s.rows * s.cols;
  for (std::size_t j = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; j < span;
       j += std::size_t{gridDim.x} * blockDim.x) {
    std::byte want{poison_byte};
    if (j >= dst_offset && j - dst_offset < bytes) {
      const std::uint64_t o = j - dst_offset, e = o / es, m = e / per, k = e % per;  // k = c x rows + r
      const std::uint64_t c = k / s.rows, r = k % s.rows;
      want = src[(m * per + r * s.cols + c) * es + o % es];
    }
    if (dst_alloc[j] != want) {
      atomicAdd(mismatches, 1ull);
      atomicMin(first, static_cast<unsigned long long>(j));
    }
  }
}

// A source and a destination allocation with room for `max_bytes` at any offset below 16 and a guard.
struct transpose_bench {
  static constexpr std::size_t guard = 64, max_offset = 16;
  explicit transpose_bench(std::size_t max_bytes)
      : src(max_bytes + max_offset), dst(max_bytes + max_offset + guard), counters(2 * sizeof(unsigned long long)) {
    fill_random(src.data(), src.size(), next_seed(), nullptr);
    MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }

  // Poisons dst, runs `transpose(dst + dst_offset, src + src_offset)` (it returns a cudaError_t),
  // compares on the device. Returns "" or what went wrong.
  template <class F>
  std::string run(const shape& s, std::size_t es, std::size_t src_offset, std::size_t dst_offset, F&& transpose) {
    const std::size_t bytes = s.batch * s.rows * s.cols * es, span = dst_offset + bytes + guard;
    if (span > dst.size() || src_offset + bytes > src.size()) return "the bench is too small for " + str(s);
    MEMLAB_CUDA_CHECK(cudaMemset(dst.data(), poison_byte, span));
    const unsigned long long init[2] = {0, ~0ull};
    MEMLAB_CUDA_CHECK(cudaMemcpy(counters.data(), init, sizeof init, cudaMemcpyHostToDevice));
    const cudaError_t e = transpose(dst.data() + dst_offset, src.data() + src_offset);
    if (e != cudaSuccess) return std::string("memlab::transpose returned ") + cudaGetErrorString(e);
    MEMLAB_CUDA_CHECK(cudaGetLastError());
    auto* c = reinterpret_cast<unsigned long long*>(counters.data());
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>((span + 255) / 256, 4096));
    count_transpose_mismatches<<<blocks, 256>>>(dst.data(), span, dst_offset, src.data() + src_offset, s, es, c, c + 1);
    MEMLAB_CUDA_CHECK(cudaGetLastError());
    unsigned long long out[2];
    MEMLAB_CUDA_CHECK(cudaMemcpy(out, c, sizeof out, cudaMemcpyDeviceToHost));
    if (out[0] == 0) return "";
    const long long at = static_cast<long long>(out[1]) - static_cast<long long>(dst_offset);
    return std::to_string(out[0]) + " wrong bytes, the first at dst" + (at < 0 ? "" : "+") + std::to_string(at) +
           (at < 0 || static_cast<std::size_t>(at) >= bytes ? " (outside the output)" : "");
  }
  std::string run(const shape& s, std::size_t es, std::size_t src_offset, std::size_t dst_offset) {
    return run(s, es, src_offset, dst_offset, [&](std::byte* d, const std::byte* p) {
      return memlab::transpose_bytes(d, p, s.batch, s.rows, s.cols, es);
    });
  }

  device_buffer src, dst, counters;
};

const std::vector<std::size_t> elem_sizes{1, 2, 4, 8};
// (src, dst) offsets in bytes: aligned, one side or both misaligned, by less than and by more than an element.
const std::vector<std::pair<std::size_t, std::size_t>> offset_pairs{{0, 0}, {1, 0},  {0, 1}, {2, 8},
                                                                    {8, 2}, {4, 12}, {3, 7}, {15, 15}};

std::string path_of(const shape& s, std::size_t es, std::size_t so, std::size_t doff) {
  const std::uintptr_t base = std::uintptr_t{1} << 40;  // cudaMalloc's are 256-byte aligned
  return to_string(
      plan_transpose(base + doff, 2 * base + so, s.batch, s.rows, s.cols, es, copy_device{132, 2048, 9}).path);
}

using transpose_library = test::gpu_test<>;

TEST_F(transpose_library, small_edge_shapes_every_element_size_and_offsets) {
  const std::vector<shape> shapes{{1, 0, 5},     {1, 5, 0},     {1, 1, 1},     {1, 1, 1000},  {1, 1000, 1},
                                  {1, 2, 2},     {1, 3, 5},     {1, 17, 15},   {1, 16, 16},   {1, 33, 4097},
                                  {1, 4097, 33}, {1, 255, 257}, {1, 256, 240}, {1, 241, 239}, {1, 7, 300}};
  transpose_bench bench(4097 * 33 * 8);
  std::map<std::string, int> paths;
  for (const std::size_t es : elem_sizes) {
    for (const auto& s : shapes) {
      for (const auto& [so, doff] : offset_pairs) {
        ASSERT_EQ(bench.run(s, es, so, doff), "") << str(s) << " of " << es << "-byte elements, src+" << so << " dst+"
                                                  << doff << " (" << path_of(s, es, so, doff) << ")";
        ++paths[path_of(s, es, so, doff)];
      }
    }
  }
  for (const char* p : {"none", "copy", "aligned", "realign_in", "realign_out", "realign_both"}) {
    EXPECT_GT(paths[p], 0) << "no case took the path " << p;
  }
}

TEST_F(transpose_library, small_batches) {
  const std::vector<shape> shapes{{3, 33, 65}, {1000, 3, 5}, {7, 257, 129}, {2, 64, 64},
                                  {5, 1, 7},   {4, 7, 1},    {0, 9, 9}};
  transpose_bench bench(7 * 257 * 129 * 8);
  for (const std::size_t es : elem_sizes) {
    for (const auto& s : shapes) {
      for (const auto& [so, doff] : {std::pair<std::size_t, std::size_t>{0, 0}, {1, 3}, {0, 8}, {8, 0}}) {
        ASSERT_EQ(bench.run(s, es, so, doff), "") << str(s) << " of " << es << "-byte elements, src+" << so << " dst+"
                                                  << doff << " (" << path_of(s, es, so, doff) << ")";
      }
    }
  }
}

// Every (src, dst) offset pair 0..15 at a shape of one cut tile and at one of several tiles each way.
TEST_F(transpose_library, small_every_offset_pair) {
  transpose_bench bench(300 * 290 * 8);
  for (const std::size_t es : elem_sizes) {
    for (const shape& s : {shape{1, 37, 53}, shape{1, 300, 290}}) {
      for (std::size_t so = 0; so < 16; ++so) {
        for (std::size_t doff = 0; doff < 16; ++doff) {
          ASSERT_EQ(bench.run(s, es, so, doff), "")
              << str(s) << " of " << es << "-byte elements, src+" << so << " dst+" << doff;
        }
      }
    }
  }
}

// The acceptance shapes' alignment classes (rows and cols x elem_size modulo 16) at a few MiB, several
// tiles each way and cut tiles at both edges.
TEST_F(transpose_library, small_acceptance_alignment_classes) {
  const std::vector<std::pair<shape, std::size_t>> cases{
      {{1, 1000, 700}, 4},   // 10000 x 7000 f32: rows of in and out 16-byte aligned
      {{1, 1537, 301}, 4},   // 12289 x 3001 f32: rows 4 bytes off 16 both ways
      {{1, 1023, 1025}, 2},  // 8191 x 8193 f16: 2 and 14 bytes off
      {{1, 2059, 1023}, 1},  // 16411 x 8191 u8: 11 and 15 bytes off
      {{1, 1025, 515}, 8},   // 8193 x 4099 f64: 8 bytes off both ways
  };
  std::size_t most = 0;  // the bench holds the largest case
  for (const auto& [s, es] : cases) most = std::max<std::size_t>(most, s.batch * s.rows * s.cols * es);
  transpose_bench bench(most);
  for (const auto& [s, es] : cases) {
    for (const auto& [so, doff] : {std::pair<std::size_t, std::size_t>{0, 0}, {1, 0}, {0, 2}, {8, 8}}) {
      ASSERT_EQ(bench.run(s, es, so, doff), "") << str(s) << " of " << es << "-byte elements, src+" << so << " dst+"
                                                << doff << " (" << path_of(s, es, so, doff) << ")";
    }
  }
}

// The acceptance shapes themselves, each >= 256 MiB of traffic, from cudaMalloc's alignment.
TEST_F(transpose_library, acceptance_shapes) {
  const std::vector<std::pair<shape, std::size_t>> cases{
      {{1, 16384, 16384}, 4}, {{1, 10000, 7000}, 4}, {{1, 12289, 3001}, 4},
      {{1, 8191, 8193}, 2},   {{1, 16411, 8191}, 1}, {{1, 8193, 4099}, 8},
  };
  transpose_bench bench(std::size_t{16384} * 16384 * 4);
  for (const auto& [s, es] : cases) {
    ASSERT_EQ(bench.run(s, es, 0, 0), "")
        << str(s) << " of " << es << "-byte elements (" << path_of(s, es, 0, 0) << ")";
  }
}

// A plan whose grid is smaller than its tiles (as plan_transpose makes for more than 2^31 - 1 tiles):
// each CTA moves several tiles, one after the other.
TEST_F(transpose_library, small_ctas_loop_over_tiles_when_the_grid_is_capped) {
  transpose_bench bench(3 * 300 * 290 * 8);
  for (const std::size_t es : elem_sizes) {
    for (const auto& [so, doff] : offset_pairs) {
      const shape s{3, 300, 290};
      ASSERT_EQ(bench.run(s, es, so, doff,
                          [&](std::byte* d, const std::byte* p) {
                            transpose_plan plan =
                                plan_transpose(reinterpret_cast<std::uintptr_t>(d), reinterpret_cast<std::uintptr_t>(p),
                                               s.batch, s.rows, s.cols, es, copy_device{132, 2048, 9});
                            EXPECT_GT(plan.tiles, 7u);
                            plan.grid = 7;
                            return launch_transpose(plan, d, p);
                          }),
                "")
          << es << "-byte elements, src+" << so << " dst+" << doff;
    }
  }
}

TEST_F(transpose_library, small_stream_ordered_on_the_callers_stream) {
  cuda_stream stream;
  transpose_bench bench(300 * 290 * 4);
  for (const auto& [so, doff] : offset_pairs) {
    ASSERT_EQ(bench.run(shape{1, 300, 290}, 4, so, doff,
                        [&](std::byte* d, const std::byte* p) {
                          const cudaError_t e = memlab::transpose(
                              reinterpret_cast<float*>(d), reinterpret_cast<const float*>(p), 300, 290, stream.get());
                          stream.synchronize();
                          return e;
                        }),
              "");
  }
}

// The typed entry points: T of each size, one matrix and a batch.
TEST_F(transpose_library, small_typed_entry_points) {
  transpose_bench bench(5 * 67 * 45 * 8);
  const shape one{1, 67, 45}, five{5, 67, 45};
  EXPECT_EQ(bench.run(one, 1, 0, 0,
                      [](std::byte* d, const std::byte* s) {
                        return memlab::transpose(reinterpret_cast<std::uint8_t*>(d),
                                                 reinterpret_cast<const std::uint8_t*>(s), 67, 45);
                      }),
            "");
  EXPECT_EQ(bench.run(five, 2, 0, 0,
                      [](std::byte* d, const std::byte* s) {
                        return memlab::transpose_batched(reinterpret_cast<std::uint16_t*>(d),
                                                         reinterpret_cast<const std::uint16_t*>(s), 5, 67, 45);
                      }),
            "");
  EXPECT_EQ(bench.run(five, 8, 0, 0,
                      [](std::byte* d, const std::byte* s) {
                        return memlab::transpose_batched(reinterpret_cast<double*>(d),
                                                         reinterpret_cast<const double*>(s), 5, 67, 45);
                      }),
            "");
}

// The few paths (few_cols, few_rows, small_matrices; docs/notes/transpose_skinny.md): a short side of 2..64
// elements against the edge sizes and a large one, both ways round, every element size, src and dst
// aligned, misaligned by whole elements and by bytes (units smaller than the element).
TEST_F(transpose_library, small_few_paths_edge_sizes_every_element_size) {
  const std::vector<std::uint64_t> shorter{2, 3, 5, 7, 8, 16, 33, 64};
  const std::vector<std::uint64_t> longer{0, 1, 15, 16, 17, 127, 128, 129, 4095, 4096, 4097, 100003};
  constexpr std::size_t most = 8 * 100003 * 8;  // a few MiB: compute-sanitizer runs this test
  transpose_bench bench(most);
  std::map<std::string, int> paths;
  for (const std::size_t es : elem_sizes) {
    for (const std::uint64_t a : shorter) {
      for (const std::uint64_t b : longer) {
        if (a * b * es > most) continue;
        for (const bool tall : {true, false}) {
          const shape s = tall ? shape{1, b, a} : shape{1, a, b};
          for (const auto& [so, doff] : {std::pair<std::size_t, std::size_t>{0, 0}, {es, 3 * es % 16}, {1, 7}}) {
            ASSERT_EQ(bench.run(s, es, so, doff), "") << str(s) << " of " << es << "-byte elements, src+" << so
                                                      << " dst+" << doff << " (" << path_of(s, es, so, doff) << ")";
            ++paths[path_of(s, es, so, doff)];
          }
        }
      }
    }
  }
  for (const char* p : {"few_cols", "few_rows", "small_matrices"}) {
    EXPECT_GT(paths[p], 20) << "no case took the path " << p;
  }
}

// Batches of small matrices (a CTA transposes many whole ones) and of skinny ones, the batch's edge sizes.
TEST_F(transpose_library, small_few_paths_batches) {
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> matrices{{2, 2}, {3, 3},  {4, 4},    {8, 8},    {16, 16},
                                                                      {5, 7}, {2, 33}, {64, 100}, {1000, 3}, {3, 1000}};
  const std::vector<std::uint64_t> batches{1, 2, 15, 16, 17, 127, 128, 129, 4095, 4096, 4097, 100003};
  transpose_bench bench(8 << 20);  // compute-sanitizer runs this test
  std::map<std::string, int> paths;
  for (const std::size_t es : elem_sizes) {
    for (const auto& [rows, cols] : matrices) {
      for (const std::uint64_t batch : batches) {
        const shape s{batch, rows, cols};
        if (batch * rows * cols * es > (8u << 20)) continue;
        for (const auto& [so, doff] : {std::pair<std::size_t, std::size_t>{0, 0}, {es, 3 * es % 16}, {1, 7}}) {
          ASSERT_EQ(bench.run(s, es, so, doff), "") << str(s) << " of " << es << "-byte elements, src+" << so << " dst+"
                                                    << doff << " (" << path_of(s, es, so, doff) << ")";
          ++paths[path_of(s, es, so, doff)];
        }
      }
    }
  }
  EXPECT_GT(paths["small_matrices"], 100);
}

// Wide sides (transpose_few_wide; docs/notes/transpose_skinny.md section 5): a side of 65..480 bytes the tiled path
// would realign, at most two of its tiles, takes few_rows (rows) or few_cols (cols): the heat map's weakest cells
// (67 x 251 u8, 131 x 64 u8, 67 x 127 f16, 67 x 67 f32, 521 x 67 u8), batched, every offset pair, and the batch's
// edge sizes.
TEST_F(transpose_library, small_few_paths_wide_sides) {
  const struct {
    std::size_t es;
    std::uint64_t rows, cols;
  } cases[] = {{1, 67, 251},   {1, 131, 64}, {1, 257, 48},  {1, 448, 97},  {1, 521, 67},  {1, 67, 65536},
               {1, 521, 257},  {1, 509, 257}, {1, 509, 509}, {1, 600, 128}, {2, 67, 127},  {2, 131, 131},
               {2, 300, 251},  {2, 251, 999}, {4, 67, 67},   {4, 97, 1031}, {4, 127, 999}, {4, 300, 127}};
  // The second and third rows: a halo as large as few_cols' tile, sides wider than two tiles (up to 512 bytes), and
  // aligned columns of half a tile under realigning stores (docs/notes/transpose_skinny.md sections 9 and 10).
  transpose_bench bench(8 << 20);  // compute-sanitizer runs this test
  std::map<std::string, int> paths;
  for (const auto& c : cases) {
    for (const std::uint64_t batch : {1u, 2u, 17u, 129u}) {
      const shape s{batch, c.rows, c.cols};
      if (batch * c.rows * c.cols * c.es > (8u << 20)) continue;
      for (const auto& [so, doff] : offset_pairs) {
        ASSERT_EQ(bench.run(s, c.es, so, doff), "") << str(s) << " of " << c.es << "-byte elements, src+" << so
                                                    << " dst+" << doff << " (" << path_of(s, c.es, so, doff) << ")";
        ++paths[path_of(s, c.es, so, doff)];
      }
    }
  }
  EXPECT_GT(paths["few_rows"], 100);
  EXPECT_GT(paths["few_cols"], 10);
}

// A few plan whose grid is smaller than its tiles: each CTA moves several tiles, one after the other.
TEST_F(transpose_library, small_few_paths_ctas_loop_over_tiles_when_the_grid_is_capped) {
  transpose_bench bench(3 * 20011 * 7 * 8);
  for (const std::size_t es : elem_sizes) {
    for (const shape& s : {shape{3, 20011, 7}, shape{3, 7, 20011}, shape{20011, 3, 7}}) {
      for (const auto& [so, doff] : {std::pair<std::size_t, std::size_t>{0, 0}, {1, 3}}) {
        ASSERT_EQ(bench.run(s, es, so, doff,
                            [&](std::byte* d, const std::byte* p) {
                              transpose_plan plan = plan_transpose(reinterpret_cast<std::uintptr_t>(d),
                                                                   reinterpret_cast<std::uintptr_t>(p), s.batch, s.rows,
                                                                   s.cols, es, copy_device{132, 2048, 9});
                              EXPECT_TRUE(is_few(plan.path)) << to_string(plan.path);
                              EXPECT_GT(plan.tiles, 7u);
                              plan.grid = 7;
                              return launch_transpose(plan, d, p);
                            }),
                  "")
            << str(s) << " of " << es << "-byte elements, src+" << so << " dst+" << doff;
      }
    }
  }
}

// Candidate layout i of transpose_few_swizzle_at and, for few_rows, the pitch T + 16 k (T: the least, as
// transpose_few_geometry_of gives it), onto a few plan: a layout transpose_few_layout_of may pick, forced.
transpose_few_layout force_few_layout(transpose_plan& p, int i, unsigned k) {
  const transpose_few_layout l = transpose_few_swizzle_at(i, static_cast<unsigned>(p.unit_bytes));
  p.smem_swizzle = l.swizzle;
  p.smem_swizzle_shift = l.swizzle_shift;
  if (p.path == transpose_path::few_rows) {
    const auto least =
        static_cast<std::uint32_t>(16 * p.run_chunks + 16 + p.cols * static_cast<std::uint64_t>(p.elem_size) % 16);
    p.run_pitch = least + 16 * k;
    p.smem_bytes = transpose_few_rows_smem(p.rows, p.run_pitch);
  }
  return l;
}

// Every shared-memory layout the plan may pick for few_rows and small_matrices (transpose_few_layout_of;
// docs/notes/transpose_skinny.md section 6: none, the slot XOR, the word XORs whose chunks are word-permuted
// before their STS.128, few_rows' pitch T + 16 k), forced on jobs below the 4 MiB from which the plan searches
// them, every element size, src and dst misaligned by whole elements and by bytes; partly owned chunks at every
// run end. Returns the cases per layout ("mask>>shift path").
std::map<std::string, int> every_layout(transpose_bench& bench, const std::vector<std::uint64_t>& batches,
                                        const std::vector<int>& pitch_slots, std::size_t most) {
  const struct {
    std::size_t es;
    std::uint64_t rows, cols;
  } matrices[] = {{1, 3, 1000}, {1, 15, 127}, {1, 17, 33}, {1, 257, 33}, {1, 3, 3},   {1, 4, 4}, {2, 5, 300},
                  {2, 25, 41},  {2, 7, 9},    {4, 7, 129}, {4, 9, 5},    {8, 3, 100}, {8, 5, 6}, {1, 97, 128}};
  std::map<std::string, int> layouts;
  for (const auto& c : matrices) {
    for (const std::uint64_t batch : batches) {
      const shape s{batch, c.rows, c.cols};
      if (batch * c.rows * c.cols * c.es > most) continue;
      for (const auto& [so, doff] : {std::pair<std::size_t, std::size_t>{0, 0}, {c.es, 3 * c.es % 16}, {1, 7}}) {
        for (int i = 0; i < transpose_few_swizzles; ++i) {
          for (const int k : pitch_slots) {
            std::string layout;
            const std::string e = bench.run(s, c.es, so, doff, [&](std::byte* d, const std::byte* p) {
              transpose_plan plan =
                  plan_transpose(reinterpret_cast<std::uintptr_t>(d), reinterpret_cast<std::uintptr_t>(p), s.batch,
                                 s.rows, s.cols, c.es, copy_device{132, 2048, 9});
              if (plan.path != transpose_path::few_rows && plan.path != transpose_path::small_matrices) {
                return memlab::transpose_bytes(d, p, s.batch, s.rows, s.cols, c.es);  // other paths: as planned
              }
              const transpose_few_layout l = force_few_layout(plan, i, static_cast<unsigned>(k));
              layout = std::to_string(l.swizzle) + ">>" + std::to_string(l.swizzle_shift) + " " + to_string(plan.path);
              return launch_transpose(plan, d, p);
            });
            EXPECT_EQ(e, "") << str(s) << " of " << c.es << "-byte elements, src+" << so << " dst+" << doff << " ("
                             << path_of(s, c.es, so, doff) << "), layout " << i << ", pitch + " << 16 * k;
            if (!e.empty()) return layouts;
            if (!layout.empty()) ++layouts[layout];
          }
        }
      }
    }
  }
  return layouts;
}
// Every layout ran, so both instantiations of each path's kernel (launch_few_of: the fixed layout's for none and
// the slot XOR, 0>>0 and 112>>3; the general one for the word XORs).
void expect_every_layout(std::map<std::string, int>& layouts) {
  for (const char* l : {"0>>0", "112>>3", "124>>5", "124>>6", "124>>7", "124>>8", "120>>5"}) {
    EXPECT_GT(layouts[std::string(l) + " few_rows"] + layouts[std::string(l) + " small_matrices"], 0) << l;
  }
  for (const char* path : {" few_rows", " small_matrices"}) {
    EXPECT_GT(layouts[std::string("0>>0") + path] + layouts[std::string("112>>3") + path], 0) << path << ", fixed";
    EXPECT_GT(layouts[std::string("124>>5") + path], 0) << path << ", general";
  }
}

// The layouts at a few batch sizes, two pitches: compute-sanitizer runs this test (memcheck and racecheck).
TEST_F(transpose_library, small_few_paths_every_layout) {
  transpose_bench bench(1 << 20);
  std::map<std::string, int> layouts = every_layout(bench, {1, 17, 129, 4097}, {0, 5}, 1 << 20);
  expect_every_layout(layouts);
}

// The layouts at the batch's edge sizes, pitches T, T + 48, T + 96.
TEST_F(transpose_library, few_paths_every_layout_edge_sizes) {
  transpose_bench bench(4 << 20);
  std::map<std::string, int> layouts =
      every_layout(bench, {1, 15, 16, 17, 127, 128, 129, 4095, 4096, 4097}, {0, 3, 6}, 4 << 20);
  expect_every_layout(layouts);
}

// 1-byte elements, few_rows of 2..8 rows and batches of 3 x 3 and 4 x 4: the blocks whose byte permutation is
// compiled in (docs/notes/transpose_skinny.md section 7), beside the chunks gathered one by one around them. Every
// row count (9: none), one and several tiles a matrix, two matrices, six pointer-offset classes (a block may start
// at any chunk), every layout (few_rows at pitches T, T + 16, T + 32); batches of every size class.
// compute-sanitizer runs this test.
TEST_F(transpose_library, small_few_u8_blocks_every_row_count_and_layout) {
  transpose_bench bench(2 << 20);
  int cases = 0;
  const auto run = [&](const shape& s) {
    for (const auto& [so, doff] :
         {std::pair<std::size_t, std::size_t>{0, 0}, {1, 7}, {0, 3}, {5, 0}, {15, 9}, {4, 8}}) {
      for (int i = 0; i < transpose_few_swizzles; ++i) {
        const std::string e = bench.run(s, 1, so, doff, [&](std::byte* d, const std::byte* p) {
          transpose_plan plan = plan_transpose(reinterpret_cast<std::uintptr_t>(d), reinterpret_cast<std::uintptr_t>(p),
                                               s.batch, s.rows, s.cols, 1, copy_device{132, 2048, 9});
          EXPECT_TRUE(plan.path == transpose_path::few_rows || plan.path == transpose_path::small_matrices)
              << to_string(plan.path);
          force_few_layout(plan, i, static_cast<unsigned>(i % 3));  // a pitch T + 16 k for few_rows
          return launch_transpose(plan, d, p);
        });
        ASSERT_EQ(e, "") << str(s) << " u8, src+" << so << " dst+" << doff << ", layout " << i;
        ++cases;
      }
    }
  };
  for (std::uint64_t rows = 2; rows <= 9; ++rows) {
    for (const std::uint64_t cols : {4099u, 9001u, 100003u}) run(shape{1, rows, cols});
    run(shape{2, rows, 4111});
  }
  for (const std::uint64_t side : {3u, 4u}) {
    for (const std::uint64_t batch : {1u, 15u, 16u, 17u, 1000u, 4001u, 65539u}) run(shape{batch, side, side});
  }
  EXPECT_EQ(cases, (8 * 4 + 2 * 7) * 6 * transpose_few_swizzles);
}

// The layouts the search picks (jobs of >= 4 MiB a buffer): the heat map's cells that gathered at 13-17
// wavefronts, the nine 257-row few_rows cells (one tile a matrix now), and the acceptance's u8 misses, scaled to
// 4-24 MiB; aligned and misaligned pointers; the plan's layout a searched one for at least some of them.
TEST_F(transpose_library, few_paths_searched_layouts) {
  const shape cells[] = {{1000, 17, 257}, {1100, 31, 127}, {2300, 15, 127}, {40, 15, 8191},
                         {330, 25, 521},  {500, 257, 33},  {420, 257, 41},  {1, 3, 8000003},
                         {1, 5, 5000011}, {1, 7, 3000017}, {2000000, 3, 3}, {1500000, 4, 4}};
  transpose_bench bench(24 << 20);
  int searched = 0;
  for (const shape& s : cells) {
    for (const auto& [so, doff] : {std::pair<std::size_t, std::size_t>{0, 0}, {1, 7}}) {
      ASSERT_EQ(bench.run(s, 1, so, doff), "")
          << str(s) << " u8, src+" << so << " dst+" << doff << " (" << path_of(s, 1, so, doff) << ")";
      const std::uintptr_t b = std::uintptr_t{1} << 40;
      const transpose_plan p =
          plan_transpose(b + doff, 2 * b + so, s.batch, s.rows, s.cols, 1, copy_device{132, 2048, 9});
      EXPECT_TRUE(p.path == transpose_path::few_rows || p.path == transpose_path::small_matrices) << to_string(p.path);
      const transpose_few_layout fixed = transpose_few_layout_fixed(p);
      searched += p.smem_swizzle != fixed.swizzle || p.smem_swizzle_shift != fixed.swizzle_shift ||
                  (p.path == transpose_path::few_rows && p.run_pitch != fixed.pitch);
    }
  }
  EXPECT_GT(searched, 8);
}

// The acceptance shapes of the few paths: a side of 2, 3, 4, 5, 7 or 8 elements, the other long enough for
// >= 256 MiB of traffic, every element size, both ways round, from cudaMalloc's alignment.
TEST_F(transpose_library, few_paths_acceptance_shapes) {
  constexpr std::uint64_t matrix_bytes = 128 << 20;
  transpose_bench bench(matrix_bytes + 64);
  for (const std::size_t es : elem_sizes) {
    for (const std::uint64_t a : {2u, 3u, 4u, 5u, 7u, 8u}) {
      const std::uint64_t b = (matrix_bytes / es + a - 1) / a;
      for (const shape& s : {shape{1, b, a}, shape{1, a, b}}) {
        ASSERT_EQ(bench.run(s, es, 0, 0), "")
            << str(s) << " of " << es << "-byte elements (" << path_of(s, es, 0, 0) << ")";
      }
    }
  }
}

// The checker itself: a transpose of the wrong shape, or one that writes too much, must be reported.
TEST_F(transpose_library, small_checker_catches_a_wrong_transpose) {
  transpose_bench bench(64 * 64 * 4);
  EXPECT_NE(bench.run(shape{1, 64, 64}, 4, 0, 0,
                      [](std::byte* d, const std::byte* s) {
                        return memlab::copy_bytes(d, s, 64 * 64 * 4);  // not transposed
                      }),
            "");
  EXPECT_NE(bench.run(shape{1, 63, 64}, 4, 0, 0,
                      [](std::byte* d, const std::byte* s) {
                        return memlab::transpose_bytes(d, s, 1, 64, 64, 4);  // one row too many
                      }),
            "");
}

// Errors come back as values, before any GPU work: these need no device.
TEST(transpose_library_errors, bad_arguments_return_invalid_value) {
  std::byte* fake = reinterpret_cast<std::byte*>(std::uintptr_t{1} << 40);
  EXPECT_EQ(memlab::transpose_bytes(fake, fake + 4096, 1, 4, 4, 3), cudaErrorInvalidValue) << "3-byte elements";
  EXPECT_EQ(memlab::transpose_bytes(fake, fake + 4096, 1, 4, 4, 16), cudaErrorInvalidValue) << "16-byte elements";
  EXPECT_EQ(memlab::transpose_bytes(nullptr, fake, 1, 4, 4, 4), cudaErrorInvalidValue);
  EXPECT_EQ(memlab::transpose_bytes(fake, nullptr, 1, 4, 4, 4), cudaErrorInvalidValue);
  EXPECT_EQ(memlab::transpose_bytes(fake, fake + 8, 1, 4, 4, 4), cudaErrorInvalidValue) << "overlapping buffers";
  EXPECT_EQ(memlab::transpose_bytes(fake + 60, fake, 1, 4, 4, 4), cudaErrorInvalidValue) << "overlapping buffers";
  EXPECT_EQ(memlab::transpose_bytes(fake, fake + 4096, SIZE_MAX / 2, 1 << 20, 1 << 20, 8), cudaErrorInvalidValue)
      << "more than 2^62 bytes";
  EXPECT_EQ(memlab::transpose_bytes(nullptr, nullptr, 0, 4, 4, 4), cudaSuccess) << "nothing to move";
  EXPECT_EQ(memlab::transpose_bytes(nullptr, nullptr, 1, 0, 4, 4), cudaSuccess) << "nothing to move";
  // A plan made for other pointers is refused before any launch (a side planned as aligned would issue
  // misaligned 16-byte accesses); so is one whose tiles were changed.
  const auto d = reinterpret_cast<std::uintptr_t>(fake), s = d + (1 << 24);
  const transpose_plan p = plan_transpose(d, s, 1, 1024, 1024, 4, copy_device{132, 2048, 9});
  ASSERT_EQ(p.path, transpose_path::aligned);
  EXPECT_EQ(memlab::launch_transpose(p, fake + 4, fake + (1 << 24)), cudaErrorInvalidValue);
  EXPECT_EQ(memlab::launch_transpose(p, fake, fake + (1 << 24) + 2), cudaErrorInvalidValue);
  transpose_plan other = p;
  other.tile_cols = 32;
  EXPECT_EQ(memlab::launch_transpose(other, fake, fake + (1 << 24)), cudaErrorInvalidValue);
  other = p;
  other.grid = 0;
  EXPECT_EQ(memlab::launch_transpose(other, fake, fake + (1 << 24)), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace memlab
