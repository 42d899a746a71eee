// The engines the host <-> device and peer routes share: the copy engines (cudaMemcpyAsync), the SM copy
// kernel below, and memlab::copy on the same pointers (routes.hpp: copy_by).
//
// The SM copy: one kernel for every SM rung. Host -> device reads mapped host memory (each 16-byte load
// becomes a PCIe read request the GPU issues; the reply carries the data), device -> host writes it
// (posted writes: no reply to wait for), peer rungs read or write the other GPU's memory over NVLink.
// A thread keeps Unroll 16-byte vectors in flight: a read of host memory takes about a microsecond,
// and 55 GB/s x 1 us = 55 KB must be in flight across the GPU to cover it; the grid (8 CTAs of 256
// threads per SM x 4 x 16 B) holds about 17 MB on an H100, far more than enough.
// Assumes host buffers page-aligned (4 KiB) and device buffers 256-byte aligned: every copy moves
// 16-byte vectors from its first byte; a size that is not a multiple of 16 ends in a byte-wise tail.
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "harness/error.hpp"
#include "harness/launch.cuh"
#include "labs/transfer/routes.hpp"
#include "memlab/copy.cuh"
#include "memlab/vector.cuh"

namespace memlab::labs::transfer {

template <int Unroll>
__global__ void __launch_bounds__(sm_threads)
    sm_copy_kernel(std::byte* __restrict__ dst, const std::byte* __restrict__ src, std::uint64_t n) {
  using vec = vector_t<16>;
  const std::uint64_t vectors = n / 16;
  const auto* s = reinterpret_cast<const vec*>(src);
  auto* d = reinterpret_cast<vec*>(dst);
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  std::uint64_t i = global_thread();
  // All Unroll loads issue before the first store.
  for (; i + (Unroll - 1) * stride < vectors; i += Unroll * stride) {
    vec r[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) r[u] = s[i + u * stride];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) d[i + u * stride] = r[u];
  }
#pragma unroll 1
  for (; i < vectors; i += stride) d[i] = s[i];
  if (global_thread() == 0) {
#pragma unroll 1
    for (std::uint64_t b = vectors * 16; b < n; ++b) dst[b] = src[b];
  }
}

std::uint64_t sm_grid(std::uint64_t n, int sm_count) {
  const std::uint64_t per_cta = std::uint64_t{sm_threads} * sm_unroll * 16;
  const std::uint64_t most = static_cast<std::uint64_t>(std::max(sm_count, 1)) * sm_ctas_per_sm;
  return std::clamp<std::uint64_t>((n + per_cta - 1) / per_cta, 1, most);
}

kernel_ref sm_copy_kernel_ref() { return kernel_ref::of(&sm_copy_kernel<sm_unroll>); }

void copy_by(engine how, std::uint64_t n, std::uint64_t grid, std::byte* dst, std::byte* dst_dev, const std::byte* src,
             const std::byte* src_dev, cudaStream_t s) {
  if (n == 0) return;
  switch (how) {
    case engine::copy_engine: MEMLAB_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s)); break;
    case engine::sm:
      sm_copy_kernel<sm_unroll><<<grid_of(grid, "transfer"), sm_threads, 0, s>>>(dst_dev, src_dev, n);
      MEMLAB_CUDA_CHECK_LAUNCH();
      break;
    case engine::library: MEMLAB_CUDA_CHECK(memlab::copy_bytes(dst_dev, src_dev, n, s)); break;
    case engine::nccl: throw std::logic_error("transfer: an NCCL rung has no copy");
  }
}

}  // namespace memlab::labs::transfer
