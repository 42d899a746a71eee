// memlab/transpose.cuh: an out-of-place transpose of a batch of row-major matrices, any shape, elements
// of 1, 2, 4 or 8 bytes, any pointer alignment, moved with 16-byte loads and stores.
//
//   #include <memlab/transpose.cuh>
//   cudaError_t e = memlab::transpose(dst, src, rows, cols, stream);             // T elements, one matrix
//   cudaError_t e = memlab::transpose_batched(dst, src, batch, rows, cols, stream);
//   cudaError_t e = memlab::transpose_bytes(dst, src, batch, rows, cols, elem_size, stream);
//
// Needs C++17 and CUDA 12 or newer; no other library.
// Assumptions: src and dst are device-accessible memory of the current device, batch x rows x cols x
// elem_size bytes each, and do not overlap (overlap is refused with cudaErrorInvalidValue). dst[b] is
// cols x rows: dst[b][c][r] = src[b][r][c]. The work is enqueued on `stream`; nothing synchronizes.
// Errors are returned, never thrown, never fatal.
//
// How (the plan, with a picture, is in transpose_plan.hpp): one CTA of 256 threads per tile. Loads:
// each half-warp reads one tile row of src as 16 aligned 16-byte chunks (LDG.E.128), every thread
// 16 / elem_size of them, all in flight before the first is used; where the rows of src are not 16-byte
// aligned, each lane funnel-shifts its chunk and its right neighbour's (a shuffle) into the tile's
// alignment. Each 16-byte vector goes whole into shared memory (STS.128) in a slot permuted by an 8-byte
// XOR swizzle (the transpose lab's smem_vec_rows). Stores: each lane gathers the 16 bytes of an output
// row that it stores, elements of 16 / elem_size consecutive input rows: 4-byte elements one LDS each,
// 8-byte ones one LDS.64 each, and sub-word elements packed: 2-byte ones as words of 2 columns x 1 row
// regrouped pairwise (PRMT), 1-byte ones as words of 4 columns regrouped by a 4 x 4 byte transpose (PRMT),
// so a 16-byte vector of u8 costs 4 shared loads, not 16. Where the rows of dst are not 16-byte aligned,
// a tile's output row is 224 bytes, it owns the 32-byte sectors of dst that start in it (no sector is
// written by two CTAs), each lane funnel-shifts the vectors of the next lanes (shuffles) into dst's
// alignment and stores the aligned chunk (STG.E.128); only the first and last tile of a row of dst store
// the sectors it shares with the row before or after with narrow stores of this tile's bytes.
// Where a side has a few elements (at most 64, not a whole number of tiles: N x 3, 3 x N) or the matrices
// are small (a batch of 3 x 3), a tile would be a sliver: transpose_few_kernel moves whole contiguous blocks
// and runs instead (the aligned 16-byte chunks that cover them, loaded whole into shared memory unshifted),
// gathers whole aligned 16-byte chunks of dst element by element, and stores each with one STG.E.128
// (few_cols, few_rows, small_matrices in transpose_plan.hpp; docs/notes/transpose_skinny.md); 1-byte elements
// with 2..8 rows, and 3 x 3 and 4 x 4 matrices, gather blocks of several chunks at once as words joined by byte
// permutes (transpose_few_blocks_kernel).
// rows == 1 or cols == 1 is a copy of the same bytes (memlab::copy).
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "memlab/arch/config.cuh"
#include "memlab/arch/ld_global.cuh"
#include "memlab/arch/shfl.cuh"
#include "memlab/arch/st_global.cuh"
#include "memlab/copy.cuh"
#include "memlab/realign.cuh"
#include "memlab/transpose_plan.hpp"

