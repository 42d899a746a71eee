// memlab/arch/st_global.cuh: global stores the compiler may not split.
#pragma once

#include <vector_types.h>

namespace memlab::arch {

// st.global.v4.u32: one 16-byte store (STG.E.128), PTX ISA 1.0, every SM. `p` must be 16-byte
// aligned. Written in PTX because from C++ a uint4 assembled from four shared-memory loads was
// stored as four STG.E (nvcc 13.0, sm_90: the transpose lab's smem_vec).
__device__ __forceinline__ void st_global_v4(void* p, const uint4& v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

// st.global.u64: one 8-byte store (STG.E.64), PTX ISA 1.0, every SM. `p` must be 8-byte aligned.
__device__ __forceinline__ void st_global_u64(void* p, unsigned long long v) {
  asm volatile("st.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

}  // namespace memlab::arch
