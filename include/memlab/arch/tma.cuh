// memlab/arch/tma.cuh: the Tensor Memory Accelerator (bulk and tensor copies) and the mbarrier that
// signals their completion. PTX ISA 8.0, sm_90+ (MEMLAB_HAS_TMA), through CCCL's cuda::ptx. Built
// for an older arch, a kernel that calls one of these fails to link (CCCL's unresolved
// __cuda_ptx_*_is_not_supported_before_SM_90__ names the instruction): callers test MEMLAB_HAS_TMA.
// Shared addresses: 16-byte aligned for bulk copies, 128-byte for tensor copies; global: 16-byte.
// Sizes: multiples of 16 bytes. One mbarrier phase counts at most 2^20 - 1 transaction bytes.
#pragma once

#include <cuda/ptx>

#include <cstdint>

#include "memlab/arch/config.cuh"

namespace memlab::arch {

// mbarrier.init.shared::cta.b64 [bar], count (sm_80+).
__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, std::uint32_t count) {
  cuda::ptx::mbarrier_init(bar, count);
}

// fence.proxy.async.shared::cta: what generic-proxy code wrote to shared memory (an mbarrier's
// init, a tile) becomes visible to the async proxy (TMA) before the next bulk operation.
__device__ __forceinline__ void fence_proxy_async_shared() { cuda::ptx::fence_proxy_async(cuda::ptx::space_shared); }

// mbarrier.arrive.expect_tx.release.cta.shared::cta.b64: arrives once and adds `bytes` to the
// transaction count the current phase waits for.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
  (void)cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared, bar,
                                             bytes);
}

// mbarrier.try_wait.parity.shared::cta.b64 in a loop: returns once the phase of parity `phase`
// has completed (every arrival made and every transaction byte landed).
__device__ __forceinline__ void mbarrier_wait_parity(std::uint64_t* bar, std::uint32_t phase) {
  while (!cuda::ptx::mbarrier_try_wait_parity(bar, phase)) {
  }
}

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes (SASS UBLKCP): `bytes` from
// global to shared memory; completion counted on `bar`. (shared::cluster is PTX ISA 8.0; a CTA
// launched without clusters is a cluster of one.)
__device__ __forceinline__ void bulk_load(void* dst_shared, const void* src_global, std::uint32_t bytes,
                                          std::uint64_t* bar) {
  cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global, dst_shared, src_global, bytes, bar);
}

// cp.async.bulk.global.shared::cta.bulk_group (SASS UBLKCP): `bytes` from shared to global memory,
// in this thread's current bulk group.
__device__ __forceinline__ void bulk_store(void* dst_global, const void* src_shared, std::uint32_t bytes) {
  cuda::ptx::cp_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, dst_global, src_shared, bytes);
}

// cp.async.bulk.commit_group: closes this thread's bulk group (bulk and tensor stores).
__device__ __forceinline__ void bulk_commit() { cuda::ptx::cp_async_bulk_commit_group(); }

// cp.async.bulk.wait_group.read N: at most N of this thread's bulk groups still read shared
// memory (their source may be overwritten, or the CTA may exit).
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  static_assert(N >= 0 && N <= 63, "cp.async.bulk.wait_group: 0..63 groups");
  cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<N>{});
}

// cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes (SASS UTMALDG):
// the box at (x, y) (innermost coordinate first, in elements) of the tensor map in shared memory;
// rows past the tensor's extent arrive as zeros and count as transaction bytes.
__device__ __forceinline__ void tensor_load_2d(void* dst_shared, const void* tensor_map, int x, int y,
                                               std::uint64_t* bar) {
  const std::int32_t coords[2] = {x, y};
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst_shared, tensor_map, coords,
                                  bar);
}

// cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group (SASS UTMASTG): the box at (x, y)
// back to global memory; parts outside the tensor are not written.
__device__ __forceinline__ void tensor_store_2d(const void* tensor_map, int x, int y, const void* src_shared) {
  const std::int32_t coords[2] = {x, y};
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared, tensor_map, coords, src_shared);
}

}  // namespace memlab::arch