namespace memlab {
namespace detail {

struct transpose_args {
  std::byte* dst;
  const std::byte* src;
  std::uint64_t rows, cols;        // of each matrix (elements)
  std::uint64_t tiles_r, tiles_c;  // tiles per matrix, down and along
  std::uint64_t tiles;             // in the whole batch
  std::uint64_t bytes;             // of each buffer
};

// The tile's geometry (memlab/detail/transpose_geometry.hpp has the functions, shared with the host tests).
template <int Es>
struct transpose_tile {
  static constexpr unsigned V = 16 / Es;      // elements per 16-byte vector
  static constexpr unsigned rows = 256 / Es;  // input rows of a tile (= 256 B of an output row)
  static constexpr int steps = 16 / Es;       // 16-byte loads (and stores) per thread
  static constexpr int group = static_cast<int>(transpose_gather_group(Es));  // output rows one gather serves
  __device__ static constexpr unsigned offset(unsigned r, unsigned byte) { return transpose_smem_offset(Es, r, byte); }
  __device__ static constexpr unsigned slot(unsigned r, unsigned q) { return transpose_smem_slot(Es, r, q); }
  __device__ static constexpr bool swapped(unsigned r) { return transpose_smem_swapped(Es, r); }
};

__device__ __forceinline__ unsigned ld_shared_u32(const unsigned char* p) {
  return *reinterpret_cast<const unsigned*>(p);
}

// Vector q (input rows V q .. V q + V - 1) of output rows c .. c + group - 1 (input columns), one uint4
// per output row, from the tile. c is a multiple of `group`.
template <int Es>
__device__ __forceinline__ void gather(const unsigned char* tile, unsigned q, unsigned c,
                                       uint4 (&out)[transpose_tile<Es>::group]) {
  using tt = transpose_tile<Es>;
  if constexpr (Es == 8) {
    uint2 e[2];
#pragma unroll
    for (unsigned k = 0; k < 2; ++k) e[k] = *reinterpret_cast<const uint2*>(tile + tt::offset(2 * q + k, 8 * c));
    out[0] = make_uint4(e[0].x, e[0].y, e[1].x, e[1].y);
  } else if constexpr (Es == 4) {
    unsigned w[4];
#pragma unroll
    for (unsigned k = 0; k < 4; ++k) w[k] = ld_shared_u32(tile + tt::offset(4 * q + k, 4 * c));
    out[0] = make_uint4(w[0], w[1], w[2], w[3]);
  } else if constexpr (Es == 2) {
    // Word k: columns c, c + 1 of row 8 q + k. Output row c takes the low halves, c + 1 the high ones.
    unsigned w[8];
#pragma unroll
    for (unsigned k = 0; k < 8; ++k) w[k] = ld_shared_u32(tile + tt::offset(8 * q + k, 2 * c));
    out[0] = make_uint4(__byte_perm(w[0], w[1], 0x5410), __byte_perm(w[2], w[3], 0x5410),
                        __byte_perm(w[4], w[5], 0x5410), __byte_perm(w[6], w[7], 0x5410));
    out[1] = make_uint4(__byte_perm(w[0], w[1], 0x7632), __byte_perm(w[2], w[3], 0x7632),
                        __byte_perm(w[4], w[5], 0x7632), __byte_perm(w[6], w[7], 0x7632));
  } else {
    // Word k: columns c .. c + 3 of row 16 q + k. Output row c + g, word m: byte g of words 4m .. 4m + 3,
    // a 4 x 4 byte transpose per m (8 PRMT).
    unsigned w[16];
#pragma unroll
    for (unsigned k = 0; k < 16; ++k) w[k] = ld_shared_u32(tile + tt::offset(16 * q + k, c));
    unsigned o[4][4];
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      const unsigned t0 = __byte_perm(w[4 * m], w[4 * m + 1], 0x5140);  // bytes 0, 1 of both, interleaved
      const unsigned t1 = __byte_perm(w[4 * m], w[4 * m + 1], 0x7362);  // bytes 2, 3
      const unsigned t2 = __byte_perm(w[4 * m + 2], w[4 * m + 3], 0x5140);
      const unsigned t3 = __byte_perm(w[4 * m + 2], w[4 * m + 3], 0x7362);
      o[0][m] = __byte_perm(t0, t2, 0x5410);
      o[1][m] = __byte_perm(t0, t2, 0x7632);
      o[2][m] = __byte_perm(t1, t3, 0x5410);
      o[3][m] = __byte_perm(t1, t3, 0x7632);
    }
#pragma unroll
    for (int g = 0; g < 4; ++g) out[g] = make_uint4(o[g][0], o[g][1], o[g][2], o[g][3]);
  }
}

__device__ __forceinline__ uint4 shfl_down1_half(const uint4& v) {
  return make_uint4(arch::shfl_down1_half(v.x), arch::shfl_down1_half(v.y), arch::shfl_down1_half(v.z),
                    arch::shfl_down1_half(v.w));
}
__device__ __forceinline__ uint4 shfl_down_half(const uint4& v, unsigned delta) {
  return make_uint4(arch::shfl_down_half(v.x, delta), arch::shfl_down_half(v.y, delta),
                    arch::shfl_down_half(v.z, delta), arch::shfl_down_half(v.w, delta));
}

// The aligned 16-byte chunk at byte `at` of the buffer `src` (`bytes` long; `at` may be negative), or,
// for the buffer's first or last chunk where it reaches outside the buffer, only its bytes inside, one at
// a time (zeros elsewhere): no load leaves the buffer. Addressed from the kernel's pointer argument, so
// that the compiler keeps the global address space (LDG, not a generic LD).
__device__ __forceinline__ uint4 load_chunk(const std::byte* src, std::int64_t at, std::uint64_t bytes) {
  if (at >= 0 && static_cast<std::uint64_t>(at) + 16 <= bytes) return arch::ld_global_v4(src + at);
  unsigned long long lo = 0, hi = 0;
#pragma unroll 1
  for (int j = 0; j < 16; ++j) {
    const std::int64_t b_at = at + j;
    if (b_at < 0 || static_cast<std::uint64_t>(b_at) >= bytes) continue;
    const unsigned long long b = static_cast<unsigned char>(src[b_at]);
    if (j < 8) {
      lo |= b << (8 * j);
    } else {
      hi |= b << (8 * (j - 8));
    }
  }
  return make_uint4(static_cast<unsigned>(lo), static_cast<unsigned>(lo >> 32), static_cast<unsigned>(hi),
                    static_cast<unsigned>(hi >> 32));
}

// Bytes [lo, hi) of v (little-endian) to chunk + lo .. chunk + hi - 1, chunk 16-byte aligned: the widest
// aligned stores that fit, at most 6. For the ends of a tile row that share a chunk with the next tile, and
// the few kernels' partly owned chunks. Min: where lo and hi are multiples of it (a few kernel's unit), no
// store narrower is compiled.
template <unsigned Min = 1>
__device__ __forceinline__ void store_bytes(std::byte* chunk, const uint4& v, unsigned lo, unsigned hi) {
  static_assert(Min == 1 || Min == 2 || Min == 4 || Min == 8, "a store width");
  const unsigned long long q0 = v.x | static_cast<unsigned long long>(v.y) << 32;
  const unsigned long long q1 = v.z | static_cast<unsigned long long>(v.w) << 32;
#pragma unroll 1
  for (unsigned o = lo; o < hi;) {
    const unsigned long long bits = (o < 8 ? q0 : q1) >> (8 * (o % 8));
    if (Min == 8 || (o % 8 == 0 && o + 8 <= hi)) {
      *reinterpret_cast<unsigned long long*>(chunk + o) = bits;
      o += 8;
    } else if (Min == 4 || (o % 4 == 0 && o + 4 <= hi)) {
      *reinterpret_cast<unsigned*>(chunk + o) = static_cast<unsigned>(bits);
      o += 4;
    } else if (Min == 2 || (o % 2 == 0 && o + 2 <= hi)) {
      *reinterpret_cast<unsigned short*>(chunk + o) = static_cast<unsigned short>(bits);
      o += 2;
    } else {
      *reinterpret_cast<unsigned char*>(chunk + o) = static_cast<unsigned char>(bits);
      o += 1;
    }
  }
}

// Chunk m of a tile's output row (transpose_out_chunk): whole with one 16-byte store where all its bytes
// are the tile's, else only those that are. `chunk` is 16-byte aligned.
__device__ __forceinline__ void store_out_chunk(std::byte* chunk, const uint4& v, chunk_bytes b) {
  if (b.lo == 0 && b.hi == 16) {
    arch::st_global_v4(chunk, v);
  } else if (b.lo < b.hi) {
    store_bytes(chunk, v, static_cast<unsigned>(b.lo), static_cast<unsigned>(b.hi));
  }
}

// One tile per CTA (more when the grid is capped at 2^31 - 1): load, realign (RealignIn), stage in shared
// memory, gather, realign (RealignOut), store. Element size Es; the plan picked the realignments.
template <int Es, bool RealignIn, bool RealignOut>
MEMLAB_KERNEL void __launch_bounds__(transpose_tuning::threads,
                                     transpose_tuning::min_ctas_per_sm(Es, RealignIn, RealignOut))
    transpose_tile_kernel(transpose_args a) {
  using tt = transpose_tile<Es>;
  constexpr unsigned tile_rows =
      (RealignOut ? transpose_tuning::realigned_out_row_bytes : transpose_tuning::row_bytes) / Es;
  constexpr unsigned tile_cols = (RealignIn ? transpose_tuning::realigned_row_bytes : transpose_tuning::row_bytes) / Es;
  constexpr int steps = tt::steps, group = tt::group, store_steps = steps / group;
  constexpr unsigned halo = RealignOut ? 32 / Es : 0;  // rows below the tile that realigned stores read
  static_assert(tile_rows + halo == tt::rows, "a tile and its halo: 256 bytes of rows, 16 vectors of a half-warp");
  extern __shared__ __align__(128) unsigned char tile[];  // (tile_rows + halo) x 256 bytes

  const unsigned t = threadIdx.x, q = t % 16;
  // Where the buffers start, src modulo 16 (chunks), dst modulo 32 (sectors): every alignment below is of
  // an offset plus these.
  const auto src_mis = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(a.src) % 16);
  const auto dst_mis = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(a.dst) % 32);  // sectors
  for (std::uint64_t k = blockIdx.x; k < a.tiles; k += gridDim.x) {
    if (k != blockIdx.x) __syncthreads();  // the previous tile's gathers are done with shared memory
    const transpose_tile_pos tp = transpose_tile_at(k, a.rows, a.cols, a.tiles_r, a.tiles_c, tile_rows, tile_cols);
    const std::uint64_t r0 = tp.r0, c0 = tp.c0;
    const unsigned wr = tp.rows, wc = tp.cols;                // rows and columns of the tile that exist
    const std::uint64_t first = tp.matrix * a.rows * a.cols;  // the matrix's first element, in src and in dst

    // Load step i: tile row t / 16 + 16 i, chunk q. 16 rows down is 16 x cols x Es bytes: the same offset
    // modulo 16 for every step of a thread.
    const unsigned r_first = t / 16;
    const std::uint64_t row = (first + (r0 + r_first) * a.cols + c0) * Es;  // byte of src where the tile row starts
    const unsigned off = RealignIn ? static_cast<unsigned>((src_mis + row) % 16) : 0u;
    const std::uint64_t down16 = 16 * a.cols * Es;
    const unsigned covered = off + wc * Es;  // bytes of aligned chunks from row - off that cover the tile row
    // Rows to load: the tile's, and where stores realign the halo below it (rows of the next tile, as far
    // as the matrix has them).
    const unsigned wl =
        RealignOut ? static_cast<unsigned>(a.rows - r0 < tile_rows + halo ? a.rows - r0 : tile_rows + halo) : wr;
    uint4 v[steps];
#pragma unroll
    for (int i = 0; i < steps; ++i) {
      const std::uint64_t at = row + i * down16 + 16 * q;  // minus off: the chunk's first byte
      v[i] = make_uint4(0, 0, 0, 0);
      if (r_first + 16 * i < wl && 16 * q < covered) {
        v[i] = RealignIn ? load_chunk(a.src, static_cast<std::int64_t>(at) - off, a.bytes)
                         : arch::ld_global_v4(a.src + at);
      }
    }
#pragma unroll
    for (int i = 0; i < steps; ++i) {
      const unsigned r = r_first + 16 * i;
      uint4 x = v[i];
      if constexpr (RealignIn) x = funnel16_any(x, shfl_down1_half(x), off);  // every lane: no branch around it
      if (r < wl && 16 * q < wc * Es) {
        *reinterpret_cast<uint4*>(tile + tt::slot(r, q)) = tt::swapped(r) ? make_uint4(x.z, x.w, x.x, x.y) : x;
      }
    }
    __syncthreads();

    // Store step j: output rows c .. c + group - 1 (transpose_store_row), vector q of each.
    const unsigned len = wr * Es;  // bytes of each output row in this tile
    // Realigned stores: the bytes from the segment's start to the end of dst's row (the end of the tile's
    // stores, transpose_out_end).
    const std::uint64_t left = (a.rows - r0) * Es;
    // 1-byte elements: a rolled loop of 4 steps (unrolled, the 16 gathered words and 4 vectors of each step
    // overlapped the next step's and ptxas spilled at the 128 registers of 2 CTAs per SM on sm_80).
#pragma unroll(Es == 1 ? 1 : store_steps)
    for (int j = 0; j < store_steps; ++j) {
      const unsigned c = transpose_store_row(Es, t, static_cast<unsigned>(j));
      uint4 out[group];
      gather<Es>(tile, q, c, out);  // every lane, also past wc: the shuffles below need them all
      if constexpr (RealignOut) {
        // Lane q (q < 14) stores chunk q: the 16 bytes e % 16 into the pair of vectors e / 16 and e / 16 + 1
        // lanes on (lane 15's: the halo's last).
#pragma unroll
        for (int g = 0; g < group; ++g) {
          const unsigned cg = c + static_cast<unsigned>(g);
          const std::uint64_t seg = (first + (c0 + cg) * a.rows + r0) * Es;  // byte of dst where the output row starts
          const unsigned e = transpose_out_lead(static_cast<unsigned>((dst_mis + seg) % 32)), h = e / 16;
          const unsigned lo = r0 == 0 ? 0u : e, hi = transpose_out_end(e, left);
          const uint4 mine = shfl_down_half(out[g], h), next = shfl_down_half(out[g], h + 1);
          const uint4 chunk = funnel16_any(mine, next, e % 16);
          if (cg < wc && q < 14) {
            std::byte* base = a.dst + seg + e;  // chunk 0: the first sector of the segment
            if (16 * q + 16 + e <= hi) {        // the common case: the whole chunk is the tile's
              arch::st_global_v4(base + 16 * q, chunk);
            } else {
              store_out_chunk(base + 16 * q, chunk, transpose_out_chunk(static_cast<int>(q), e, lo, hi));
            }
            if (q == 0 && lo < e) {  // the first tile of a column: its bytes before chunk 0, chunks -1 and -2
              const uint4 zero = make_uint4(0, 0, 0, 0);
              store_out_chunk(base - 16, funnel16_any(h != 0 ? out[g] : zero, h != 0 ? mine : out[g], e % 16),
                              transpose_out_chunk(-1, e, lo, hi));
              if (h != 0) {
                store_out_chunk(base - 32, funnel16_any(zero, out[g], e % 16), transpose_out_chunk(-2, e, lo, hi));
              }
            }
          }
        }
      } else {
#pragma unroll
        for (int g = 0; g < group; ++g) {
          const unsigned cg = c + static_cast<unsigned>(g);
          const std::uint64_t seg = (first + (c0 + cg) * a.rows + r0) * Es;  // byte of dst where the output row starts
          if (cg < wc && 16 * q < len) arch::st_global_v4(a.dst + seg + 16 * q, out[g]);
        }
      }
    }
  }
}

