// memlab/arch/ld_global_cache.cuh: global loads with a stated cache operator, kept in program order.
#pragma once

#include <vector_types.h>

#include <cstdint>

namespace memlab::arch {

// ld.global.u64: one 8-byte load with the default cache operator (.ca: L1 and L2), PTX ISA 1.0,
// every SM: LDG.E.64. Spelled without ".ca": nvcc 13.0 turns an explicit ld.global.ca into
// LDG.E.64.STRONG.SM (sm_90), not the weak load every other kernel issues. Volatile asm: a pointer
// chase's loads are neither merged, hoisted out of a loop nor reordered with the clock reads.
__device__ __forceinline__ std::uint64_t ld_global_u64(std::uint64_t addr) {
  std::uint64_t v;
  asm volatile("ld.global.u64 %0, [%1];" : "=l"(v) : "l"(addr) : "memory");
  return v;
}

// ld.global.cg.u64: one 8-byte load cached in L2 only, past the SM's L1, PTX ISA 2.0, every SM
// (sm_90 SASS: LDG.E.64.STRONG.GPU).
__device__ __forceinline__ std::uint64_t ld_global_cg_u64(std::uint64_t addr) {
  std::uint64_t v;
  asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(addr) : "memory");
  return v;
}

// ld.global.v4.f32 / ld.global.cg.v4.f32: one 16-byte load (LDG.E.128), L1-cached (the default
// operator, as above) or L2 only, PTX ISA 2.0, every SM. `p` 16-byte aligned. Volatile: a bandwidth
// loop that reads the same slice pass after pass keeps every pass's loads.
__device__ __forceinline__ float4 ld_global_v4_f32(const void* p) {
  float4 v;
  asm volatile("ld.global.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  return v;
}
__device__ __forceinline__ float4 ld_global_cg_v4_f32(const void* p) {
  float4 v;
  asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  return v;
}

// st.global.v4.f32: one 16-byte store (STG.E.128), PTX ISA 1.0, every SM; volatile, as above.
__device__ __forceinline__ void st_global_v4_f32(void* p, float4 v) {
  asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w) : "memory");
}

}  // namespace memlab::arch
