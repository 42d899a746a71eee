// memlab::copy on the GPU: byte-exact over the edge sizes x every dtype x src and dst offsets
// 0..15 bytes (where the dtype allows), a seeded random sweep of 10,000+ (size, src offset, dst
// offset) cases, and the errors it returns. The comparison runs on the device (src stays as filled;
// dst must equal it inside the copied range and still hold the poison everywhere else), so
// thousands of cases take a second. Without a GPU the GPU tests report SKIPPED.
#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpu_fixture.hpp"
#include "harness/buffer.hpp"
#include "harness/device.hpp"
#include "harness/error.hpp"
#include "harness/fill.hpp"
#include "memlab/copy.cuh"

namespace memlab {
namespace {

// Counts the bytes of the dst allocation that differ from what a correct copy leaves there, and
// keeps the lowest such index.
__global__ void count_mismatches(const std::byte* dst_alloc, std::size_t alloc_bytes, std::size_t dst_offset,
                                 const std::byte* src, std::size_t bytes, unsigned long long* mismatches,
                                 unsigned long long* first) {
  for (std::size_t j = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; j < alloc_bytes;
       j += std::size_t{gridDim.x} * blockDim.x) {
    const bool inside = j >= dst_offset && j - dst_offset < bytes;
    const std::byte want = inside ? src[j - dst_offset] : std::byte{poison_byte};
    if (dst_alloc[j] != want) {
      atomicAdd(mismatches, 1ull);
      atomicMin(first, static_cast<unsigned long long>(j));
    }
  }
}

using copy_fixture = test::gpu_test<>;

// Source and destination allocations with room for any offset below `max_offset` and a guard.
struct copy_bench {
  static constexpr std::size_t guard = 64;
  copy_bench(std::size_t max_bytes, std::size_t max_offset)
      : src(max_bytes + max_offset), dst(max_bytes + max_offset + guard), counters(2 * sizeof(unsigned long long)) {
    seed = next_seed();
    fill_random(src.data(), src.size(), seed, nullptr);
    MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }

  // Poisons dst, runs `copy` (which returns the cudaError_t of memlab::copy), compares on the device.
  // Returns "" or what went wrong.
  template <class F>
  std::string run(std::size_t bytes, std::size_t src_offset, std::size_t dst_offset, F&& copy) {
    const std::size_t span = dst_offset + bytes + guard;  // the bytes a stray store could reach
    MEMLAB_CUDA_CHECK(cudaMemsetAsync(dst.data(), poison_byte, span));
    const unsigned long long init[2] = {0, ~0ull};
    MEMLAB_CUDA_CHECK(cudaMemcpyAsync(counters.data(), init, sizeof init, cudaMemcpyHostToDevice));
    const cudaError_t e = copy(dst.data() + dst_offset, src.data() + src_offset, bytes);
    if (e != cudaSuccess) return std::string("memlab::copy returned ") + cudaGetErrorString(e);
    auto* c = reinterpret_cast<unsigned long long*>(counters.data());
    const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((span + 255) / 256, 1024));
    count_mismatches<<<blocks, 256>>>(dst.data(), span, dst_offset, src.data() + src_offset, bytes, c, c + 1);
    MEMLAB_CUDA_CHECK(cudaGetLastError());
    unsigned long long out[2];
    MEMLAB_CUDA_CHECK(cudaMemcpy(out, c, sizeof out, cudaMemcpyDeviceToHost));
    if (out[0] == 0) return "";
    const long long at = static_cast<long long>(out[1]) - static_cast<long long>(dst_offset);
    return std::to_string(out[0]) + " wrong bytes, the first at dst" + (at < 0 ? "" : "+") + std::to_string(at) +
           (at < 0 || static_cast<std::size_t>(at) >= bytes ? " (outside the copied range)" : "");
  }