// 8-byte elements, src and dst 8-byte aligned (the elem8 plan): 32 x 32 tiles and 3 halo rows, a lane an
// element. Loads: warp w, rows w, w + 8, ... of the tile and halo, along a row of src. Stores: warp w,
// output rows w, w + 8, w + 16, w + 24; lane l stores the element e8 + l of the row's segment, e8 the
// elements before its first 32-byte sector boundary, so that each warp store fills whole sectors that no
// other CTA writes; the first tile of a column also stores the e8 before it (transpose_elem8_span).
// (A template, as every kernel in a header: one definition however many files include it.)
template <int Es>
MEMLAB_KERNEL void __launch_bounds__(transpose_tuning::threads, 8) transpose_elem8_kernel(transpose_args a) {
  static_assert(Es == 8, "8-byte elements");
  constexpr unsigned n = transpose_tuning::elem8_edge, halo = transpose_tuning::elem8_halo;
  constexpr unsigned pitch = transpose_tuning::elem8_pitch;
  constexpr int load_steps = static_cast<int>((n + halo + 7) / 8);
  extern __shared__ __align__(128) unsigned char tile[];  // (n + halo) x pitch elements
  auto* t8 = reinterpret_cast<unsigned long long*>(tile);
  const unsigned lane = threadIdx.x % 32, w = threadIdx.x / 32;
  const auto dst_mis = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(a.dst) % 32);  // sectors
  for (std::uint64_t k = blockIdx.x; k < a.tiles; k += gridDim.x) {
    if (k != blockIdx.x) __syncthreads();  // the previous tile's reads are done with shared memory
    const transpose_tile_pos tp = transpose_tile_at(k, a.rows, a.cols, a.tiles_r, a.tiles_c, n, n);
    const std::uint64_t first = tp.matrix * a.rows * a.cols;  // the matrix's first element, in src and in dst
    const std::uint64_t left = a.rows - tp.r0;                // rows of the matrix from the tile's first
    const unsigned wl = static_cast<unsigned>(left < n + halo ? left : n + halo);  // rows to load
    const std::byte* in = a.src + (first + (tp.r0 + w) * a.cols + tp.c0 + lane) * 8;
    const std::uint64_t down8 = 8 * a.cols * 8;  // 8 rows of src
    unsigned long long v[load_steps];
#pragma unroll
    for (int i = 0; i < load_steps; ++i) {
      v[i] = 0;
      if (w + 8 * i < wl && lane < tp.cols) v[i] = arch::ld_global_u64(in + i * down8);
    }
#pragma unroll
    for (int i = 0; i < load_steps; ++i) {
      if (w + 8 * i < wl && lane < tp.cols) t8[(w + 8 * i) * pitch + lane] = v[i];
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < static_cast<int>(n / 8); ++j) {
      const unsigned c = w + 8 * static_cast<unsigned>(j);
      if (c >= tp.cols) continue;                                            // uniform over the warp
      const std::uint64_t seg = (first + (tp.c0 + c) * a.rows + tp.r0) * 8;  // byte of dst where the output row starts
      const transpose_span s = transpose_elem8_span(static_cast<unsigned>((dst_mis + seg) % 32), tp.r0 == 0, left);
      std::byte* out = a.dst + seg;
      for (unsigned r = s.lo + lane; r < s.hi; r += 32) arch::st_global_u64(out + 8 * r, t8[r * pitch + c]);
    }
  }
}

// ---- few rows, few columns, small matrices (transpose_plan.hpp; their geometry in detail/) -----------

struct few_args {
  std::byte* dst;
  const std::byte* src;
  std::uint64_t batch, rows, cols;  // of the job
  std::uint64_t tiles, tiles_per_matrix;
  std::uint64_t bytes;  // of each buffer
  transpose_few_map map;
  std::uint32_t es, per_tile, halo;
  std::uint32_t run_chunks, magic_run_chunks;  // few_rows: chunk slots per run of src, and its reciprocal
  std::uint32_t magic_cols;                    // few_cols: transpose_magic(cols)
  std::uint32_t staging;                       // blocks: where the staging area starts (the image's bytes)
};

// U-byte units: the shared-memory load (LDS.U8 / U16 / 32 / 64), the global store of a partly owned chunk,
// and their place in a 16-byte vector.
template <int U>
using unit_t = std::conditional_t<
    U == 1, unsigned char,
    std::conditional_t<U == 2, unsigned short, std::conditional_t<U == 4, unsigned, unsigned long long>>>;
// Where logical byte `logical` of the image lives (transpose_few_smem). Fixed: the swizzle is none or the slot XOR
// (transpose_few_whole_chunks), the shift the constant 3 and only the mask (0 or 0x70) the plan's, as in the kernel
// before the per-shape layouts; else the plan's mask and shift, both in registers.
template <bool Fixed>
__device__ __forceinline__ unsigned few_smem(unsigned logical, const transpose_few_map& m) {
  return transpose_few_smem(logical, m.swizzle, Fixed ? 3u : m.swizzle_shift);
}
template <int U, bool Fixed>
__device__ __forceinline__ unit_t<U> ld_unit(const unsigned char* image, unsigned logical, const transpose_few_map& m) {
  return *reinterpret_cast<const unit_t<U>*>(image + few_smem<Fixed>(logical, m));
}
// Unit u of the vector w (4 words).
template <int U>
__device__ __forceinline__ void put_unit(unsigned (&w)[4], unsigned u, unit_t<U> v) {
  if constexpr (U == 8) {
    w[2 * u] = static_cast<unsigned>(v);
    w[2 * u + 1] = static_cast<unsigned>(v >> 32);
  } else if constexpr (U == 4) {
    w[u] = v;
  } else {
    constexpr unsigned per_word = 4 / U;
    w[u / per_word] |= static_cast<unsigned>(v) << (8 * U * (u % per_word));
  }
}

// A loaded 16-byte chunk into its slot of the image (STS.128): the slot of transpose_few_smem, its words XOR-
// permuted where the swizzle reaches inside the chunk (transpose_few_chunk_words: two conditional swaps, 8
// selects), so that every byte lands where transpose_few_smem puts it. Fixed: the swizzle moves whole chunks
// (transpose_few_whole_chunks), nothing to permute.
template <bool Fixed>
__device__ __forceinline__ void store_image_chunk(unsigned char* image, unsigned logical, uint4 v,
                                                  const transpose_few_map& m) {
  if constexpr (Fixed) {
    *reinterpret_cast<uint4*>(image + few_smem<true>(logical, m)) = v;
  } else {
    const unsigned x = transpose_few_chunk_words(logical, m.swizzle, m.swizzle_shift);
    if (x & 1u) v = make_uint4(v.y, v.x, v.w, v.z);
    if (x & 2u) v = make_uint4(v.z, v.w, v.x, v.y);
    *reinterpret_cast<uint4*>(image + (few_smem<false>(logical, m) & ~15u)) = v;
  }
}

