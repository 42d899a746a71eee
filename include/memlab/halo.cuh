// memlab/halo.cuh: a block-cooperative mover for a tile whose rows come from different arrays —
// the tile of a stencil with its halo rows, where a halo row may lie in a neighbouring domain
// (stitched physics, a PML, a ghost zone), past the end of the data (skipped), or in the same
// array as the tile.
//
//   memlab::halo::load_rows<memlab::halo::path::cp_async, 16, Rows, RowChunks, Threads>(
//       smem, source, valid_rows, valid_chunks);
//
// The tile is Rows x RowChunks chunks of Bytes (4 or 16) each, dense in shared memory (row r at
// smem + r x RowChunks x Bytes). `source(r)` gives the global address of row r's first byte (a
// `const T*`); only rows [0, valid_rows) and, in each, chunks [0, valid_chunks) are loaded (a tile
// that overhangs the data's last row or column); the rest of the shared tile keeps what it held.
//
// No branch decides where a row comes from or whether it is loaded: `source` is meant to select a
// pointer (SEL), and each chunk is one predicated instruction (arch/'s *_if wrappers), so a
// warp never diverges around a halo load. The same functions serve a caller's own loads. Thread t takes chunks t, t + Threads, ... in row-major order, so a
// warp's access covers 32 consecutive chunks: whole rows, or contiguous pieces of them. The loop is
// unrolled (Rows, RowChunks and Threads are compile-time).
//
// Preconditions, checked by nobody at run time:
//   - blockDim.x == Threads (whole warps), and every thread of the CTA calls with the same arguments;
//   - smem aligned to Bytes; source(r) aligned to Bytes (global memory) for every loaded row;
//   - the sources are not written while the kernel runs (path::registers reads through ld.global.nc);
//   - path::cp_async needs sm_80 or newer (MEMLAB_HAS_CP_ASYNC); it issues the copies and returns:
//     the caller commits (arch::cp_async_commit) and waits (arch::cp_async_wait<N>), which lets a
//     pipeline keep the next tile in flight while it computes on this one.
// Neither path synchronizes the CTA: put __syncthreads() between the load (and the wait) and any
// thread that reads a row another thread wrote.
#pragma once

#include <cuda/cmath>

#include <cstddef>
#include <cstdint>

#include "memlab/arch/config.cuh"
#include "memlab/arch/cp_async.cuh"
#include "memlab/arch/ld_global.cuh"
#include "memlab/arch/ld_st_shared.cuh"
#include "memlab/vector.cuh"

namespace memlab::halo {

// How a chunk travels from global to shared memory.
enum class path {
  registers,  // LDG into registers, then STS: every load of the thread issued before its first store
  cp_async,   // cp.async (LDGSTS): .cg for 16 bytes (L1 bypassed), .ca for 4 and 8
};

// ---- one access under a predicate ---------------------------------------------------------------
// `if (p) load` in C++ is the compiler's to lower: when it judges the guarded block large enough
// (the 64-bit address arithmetic of a halo point counts), it branches around it (sm_90: BSSY/BRA).
// The predicated forms in arch/ (cp_async_if, ld_global_nc_if, st_shared_if) are single predicated
// PTX instructions, so the SASS is a predicated instruction and never a branch.

// One chunk global -> shared along `Path` when `pred` (registers: load_if then store_shared_if).
template <path Path, int Bytes>
__device__ __forceinline__ void copy_if(bool pred, void* dst_shared, const void* src_global) {
  if constexpr (Path == path::cp_async) {
    arch::cp_async_if<Bytes>(pred, dst_shared, src_global);
  } else {
    arch::st_shared_if<Bytes>(pred, dst_shared, arch::ld_global_nc_if<Bytes>(pred, src_global));
  }
}

// ---- a tile of rows ------------------------------------------------------------------------------

template <path Path, int Bytes, int Rows, int RowChunks, int Threads, class RowSource>
__device__ __forceinline__ void load_rows(void* __restrict__ smem, RowSource&& source, int valid_rows,
                                          int valid_chunks) {
  static_assert(Bytes == 4 || Bytes == 16, "chunks of 4 or 16 bytes");
  static_assert(Rows > 0 && RowChunks > 0, "a tile of at least one chunk");
  static_assert(Threads > 0 && Threads % 32 == 0, "a CTA of whole warps");
  constexpr int chunks = Rows * RowChunks;
  constexpr int rounds = cuda::ceil_div(chunks, Threads);  // chunks per thread, the last round partial
  auto* s = static_cast<std::byte*>(smem);
  const int t = static_cast<int>(threadIdx.x);

  // Chunk u of this thread: its predicate and address, computed without a branch. When the CTA
  // covers whole rows, a thread keeps its column and steps down Threads / RowChunks rows a round.
  const auto chunk = [&](int u, bool& ok) {
    const int e = t + u * Threads;
    const bool in_tile = chunks % Threads == 0 || e < chunks;
    int row = Threads % RowChunks == 0 ? t / RowChunks + u * (Threads / RowChunks) : e / RowChunks;
    row = in_tile ? row : Rows - 1;  // a partial round asks for a row of the tile
    const int c = Threads % RowChunks == 0 ? t % RowChunks : e % RowChunks;
    ok = in_tile && row < valid_rows && c < valid_chunks;
    return static_cast<const std::byte*>(static_cast<const void*>(source(row))) + c * Bytes;
  };
  if constexpr (Path == path::cp_async) {
    // Each copy is issued as soon as its address is known: nothing waits on it here.
#pragma unroll
    for (int u = 0; u < rounds; ++u) {
      bool ok;
      const std::byte* src = chunk(u, ok);
      arch::cp_async_if<Bytes>(ok, s + (t + u * Threads) * Bytes, src);
    }
  } else {
    // The loads in one loop, the stores in the next: ptxas may still move a store up behind its load
    // (sm_90: batches of 3-10 loads between stores), but never waits for one load before issuing
    // the next, as a store in the same branch arm as its load makes it do.
    bool ok[rounds];
    vector_t<Bytes> r[rounds];
#pragma unroll
    for (int u = 0; u < rounds; ++u) {
      const std::byte* src = chunk(u, ok[u]);
      r[u] = arch::ld_global_nc_if<Bytes>(ok[u], src);
    }
#pragma unroll
    for (int u = 0; u < rounds; ++u) arch::st_shared_if<Bytes>(ok[u], s + (t + u * Threads) * Bytes, r[u]);
  }
}

}  // namespace memlab::halo
