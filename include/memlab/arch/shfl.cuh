// memlab/arch/shfl.cuh: warp shuffles without the divergent-warp fallback.
#pragma once

namespace memlab::arch {

// shfl.sync.down.b32 by one lane, full warp: lane i gets lane i + 1's value (lane 31 its own).
// PTX ISA 6.0, sm_30+. Every lane must execute it. Written in PTX because __shfl_down_sync
// compiles to a BRA.DIV check plus a fallback function for divergent warps, and on sm_80/sm_100
// that fallback spilled registers (ptxas -warn-spills; a build error here).
__device__ __forceinline__ unsigned shfl_down1(unsigned v) {
  unsigned r;
  asm volatile("shfl.sync.down.b32 %0, %1, 1, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v));
  return r;
}

// The same within each 16-lane half of the warp (c = (32 - 16) << 8 | 0x1f, as __shfl_down_sync with
// width 16): lane i gets lane i + 1's value, lanes 15 and 31 their own. Every lane must execute it.
__device__ __forceinline__ unsigned shfl_down1_half(unsigned v) {
  unsigned r;
  asm volatile("shfl.sync.down.b32 %0, %1, 1, 0x101f, 0xffffffff;" : "=r"(r) : "r"(v));
  return r;
}

// shfl.sync.down.b32 by `delta` lanes (known only at run time) within each 16-lane half: lane i gets lane
// i + delta's value where that is in its half, else its own. Every lane must execute it.
__device__ __forceinline__ unsigned shfl_down_half(unsigned v, unsigned delta) {
  unsigned r;
  asm volatile("shfl.sync.down.b32 %0, %1, %2, 0x101f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(delta));
  return r;
}

}  // namespace memlab::arch
