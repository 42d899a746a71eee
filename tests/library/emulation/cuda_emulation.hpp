// A CUDA thread block on the host, for testing header kernels without a GPU: each of the block's threads
// is a fiber (ucontext) of one OS thread, run until it reaches a barrier, in thread order. __syncthreads()
// is a barrier of the block; the shuffles (memlab/arch/shfl.cuh shadowed by the file of the same name here)
// and __syncwarp() are barriers of the warp, so a warp may skip work (shuffles included) that the others
// do, as on the GPU, as long as every lane of the warp takes the same way. Included
// before any memlab header by a host (g++) translation unit whose include path puts this directory before
// include/, so that the PTX wrappers in memlab/arch/ are replaced by checked C++ (ld_global.cuh,
// st_global.cuh: alignment and the buffer each access must stay in). Kernels run unchanged otherwise.
// Slow (a context switch per thread per barrier): for small shapes only.
#pragma once

#include <cuda_runtime_api.h>
#include <ucontext.h>
#include <vector_functions.h>
#include <vector_types.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#undef __host__
#undef __device__
#undef __global__
#undef __shared__
#undef __launch_bounds__
#define __host__
#define __device__
#define __global__
#define __shared__
#define __launch_bounds__(...)

inline uint3 threadIdx, blockIdx, gridDim, blockDim;  // the running fiber's, set by the scheduler

namespace emu {

// The first thing a checked access found wrong ("" while none), with the address.
inline std::string error;
inline void fail(const std::string& what, const void* p) {
  if (error.empty()) error = what + " at " + std::to_string(reinterpret_cast<std::uintptr_t>(p));
}
// Where global loads and stores may go: [lo, hi) each.
inline std::uintptr_t load_lo = 0, load_hi = 0, store_lo = 0, store_hi = 0;
inline void check(const void* p, std::size_t n, std::size_t align, bool store) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  if (a % align != 0)
    fail(std::string(store ? "a store" : "a load") + " of " + std::to_string(n) + " bytes misaligned", p);
  const std::uintptr_t lo = store ? store_lo : load_lo, hi = store ? store_hi : load_hi;
  if (a < lo || a + n > hi) fail(std::string(store ? "a store" : "a load") + " outside its buffer", p);
}

enum class state { ready, at_warp, at_block, done };
struct fiber {
  ucontext_t ctx{};
  std::vector<char> stack;
  state at = state::ready;
};
inline ucontext_t scheduler;
inline std::vector<fiber> fibers;
inline unsigned current = 0;
inline std::function<void()> body;

// The running thread waits at a barrier of its block (__syncthreads) or of its warp (shuffles, __syncwarp).
inline void yield(state barrier = state::at_block) {
  fibers[current].at = barrier;
  swapcontext(&fibers[current].ctx, &scheduler);
}

inline void entry() {
  body();
  fibers[current].at = state::done;
  // returning resumes uc_link: the scheduler
}

// Releases every warp whose threads all wait at a warp barrier; false where none does. A warp barrier that
// some thread of the warp can no longer reach (it has ended, or waits at the block's barrier) is an error.
inline bool release_warps(unsigned threads) {
  bool released = false;
  for (unsigned w0 = 0; w0 < threads; w0 += 32) {
    const unsigned w1 = w0 + 32 < threads ? w0 + 32 : threads;
    unsigned waiting = 0;
    for (unsigned t = w0; t < w1; ++t) waiting += fibers[t].at == state::at_warp;
    if (waiting == 0) continue;
    if (waiting != w1 - w0) {
      bool blocked = true;  // the rest can still arrive only if one of them is ready; none is after a round
      for (unsigned t = w0; t < w1; ++t) blocked = blocked && fibers[t].at != state::ready;
      if (blocked) fail("a warp barrier not reached by every thread of the warp", nullptr);
      continue;
    }
    for (unsigned t = w0; t < w1; ++t) fibers[t].at = state::ready;
    released = true;
  }
  return released;
}

// Runs `kernel()` as every thread of blocks 0 .. grid - 1 of `threads` threads, block after block.
inline void launch(unsigned grid, unsigned threads, const std::function<void()>& kernel) {
  constexpr std::size_t stack_bytes = 256 * 1024;
  fibers.resize(threads);
  gridDim = {grid, 1, 1};
  blockDim = {threads, 1, 1};
  body = kernel;
  for (unsigned b = 0; b < grid && error.empty(); ++b) {
    for (auto& f : fibers) {
      f.at = state::ready;
      f.stack.resize(stack_bytes);
      getcontext(&f.ctx);
      f.ctx.uc_stack.ss_sp = f.stack.data();
      f.ctx.uc_stack.ss_size = f.stack.size();
      f.ctx.uc_link = &scheduler;
      makecontext(&f.ctx, entry, 0);
    }
    for (;;) {  // a round: every ready thread runs to its next barrier (or its end)
      for (unsigned t = 0; t < threads; ++t) {
        if (fibers[t].at != state::ready) continue;
        current = t;
        threadIdx = {t, 0, 0};
        blockIdx = {b, 0, 0};
        swapcontext(&scheduler, &fibers[t].ctx);
      }
      if (release_warps(threads)) continue;
      if (!error.empty()) return;
      unsigned finished = 0, at_block = 0;
      for (const auto& f : fibers) {
        finished += f.at == state::done;
        at_block += f.at == state::at_block;
      }
      if (finished == threads) break;
      if (at_block != threads) {
        fail("a barrier not reached by every thread of the block", nullptr);
        return;
      }
      for (auto& f : fibers) f.at = state::ready;
    }
  }
}

}  // namespace emu

inline void __syncthreads() { emu::yield(emu::state::at_block); }
// Every lane of the warp (the kernels pass the full mask).
inline void __syncwarp(unsigned = 0xffffffffu) { emu::yield(emu::state::at_warp); }
[[noreturn]] inline void __trap() { std::abort(); }

// prmt.b32 default mode: byte n of the result is byte ((s >> 4n) & 7) of {y, x}.
namespace emu {
inline std::uint64_t byte_perms = 0;  // __byte_perm calls: tests see that a PRMT path ran
}  // namespace emu
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  ++emu::byte_perms;
  const unsigned long long xy = x | static_cast<unsigned long long>(y) << 32;
  unsigned r = 0;
  for (unsigned n = 0; n < 4; ++n) r |= static_cast<unsigned>((xy >> (8 * ((s >> (4 * n)) & 7))) & 0xff) << (8 * n);
  return r;
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
  return static_cast<unsigned>((lo | static_cast<unsigned long long>(hi) << 32) >> (shift & 31));
}
