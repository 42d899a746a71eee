// memlab/arch/ld_global.cuh: global loads the compiler may not narrow.
#pragma once

#include <vector_types.h>

#include "memlab/vector.cuh"

namespace memlab::arch {

// ld.global.v4.u32: one 16-byte load (LDG.E.128), PTX ISA 1.0, every SM. `p` must be 16-byte
// aligned. Written in PTX because from C++ the compiler narrows a uint4 load to the words that
// are used afterwards (a realigning copy uses 5 of 8 words of a pair, and got LDG.E.64 + LDG.E).
__device__ __forceinline__ uint4 ld_global_v4(const void* p) {
  uint4 v;
  asm("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// ld.global.u64: one 8-byte load (LDG.E.64), PTX ISA 1.0, every SM. `p` must be 8-byte aligned.
__device__ __forceinline__ unsigned long long ld_global_u64(const void* p) {
  unsigned long long v;
  asm("ld.global.u64 %0, [%1];" : "=l"(v) : "l"(p));
  return v;
}

// @p ld.global.nc of Bytes (4: LDG.E.CONSTANT, 16: LDG.E.128.CONSTANT) when `pred`, zero otherwise:
// one predicated instruction, never a branch. Through the read-only path, as the compiler loads a
// `const T* __restrict__`: the source must not be written while the kernel runs. PTX ISA 2.0.
template <int Bytes>
__device__ __forceinline__ vector_t<Bytes> ld_global_nc_if(bool pred, const void* src_global) {
  static_assert(Bytes == 4 || Bytes == 16, "4- or 16-byte loads");
  vector_t<Bytes> v{};
  if constexpr (Bytes == 4) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %1, 0;\n @p ld.global.nc.b32 %0, [%2];\n}\n"
                 : "+r"(v)
                 : "r"(static_cast<int>(pred)), "l"(src_global));
  } else {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n @p ld.global.nc.v4.b32 {%0, %1, %2, %3}, [%5];\n}\n"
                 : "+r"(v.x), "+r"(v.y), "+r"(v.z), "+r"(v.w)
                 : "r"(static_cast<int>(pred)), "l"(src_global));
  }
  return v;
}

}  // namespace memlab::arch
