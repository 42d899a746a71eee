// memlab/tile.cuh: block-cooperative tile movers between global and shared memory.
//
// Every thread of a 1D CTA (threadIdx.x, blockDim.x) moves Width-byte chunks (4, 8 or 16; the *16
// movers 16) of one contiguous byte range: thread t takes chunks t, t + blockDim.x, ... so each
// warp instruction covers 32 x Width consecutive bytes (whole 128-byte lines in global memory,
// conflict-free in shared memory). Preconditions, checked by nobody at run time:
//   - both pointers Width-byte aligned (global: cudaMalloc'd base + a multiple of Width; shared:
//     the dynamic shared base, or a __shared__ array declared __align__(Width), plus a multiple);
//   - bytes a multiple of Width;
//   - every thread of the CTA calls the function with the same arguments.
// None of them synchronizes the CTA: put __syncthreads() between a load and any thread that reads
// shared memory another thread wrote. (The pipeline below is the exception: it synchronizes.)
//
// The movers, global -> shared, by path (docs/labs/async.md measures each):
//   load_via_registers<W>   LDG + STS: the data passes through registers
//   load_cp_async_ca<W>     cp.async.ca, 4/8/16 B (LDGSTS.E[.64|.128]): no registers, allocates in L1
//   load_cp_async16         cp.async.cg, 16 B (LDGSTS.E.BYPASS.128): no registers, L1 bypassed
//   pipeline_cp_async16     cp.async.cg through a ring of shared-memory stages, commit/wait per tile
//   load_bulk, load_tensor_2d   TMA (sm_90+): one thread issues, an mbarrier counts the bytes
// and shared -> global: store_lds_stg<W> (LDS + STG), store_bulk, store_tensor_2d.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memlab/arch/config.cuh"
#include "memlab/arch/cp_async.cuh"
#include "memlab/arch/tma.cuh"
#include "memlab/vector.cuh"

namespace memlab::tile {

namespace detail {

// dst[i] = src[i] for chunks i in [0, chunks) of sizeof(V) bytes, in batches of Unroll chunks per
// thread whose loads are written before their stores. ptxas does not keep that order for
// shared-memory stores: for 16-byte chunks the sm_90 SASS starts storing after 4 loads, so at most
// 4 chunks are in flight per thread (docs/labs/tile.md); the cp.async movers do not depend on the
// schedule.
template <int Unroll, class V>
__device__ __forceinline__ void move_chunks(V* __restrict__ dst, const V* __restrict__ src, std::size_t chunks) {
  const std::size_t stride = blockDim.x;
  const std::size_t batch = stride * Unroll;
  const std::size_t full = chunks / batch * batch;
  std::size_t i = threadIdx.x;
  for (; i < full; i += batch) {
    V r[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) r[u] = src[i + static_cast<std::size_t>(u) * stride];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) dst[i + static_cast<std::size_t>(u) * stride] = r[u];
  }
#pragma unroll 1
  for (; i < chunks; i += stride) dst[i] = src[i];
}

template <int Width>
inline constexpr bool valid_width = Width == 4 || Width == 8 || Width == 16;

}  // namespace detail

// Chunks per batch in the synchronous movers: 8 x 16 B x 256 threads = 32 KiB of loads per CTA as
// written, past what an H100 SM needs to cover DRAM latency (~20 KB, Little's law: docs/notes/copy.md);
// as compiled, at most 4 per thread are in flight (see move_chunks).
inline constexpr int sync_unroll = 8;

// Global -> shared through registers, Width bytes per access: LDG.E[.64|.128] then STS[.64|.128].
template <int Width, int Unroll = sync_unroll>
__device__ __forceinline__ void load_via_registers(void* __restrict__ smem, const void* __restrict__ gmem,
                                                   std::size_t bytes) {
  static_assert(detail::valid_width<Width>, "a tile mover moves 4-, 8- or 16-byte chunks");
  detail::move_chunks<Unroll>(static_cast<vector_t<Width>*>(smem), static_cast<const vector_t<Width>*>(gmem),
                              bytes / Width);
}

// Global -> shared through registers: LDG.E.128 then STS.128.
template <int Unroll = sync_unroll>
__device__ __forceinline__ void load_via_registers16(void* __restrict__ smem, const void* __restrict__ gmem,
                                                     std::size_t bytes) {
  load_via_registers<16, Unroll>(smem, gmem, bytes);
}

