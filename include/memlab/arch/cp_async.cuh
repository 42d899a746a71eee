// memlab/arch/cp_async.cuh: cp.async (LDGSTS), global -> shared without a register round trip.
// PTX ISA 7.0, sm_80+ (MEMLAB_HAS_CP_ASYNC). .cg and the group operations through CUDA's
// __pipeline_* primitives; .ca in PTX, since those primitives pick .cg for 16 bytes and CCCL's
// cuda::ptx has no non-bulk cp.async.
// Both pointers must be aligned to the copy size; dst in shared, src in global memory.
#pragma once

#include <cuda_pipeline_primitives.h>

#include <cstddef>

#include "memlab/arch/config.cuh"

namespace memlab::arch {

// cp.async.cg.shared.global [dst], [src], 16: caches in L2 only. .cg takes 16 bytes and no other size.
template <int Bytes>
__device__ __forceinline__ void cp_async_cg(void* __restrict__ dst_shared, const void* __restrict__ src_global) {
  static_assert(Bytes == 16, "cp.async.cg copies exactly 16 bytes");
#if MEMLAB_HAS_CP_ASYNC
  __pipeline_memcpy_async(dst_shared, src_global, Bytes);
#else
  static_assert(Bytes != Bytes, "cp.async needs sm_80 or newer");
#endif
}

// cp.async.ca.shared.global [dst], [src], Bytes: allocates in L1 as well; 4, 8 or 16 bytes
// (SASS LDGSTS.E, .E.64, .E.128).
template <int Bytes>
__device__ __forceinline__ void cp_async_ca(void* __restrict__ dst_shared, const void* __restrict__ src_global) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async.ca copies 4, 8 or 16 bytes");
#if MEMLAB_HAS_CP_ASYNC
  asm volatile(
      "cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(dst_shared))),
      "l"(src_global), "n"(Bytes)
      : "memory");
#else
  static_assert(Bytes != Bytes, "cp.async needs sm_80 or newer");
#endif
}

// @p cp.async of Bytes (4, 8: .ca; 16: .cg) when `pred`: one predicated instruction (@P LDGSTS),
// never a branch; the address is formed either way and dereferenced only when `pred` holds (the
// form CUTLASS uses for its predicated cp.async). PTX ISA 7.0, sm_80+.
template <int Bytes>
__device__ __forceinline__ void cp_async_if(bool pred, void* dst_shared, const void* src_global) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async copies 4, 8 or 16 bytes");
#if MEMLAB_HAS_CP_ASYNC
  const auto dst = static_cast<unsigned>(__cvta_generic_to_shared(dst_shared));
  if constexpr (Bytes == 16) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %0, 0;\n @p cp.async.cg.shared.global [%1], [%2], 16;\n}\n" ::"r"(
                     static_cast<int>(pred)),
                 "r"(dst), "l"(src_global)
                 : "memory");
  } else {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %0, 0;\n @p cp.async.ca.shared.global [%1], [%2], %3;\n}\n" ::"r"(
                     static_cast<int>(pred)),
                 "r"(dst), "l"(src_global), "n"(Bytes)
                 : "memory");
  }
#else
  static_assert(Bytes != Bytes, "cp.async needs sm_80 or newer");
#endif
}

// cp.async.commit_group: closes the group of this thread's cp.async issued since the last commit.
__device__ __forceinline__ void cp_async_commit() {
#if MEMLAB_HAS_CP_ASYNC
  __pipeline_commit();
#endif
}

// cp.async.wait_group N: waits until at most N of this thread's committed groups are in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  static_assert(N >= 0 && N <= 8, "cp.async.wait_group: 0..8 groups");
#if MEMLAB_HAS_CP_ASYNC
  __pipeline_wait_prior(N);
#endif
}

// Every committed cp.async group of this thread has landed in shared memory (wait_group 0). Copies not yet
// committed are not waited for: cp_async_commit() first (the hierarchy lab's smem_dot once read its
// staged slices before they landed; racecheck and its verification caught it on the H100).
__device__ __forceinline__ void cp_async_wait_all() { cp_async_wait<0>(); }

}  // namespace memlab::arch
