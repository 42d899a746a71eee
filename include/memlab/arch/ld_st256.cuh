// memlab/arch/ld_st256.cuh: 32-byte global loads and stores, one instruction each.
// ld.global.v8.b32 / st.global.v8.b32: PTX ISA 8.8, sm_100+ (MEMLAB_HAS_LDST256); nvcc 13 compiles
// them to LDG.E.ENL2.256 / STG.E.ENL2.256. CCCL's cuda::ptx::ld/st stop at b128. Used on an
// arch without them, they fail the build: callers test MEMLAB_HAS_LDST256. `p` 32-byte aligned.
#pragma once

#include "memlab/arch/config.cuh"
#include "memlab/vector.cuh"

namespace memlab::arch {

template <int Bytes = 32>
__device__ __forceinline__ vector_t<32> ld_global_256(const void* p) {
  static_assert(Bytes == 32, "a 256-bit access moves 32 bytes");
  vector_t<32> v;
#if MEMLAB_HAS_LDST256
  asm volatile("ld.global.v8.b32 {%0, %1, %2, %3, %4, %5, %6, %7}, [%8];"
               : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3]), "=r"(v.w[4]), "=r"(v.w[5]), "=r"(v.w[6]),
                 "=r"(v.w[7])
               : "l"(p));
#else
  static_assert(Bytes != Bytes, "256-bit global loads need sm_100 or newer (MEMLAB_HAS_LDST256)");
#endif
  return v;
}

template <int Bytes = 32>
__device__ __forceinline__ void st_global_256(void* p, const vector_t<32>& v) {
  static_assert(Bytes == 32, "a 256-bit access moves 32 bytes");
#if MEMLAB_HAS_LDST256
  asm volatile("st.global.v8.b32 [%0], {%1, %2, %3, %4, %5, %6, %7, %8};" ::"l"(p), "r"(v.w[0]), "r"(v.w[1]),
               "r"(v.w[2]), "r"(v.w[3]), "r"(v.w[4]), "r"(v.w[5]), "r"(v.w[6]), "r"(v.w[7])
               : "memory");
#else
  static_assert(Bytes != Bytes, "256-bit global stores need sm_100 or newer (MEMLAB_HAS_LDST256)");
#endif
}

}  // namespace memlab::arch
