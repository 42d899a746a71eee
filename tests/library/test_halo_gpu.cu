// memlab::halo (include/memlab/halo.cuh) on the GPU: load_rows moves exactly rows [0, valid_rows)
// x chunks [0, valid_chunks) of a tile whose rows come from two arrays in a scattered order, along
// both paths and both widths, with a CTA smaller than the tile (partial last round) and the
// stencil's own tile shape; every other byte of the shared tile keeps what it held. Without a GPU
// every test here reports SKIPPED.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu_fixture.hpp"
#include "harness/buffer.hpp"
#include "harness/error.hpp"
#include "harness/fill.hpp"
#include "memlab/arch/cp_async.cuh"
#include "memlab/halo.cuh"

namespace memlab {
namespace {

constexpr std::uint32_t sentinel = 0xdeadbeefu;

// Row r of the tile is row (5 r + 3) mod rows_total of array a (r even) or b (r odd): rows from two
// arrays, in no particular order, selected without a branch.
template <halo::path Path, int Bytes, int Rows, int RowChunks, int Threads>
__global__ void load_rows_kernel(std::uint32_t* out, const std::byte* a, const std::byte* b, std::size_t pitch,
                                 int rows_total, int valid_rows, int valid_chunks) {
  constexpr int words = Rows * RowChunks * Bytes / 4;
  __shared__ __align__(16) std::uint32_t tile[words];
  for (int i = static_cast<int>(threadIdx.x); i < words; i += Threads) tile[i] = sentinel;
  __syncthreads();
  const auto source = [&](int r) {
    const std::byte* base = r % 2 == 0 ? a : b;
    return base + static_cast<std::size_t>((5 * r + 3) % rows_total) * pitch;
  };
  halo::load_rows<Path, Bytes, Rows, RowChunks, Threads>(tile, source, valid_rows, valid_chunks);
  if constexpr (Path == halo::path::cp_async) {
    arch::cp_async_commit();
    arch::cp_async_wait_all();
  }
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < words; i += Threads) out[i] = tile[i];
}

using halo_fixture = test::gpu_test<>;

template <halo::path Path, int Bytes, int Rows, int RowChunks, int Threads>
void check_load_rows() {
  constexpr int rows_total = 2 * Rows + 1;               // more rows than the tile, so the order matters
  constexpr std::size_t pitch = RowChunks * Bytes + 48;  // rows apart by more than their length
  device_buffer a(rows_total * pitch), b(rows_total * pitch), out(Rows * RowChunks * Bytes);
  const std::uint64_t seed_a = next_seed(), seed_b = next_seed();
  fill_random(a.data(), a.size(), seed_a, nullptr);
  fill_random(b.data(), b.size(), seed_b, nullptr);
  for (const int valid_rows : {0, 1, Rows - 1, Rows}) {
    for (const int valid_chunks : {0, 1, RowChunks - 1, RowChunks}) {
      SCOPED_TRACE("path " + std::to_string(int(Path)) + ", " + std::to_string(Bytes) + " B, rows " +
                   std::to_string(valid_rows) + "/" + std::to_string(Rows) + ", chunks " +
                   std::to_string(valid_chunks) + "/" + std::to_string(RowChunks) + ", " + std::to_string(Threads) +
                   " threads");
      load_rows_kernel<Path, Bytes, Rows, RowChunks, Threads>
          <<<1, Threads>>>(reinterpret_cast<std::uint32_t*>(out.data()), a.data(), b.data(), pitch, rows_total,
                           valid_rows, valid_chunks);
      MEMLAB_CUDA_CHECK(cudaGetLastError());
      std::vector<std::uint8_t> got(out.size());
      MEMLAB_CUDA_CHECK(cudaMemcpy(got.data(), out.data(), got.size(), cudaMemcpyDeviceToHost));
      for (int r = 0; r < Rows; ++r) {
        for (int byte = 0; byte < RowChunks * Bytes; ++byte) {
          const std::size_t at = static_cast<std::size_t>(r) * RowChunks * Bytes + static_cast<std::size_t>(byte);
          const bool loaded = r < valid_rows && byte / Bytes < valid_chunks;
          const std::uint64_t src =
              static_cast<std::uint64_t>((5 * r + 3) % rows_total) * pitch + static_cast<std::uint64_t>(byte);
          const std::uint8_t want = loaded ? random_byte(r % 2 == 0 ? seed_a : seed_b, src)
                                           : static_cast<std::uint8_t>(sentinel >> (8 * (at % 4)));
          ASSERT_EQ(got[at], want) << "row " << r << " byte " << byte
                                   << (loaded ? " (loaded)" : " (must be untouched)");
        }
      }
    }
  }
}

TEST_F(halo_fixture, load_rows_moves_exactly_the_valid_rows_and_chunks) {
  // A CTA of 32 threads on a 9 x 8 tile: 72 chunks, 2.25 rounds.
  check_load_rows<halo::path::registers, 4, 9, 8, 32>();
  check_load_rows<halo::path::registers, 16, 9, 8, 32>();
  check_load_rows<halo::path::cp_async, 4, 9, 8, 32>();
  check_load_rows<halo::path::cp_async, 16, 9, 8, 32>();
  // The stencil's tiles: 72 rows of 64 floats in 4-byte chunks, of 16 chunks of 16 bytes.
  check_load_rows<halo::path::registers, 4, 72, 64, 256>();
  check_load_rows<halo::path::cp_async, 4, 72, 64, 256>();
  check_load_rows<halo::path::cp_async, 16, 72, 16, 256>();
}

// The single predicated accesses: nothing moves when the predicate is false.
__global__ void copy_if_kernel(std::uint32_t* out, const std::uint32_t* src, bool pred) {
  __shared__ __align__(16) std::uint32_t s[8];
  s[threadIdx.x] = sentinel;
  __syncthreads();
  halo::copy_if<halo::path::registers, 4>(pred, &s[0], src);
  halo::copy_if<halo::path::registers, 16>(pred, &s[4], src + 4);
  halo::copy_if<halo::path::cp_async, 4>(pred, &s[1], src + 1);
  arch::cp_async_commit();
  arch::cp_async_wait_all();
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x];
}

TEST_F(halo_fixture, copy_if_moves_nothing_when_the_predicate_is_false) {
  device_buffer src(32), out(32);
  const std::vector<std::uint32_t> values{1, 2, 3, 4, 5, 6, 7, 8};
  MEMLAB_CUDA_CHECK(cudaMemcpy(src.data(), values.data(), 32, cudaMemcpyHostToDevice));
  for (const bool pred : {false, true}) {
    copy_if_kernel<<<1, 8>>>(reinterpret_cast<std::uint32_t*>(out.data()),
                             reinterpret_cast<const std::uint32_t*>(src.data()), pred);
    MEMLAB_CUDA_CHECK(cudaGetLastError());
    std::vector<std::uint32_t> got(8);
    MEMLAB_CUDA_CHECK(cudaMemcpy(got.data(), out.data(), 32, cudaMemcpyDeviceToHost));
    const std::vector<std::uint32_t> want = pred ? std::vector<std::uint32_t>{1, 2, sentinel, sentinel, 5, 6, 7, 8}
                                                 : std::vector<std::uint32_t>(8, sentinel);
    EXPECT_EQ(got, want) << "pred " << pred;
  }
}

}  // namespace
}  // namespace memlab