  device_buffer src, dst, counters;
  std::uint64_t seed = 0;
};

const std::vector<std::size_t> edge_counts{0, 1, 15, 16, 17, 127, 128, 129, 4095, 4096, 4097, 100000, (1u << 24) + 7};

template <class T>
void edge_sizes_times_offsets() {
  copy_bench bench(edge_counts.back() * sizeof(T), 16);
  int cases = 0;
  for (std::size_t so = 0; so < 16; so += sizeof(T) < 16 ? sizeof(T) : 16) {
    for (std::size_t doff = 0; doff < 16; doff += sizeof(T) < 16 ? sizeof(T) : 16) {
      for (std::size_t n : edge_counts) {
        const std::string diff = bench.run(n * sizeof(T), so, doff, [&](std::byte* d, const std::byte* s, std::size_t) {
          return memlab::copy(reinterpret_cast<T*>(d), reinterpret_cast<const T*>(s), n);
        });
        ASSERT_EQ(diff, "") << "n=" << n << " src+" << so << " dst+" << doff;
        ++cases;
      }
    }
  }
  const std::size_t offsets = 16 / std::min<std::size_t>(sizeof(T), 16);
  EXPECT_EQ(cases, static_cast<int>(offsets * offsets * edge_counts.size()));
}

TEST_F(copy_fixture, u8_edge_sizes_every_offset_pair) { edge_sizes_times_offsets<std::uint8_t>(); }
TEST_F(copy_fixture, f16_edge_sizes_every_offset_pair) { edge_sizes_times_offsets<__half>(); }
TEST_F(copy_fixture, bf16_edge_sizes_every_offset_pair) { edge_sizes_times_offsets<__nv_bfloat16>(); }
TEST_F(copy_fixture, f32_edge_sizes_every_offset_pair) { edge_sizes_times_offsets<float>(); }
TEST_F(copy_fixture, f64_edge_sizes_every_offset_pair) { edge_sizes_times_offsets<double>(); }

// A trivially copyable struct of 12 bytes: neither a power of two nor a vector width.
struct rgb32 {
  float r, g, b;
};
TEST_F(copy_fixture, odd_sized_struct_edge_sizes) {
  copy_bench bench(edge_counts.back() * sizeof(rgb32), 16);
  for (std::size_t off : {0, 4, 12}) {
    for (std::size_t n : edge_counts) {
      ASSERT_EQ(bench.run(n * sizeof(rgb32), off, 8,
                          [&](std::byte* d, const std::byte* s, std::size_t) {
                            return memlab::copy(reinterpret_cast<rgb32*>(d), reinterpret_cast<const rgb32*>(s), n);
                          }),
                "")
          << n << " src+" << off;
    }
  }
}

// 10,000 seeded random cases: sizes log-uniform up to 1 MiB, offsets 0..63 on both sides, through
// the bytes entry point. The seed is fixed, so a failure names a case that can be rerun.
TEST_F(copy_fixture, random_sweep_of_ten_thousand_cases) {
  constexpr std::size_t max_bytes = std::size_t{1} << 20, max_offset = 64;
  copy_bench bench(max_bytes, max_offset);
  std::mt19937_64 rng(20261121);
  std::uniform_int_distribution<int> log2_size(0, 20);
  std::uniform_int_distribution<std::size_t> offset(0, max_offset - 1);
  int cases = 0, realigned = 0;
  for (int i = 0; i < 10000; ++i) {
    const int k = log2_size(rng);
    const std::size_t bytes = std::uniform_int_distribution<std::size_t>(0, (std::size_t{1} << k) - 1)(rng) +
                              (k == 0 ? 0 : std::size_t{1} << (k - 1));
    const std::size_t so = offset(rng), doff = offset(rng);
    const std::size_t b = std::min(bytes, max_bytes);
    const std::string diff = bench.run(
        b, so, doff, [](std::byte* d, const std::byte* s, std::size_t n) { return memlab::copy_bytes(d, s, n); });
    ASSERT_EQ(diff, "") << "case " << i << ": bytes=" << b << " src+" << so << " dst+" << doff;
    realigned += (so - doff) % 16 != 0;
    ++cases;
  }
  EXPECT_EQ(cases, 10000);
  EXPECT_GT(realigned, 8000);  // most random pairs are mutually misaligned
}

TEST_F(copy_fixture, large_realigned_copy_crossing_many_ctas) {
  const std::size_t bytes = (std::size_t{1} << 28) + 13;  // 256 MiB: 2^16 CTAs
  copy_bench bench(bytes, 16);
  ASSERT_EQ(bench.run(bytes, 2, 0,
                      [](std::byte* d, const std::byte* s, std::size_t n) { return memlab::copy_bytes(d, s, n); }),
            "");
  ASSERT_EQ(bench.run(bytes, 7, 7,
                      [](std::byte* d, const std::byte* s, std::size_t n) { return memlab::copy_bytes(d, s, n); }),
            "");
}

// Plans for GPUs with fewer resident threads per SM (sm_75: 1024, a hypothetical 512) give 2 and
// 4 vectors per thread: the kernels such parts run, exercised here, since the device facts only
// tune the plan. Every offset pair, sizes with whole and partial groups.
TEST_F(copy_fixture, two_and_four_vectors_per_thread_every_offset_pair) {
  copy_bench bench(std::size_t{1} << 22, 16);
  int cases = 0;
  for (const auto& [facts, per_thread] : {std::pair{copy_device{1, 1024}, 2}, std::pair{copy_device{1, 512}, 4}}) {
    for (std::size_t so = 0; so < 16; ++so) {
      for (std::size_t doff = 0; doff < 16; ++doff) {
        for (std::size_t bytes : {std::size_t{70001}, std::size_t{100000}, (std::size_t{1} << 22) - 3}) {
          const std::string diff = bench.run(bytes, so, doff, [&](std::byte* d, const std::byte* s, std::size_t n) {
            const copy_plan p =
                plan_copy(reinterpret_cast<std::uintptr_t>(d), reinterpret_cast<std::uintptr_t>(s), n, facts);
            EXPECT_EQ(p.vectors_per_thread, per_thread);
            return memlab::launch_copy(p, d, s);
          });
          ASSERT_EQ(diff, "") << per_thread << " per thread, bytes=" << bytes << " src+" << so << " dst+" << doff;
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 16 * 16 * 3);
}

// The checker itself: a copy that misses a byte, or writes one too many, must be reported.
TEST_F(copy_fixture, checker_catches_a_short_and_a_long_copy) {
  copy_bench bench(4096, 16);
  EXPECT_NE(bench.run(4096, 3, 5,
                      [](std::byte* d, const std::byte* s, std::size_t n) { return memlab::copy_bytes(d, s, n - 1); }),
            "");
  EXPECT_NE(bench.run(4095, 3, 5,
                      [](std::byte* d, const std::byte* s, std::size_t n) { return memlab::copy_bytes(d, s, n + 1); }),
            "");
}

TEST_F(copy_fixture, stream_ordered_on_the_callers_stream) {
  cuda_stream stream;
  copy_bench bench(1 << 20, 16);
  ASSERT_EQ(bench.run(1 << 20, 1, 0,
                      [&](std::byte* d, const std::byte* s, std::size_t n) {
                        const cudaError_t e = memlab::copy_bytes(d, s, n, stream.get());
                        stream.synchronize();
                        return e;
                      }),
            "");
}

// Errors come back as values, before any GPU work: these need no device.
TEST(copy_errors, bad_arguments_return_invalid_value) {
  std::byte* fake = reinterpret_cast<std::byte*>(std::uintptr_t{1} << 40);
  EXPECT_EQ(memlab::copy_bytes(nullptr, fake, 16), cudaErrorInvalidValue);
  EXPECT_EQ(memlab::copy_bytes(fake, nullptr, 16), cudaErrorInvalidValue);
  EXPECT_EQ(memlab::copy_bytes(fake, fake + 8, 16), cudaErrorInvalidValue) << "overlapping ranges";
  EXPECT_EQ(memlab::copy_bytes(fake + 8, fake, 16), cudaErrorInvalidValue) << "overlapping ranges";
  EXPECT_EQ(memlab::copy(reinterpret_cast<double*>(fake), reinterpret_cast<const double*>(fake + 64), SIZE_MAX / 4),
            cudaErrorInvalidValue)
      << "count x sizeof(T) overflows";
  EXPECT_EQ(memlab::copy_bytes(nullptr, nullptr, 0), cudaSuccess) << "nothing to copy is not an error";
  // A plan made for other pointers is refused before any launch (it would issue misaligned
  // 16-byte accesses, a fatal error); so is a plan whose grid no longer covers its body.
  const auto d = reinterpret_cast<std::uintptr_t>(fake), s = d + 4096;
  const copy_plan p = plan_copy(d, s + 2, 100000, copy_device{132, 2048});
  EXPECT_EQ(memlab::launch_copy(p, fake + 1, fake + 4096 + 2), cudaErrorInvalidValue);
  EXPECT_EQ(memlab::launch_copy(p, fake, fake + 4096 + 3), cudaErrorInvalidValue);
  copy_plan shrunk = p;
  shrunk.vectors_per_thread = 2;  // grid not recomputed: half the body would be skipped
  shrunk.grid = p.grid / 4;
  EXPECT_EQ(memlab::launch_copy(shrunk, fake, fake + 4096 + 2), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace memlab
