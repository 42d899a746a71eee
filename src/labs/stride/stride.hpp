// The stride lab's host-side model (model.cpp): access patterns, launch policies and the exact count
// of 32-byte sectors each pattern touches. The lab itself (kernels, reference, table): stride.cu.
//
// Assumptions: a copy of n useful elements. Thread-element e (0 <= e < n) reads source element
// e x (source stride) and writes destination element e x (destination stride); the source starts
// `src_offset` bytes past its 256-byte aligned allocation, the destination at its allocation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "harness/lab.hpp"
#include "harness/result.hpp"
#include "harness/sectors.hpp"
#include "memlab/arch/config.cuh"

namespace memlab::labs::stride {

inline constexpr int threads_per_cta = 256;
// The strided variants keep 16 bytes of independent element loads in flight per thread (4 f32,
// 8 f16, ...), issued before the first store: 2048 threads x 16 B = 32 KiB per SM, what the copy
// lab's vec16 needs to reach the copy ceiling on an H100 (docs/labs/copy.md). One element per
// thread (8 KiB per SM for f32) stalls at ~72% of peak whatever the stride, which would hide the
// stride-1 baseline this lab measures everything against.
inline constexpr int bytes_per_thread = 16;
// Threads whose accesses one warp instruction carries.
inline constexpr std::uint64_t warp_size = 32;

// A rung, by what its kernel does (the table's traits, read by the model below): which side of the
// copy is strided, and whether it moves 16-byte vectors instead of elements.
struct stride_rung {
  bool strided_src = false;  // thread-element e reads src[e x stride] (else src[e])
  bool strided_dst = false;  // thread-element e writes dst[e x stride] (else dst[e])
  // 0: one element per access (the strided kernels); 16: 16-byte vectors from any element offset of
  // a dense source, realigned in registers (vec16_kernel), so stride 1 only.
  int vector_bytes = 0;
};

// Elements between the accesses of neighbouring thread-elements, in the source and the destination.
struct access_strides {
  std::uint64_t src = 1, dst = 1;
};
access_strides strides_of(const stride_rung& r, std::uint64_t stride);

// Elements an array of n accesses `stride` apart spans: (n - 1) x stride + 1 (0 for n = 0).
constexpr std::uint64_t extent(std::uint64_t n, std::uint64_t stride) { return n == 0 ? 0 : (n - 1) * stride + 1; }

// vec16 with the source `misalign` (= address mod 16) bytes past a 16-byte boundary: how many of
// the `bytes` / 16 output vectors go through the vector path. Aligned: all of them. Misaligned:
// output vector j is built from the aligned source vectors j and j + 1 (below the source start by
// `misalign`), so only the j whose vector j + 1 still lies wholly inside the source qualify:
// 16 (j + 2) - misalign <= bytes. The rest, at most two vectors' worth, is copied element-wise.
MEMLAB_HOST_DEVICE constexpr std::uint64_t vec16_main_vectors(std::uint64_t bytes, std::uint64_t misalign) {
  if (misalign == 0) return bytes / 16;
  const std::uint64_t whole = (bytes + misalign) / 16;  // aligned source vectors inside the source
  return whole >= 1 ? whole - 1 : 0;
}

// Threads, items per thread, access width and grid of rung r for n elements of elem_size bytes.
launch_policy plan(const stride_rung& r, std::size_t elem_size, std::uint64_t n, std::uint64_t src_offset);

// 32-byte sectors the kernel's warps touch: for each warp access of 32 consecutive thread-elements
// (the strided variants issue several per thread, each of 32 consecutive elements) or of 32
// consecutive vectors (vec16, including the extra vector its last lane loads and the element-wise
// tail), the distinct sectors of every byte it reads (writes), summed over all of them. Sector
// boundaries are counted from the 256-byte aligned allocations, so `src_offset` moves them.
sector_count sectors_touched(const stride_rung& r, std::size_t elem_size, std::uint64_t n, std::uint64_t stride,
                             std::uint64_t src_offset);

const lab& table();

}  // namespace memlab::labs::stride
