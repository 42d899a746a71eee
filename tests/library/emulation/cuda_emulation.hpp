// A CUDA thread block on the host, for testing header kernels without a GPU: each of the block's threads
// is a fiber (ucontext) of one OS thread, run until it reaches a barrier, in thread order; __syncthreads()
// and the shuffles (memlab/arch/shfl.cuh shadowed by the file of the same name here) are barriers. Included
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

struct fiber {
  ucontext_t ctx{};
  std::vector<char> stack;
  bool done = false;
};
inline ucontext_t scheduler;
inline std::vector<fiber> fibers;
inline unsigned current = 0;
inline std::function<void()> body;

inline void yield() { swapcontext(&fibers[current].ctx, &scheduler); }

inline void entry() {
  body();
  fibers[current].done = true;
  // returning resumes uc_link: the scheduler
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
      f.done = false;
      f.stack.resize(stack_bytes);
      getcontext(&f.ctx);
      f.ctx.uc_stack.ss_sp = f.stack.data();
      f.ctx.uc_stack.ss_size = f.stack.size();
      f.ctx.uc_link = &scheduler;
      makecontext(&f.ctx, entry, 0);
    }
    for (;;) {  // a round: every live thread runs to its next barrier (or its end)
      unsigned finished = 0;
      for (unsigned t = 0; t < threads; ++t) {
        if (fibers[t].done) {
          ++finished;
          continue;
        }
        current = t;
        threadIdx = {t, 0, 0};
        blockIdx = {b, 0, 0};
        swapcontext(&scheduler, &fibers[t].ctx);
        finished += fibers[t].done;
      }
      if (finished == threads) break;
      if (finished != 0) {
        fail("a barrier not reached by every thread of the block", nullptr);
        return;
      }
    }
  }
}

}  // namespace emu

inline void __syncthreads() { emu::yield(); }
// A barrier of the whole block here: the kernels call it as often in every warp.
inline void __syncwarp(unsigned = 0xffffffffu) { emu::yield(); }
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
