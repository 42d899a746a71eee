// memlab/arch/ld_st_shared.cuh: shared-memory loads and stores the compiler must keep, each one,
// in order: ld.volatile.shared / st.volatile.shared (PTX ISA 1.0, every SM; SASS LDS / STS, no
// extra modifier). For benchmarks that repeat accesses whose results a compiler could reuse,
// hoist out of a loop or drop. A volatile uint4 cannot be loaded in C++ (no volatile copy), and
// field by field it would be four LDS.32: hence PTX. `p` is a shared address aligned to Bytes.
#pragma once

#include <cstdint>

#include "memlab/vector.cuh"

namespace memlab::arch {

// The 32-bit shared-window address of a generic pointer into shared memory.
__device__ __forceinline__ std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// ld.volatile.shared.{u32, v2.u32, v4.u32}: LDS, LDS.64, LDS.128.
template <int Bytes>
__device__ __forceinline__ vector_t<Bytes> ld_shared_volatile(std::uint32_t addr) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "a shared load moves 4, 8 or 16 bytes per lane");
  vector_t<Bytes> v;
  if constexpr (Bytes == 4) {
    asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  } else if constexpr (Bytes == 8) {
    asm volatile("ld.volatile.shared.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "r"(addr) : "memory");
  } else {
    asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(addr)
                 : "memory");
  }
  return v;
}

// st.volatile.shared.u32: STS.
__device__ __forceinline__ void st_shared_volatile(std::uint32_t addr, std::uint32_t v) {
  asm volatile("st.volatile.shared.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}

// @p st.shared of Bytes (STS, STS.128) when `pred`: one predicated instruction, never a branch.
// PTX ISA 1.0.
template <int Bytes>
__device__ __forceinline__ void st_shared_if(bool pred, void* dst_shared, vector_t<Bytes> v) {
  static_assert(Bytes == 4 || Bytes == 16, "4- or 16-byte stores");
  const auto dst = static_cast<unsigned>(__cvta_generic_to_shared(dst_shared));
  if constexpr (Bytes == 4) {
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %0, 0;\n @p st.shared.b32 [%1], %2;\n}\n" ::"r"(static_cast<int>(pred)),
        "r"(dst), "r"(v)
        : "memory");
  } else {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %0, 0;\n @p st.shared.v4.b32 [%1], {%2, %3, %4, %5};\n}\n" ::"r"(
                     static_cast<int>(pred)),
                 "r"(dst), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
  }
}

}  // namespace memlab::arch
