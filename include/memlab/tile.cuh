// memlab/tile.cuh: block-cooperative tile movers between global and shared memory.
//
// Every thread of a 1D CTA (threadIdx.x, blockDim.x) moves 16-byte chunks of one contiguous byte
// range: thread t takes chunks t, t + blockDim.x, ... so each warp instruction covers 512
// consecutive bytes (four full 128-byte lines in global memory, conflict-free in shared memory).
// Preconditions, checked by nobody at run time:
//   - both pointers 16-byte aligned (global: cudaMalloc'd base + a multiple of 16; shared: the
//     dynamic shared base, or a __shared__ array declared __align__(16));
//   - bytes a multiple of 16;
//   - every thread of the CTA calls the function with the same arguments.
// None of them synchronizes the CTA: put __syncthreads() between a load and any thread that reads
// shared memory another thread wrote.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memlab/arch/config.cuh"
#include "memlab/arch/cp_async.cuh"
#include "memlab/vector.cuh"

namespace memlab::tile {

namespace detail {

// dst[i] = src[i] for 16-byte chunks i in [0, chunks), in batches of Unroll chunks per thread whose
// loads are written before their stores. ptxas does not keep that order for shared-memory stores:
// the sm_90 SASS starts storing after 4 loads, so at most 4 chunks are in flight per thread
// (docs/labs/tile.md); load_cp_async16 does not depend on the schedule.
template <int Unroll, class Dst, class Src>
__device__ __forceinline__ void move16(Dst* __restrict__ dst, const Src* __restrict__ src, std::size_t chunks) {
  const std::size_t stride = blockDim.x;
  const std::size_t batch = stride * Unroll;
  const std::size_t full = chunks / batch * batch;
  std::size_t i = threadIdx.x;
  for (; i < full; i += batch) {
    vector_t<16> r[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) r[u] = src[i + static_cast<std::size_t>(u) * stride];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) dst[i + static_cast<std::size_t>(u) * stride] = r[u];
  }
#pragma unroll 1
  for (; i < chunks; i += stride) dst[i] = src[i];
}

}  // namespace detail

// Chunks per batch in the synchronous movers: 8 x 16 B x 256 threads = 32 KiB of loads per CTA as
// written, past what an H100 SM needs to cover DRAM latency (~20 KB, Little's law: docs/notes/copy.md);
// as compiled, at most 4 per thread are in flight (see move16).
inline constexpr int sync_unroll = 8;

// Global -> shared through registers: LDG.E.128 then STS.128.
template <int Unroll = sync_unroll>
__device__ __forceinline__ void load_via_registers16(void* __restrict__ smem, const void* __restrict__ gmem,
                                               std::size_t bytes) {
  detail::move16<Unroll>(static_cast<vector_t<16>*>(smem), static_cast<const vector_t<16>*>(gmem), bytes / 16);
}

// Global -> shared with cp.async.cg (LDGSTS.E.BYPASS.128): no registers, L1 bypassed, every chunk
// of the thread in flight at once. Issues, commits one group and waits for all of this thread's
// copies; the caller still needs __syncthreads() before reading other threads' chunks.
__device__ __forceinline__ void load_cp_async16(void* __restrict__ smem, const void* __restrict__ gmem,
                                              std::size_t bytes) {
  auto* s = static_cast<std::byte*>(smem);
  const auto* g = static_cast<const std::byte*>(gmem);
  const std::size_t chunks = bytes / 16;
  for (std::size_t i = threadIdx.x; i < chunks; i += blockDim.x) arch::cp_async_cg<16>(s + 16 * i, g + 16 * i);
  arch::cp_async_commit();
  arch::cp_async_wait_all();
}

// Shared -> global through registers: LDS.128 then STG.E.128.
template <int Unroll = sync_unroll>
__device__ __forceinline__ void store_lds_stg16(void* __restrict__ gmem, const void* __restrict__ smem,
                                                std::size_t bytes) {
  detail::move16<Unroll>(static_cast<vector_t<16>*>(gmem), static_cast<const vector_t<16>*>(smem), bytes / 16);
}

}  // namespace memlab::tile