// The tile's 16-byte output chunk whose first byte is `o` bytes after the tile's nominal output start (all
// of it the tile's): units gathered from the image at P0 + transpose_few_source(...). Where units are whole
// elements the address steps (few_cols: a row of the block; few_rows: the next run, wrapping to the next
// column every `rows`; small_matrices: the next row, wrapping to the next column, then the next matrix);
// else (U < elem_size: a pointer not aligned to the element) each unit's address is computed.
// Partial: only the first `n` units are read (the others are zero): a chunk the tile owns only from `o` on,
// whose units past the n-th are another tile's and may lie outside its image; the addresses still step.
template <int U, transpose_path Path, bool Fixed, bool Partial = false>
__device__ __forceinline__ uint4 gather_few(const unsigned char* image, const few_args& a, unsigned p0, unsigned o,
                                            unsigned c, unsigned n = 16 / U) {
  constexpr unsigned units = 16 / U;
  const transpose_few_map& m = a.map;
  unsigned w[4] = {0, 0, 0, 0};
  const auto read = [&](unsigned u, unsigned at) {
    if (!Partial || u < n) put_unit<U>(w, u, ld_unit<U, Fixed>(image, at, m));
  };
  if (a.es != U) {
#pragma unroll
    for (unsigned u = 0; u < units; ++u) read(u, p0 + transpose_few_source(Path, m, o + U * u, c));
    return make_uint4(w[0], w[1], w[2], w[3]);
  }
  unsigned at = p0 + transpose_few_source(Path, m, o, c);
  if constexpr (Path == transpose_path::few_cols) {
    const unsigned step = m.cols * U;
#pragma unroll
    for (unsigned u = 0; u < units; ++u, at += step) read(u, at);
  } else if constexpr (Path == transpose_path::few_rows) {
    const unsigned j = o / U, col = transpose_div(j, m.magic_rows);
    unsigned r = j - col * m.rows;
    const unsigned wrap = U - m.rows * m.pitch;  // from (rows - 1, col) + pitch to (0, col + 1), modulo 2^32
#pragma unroll
    for (unsigned u = 0; u < units; ++u) {
      read(u, at);
      at += m.pitch;
      if (++r == m.rows) {
        r = 0;
        at += wrap;
      }
    }
  } else {
    const unsigned rc = m.rows * m.cols, j = o / U, mm = transpose_div(j, m.magic_matrix), rem = j - mm * rc;
    unsigned col = transpose_div(rem, m.magic_rows), r = rem - col * m.rows;
    const unsigned step = m.cols * U, wrap_r = U - m.rows * step, wrap_c = rc * U - step;
#pragma unroll
    for (unsigned u = 0; u < units; ++u) {
      read(u, at);
      at += step;
      if (++r == m.rows) {
        r = 0;
        at += wrap_r;
        if (++col == m.cols) {
          col = 0;
          at += wrap_c;
        }
      }
    }
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// One output chunk at dst offset g (16-byte aligned as an address; negative before a misaligned dst's first
// boundary): whole (one STG.E.128) where the tile owns all of it, else its bytes in [lo, hi): gathered as one
// vector from the first of them (gather_few<..., true>: the units past hi not read), moved to their place in
// the chunk (a funnel shift) and stored with the widest aligned stores (store_bytes: 8/4/2/1 bytes, none
// narrower than U, at most 6), not unit by unit (docs/notes/transpose_skinny.md section 6). `nominal`: dst offset of the tile's nominal
// output start (<= lo).
template <int U, transpose_path Path, bool Fixed>
__device__ __forceinline__ void store_few_chunk(const unsigned char* image, const few_args& a, unsigned p0,
                                                std::int64_t g, std::uint64_t lo, std::uint64_t hi,
                                                std::uint64_t nominal, unsigned c) {
  const auto lo_s = static_cast<std::int64_t>(lo), hi_s = static_cast<std::int64_t>(hi);
  if (g >= lo_s && g + 16 <= hi_s) {
    const auto o = static_cast<unsigned>(static_cast<std::uint64_t>(g) - nominal);
    arch::st_global_v4(a.dst + g, gather_few<U, Path, Fixed>(image, a, p0, o, c));
    return;
  }
  // Bytes [first, last) of the chunk are the tile's (both multiples of U: dst, lo and hi are U-aligned).
  const auto first = static_cast<unsigned>((g >= lo_s ? g : lo_s) - g);
  const auto last = static_cast<unsigned>((g + 16 <= hi_s ? g + 16 : hi_s) - g);
  if (first >= last) return;
  const auto o = static_cast<unsigned>(static_cast<std::uint64_t>(g + first) - nominal);
  const uint4 v = gather_few<U, Path, Fixed, true>(image, a, p0, o, c, (last - first) / U);
  const uint4 zero = make_uint4(0, 0, 0, 0);
  store_bytes<U>(a.dst + g, first == 0 ? v : funnel16_any(zero, v, 16 - first), first, last);
}

// ---- 1-byte elements, few_rows of 2..8 rows, 3 x 3 and 4 x 4 matrices: whole blocks as one byte permutation ----
// (docs/notes/transpose_skinny.md section 7) The element-by-element gather above costs ~9 instructions a byte
// (an LDS.U8, the wrap counter, the swizzle, a PRMT). For these shapes the output of a tile comes in blocks whose
// byte permutation is a compile-time constant: few_rows, G columns of R runs (G R / 16 chunks of dst: output byte j
// is byte j / R of run j mod R); small_matrices, lcm(R C, 16) bytes of whole matrices (output byte j is the same
// matrix's byte r C + c, c = (j mod R C) / R, r = (j mod R C) mod R). A thread reads each run of its block (G bytes;
// for small_matrices the whole block: the source of a run of whole matrices is the same bytes) as 32-bit words
// (LDS.32 at the swizzled word: every layout keeps a word whole), funnel-shifts them to the run's alignment,
// builds each output word from at most four of them with at most three PRMTs whose selectors the compiler
// computes, and stores the block's chunks with STG.E.128: about three instructions a byte. What a block gains is
// decided by the shared-memory pipe's wavefronts, not by the instructions: G is the least width that keeps whole
// words and whole chunks (transpose_few_block_columns: 4 for R = 4 and 8, 8 for 2 and 6, 16 for odd R), so that a
// warp's lanes read neighbouring words, and the blocks of five chunks or more (5 and 7 rows, 3 x 3) are staged
// in shared memory and stored from there on consecutive chunks (transpose_few_block_staging). The chunks around
// the blocks (a tile's partly owned ends, a start not on a block) take store_few_chunk.

// few_rows with R rows: a block is G columns (transpose_few_block_columns), R runs of G bytes (segments), G R / 16
// chunks of dst.
template <unsigned R>
struct few_rows_block {
  static constexpr unsigned G = transpose_few_block_columns(R);
  static_assert(G != 0 && G % 4 == 0 && G * R % 16 == 0, "whole words of each run, whole chunks of dst");
  static constexpr unsigned period = R;  // output elements from one block start to the next possible one
  static constexpr unsigned bytes = G * R, segments = R, segment_bytes = G;
  static constexpr bool staged = transpose_few_block_staging(transpose_path::few_rows, R, 0) != 0;
  // The byte of the block's source (segment s's bytes at G s ...) that output byte j takes.
  MEMLAB_HOST_DEVICE static constexpr unsigned source(unsigned j) { return j % R * G + j / R; }
  // Where segment s starts in the image (logical, before the swizzle), for a block at output element e.
  __device__ static unsigned at(unsigned s, unsigned p0, unsigned e, const transpose_few_map& m) {
    return p0 + s * m.pitch + e / R;
  }
};

// small_matrices of R x C: a block is lcm(R C, 16) bytes of whole matrices, one segment, the same bytes of src.
template <unsigned R, unsigned C>
struct small_matrices_block {
  static constexpr unsigned matrix = R * C;
  static constexpr unsigned period = matrix;
  static constexpr unsigned bytes = transpose_few_block_bytes(transpose_path::small_matrices, R, C);
  static constexpr unsigned segments = 1, segment_bytes = bytes;
  static constexpr bool staged = transpose_few_block_staging(transpose_path::small_matrices, R, C) != 0;
  MEMLAB_HOST_DEVICE static constexpr unsigned source(unsigned j) {
    const unsigned mm = j / matrix, rem = j % matrix, c = rem / R, r = rem % R;
    return mm * matrix + r * C + c;
  }
  __device__ static unsigned at(unsigned, unsigned p0, unsigned e, const transpose_few_map&) { return p0 + e; }
};

// Output word q of a block: its 4 bytes come from n distinct aligned source words (word[0..n)), joined by PRMTs:
// n <= 2: one, sel[0]; n == 3: the first two by sel[0], then the third by sel[1]; n == 4: the pairs by sel[0] and
// sel[1], joined by sel[2]. (A selector nibble picks byte 0..7 of the PRMT's two operands.)
struct few_block_word {
  unsigned n = 0;
  unsigned word[4] = {0, 0, 0, 0};
  unsigned sel[3] = {0, 0, 0};
};
template <class Block>
MEMLAB_HOST_DEVICE constexpr few_block_word few_block_word_of(unsigned q) {
  few_block_word w;
  unsigned which[4] = {0, 0, 0, 0}, byte[4] = {0, 0, 0, 0};
  for (unsigned i = 0; i < 4; ++i) {
    const unsigned b = Block::source(4 * q + i), word = b / 4;
    unsigned k = 0;
    while (k < w.n && w.word[k] != word) ++k;
    if (k == w.n) w.word[w.n++] = word;
    which[i] = k;
    byte[i] = b % 4;
  }
  for (unsigned i = 0; i < 4; ++i) {
    const unsigned nib = 4 * i;
    if (w.n <= 2) {
      w.sel[0] |= (which[i] * 4 + byte[i]) << nib;
    } else if (w.n == 3) {
      if (which[i] < 2) w.sel[0] |= (which[i] * 4 + byte[i]) << nib;
      w.sel[1] |= (which[i] < 2 ? i : 4 + byte[i]) << nib;
    } else {
      if (which[i] < 2) w.sel[0] |= (which[i] * 4 + byte[i]) << nib;
      if (which[i] >= 2) w.sel[1] |= ((which[i] - 2) * 4 + byte[i]) << nib;
      w.sel[2] |= (which[i] < 2 ? i : 4 + i) << nib;
    }
  }
  return w;
}

template <class Block, unsigned Q, unsigned Words>
__device__ __forceinline__ unsigned few_block_out(const unsigned (&a)[Words]) {
  constexpr few_block_word w = few_block_word_of<Block>(Q);
  if constexpr (w.n == 1) {
    return w.sel[0] == 0x3210 ? a[w.word[0]] : __byte_perm(a[w.word[0]], 0u, w.sel[0]);
  } else if constexpr (w.n == 2) {
    return __byte_perm(a[w.word[0]], a[w.word[1]], w.sel[0]);
  } else if constexpr (w.n == 3) {
    return __byte_perm(__byte_perm(a[w.word[0]], a[w.word[1]], w.sel[0]), a[w.word[2]], w.sel[1]);
  } else {
    return __byte_perm(__byte_perm(a[w.word[0]], a[w.word[1]], w.sel[0]),
                       __byte_perm(a[w.word[2]], a[w.word[3]], w.sel[1]), w.sel[2]);
  }
}

// Segment S of a block (Bytes long, at logical image byte `at`, any alignment) as Bytes / 4 aligned words in
// a[Off ...]: the words that hold its bytes, at their swizzled places (the last one: the word of its last byte,
// so that no word outside the chunks the tile loaded is read), funnel-shifted by the offset of `at` in its word.
template <unsigned Bytes, unsigned Off, bool Fixed, unsigned Words>
__device__ __forceinline__ void load_block_segment(const unsigned char* image, unsigned at,
                                                   const transpose_few_map& m, unsigned (&a)[Words]) {
  constexpr unsigned n = Bytes / 4;
  const unsigned base = at & ~3u, shift = 8 * (at & 3u);
  unsigned raw[n + 1];
#pragma unroll
  for (unsigned i = 0; i < n; ++i) raw[i] = ld_shared_u32(image + few_smem<Fixed>(base + 4 * i, m));
  raw[n] = ld_shared_u32(image + few_smem<Fixed>((at + Bytes - 1) & ~3u, m));
#pragma unroll
  for (unsigned i = 0; i < n; ++i) a[Off + i] = __funnelshift_r(raw[i], raw[i + 1], shift);
}

template <class Block, bool Fixed, unsigned Words, unsigned... S>
__device__ __forceinline__ void load_block(const unsigned char* image, unsigned p0, unsigned e,
                                           const transpose_few_map& m, unsigned (&a)[Words],
                                           std::integer_sequence<unsigned, S...>) {
  (load_block_segment<Block::segment_bytes, S * Block::segment_bytes / 4, Fixed>(image, Block::at(S, p0, e, m), m, a),
   ...);
}
// Chunk I of the block (its output words 4 I .. 4 I + 3) from the block's source words.
template <class Block, unsigned I, unsigned Words>
__device__ __forceinline__ uint4 few_block_chunk(const unsigned (&w)[Words]) {
  return make_uint4(few_block_out<Block, 4 * I>(w), few_block_out<Block, 4 * I + 1>(w),
                    few_block_out<Block, 4 * I + 2>(w), few_block_out<Block, 4 * I + 3>(w));
}
template <class Block, unsigned Words, class Store, unsigned... I>
__device__ __forceinline__ void put_few_chunks(const unsigned (&w)[Words], Store& store,
                                               std::integer_sequence<unsigned, I...>) {
  (store(I, few_block_chunk<Block, I>(w)), ...);
}

// The block at output element e of the tile (a multiple of Block::period): its chunks, in order, each to
// store(i, chunk) as soon as it is built (no array of the block's output: 5 to 9 chunks a lane stay in registers
// only as long as needed).
template <class Block, bool Fixed, class Store>
__device__ __forceinline__ void emit_few_block(const unsigned char* image, const few_args& a, unsigned p0, unsigned e,
                                               Store&& store) {
  unsigned w[Block::bytes / 4];
  load_block<Block, Fixed>(image, p0, e, a.map, w, std::make_integer_sequence<unsigned, Block::segments>{});
  put_few_chunks<Block>(w, store, std::make_integer_sequence<unsigned, Block::bytes / 16>{});
}

// Blocks [0, blocks) of a tile, block b at output element e0 + b x Block::bytes and dst offset g + 16 x (b x
// Block::bytes / 16), thread t's share. Unstaged: each thread stores its blocks' chunks. Staged: each warp builds
// 32 consecutive blocks, writes them to its part of the staging area, and stores them from there, lane after lane
// on consecutive chunks; every warp takes as many rounds (the emulation's barriers count them).
template <class Block, bool Fixed>
__device__ __forceinline__ void store_few_blocks(unsigned char* smem, const few_args& a, unsigned p0, unsigned e0,
                                                 std::int64_t g, unsigned blocks, unsigned t) {
  constexpr unsigned threads = transpose_tuning::threads, per_block = Block::bytes / 16;
  if constexpr (!Block::staged) {
#pragma unroll 1
    for (unsigned b = t; b < blocks; b += threads) {
      std::byte* to = a.dst + g + 16 * std::int64_t{per_block * b};
      emit_few_block<Block, Fixed>(smem, a, p0, e0 + Block::bytes * b,
                                   [&](unsigned i, uint4 v) { arch::st_global_v4(to + 16 * i, v); });
    }
  } else {
    const unsigned lane = t % 32, warp = t / 32;
    unsigned char* stage = smem + a.staging + warp * 32 * Block::bytes;
#pragma unroll 1
    for (unsigned base = warp * 32; base < (blocks + threads - 1) / threads * threads; base += threads) {
      const unsigned b = base + lane, n = blocks > base ? (blocks - base < 32 ? blocks - base : 32) : 0;
      if (b < blocks) {
        unsigned char* mine = stage + lane * Block::bytes;
        emit_few_block<Block, Fixed>(smem, a, p0, e0 + Block::bytes * b,
                                     [&](unsigned i, uint4 v) { *reinterpret_cast<uint4*>(mine + 16 * i) = v; });
      }
      __syncwarp();
      std::byte* to = a.dst + g + 16 * std::int64_t{per_block * base};
#pragma unroll 1
      for (unsigned c = lane; c < n * per_block; c += 32) {
        arch::st_global_v4(to + 16 * c, *reinterpret_cast<const uint4*>(stage + 16 * c));
      }
      __syncwarp();
    }
  }
}

// Calls f(Block{}) for the shape's block type (transpose_few_block_columns, transpose_few_small_block) and returns
// true, or returns false (no block: every chunk through store_few_chunk).
template <unsigned R, class F>
__device__ __forceinline__ bool few_rows_block_if(unsigned rows, F& f) {
  if constexpr (transpose_few_block_columns(R) != 0) {
    if (rows == R) {
      f(few_rows_block<R>{});
      return true;
    }
  }
  return false;
}
template <class F, unsigned... R>
__device__ __forceinline__ bool few_rows_blocks(unsigned rows, F& f, std::integer_sequence<unsigned, R...>) {
  return (few_rows_block_if<R>(rows, f) || ...);
}
template <transpose_path Path, class F>
__device__ __forceinline__ bool with_few_block(const few_args& a, F&& f) {
  if (a.es != 1) return false;
  if constexpr (Path == transpose_path::few_rows) {
    return few_rows_blocks(a.map.rows, f, std::make_integer_sequence<unsigned, 9>{});
  } else if constexpr (Path == transpose_path::small_matrices) {
    if (!transpose_few_small_block(a.map.rows, a.map.cols)) return false;
    if (a.map.rows == 3) {
      f(small_matrices_block<3, 3>{});
    } else {
      f(small_matrices_block<4, 4>{});
    }
    return true;
  }
  return false;
}

// Few rows, few columns or small matrices (docs/notes/transpose_skinny.md): per tile, the aligned 16-byte
// chunks that cover what it reads (one block, or `rows` runs for few_rows) go whole into shared memory
// (LDG.E.128, STS.128 at their own offset modulo 16: nothing is shifted), then each thread gathers whole
// aligned 16-byte chunks of the bytes of dst the tile owns and stores each with one STG.E.128. U: the unit,
// the largest power of two dividing elem_size, src and dst. Fixed: the image's swizzle is none or the slot XOR
// (transpose_few_whole_chunks: the fixed layout's, and every layout few_cols takes), compiled in, so that a shape
// without bank conflicts runs the gather of the kernel before the per-shape layouts; else any candidate of
// transpose_few_layout_of, the shift in a register and each chunk's words permuted before its STS.128 (a gather
// ~3% slower on the H100 where it had no conflicts to remove: docs/notes/transpose_skinny.md section 6).
// Blocks: the tile's output in blocks of a compile-time byte permutation where it has them (with_few_block:
// transpose_few_blocks_kernel), the chunks around them one by one; else every chunk one by one. Two kernels, so
// that the shapes without blocks run the element-by-element kernel unchanged (with the block code beside it, the
// same kernel ran them 1-2% slower on the H100: docs/notes/transpose_skinny.md section 7).
template <int U, transpose_path Path, bool Fixed, bool Blocks>
__device__ __forceinline__ void transpose_few_tiles(const few_args& a) {
  static_assert(U == 1 || U == 2 || U == 4 || U == 8, "units of 1, 2, 4 or 8 bytes");
  static_assert(is_few(Path), "a few path");
  static_assert(Fixed || Path != transpose_path::few_cols, "few_cols keeps the fixed layout");
  constexpr int steps = transpose_tuning::few_load_steps;
  constexpr unsigned threads = transpose_tuning::threads;
  extern __shared__ __align__(128) unsigned char tile[];  // the image: plan.smem_bytes
  const unsigned t = threadIdx.x;
  const auto src_at = reinterpret_cast<std::uintptr_t>(a.src), dst_at = reinterpret_cast<std::uintptr_t>(a.dst);
  const std::uint64_t es = a.es;
  for (std::uint64_t k = blockIdx.x; k < a.tiles; k += gridDim.x) {
    if (k != blockIdx.x) __syncthreads();  // the previous tile's gathers are done with shared memory
    const transpose_few_tile tp =
        transpose_few_tile_at(Path, k, a.batch, a.rows, a.cols, a.tiles_per_matrix, a.per_tile, a.halo);

    // What the tile reads (one block, or `rows` runs), loaded whole into the image; p0: where its first byte is.
    const transpose_few_input in = transpose_few_input_of(Path, tp, a.rows, a.cols, es);
    const auto p0 = static_cast<unsigned>((src_at + in.in) % 16);
    const auto slot = [&](int i) {
      return transpose_few_slot_at(Path, t + threads * static_cast<unsigned>(i), src_at, in, a.rows, a.cols, es,
                                   a.run_chunks, a.magic_run_chunks, a.map.pitch);
    };
    uint4 v[steps];
#pragma unroll
    for (int i = 0; i < steps; ++i) {
      const transpose_few_slot sl = slot(i);
      v[i] = sl.valid ? load_chunk(a.src, sl.at, a.bytes) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int i = 0; i < steps; ++i) {
      const transpose_few_slot sl = slot(i);
      if (sl.valid) store_image_chunk<Fixed>(tile, sl.image, v[i], a.map);
    }
    __syncthreads();

    if constexpr (Path == transpose_path::few_cols) {
      // `cols` runs of dst (output rows), transpose_few_run_slots chunk slots each; slot f: a chunk of a run
      // (transpose_few_cols_slot: pairs of lanes store whole sectors, pairs take consecutive runs).
      const unsigned per_run = transpose_few_run_slots(
          transpose_few_run_of(Path, tp, 0, a.batch, a.rows, a.cols, es, a.per_tile), a.per_tile, es);
      const unsigned slots = per_run * static_cast<unsigned>(a.cols);
#pragma unroll 1
      for (unsigned f = t; f < slots; f += threads) {
        const auto [c, m] = transpose_few_cols_slot(f, static_cast<unsigned>(a.cols), a.magic_cols);
        const transpose_few_run r = transpose_few_run_of(Path, tp, c, a.batch, a.rows, a.cols, es, a.per_tile);
        const std::uint64_t lo = transpose_few_bound(dst_at, r.run, r.run_bytes, r.at0);
        const std::uint64_t hi = transpose_few_bound(dst_at, r.run, r.run_bytes, r.at1);
        const std::int64_t g = static_cast<std::int64_t>((dst_at + lo) / 16 * 16 - dst_at) + 16 * std::int64_t{m};
        if (g < static_cast<std::int64_t>(hi)) {
          store_few_chunk<U, Path, Fixed>(tile, a, p0, g, lo, hi, r.run + r.at0, c);
        }
      }
    } else {
      // One block of dst (few_rows: the matrix's transpose from column `first`; small_matrices: the transposes
      // of matrices `first`...); slot f: its chunk f.
      const transpose_few_run r = transpose_few_run_of(Path, tp, 0, a.batch, a.rows, a.cols, es, a.per_tile);
      const std::uint64_t lo = transpose_few_bound(dst_at, r.run, r.run_bytes, r.at0);
      const std::uint64_t hi = transpose_few_bound(dst_at, r.run, r.run_bytes, r.at1);
      const auto g0 = static_cast<std::int64_t>((dst_at + lo) / 16 * 16 - dst_at);  // < 0: before a misaligned dst
      const auto chunks = static_cast<unsigned>((static_cast<std::int64_t>(hi) - g0 + 15) / 16);
      if constexpr (Blocks) {
        const std::uint64_t nominal = r.run + r.at0;
        // Chunks [first_block, first_block + in_blocks) go as whole blocks: from the first chunk all of it the
        // tile's whose first output element starts a block, as many whole blocks as end at or before hi. The rest,
        // chunk by chunk, from the thread after the last block's.
        unsigned first_block = 0, blocks = 0, in_blocks = 0;
        with_few_block<Path>(a, [&](auto block) {
          using Block = decltype(block);
          constexpr unsigned per_block = Block::bytes / 16, step = 16 % Block::period;
          const unsigned whole0 = g0 >= static_cast<std::int64_t>(lo) ? 0u : 1u;
          const auto whole_end = static_cast<unsigned>((static_cast<std::int64_t>(hi) - g0) / 16);
          const auto e0 = static_cast<unsigned>(g0 + 16 * whole0 - static_cast<std::int64_t>(nominal));
          unsigned f = whole0, phase = e0 % Block::period;
#pragma unroll 1
          for (unsigned n = 0; n < Block::period && phase != 0; ++n, ++f) {
            phase += step;
            if (phase >= Block::period) phase -= Block::period;
          }
          if (phase != 0 || f >= whole_end) return;  // no output element in reach starts a block
          first_block = f;
          blocks = (whole_end - f) / per_block;
          in_blocks = blocks * per_block;
          store_few_blocks<Block, Fixed>(tile, a, p0, e0 + 16 * (f - whole0), g0 + 16 * std::int64_t{f}, blocks, t);
        });
        const unsigned rest = chunks - in_blocks, after = blocks % threads;
#pragma unroll 1
        for (unsigned i = (t + threads - after) % threads; i < rest; i += threads) {
          const unsigned f = i < first_block ? i : i + in_blocks;
          store_few_chunk<U, Path, Fixed>(tile, a, p0, g0 + 16 * std::int64_t{f}, lo, hi, nominal, 0);
        }
      } else {
#pragma unroll 1
        for (unsigned f = t; f < chunks; f += threads) {
          store_few_chunk<U, Path, Fixed>(tile, a, p0, g0 + 16 * std::int64_t{f}, lo, hi, r.run + r.at0, 0);
        }
      }
    }
  }
}

template <int U, transpose_path Path, bool Fixed>
MEMLAB_KERNEL void __launch_bounds__(transpose_tuning::threads, transpose_tuning::few_min_ctas_per_sm)
    transpose_few_kernel(few_args a) {
  transpose_few_tiles<U, Path, Fixed, false>(a);
}
// 1-byte elements of the shapes transpose_few_has_blocks names (few_rows, small_matrices). Before sm_90 (164 KiB
// of shared memory a SM at most) four CTAs of a staged shape (up to 52 KiB each) do not fit a SM anyway, and at
// 64 registers nvcc 13.0 spills 8-20 bytes here for sm_80: three CTAs a SM, as many registers as that allows.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define MEMLAB_FEW_BLOCKS_MIN_CTAS 3
#else
#define MEMLAB_FEW_BLOCKS_MIN_CTAS transpose_tuning::few_min_ctas_per_sm
#endif
template <transpose_path Path, bool Fixed>
MEMLAB_KERNEL void __launch_bounds__(transpose_tuning::threads, MEMLAB_FEW_BLOCKS_MIN_CTAS)
    transpose_few_blocks_kernel(few_args a) {
  static_assert(Path == transpose_path::few_rows || Path == transpose_path::small_matrices, "no blocks for few_cols");
  transpose_few_tiles<1, Path, Fixed, true>(a);
}
#undef MEMLAB_FEW_BLOCKS_MIN_CTAS

// Launches `kernel` (transpose_tile_kernel or transpose_elem8_kernel) with the plan's grid, block and dynamic
// shared memory; above 48 KiB a kernel must opt in, once per device (1-byte elements: 64 KiB tiles).
template <class Args>
inline cudaError_t launch_tile_kernel(const void* kernel, std::atomic<unsigned long long>& opted_in,
                                      const transpose_plan& p, const Args& a, cudaStream_t stream) {
  if (p.smem_bytes > 48 * 1024) {
    int device = 0;
    if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
    const unsigned long long bit = device < 64 ? 1ull << device : 0;
    if (bit == 0 || (opted_in.load(std::memory_order_relaxed) & bit) == 0) {
      if (const cudaError_t e =
              cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(p.smem_bytes));
          e != cudaSuccess) {
        return e;
      }
      opted_in.fetch_or(bit, std::memory_order_relaxed);
    }
  }
  Args args = a;
  void* params[] = {&args};
  return cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(p.grid)), dim3(static_cast<unsigned>(p.threads)), params,
                          p.smem_bytes, stream);
}

