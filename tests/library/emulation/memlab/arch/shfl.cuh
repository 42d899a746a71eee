// Emulation (tests/library/emulation): the shuffles, as a write, a warp barrier, a read and a barrier.
// Every lane of the warp must execute them (as the real ones demand with the full mask); other warps need not.
#pragma once
namespace memlab::arch {
inline unsigned shfl_slots[1024];
inline unsigned shfl_from(unsigned v, unsigned src) {
  const unsigned t = threadIdx.x;
  shfl_slots[t] = v;
  __syncwarp();
  const unsigned r = shfl_slots[src];
  __syncwarp();
  return r;
}
inline unsigned shfl_down1(unsigned v) { return shfl_from(v, threadIdx.x % 32 == 31 ? threadIdx.x : threadIdx.x + 1); }
inline unsigned shfl_down1_half(unsigned v) {
  return shfl_from(v, threadIdx.x % 16 == 15 ? threadIdx.x : threadIdx.x + 1);
}
inline unsigned shfl_down_half(unsigned v, unsigned delta) {
  return shfl_from(v, threadIdx.x % 16 + delta > 15 ? threadIdx.x : threadIdx.x + delta);
}
}  // namespace memlab::arch