// Issues cp.async.ca for this thread's Width-byte chunks (LDGSTS.E, .E.64, .E.128: the data lands
// in shared memory without a register, and is allocated in L1 on its way). No commit, no wait.
template <int Width>
__device__ __forceinline__ void issue_cp_async_ca(void* __restrict__ smem, const void* __restrict__ gmem,
                                                  std::size_t bytes) {
  static_assert(detail::valid_width<Width>, "a tile mover moves 4-, 8- or 16-byte chunks");
  auto* s = static_cast<std::byte*>(smem);
  const auto* g = static_cast<const std::byte*>(gmem);
  const std::size_t chunks = bytes / Width;
  for (std::size_t i = threadIdx.x; i < chunks; i += blockDim.x) arch::cp_async_ca<Width>(s + Width * i, g + Width * i);
}

// Issues cp.async.cg for this thread's 16-byte chunks (LDGSTS.E.BYPASS.128: L2 only, L1 bypassed).
// No commit, no wait.
__device__ __forceinline__ void issue_cp_async_cg16(void* __restrict__ smem, const void* __restrict__ gmem,
                                                    std::size_t bytes) {
  auto* s = static_cast<std::byte*>(smem);
  const auto* g = static_cast<const std::byte*>(gmem);
  const std::size_t chunks = bytes / 16;
  for (std::size_t i = threadIdx.x; i < chunks; i += blockDim.x) arch::cp_async_cg<16>(s + 16 * i, g + 16 * i);
}

// Global -> shared with cp.async.ca, Width bytes per copy: every chunk of the thread in flight at
// once, then one commit and a wait for all of this thread's copies; the caller still needs
// __syncthreads() before reading other threads' chunks.
template <int Width>
__device__ __forceinline__ void load_cp_async_ca(void* __restrict__ smem, const void* __restrict__ gmem,
                                                 std::size_t bytes) {
  issue_cp_async_ca<Width>(smem, gmem, bytes);
  arch::cp_async_commit();
  arch::cp_async_wait_all();
}

// Global -> shared with cp.async.cg (LDGSTS.E.BYPASS.128): no registers, L1 bypassed, every chunk
// of the thread in flight at once. Issues, commits one group and waits for all of this thread's
// copies; the caller still needs __syncthreads() before reading other threads' chunks.
__device__ __forceinline__ void load_cp_async16(void* __restrict__ smem, const void* __restrict__ gmem,
                                                std::size_t bytes) {
  issue_cp_async_cg16(smem, gmem, bytes);
  arch::cp_async_commit();
  arch::cp_async_wait_all();
}

// Shared -> global through registers, Width bytes per access: LDS[.64|.128] then STG.E[.64|.128].
template <int Width, int Unroll = sync_unroll>
__device__ __forceinline__ void store_lds_stg(void* __restrict__ gmem, const void* __restrict__ smem,
                                              std::size_t bytes) {
  static_assert(detail::valid_width<Width>, "a tile mover moves 4-, 8- or 16-byte chunks");
  detail::move_chunks<Unroll>(static_cast<vector_t<Width>*>(gmem), static_cast<const vector_t<Width>*>(smem),
                              bytes / Width);
}

// Shared -> global through registers: LDS.128 then STG.E.128.
template <int Unroll = sync_unroll>
__device__ __forceinline__ void store_lds_stg16(void* __restrict__ gmem, const void* __restrict__ smem,
                                                std::size_t bytes) {
  store_lds_stg<16, Unroll>(gmem, smem, bytes);
}

// ---- a multi-stage cp.async pipeline ------------------------------------------------------------------

// One tile of a stream: where it starts in global memory and how many bytes it has (a multiple of
// 16, at most the stage size).
struct tile_span {
  const void* src;
  std::size_t bytes;
};