template <int Es, bool RealignIn, bool RealignOut>
inline cudaError_t launch_tiles(const transpose_plan& p, const transpose_args& a, cudaStream_t stream) {
  static std::atomic<unsigned long long> opted_in{0};  // devices this kernel opted in on
  return launch_tile_kernel(reinterpret_cast<const void*>(&transpose_tile_kernel<Es, RealignIn, RealignOut>), opted_in,
                            p, a, stream);
}

inline cudaError_t launch_elem8(const transpose_plan& p, const transpose_args& a, cudaStream_t stream) {
  static std::atomic<unsigned long long> opted_in{0};
  return launch_tile_kernel(reinterpret_cast<const void*>(&transpose_elem8_kernel<8>), opted_in, p, a, stream);
}

// The few kernel's arguments for a few plan (few_plan_fits: these pointers).
inline few_args few_args_of(const transpose_plan& p, void* dst, const void* src) {
  const std::uint32_t per_tile = p.path == transpose_path::few_cols   ? static_cast<std::uint32_t>(p.tile_rows)
                                 : p.path == transpose_path::few_rows ? static_cast<std::uint32_t>(p.tile_cols)
                                                                      : p.tile_matrices;
  return {static_cast<std::byte*>(dst),
          static_cast<const std::byte*>(src),
          p.batch,
          p.rows,
          p.cols,
          p.tiles,
          p.path == transpose_path::few_cols ? p.tiles_r : p.tiles_c,
          p.batch * p.rows * p.cols * static_cast<std::uint64_t>(p.elem_size),
          transpose_few_map_of(p),
          static_cast<std::uint32_t>(p.elem_size),
          per_tile,
          static_cast<std::uint32_t>(p.halo_rows),
          p.run_chunks,
          transpose_magic(p.run_chunks),
          transpose_magic(p.path == transpose_path::few_cols ? static_cast<std::uint32_t>(p.cols) : 0u),
          p.smem_bytes};
}

