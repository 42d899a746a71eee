// memlab/arch/ld_global.cuh: global loads the compiler may not narrow.
#pragma once

#include <vector_types.h>

namespace memlab::arch {

// ld.global.v4.u32: one 16-byte load (LDG.E.128), PTX ISA 1.0, every SM. `p` must be 16-byte
// aligned. Written in PTX because from C++ the compiler narrows a uint4 load to the words that
// are used afterwards (a realigning copy uses 5 of 8 words of a pair, and got LDG.E.64 + LDG.E).
__device__ __forceinline__ uint4 ld_global_v4(const void* p) {
  uint4 v;
  asm("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

}  // namespace memlab::arch