// Streams `tiles` tiles through `Stages` shared-memory buffers of stage_bytes each (smem, 16-byte
// aligned, Stages x stage_bytes long) with cp.async.cg, keeping up to Stages tiles in flight:
//   prologue: tiles 0 .. Stages-2 issued, one commit each;
//   for each tile k: issue tile k + Stages - 1 and commit (an empty group past the end, so that
//   every thread commits once per tile), wait_group<Stages - 1> (this thread's part of tile k has
//   landed), __syncthreads() (everyone's has), consume(smem_tile, k), __syncthreads() (the buffer
//   may be refilled).
// source(k) -> tile_span of tile k; consume(const void* smem_tile, std::size_t k) is called by
// every thread. Stages = 1 is the unpipelined loop: issue, wait, consume.
// The commit is never inside a branch that diverges within a warp: the hardware counts groups per
// warp, and a commit in each of two divergent branches counts twice (docs/labs/async.md).
template <int Stages, class Source, class Consume>
__device__ __forceinline__ void pipeline_cp_async16(void* smem, std::size_t stage_bytes, std::size_t tiles,
                                                    Source&& source, Consume&& consume) {
  static_assert(Stages >= 1 && Stages <= 8, "cp.async.wait_group counts 0..7 groups in flight");
  auto* buf = static_cast<std::byte*>(smem);
  const auto issue = [&](std::size_t k) {
    if (k < tiles) {
      const tile_span t = source(k);
      issue_cp_async_cg16(buf + (k % Stages) * stage_bytes, t.src, t.bytes);
    }
    arch::cp_async_commit();
  };
#pragma unroll
  for (int s = 0; s < Stages - 1; ++s) issue(static_cast<std::size_t>(s));
  for (std::size_t k = 0; k < tiles; ++k) {
    issue(k + Stages - 1);
    arch::cp_async_wait<Stages - 1>();
    __syncthreads();
    consume(static_cast<const void*>(buf + (k % Stages) * stage_bytes), k);
    __syncthreads();
  }
}

// ---- TMA: bulk and tensor copies (sm_90+, MEMLAB_HAS_TMA) ---------------------------------------------
// Unlike the movers above these are called by ONE thread, which issues the whole tile; the other
// threads only wait (wait_tile). Completion of a load is counted in bytes on an mbarrier in shared
// memory (8-byte aligned) that the CTA initializes once: init_tile_barrier by one thread, then
// __syncthreads(). Each load completes one phase of the barrier: the n-th load (from 0) is waited
// for with parity n % 2. Alignment: global 16 B, shared 16 B (bulk) or 128 B (tensor); bytes a
// multiple of 16, at most 2^20 - 1 per phase. Stores are fire-and-forget bulk groups: before the
// tile's shared memory is reused or the CTA exits, its thread calls wait_stores_read().

// One thread: an mbarrier expecting one arrival per phase, made visible to the TMA unit.
__device__ __forceinline__ void init_tile_barrier(std::uint64_t* bar) {
  arch::mbarrier_init(bar, 1);
  arch::fence_proxy_async_shared();
}

// One thread: global -> shared with one bulk copy (cp.async.bulk, UBLKCP).
__device__ __forceinline__ void load_bulk(void* smem, const void* gmem, std::uint32_t bytes, std::uint64_t* bar) {
  arch::mbarrier_arrive_expect_tx(bar, bytes);
  arch::bulk_load(smem, gmem, bytes, bar);
}

// One thread: the box at (x, y) of a 2D tensor map into shared memory (cp.async.bulk.tensor,
// UTMALDG). box_bytes is the whole box, rows past the tensor's end included (they arrive as zeros).
__device__ __forceinline__ void load_tensor_2d(void* smem, const void* tensor_map, int x, int y,
                                               std::uint32_t box_bytes, std::uint64_t* bar) {
  arch::mbarrier_arrive_expect_tx(bar, box_bytes);
  arch::tensor_load_2d(smem, tensor_map, x, y, bar);
}

// Any thread: waits until the load of phase parity `phase` has landed.
__device__ __forceinline__ void wait_tile(std::uint64_t* bar, std::uint32_t phase) {
  arch::mbarrier_wait_parity(bar, phase);
}

// One thread: shared -> global with one bulk copy, in a bulk group of its own.
__device__ __forceinline__ void store_bulk(void* gmem, const void* smem, std::uint32_t bytes) {
  arch::bulk_store(gmem, smem, bytes);
  arch::bulk_commit();
}

// One thread: the tile back to the box at (x, y) of a 2D tensor map (UTMASTG), in a bulk group of
// its own; rows outside the tensor are not written.
__device__ __forceinline__ void store_tensor_2d(const void* tensor_map, int x, int y, const void* smem) {
  arch::tensor_store_2d(tensor_map, x, y, smem);
  arch::bulk_commit();
}

// The thread that issued stores: waits until they have all read their shared memory.
__device__ __forceinline__ void wait_stores_read() { arch::bulk_wait_read<0>(); }

}  // namespace memlab::tile