template <int U, transpose_path Path, bool Fixed>
inline cudaError_t launch_few(const transpose_plan& p, const few_args& a, cudaStream_t stream) {
  if constexpr (U == 1 && Path != transpose_path::few_cols) {
    if (transpose_few_has_blocks(p)) {
      static std::atomic<unsigned long long> opted_in{0};
      transpose_plan with_staging = p;  // the image, then the blocks' staging area (a.staging: where it starts)
      with_staging.smem_bytes += transpose_few_block_staging(p.path, p.rows, p.cols);
      return launch_tile_kernel(reinterpret_cast<const void*>(&transpose_few_blocks_kernel<Path, Fixed>), opted_in,
                                with_staging, a, stream);
    }
  }
  static std::atomic<unsigned long long> opted_in{0};
  return launch_tile_kernel(reinterpret_cast<const void*>(&transpose_few_kernel<U, Path, Fixed>), opted_in, p, a,
                            stream);
}

// The instantiation for the plan's layout: the fixed one's (whole chunks) wherever the swizzle allows it.
template <int U>
inline cudaError_t launch_few_of(const transpose_plan& p, const few_args& a, cudaStream_t stream) {
  using P = transpose_path;
  const bool fixed = transpose_few_whole_chunks(p.smem_swizzle, p.smem_swizzle_shift);
  switch (p.path) {
    case P::few_cols: return fixed ? launch_few<U, P::few_cols, true>(p, a, stream) : cudaErrorInvalidValue;
    case P::few_rows:
      return fixed ? launch_few<U, P::few_rows, true>(p, a, stream) : launch_few<U, P::few_rows, false>(p, a, stream);
    case P::small_matrices:
      return fixed ? launch_few<U, P::small_matrices, true>(p, a, stream)
                   : launch_few<U, P::small_matrices, false>(p, a, stream);
    default: return cudaErrorInvalidValue;
  }
}

// Every few kernel (4 units x (few_cols, and few_rows and small_matrices with the fixed layout and the general
// one)), by symbol: for tools that list the kernels memlab::transpose may launch (the transpose lab's `auto`
// rung, memlab inspect).
inline std::array<const void*, 20> few_kernels() {
  std::array<const void*, 20> k{};
  std::size_t n = 0;
  const auto add = [&](auto unit) {
    constexpr int U = decltype(unit)::value;
    using P = transpose_path;
    k[n++] = reinterpret_cast<const void*>(&transpose_few_kernel<U, P::few_cols, true>);
    k[n++] = reinterpret_cast<const void*>(&transpose_few_kernel<U, P::few_rows, true>);
    k[n++] = reinterpret_cast<const void*>(&transpose_few_kernel<U, P::few_rows, false>);
    k[n++] = reinterpret_cast<const void*>(&transpose_few_kernel<U, P::small_matrices, true>);
    k[n++] = reinterpret_cast<const void*>(&transpose_few_kernel<U, P::small_matrices, false>);
  };
  add(std::integral_constant<int, 1>{});
  add(std::integral_constant<int, 2>{});
  add(std::integral_constant<int, 4>{});
  add(std::integral_constant<int, 8>{});
  return k;
}

// Whether `p` is a few plan these very pointers can run: its unit divides both addresses and the element
// size, and its tiles are the ones plan_transpose makes for them (the halo depends on dst's alignment).
inline bool few_plan_fits(const transpose_plan& p, std::uintptr_t d, std::uintptr_t s) {
  const auto es = static_cast<std::uint64_t>(p.elem_size), u = static_cast<std::uint64_t>(p.unit_bytes);
  if (es != 1 && es != 2 && es != 4 && es != 8) return false;
  if (u != 1 && u != 2 && u != 4 && u != 8) return false;
  if (u > es || d % u != 0 || s % u != 0) return false;
  if (p.rows < 2 || p.cols < 2 || p.batch == 0) return false;
  if (p.threads != transpose_tuning::threads || p.grid == 0 || p.grid > 0x7fffffffu || p.vec_bytes != 16) return false;
  if (!transpose_few_swizzle_valid(p.smem_swizzle, p.smem_swizzle_shift, static_cast<unsigned>(u))) return false;
  if (p.path == transpose_path::few_cols && !transpose_few_whole_chunks(p.smem_swizzle, p.smem_swizzle_shift)) {
    return false;  // few_cols keeps the fixed layout: its kernel has no other
  }
  const transpose_few_geometry g = transpose_few_geometry_of(p.path, p.batch, p.rows, p.cols, es, d);
  const bool cols_tile = p.path == transpose_path::few_cols, rows_tile = p.path == transpose_path::few_rows;
  const bool small = p.path == transpose_path::small_matrices;
  if (small && p.rows * p.cols * es > transpose_tuning::small_matrix_max_bytes) return false;  // the magic numbers
  if (!small && !transpose_few_side_fits(cols_tile ? p.cols : p.rows, es)) return false;
  // few_rows: the least pitch plus whole 16-byte slots (transpose_few_layout_of: 0..7 of them), so that runs'
  // images keep src's offsets modulo 16 and do not overlap; the others have none.
  const bool pitch_fits = rows_tile ? p.run_pitch >= g.run_pitch && (p.run_pitch - g.run_pitch) % 16 == 0 &&
                                          p.run_pitch - g.run_pitch < 16 * 8
                                    : p.run_pitch == g.run_pitch;
  return static_cast<std::uint64_t>(p.tile_rows) == (cols_tile ? g.per_tile : p.rows) &&
         static_cast<std::uint64_t>(p.tile_cols) == (rows_tile ? g.per_tile : p.cols) &&
         p.tile_matrices == (small ? g.per_tile : 1u) && p.halo_rows == static_cast<int>(g.halo) &&
         p.tiles == g.tiles && p.run_chunks == g.run_chunks && p.load_chunks == g.load_chunks &&
         p.load_chunks <= static_cast<std::uint32_t>(transpose_tuning::threads * transpose_tuning::few_load_steps) &&
         pitch_fits && p.smem_bytes == (rows_tile ? transpose_few_rows_smem(p.rows, p.run_pitch) : g.smem_bytes);
}

template <int Es>
inline cudaError_t launch_tiles_of(const transpose_plan& p, const transpose_args& a, cudaStream_t stream) {
  switch (p.path) {
    case transpose_path::aligned: return launch_tiles<Es, false, false>(p, a, stream);
    case transpose_path::realign_in: return launch_tiles<Es, true, false>(p, a, stream);
    case transpose_path::realign_out: return launch_tiles<Es, false, true>(p, a, stream);
    case transpose_path::realign_both: return launch_tiles<Es, true, true>(p, a, stream);
    default: return cudaErrorInvalidValue;
  }
}

// Whether `p` is a tiled plan these very pointers can run: what plan_transpose guarantees and the kernels
// rely on (a side that does not realign issues 16-byte accesses at every row start).
inline bool plan_fits(const transpose_plan& p, std::uintptr_t d, std::uintptr_t s) {
  const auto es = static_cast<std::uint64_t>(p.elem_size);
  if (es != 1 && es != 2 && es != 4 && es != 8) return false;
  if (p.threads != transpose_tuning::threads || p.grid == 0 || p.grid > 0x7fffffffu) return false;
  if (p.path == transpose_path::elem8) {
    if (es != 8 || d % 8 != 0 || s % 8 != 0) return false;
  } else {
    const bool in_aligned = s % 16 == 0 && p.cols * es % 16 == 0, out_aligned = d % 16 == 0 && p.rows * es % 16 == 0;
    if (!in_aligned && !realigns_in(p.path)) return false;
    if (!out_aligned && !realigns_out(p.path)) return false;
  }
  const transpose_geometry g = transpose_geometry_of(p.path, p.elem_size);
  const auto tr = static_cast<std::uint64_t>(g.tile_rows), tc = static_cast<std::uint64_t>(g.tile_cols);
  return p.tile_rows == g.tile_rows && p.tile_cols == g.tile_cols && p.halo_rows == g.halo_rows &&
         p.vec_bytes == g.vec_bytes && p.smem_bytes == g.smem_bytes && p.tiles_r == (p.rows + tr - 1) / tr &&
         p.tiles_c == (p.cols + tc - 1) / tc && p.tiles == p.batch * p.tiles_r * p.tiles_c;
}

}  // namespace detail

// Enqueues the transpose that `p` describes, which must come from plan_transpose for these very pointers
// (any copy_device). For tools that print the plan; a plan that does not fit the pointers is refused with
// cudaErrorInvalidValue. memlab::transpose_bytes is the usual entry point.
inline cudaError_t launch_transpose(const transpose_plan& p, void* dst, const void* src,
                                    cudaStream_t stream = 0) noexcept {
  switch (p.path) {
    case transpose_path::none: return cudaSuccess;
    case transpose_path::unsupported: return cudaErrorInvalidValue;
    case transpose_path::copy: return launch_copy(p.copy, dst, src, stream);
    default: break;
  }
  const auto d = reinterpret_cast<std::uintptr_t>(dst), s = reinterpret_cast<std::uintptr_t>(src);
  if (is_few(p.path)) {
    if (!detail::few_plan_fits(p, d, s)) return cudaErrorInvalidValue;
    const detail::few_args a = detail::few_args_of(p, dst, src);
    switch (p.unit_bytes) {
      case 1: return detail::launch_few_of<1>(p, a, stream);
      case 2: return detail::launch_few_of<2>(p, a, stream);
      case 4: return detail::launch_few_of<4>(p, a, stream);
      case 8: return detail::launch_few_of<8>(p, a, stream);
      default: return cudaErrorInvalidValue;
    }
  }
  if (!is_tiled(p.path) || !detail::plan_fits(p, d, s)) return cudaErrorInvalidValue;
  const detail::transpose_args a{static_cast<std::byte*>(dst),
                                 static_cast<const std::byte*>(src),
                                 p.rows,
                                 p.cols,
                                 p.tiles_r,
                                 p.tiles_c,
                                 p.tiles,
                                 p.batch * p.rows * p.cols * static_cast<std::uint64_t>(p.elem_size)};
  if (p.path == transpose_path::elem8) return detail::launch_elem8(p, a, stream);
  switch (p.elem_size) {
    case 1: return detail::launch_tiles_of<1>(p, a, stream);
    case 2: return detail::launch_tiles_of<2>(p, a, stream);
    case 4: return detail::launch_tiles_of<4>(p, a, stream);
    case 8: return detail::launch_tiles_of<8>(p, a, stream);
    default: return cudaErrorInvalidValue;
  }
}

// Transposes `batch` row-major matrices of rows x cols elements of elem_size bytes (1, 2, 4 or 8) from
// src into dst (device memory, not overlapping), on `stream`: dst[b][c][r] = src[b][r][c].
inline cudaError_t transpose_bytes(void* dst, const void* src, std::size_t batch, std::size_t rows, std::size_t cols,
                                   std::size_t elem_size, cudaStream_t stream = 0) noexcept {
  if (!transpose_moves(elem_size)) return cudaErrorInvalidValue;
  if (batch == 0 || rows == 0 || cols == 0) return cudaSuccess;
  if (dst == nullptr || src == nullptr) return cudaErrorInvalidValue;
  constexpr std::uint64_t limit = std::uint64_t{1} << 62;
  if (batch > limit / elem_size / rows / cols) return cudaErrorInvalidValue;
  const std::uint64_t bytes = std::uint64_t{batch} * rows * cols * elem_size;
  const auto d = reinterpret_cast<std::uintptr_t>(dst), s = reinterpret_cast<std::uintptr_t>(src);
  copy_device dev;
  if (const cudaError_t e = detail::check_ranges_and_device(d, s, bytes, dev); e != cudaSuccess) return e;
  return launch_transpose(plan_transpose(d, s, batch, rows, cols, elem_size, dev), dst, src, stream);
}

// Transposes the rows x cols matrix of T at src into the cols x rows one at dst (device memory, not
// overlapping) on `stream`. sizeof(T) must be 1, 2, 4 or 8.
template <class T>
inline cudaError_t transpose(T* dst, const T* src, std::size_t rows, std::size_t cols,
                             cudaStream_t stream = 0) noexcept {
  static_assert(std::is_trivially_copyable_v<T>, "memlab::transpose moves bytes: T must be trivially copyable");
  static_assert(transpose_moves(sizeof(T)), "memlab::transpose moves elements of 1, 2, 4 or 8 bytes");
  return transpose_bytes(dst, src, 1, rows, cols, sizeof(T), stream);
}

// The same for `batch` matrices one after the other at src, their transposes one after the other at dst.
template <class T>
inline cudaError_t transpose_batched(T* dst, const T* src, std::size_t batch, std::size_t rows, std::size_t cols,
                                     cudaStream_t stream = 0) noexcept {
  static_assert(std::is_trivially_copyable_v<T>, "memlab::transpose moves bytes: T must be trivially copyable");
  static_assert(transpose_moves(sizeof(T)), "memlab::transpose moves elements of 1, 2, 4 or 8 bytes");
  return transpose_bytes(dst, src, batch, rows, cols, sizeof(T), stream);
}

}  // namespace memlab
