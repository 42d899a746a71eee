// The hierarchy lab: what each level of the memory system delivers to one SM and to all of them,
// registers to HBM. Latency by pointer chase (cycles from clock64, ns from %globaltimer, the SM
// clock read during the walk), bandwidth against working set, and latency under load.
//
// Assumes: one GPU, nothing else running on it. A chase's chain is n x 4 bytes (--sizes, f32
// elements; "1GiB" is a 1 GiB chain) with one node every `stride` bytes (default 128: one node per
// 128-byte cache line, so every load of a random chase touches a new line; stride 32: one per
// 32-byte sector). The chain is a random cyclic permutation built on the host (Sattolo), or the
// sequential stride order; each node holds the address of the next, so each load's address is the
// previous load's value. The walk's end node is checked against the host's walk (the verification).
// A bandwidth rung's arrays are n f32 elements each, a whole number of 16-byte vectors.
//
// Reading order: the kernels (the chases, the register chain, the loaded chase, the streams), then
// plans, setup, launchers, verification and figures, and the lab's table at the end.
#include <algorithm>
#include <cstring>
#include <cuda/ptx>
#include <memory>
#include <thread>

#include "harness/check.hpp"
#include "harness/error.hpp"
#include "harness/fill.hpp"
#include "harness/lab.hpp"
#include "harness/launch.cuh"
#include "labs/hierarchy/hierarchy.hpp"
#include "memlab/arch/config.cuh"
#include "memlab/arch/cp_async.cuh"
#include "memlab/arch/ld_global.cuh"
#include "memlab/arch/ld_global_cache.cuh"
#include "memlab/arch/ld_st_shared.cuh"

namespace memlab::labs::hierarchy {

// What a walker writes back: its end node (verification), the timed walk's cycles and ns, its SM,
// and the sampled per-load latencies.
struct chase_out {
  std::uint64_t end;
  std::uint64_t cycles;
  std::uint64_t ns;
  std::uint32_t smid;
  std::uint32_t samples_taken;
  std::uint32_t samples[max_samples];
};

// A generator CTA of the loaded chase: the bytes it read and for how long.
struct generator_out {
  unsigned long long bytes;
  unsigned long long ns;
};
// The loaded chase's flags, zeroed before each launch.
struct loaded_flags {
  unsigned started;  // generator CTAs running
  unsigned done;     // the probe has finished
};

namespace {

// ---- reading the clocks ---------------------------------------------------------------------------------

__device__ __forceinline__ std::uint64_t sm_clock() { return cuda::ptx::get_sreg_clock64(); }
__device__ __forceinline__ std::uint64_t global_ns() { return cuda::ptx::get_sreg_globaltimer(); }

// Makes the next instruction wait for `v`: a shared store cannot issue before its operand is
// ready, and the warp issues in order, so a clock read after it sees the load complete.
__device__ __forceinline__ void wait_for(std::uint64_t v) {
  __shared__ volatile std::uint64_t sink;
  sink = v;
}

template <load_path Path>
__device__ __forceinline__ std::uint64_t chase_load(std::uint64_t p) {
  if constexpr (Path == load_path::l2) {
    return arch::ld_global_cg_u64(p);
  } else {
    return arch::ld_global_u64(p);
  }
}

// The walk itself, shared by every global chase: warm-up, the timed walk, the per-load samples.
template <load_path Path>
__device__ __forceinline__ void walk_global(std::uint64_t p, std::uint64_t warmup, std::uint64_t steps,
                                            unsigned samples, chase_out* o) {
  __shared__ std::uint32_t lat[max_samples];
#pragma unroll 1
  for (std::uint64_t i = 0; i < warmup; ++i) p = chase_load<Path>(p);
  wait_for(p);
  const std::uint64_t c0 = sm_clock(), g0 = global_ns();
  // Unrolled by 4: four dependent loads per iteration (each address is the previous value), so the
  // loop's own instructions hide under the load latency.
  std::uint64_t i = 0;
#pragma unroll 1
  for (; i + 4 <= steps; i += 4) {
    p = chase_load<Path>(p);
    p = chase_load<Path>(p);
    p = chase_load<Path>(p);
    p = chase_load<Path>(p);
  }
#pragma unroll 1
  for (; i < steps; ++i) p = chase_load<Path>(p);
  wait_for(p);
  const std::uint64_t c1 = sm_clock(), g1 = global_ns();
#pragma unroll 1
  for (unsigned s = 0; s < samples; ++s) {
    const std::uint64_t t0 = sm_clock();
    p = chase_load<Path>(p);
    wait_for(p);
    lat[s] = static_cast<std::uint32_t>(sm_clock() - t0);
  }
  o->end = p;
  o->cycles = c1 - c0;
  o->ns = g1 - g0;
  o->smid = cuda::ptx::get_sreg_smid();
  o->samples_taken = samples;
#pragma unroll 1
  for (unsigned s = 0; s < samples; ++s) o->samples[s] = lat[s];
}

}  // namespace

// ---- the chases ---------------------------------------------------------------------------------------------
//   chase_l1      ld.global (LDG.E.64): L1 first, then L2, then HBM
//   chase_l2      ld.global.cg: past L1, the L2 (then HBM) latency at every working set
//   chase_stride  ld.global in address order: what a prefetch-friendly, TLB-friendly walk costs
//   chase_shared  ld.shared (LDS) over a chain copied into shared memory
//   chase_l2_per_sm  the .cg chase on every SM at once, one walker each: a latency per SM

// One walker per CTA (thread 0), starting at starts[blockIdx.x]; out is one chase_out per CTA.
// CTAs of the per-SM rung ask for more than half an SM's shared memory, so each lands on its own SM.
// Order and PerSM change no instruction (the chain's order is data, the grid is the launch's): they
// give each rung a kernel symbol of its own, which `memlab inspect` and the SASS tests read.
// Each launch goes on where the last one ended (starts[] is the walkers' cursor): over a chain larger
// than the L2 every timed load is then to a line no recent launch touched, so repeated launches (the
// batch and graph samples, and the launch whose figures are reported) measure the chain's level, not
// the few thousand nodes a single walk visits, which the previous launch left in the L2.
template <load_path Path, chase_order Order, bool PerSM>
__global__ void chase_kernel(std::uint64_t* starts, std::uint64_t warmup, std::uint64_t steps, unsigned samples,
                             chase_out* out) {
  if (threadIdx.x != 0) return;
  walk_global<Path>(starts[blockIdx.x], warmup, steps, samples, out + blockIdx.x);
  starts[blockIdx.x] = out[blockIdx.x].end;
}

// The chain (node offsets in bytes, as 32-bit words at each node) copied into shared memory by
// the whole CTA, then walked by thread 0: LDS -> LDS, each address the previous value.
__global__ void chase_shared_kernel(const std::uint32_t* chain, std::uint32_t words, std::uint32_t start,
                                    std::uint64_t warmup, std::uint64_t steps, unsigned samples, chase_out* out) {
  extern __shared__ std::uint32_t smem_chain[];
  __shared__ std::uint32_t lat[max_samples];
  for (std::uint32_t i = threadIdx.x; i < words; i += blockDim.x) smem_chain[i] = chain[i];
  __syncthreads();
  if (threadIdx.x != 0) return;
  const std::uint32_t base = arch::shared_address(smem_chain);
  std::uint32_t p = start;
#pragma unroll 1
  for (std::uint64_t i = 0; i < warmup; ++i) p = arch::ld_shared_volatile<4>(base + p);
  wait_for(p);
  const std::uint64_t c0 = sm_clock(), g0 = global_ns();
  std::uint64_t i = 0;
#pragma unroll 1
  for (; i + 4 <= steps; i += 4) {
    p = arch::ld_shared_volatile<4>(base + p);
    p = arch::ld_shared_volatile<4>(base + p);
    p = arch::ld_shared_volatile<4>(base + p);
    p = arch::ld_shared_volatile<4>(base + p);
  }
#pragma unroll 1
  for (; i < steps; ++i) p = arch::ld_shared_volatile<4>(base + p);
  wait_for(p);
  const std::uint64_t c1 = sm_clock(), g1 = global_ns();
#pragma unroll 1
  for (unsigned s = 0; s < samples; ++s) {
    const std::uint64_t t0 = sm_clock();
    p = arch::ld_shared_volatile<4>(base + p);
    wait_for(p);
    lat[s] = static_cast<std::uint32_t>(sm_clock() - t0);
  }
  out->end = p;
  out->cycles = c1 - c0;
  out->ns = g1 - g0;
  out->smid = cuda::ptx::get_sreg_smid();
  out->samples_taken = samples;
#pragma unroll 1
  for (unsigned s = 0; s < samples; ++s) out->samples[s] = lat[s];
}

// ---- the register chain --------------------------------------------------------------------------------------
// x = x * a + b, each FFMA waiting for the one before: the dependent-issue latency of the simplest
// register operation (what "registers: 1 cycle" can mean). Volatile asm so that no FFMA is folded.
__global__ void register_chain_kernel(float x, float a, float b, std::uint64_t steps, chase_out* out) {
  if (threadIdx.x != 0) return;
  wait_for(__float_as_uint(x));
  const std::uint64_t c0 = sm_clock(), g0 = global_ns();
#pragma unroll 1
  for (std::uint64_t i = 0; i < steps; i += register_chain_unroll) {
#pragma unroll
    for (unsigned k = 0; k < register_chain_unroll; ++k)
      asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x) : "f"(a), "f"(b));
  }
  wait_for(__float_as_uint(x));
  const std::uint64_t c1 = sm_clock(), g1 = global_ns();
  out->end = __float_as_uint(x);
  out->cycles = c1 - c0;
  out->ns = g1 - g0;
  out->smid = cuda::ptx::get_sreg_smid();
  out->samples_taken = 0;
}

// ---- the loaded chase ------------------------------------------------------------------------------------------
// CTA 0's thread 0 chases (.cg) while CTAs 1..load_ctas stream 16-byte loads from a DRAM-sized array
// until it is done; each CTA on its own SM (more than half an SM's shared memory each). The probe
// starts once every generator runs (or after 50 ms, if some could not be resident).
__global__ void __launch_bounds__(1024)
    loaded_chase_kernel(std::uint64_t* starts, std::uint64_t warmup, std::uint64_t steps, unsigned samples,
                        chase_out* out, const float4* stream, std::uint64_t stream_vectors, loaded_flags* flags,
                        generator_out* gen) {
  volatile loaded_flags* f = flags;
  if (blockIdx.x == 0) {
    if (threadIdx.x != 0) return;
    const std::uint64_t t0 = global_ns();
    while (f->started < gridDim.x - 1 && global_ns() - t0 < 50'000'000) {
    }
    walk_global<load_path::l2>(starts[0], warmup, steps, samples, out);
    starts[0] = out->end;  // the next launch goes on from here (see chase_kernel)
    __threadfence();
    f->done = 1;
    return;
  }
  if (threadIdx.x == 0) atomicAdd(const_cast<unsigned*>(&f->started), 1u);
  const std::uint64_t g = blockIdx.x - 1, gens = gridDim.x - 1;
  const std::uint64_t slice = stream_vectors / gens, begin = g * slice;
  const std::uint64_t t0 = global_ns();
  constexpr int ilp = 4;
  float4 acc{0, 0, 0, 0};
  unsigned long long vectors = 0;
  std::uint64_t i = threadIdx.x;
  while (f->done == 0 && global_ns() - t0 < 1'000'000'000) {
    float4 v[ilp];
#pragma unroll
    for (int u = 0; u < ilp; ++u) {
      std::uint64_t j = i + static_cast<std::uint64_t>(u) * blockDim.x;
      if (j >= slice) j -= slice;
      v[u] = arch::ld_global_v4_f32(stream + begin + j);
    }
#pragma unroll
    for (int u = 0; u < ilp; ++u) acc.x += v[u].x, acc.y += v[u].y, acc.z += v[u].z, acc.w += v[u].w;
    vectors += ilp;
    i += static_cast<std::uint64_t>(ilp) * blockDim.x;
    if (i >= slice) i -= slice;
  }
  if (acc.x + acc.y + acc.z + acc.w == -1.0f) vectors = 0;  // keeps the loads; never true for the lab's data
  atomicAdd(&gen[g].bytes, vectors * 16);
  if (threadIdx.x == 0) gen[g].ns = global_ns() - t0;
}

// ---- the streams ------------------------------------------------------------------------------------------------
//   dot      s += a[i] * b[i]  (BabelStream's Dot: the read-only rung)
//   write    c[i] = s
//   copy     c[i] = a[i]
//   add      c[i] = a[i] + b[i]  (the reference's roofline example: 1 FLOP per 12 bytes)
//   triad    c[i] = a[i] + s * b[i]
// Each CTA owns one share of every array and goes over it `passes` times: a share that fits the
// SM's L1 is served from there after the first pass (per-SM-private data). A share is every
// gridDim.x-th tile of 256 x Ilp vectors (CTA b: tiles b, b + grid, ...), not one contiguous slice:
// the grid then sweeps the arrays front to back together, as a grid-stride loop does, instead of 528
// streams each in its own DRAM pages (contiguous slices cost the write streams 7-11% on the H100:
// docs/notes/hierarchy.md). The .cg rungs read past L1; dot_l2_all makes every CTA read the whole
// array (data many SMs request).
// Only the arrays' last tile can be partial, so whole tiles are read without a test per vector: a
// thread's Ilp vectors of a tile sit at compile-time offsets from one pointer (LDG.E.128 [R.64+imm]),
// all 2 x Ilp loads issue before the arithmetic, and the dot keeps Ilp independent accumulators. The
// generic loop this replaces issued 13.75 instructions per 512 bytes at --ilp 4 and let each
// vector's FFMAs wait before the next vector's loads (docs/notes/hierarchy_l1_bandwidth.md).
enum class stream_op { dot, write, copy, add, triad };
constexpr bool reads_a(stream_op op) { return op != stream_op::write; }
constexpr bool reads_b(stream_op op) { return op == stream_op::dot || op == stream_op::add || op == stream_op::triad; }

template <load_path Path>
__device__ __forceinline__ float4 stream_load(const float4* p) {
  if constexpr (Path == load_path::l2) {
    return arch::ld_global_cg_v4_f32(p);
  } else {
    return arch::ld_global_v4_f32(p);
  }
}

__device__ __forceinline__ float fma4(float4 x, float4 y, float acc) {
  acc = fmaf(x.x, y.x, acc);
  acc = fmaf(x.y, y.y, acc);
  acc = fmaf(x.z, y.z, acc);
  return fmaf(x.w, y.w, acc);
}

__device__ __forceinline__ float block_sum(float v) {
  __shared__ float warp_sums[32];
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  float s = 0;
  if (threadIdx.x == 0)
    for (unsigned w = 0; w < blockDim.x / 32; ++w) s += warp_sums[w];
  return s;
}

// One tile as one thread sees it: its vectors u = 0 .. Ilp-1 at a + 256 u (b and c alike). Partial:
// the tile holds only `valid` vectors, and this thread's vector u is threadIdx.x + 256 u of them.
template <stream_op Op, load_path Path, int Ilp, bool Partial>
__device__ __forceinline__ void stream_tile(const float4* a, const float4* b, float4* c, std::uint32_t valid, float s,
                                            float (&acc)[Ilp]) {
  const auto here = [&](int u) {
    return !Partial || threadIdx.x + static_cast<std::uint32_t>(u) * stream_threads < valid;
  };
  float4 x[Ilp], y[Ilp];
#pragma unroll
  for (int u = 0; u < Ilp; ++u) {
    if (!here(u)) continue;
    if constexpr (reads_a(Op)) x[u] = stream_load<Path>(a + u * stream_threads);
    if constexpr (reads_b(Op)) y[u] = stream_load<Path>(b + u * stream_threads);
  }
#pragma unroll
  for (int u = 0; u < Ilp; ++u) {
    if (!here(u)) continue;
    float4* out = c + u * stream_threads;
    if constexpr (Op == stream_op::dot) {
      acc[u] = fma4(x[u], y[u], acc[u]);
    } else if constexpr (Op == stream_op::write) {
      arch::st_global_v4_f32(out, make_float4(s, s, s, s));
    } else if constexpr (Op == stream_op::copy) {
      arch::st_global_v4_f32(out, x[u]);
    } else if constexpr (Op == stream_op::add) {
      arch::st_global_v4_f32(out, make_float4(__fadd_rn(x[u].x, y[u].x), __fadd_rn(x[u].y, y[u].y),
                                              __fadd_rn(x[u].z, y[u].z), __fadd_rn(x[u].w, y[u].w)));
    } else {
      arch::st_global_v4_f32(out, make_float4(__fmaf_rn(s, y[u].x, x[u].x), __fmaf_rn(s, y[u].y, x[u].y),
                                              __fmaf_rn(s, y[u].z, x[u].z), __fmaf_rn(s, y[u].w, x[u].w)));
    }
  }
}

// `count` whole tiles, `step` vectors apart, from this thread's vector `first`: one pointer per array,
// moved on by `step` per tile.
template <stream_op Op, load_path Path, int Ilp>
__device__ __forceinline__ void stream_tiles(const float4* a, const float4* b, float4* c, std::uint64_t first,
                                             std::uint32_t count, std::uint32_t step, float s, float (&acc)[Ilp]) {
#pragma unroll 1
  for (std::uint32_t i = 0; i < count; ++i, first += step)
    stream_tile<Op, Path, Ilp, false>(a + first, b + first, c + first, 0, s, acc);
}

// CTAs of 256 threads an SM must hold at once (the launch bound), so that --ctas-per-sm means what
// it says on the H100: 8 (at most 32 registers) up to --ilp 2, 4 at --ilp 4, and 2 at --ilp 8, where
// a dot's 16 loaded vectors take 64 registers by themselves. Unbounded, sm_90's ptxas gave dot<2> 48
// registers (5 CTAs). sm_80's and sm_100's ptxas (nvcc 13.0) spill under these bounds (a build error
// under -warn-spills): unbounded there, not measured on an A100 or a B200.
constexpr int stream_min_ctas(int ilp) {
#if MEMLAB_ARCH == 900
  return ilp <= 2 ? 8 : ilp == 4 ? 4 : 2;
#else
  (void)ilp;
  return 1;
#endif
}

// Tile counts are 32-bit (arrays below 64 TiB at 256-vector tiles), so is dot_l2_all's first tile
// (its arrays fit the L2: whole x grid < 2^32).
template <stream_op Op, load_path Path, int Ilp, bool All>
__global__ void __launch_bounds__(stream_threads, stream_min_ctas(Ilp))
    stream_kernel(const float4* a, const float4* b, float4* c, std::uint64_t vectors, unsigned passes, float s,
                  float* partials) {
  constexpr std::uint32_t tile = stream_threads * Ilp;
  const auto whole = static_cast<std::uint32_t>(vectors / tile);  // whole tiles
  const auto rest = static_cast<std::uint32_t>(vectors % tile);   // vectors of the partial tile, tile `whole`
  const std::uint32_t g = blockIdx.x, grid = gridDim.x, me = threadIdx.x;
  // All: every CTA reads every tile, from tile r on (CTAs start apart), wrapping. Else: tiles
  // g, g + grid, ...; the partial tile is its owner's.
  const std::uint32_t r = All ? whole * g / grid : 0;
  const std::uint32_t mine = All ? 0 : g < whole ? (whole - 1 - g) / grid + 1 : 0;
  const bool partial = rest != 0 && (All || whole % grid == g);
  float acc[Ilp] = {};
#pragma unroll 1
  for (unsigned pass = 0; pass < passes; ++pass) {
    if constexpr (All) {
      stream_tiles<Op, Path, Ilp>(a, b, c, std::uint64_t{r} * tile + me, whole - r, tile, s, acc);
      stream_tiles<Op, Path, Ilp>(a, b, c, me, r, tile, s, acc);
    } else {
      stream_tiles<Op, Path, Ilp>(a, b, c, std::uint64_t{g} * tile + me, mine, grid * tile, s, acc);
    }
    if (partial) {
      const std::uint64_t at = std::uint64_t{whole} * tile + me;
      stream_tile<Op, Path, Ilp, true>(a + at, b + at, c + at, rest, s, acc);
    }
  }
  if constexpr (Op == stream_op::dot) {
    float sum = acc[0];
#pragma unroll
    for (int u = 1; u < Ilp; ++u) sum += acc[u];
    const float total = block_sum(sum);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
  }
}

// Shared-memory dot: the CTA copies its slices of a and b into shared memory once, then reads them
// `passes` times with LDS.128: the shared-memory bandwidth of every SM at once. Thread t reads
// vector t of each 256-vector row (a warp: 512 contiguous bytes, 4 wavefronts, no bank conflict);
// whole tiles of Ilp rows at compile-time offsets from one 32-bit address (LDS.128 [R+imm]), all
// 2 x Ilp loads before the FFMAs, Ilp accumulators; then the slice's remaining rows one by one.
template <int Ilp>
__global__ void __launch_bounds__(stream_threads, stream_min_ctas(Ilp))
    smem_dot_kernel(const float4* a, const float4* b, std::uint64_t vectors, std::uint64_t slice, unsigned passes,
                    float* partials) {
  extern __shared__ float4 smem[];  // [slice] of a, then [slice] of b
  const std::uint64_t begin = blockIdx.x * slice;
  // A slice fits in shared memory (the lab refuses others): 32-bit counts and addresses from here.
  const auto len = static_cast<std::uint32_t>(begin < vectors ? std::min(slice, vectors - begin) : 0);
  const auto to_b = static_cast<std::uint32_t>(slice);
  // Staging, once per launch: cp.async (LDGSTS), every copy of the thread in flight at once and none
  // through registers.
#pragma unroll 4
  for (std::uint32_t k = threadIdx.x; k < len; k += stream_threads) {
    arch::cp_async_cg<16>(smem + k, a + begin + k);
    arch::cp_async_cg<16>(smem + to_b + k, b + begin + k);
  }
  arch::cp_async_commit();  // wait_all waits for committed groups only: without it the reads raced the copies
  arch::cp_async_wait_all();
  __syncthreads();
  constexpr std::uint32_t row = stream_threads * 16, tile = stream_threads * Ilp;  // bytes, vectors
  const std::uint32_t base = arch::shared_address(smem), mine = base + 16 * threadIdx.x, ab = 16 * to_b;
  const std::uint32_t whole = len / tile;
  const auto dot4 = [](uint4 x, uint4 y, float acc) {
    acc = fmaf(__uint_as_float(x.x), __uint_as_float(y.x), acc);
    acc = fmaf(__uint_as_float(x.y), __uint_as_float(y.y), acc);
    acc = fmaf(__uint_as_float(x.z), __uint_as_float(y.z), acc);
    return fmaf(__uint_as_float(x.w), __uint_as_float(y.w), acc);
  };
  float acc[Ilp] = {};
#pragma unroll 1
  for (unsigned pass = 0; pass < passes; ++pass) {
    std::uint32_t p = mine;
#pragma unroll 1
    for (std::uint32_t i = 0; i < whole; ++i, p += Ilp * row) {
      uint4 x[Ilp], y[Ilp];
#pragma unroll
      for (int u = 0; u < Ilp; ++u) {
        x[u] = arch::ld_shared_volatile<16>(p + u * row);
        y[u] = arch::ld_shared_volatile<16>(p + ab + u * row);
      }
#pragma unroll
      for (int u = 0; u < Ilp; ++u) acc[u] = dot4(x[u], y[u], acc[u]);
    }
#pragma unroll 1
    for (std::uint32_t k = whole * tile + threadIdx.x; k < len; k += stream_threads)
      acc[0] =
          dot4(arch::ld_shared_volatile<16>(base + 16 * k), arch::ld_shared_volatile<16>(base + ab + 16 * k), acc[0]);
  }
  float sum = acc[0];
#pragma unroll
  for (int u = 1; u < Ilp; ++u) sum += acc[u];
  const float total = block_sum(sum);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// Reads every 16 bytes of the chain through L2 (.cg), from every SM: an L2-sized chain is resident
// before the walk, also after the harness's L2 flush (the walker's own warm-up covers only 4096 nodes).
__global__ void touch_kernel(const float4* p, std::uint64_t vectors, float* sink) {
  float acc = 0;
  for (std::uint64_t i = global_thread(); i < vectors; i += std::uint64_t{gridDim.x} * blockDim.x) {
    const float4 v = arch::ld_global_cg_v4_f32(p + i);
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 1.2345e-38f) *sink = acc;  // never true for addresses read as floats; keeps the loads
}

// ---- setup kernels ----------------------------------------------------------------------------------------------

// Writes each node's link at its place in the chain: node i sits at byte i x stride.
template <class Word>
__global__ void scatter_chain_kernel(Word* chain, const Word* links, std::uint64_t nodes, std::uint64_t stride_words) {
  for (std::uint64_t i = global_thread(); i < nodes; i += std::uint64_t{gridDim.x} * blockDim.x)
    chain[i * stride_words] = links[i];
}

// The streams' data: small multiples of 1/8, so that sums, products and FMAs are exact in f32.
MEMLAB_HOST_DEVICE inline float stream_value(std::uint64_t seed, std::uint64_t i) {
  return static_cast<float>((mix64(seed ^ mix64(i)) & 15) + 1) * 0.125f;
}
__global__ void fill_stream_kernel(float* x, std::uint64_t n, std::uint64_t seed) {
  for (std::uint64_t i = global_thread(); i < n; i += std::uint64_t{gridDim.x} * blockDim.x)
    x[i] = stream_value(seed, i);
}

// ---- plans, setup, launchers, verification, figures --------------------------------------------------------------

namespace {

const axis stride_axis{.name = "node_stride",
                       .meaning =
                           "chases: bytes between chase nodes, a multiple of 8: 128 = one per cache line, 32 = "
                           "one per sector; the TLB sweep goes to MiBs",
                       .unit = "bytes",
                       .grammar = axis_grammar::bytes,
                       .defaults = "128",
                       .min = 8,
                       .max = std::uint64_t{1} << 32,
                       .multiple_of = 8};
const axis steps_axis{.name = "steps",
                      .meaning = "timed dependent loads (or FFMAs) per walk",
                      .unit = "loads",
                      .defaults = "4096",
                      .min = 64,
                      .max = std::uint64_t{1} << 24};
const axis ilp_axis{.name = "ilp",
                    .meaning = "streams: 16-byte vectors per array in flight per thread (1, 2, 4, 8)",
                    .unit = "vectors",
                    .defaults = "4",
                    .min = 1,
                    .max = 8,
                    .choices = {1, 2, 4, 8}};
const axis ctas_per_sm_axis{.name = "ctas_per_sm",
                            .meaning = "streams: 256-thread CTAs per SM (occupancy, 1..8)",
                            .unit = "CTAs",
                            .defaults = "4",
                            .min = 1,
                            .max = 8};
const axis passes_axis{.name = "passes",
                       .meaning =
                           "streams: passes over the arrays per launch; 0 = enough for 1 GiB moved, or 48 MiB per "
                           "busy SM when each SM's share stays in its L1 or shared memory (at most 2^20)",
                       .unit = "passes",
                       .defaults = "0",
                       .min = 0,
                       .max = std::uint64_t{1} << 20};
const axis load_ctas_axis{.name = "load_ctas",
                          .meaning = "loaded chase: SMs streaming from DRAM beside the probe",
                          .unit = "CTAs",
                          .defaults = "0",
                          .min = 0,
                          .max = 1024};

constexpr float stream_scalar = 0.5f;
constexpr float chain_a = 0.5f, chain_b = 1.0f, chain_x0 = 3.0f;

const rung_traits& traits(const variant& v) { return v.traits_as<rung_traits>(); }

// Buffers of a chase: its output, the chain, the walkers' first nodes; the loaded chase adds its
// flags, the generators' figures and the array they stream.
enum chase_buffer { out_buffer, chain_buffer, starts_buffer, flags_buffer, generators_buffer, stream_buffer };
// Buffers of a stream: a and b (filled by setup), c, the dot's partial sums.
enum stream_buffer_index { a_buffer, b_buffer, c_buffer, partials_buffer };

std::uint64_t chain_bytes(const case_params& p) { return p.n * 4; }

// What setup keeps for launch and verify.
struct chase_state {
  chase_plan plan;
  std::vector<std::uint64_t> starts;  // first node of each walker
  std::vector<std::uint64_t> ends;    // node each walker must end on (host walk)
  std::vector<std::uint64_t> cursor;  // the walkers' first addresses as the kernels read them (starts_buffer)
};

// Puts the walkers back at their first nodes: the chase kernels move the cursor on at every launch.
void rewind(const case_ctx& c, const chase_state& st) {
  MEMLAB_CUDA_CHECK(cudaMemcpy(c.ptr(starts_buffer), st.cursor.data(), 8 * st.cursor.size(), cudaMemcpyHostToDevice));
}
struct stream_state {
  bandwidth_plan plan;
  std::uint64_t seed_a = 0, seed_b = 0;
};

std::uint64_t stream_bytes_for(const device_info& dev) { return std::max<std::uint64_t>(8 * dev.l2_bytes, 256u << 20); }
std::uint64_t walk_length(const chase_plan& p) { return p.warmup + p.steps + p.samples; }

std::optional<std::string> refusal(const variant& v, const case_params& p, const device_info& dev) {
  const rung_traits& t = traits(v);
  const std::uint64_t bytes = chain_bytes(p), stride = p[stride_axis];
  if (t.kind == rung_kind::register_chain) {
    if (bytes > (32u << 10))
      return std::string("the register chain has no working set: it runs at sizes up to 32KiB only (one figure)");
    return std::nullopt;
  }
  if (t.kind == rung_kind::bandwidth) {
    if (bytes % 16 != 0 || bytes == 0) return std::string("streams need whole 16-byte vectors (n a multiple of 4)");
    if (p[ilp_axis] != 1 && p[ilp_axis] != 2 && p[ilp_axis] != 4 && p[ilp_axis] != 8)
      return std::string("--ilp must be 1, 2, 4 or 8");
    if (t.every_cta_reads_all && static_cast<std::uint64_t>(t.reads) * bytes > dev.l2_bytes)
      return "every CTA reading the whole arrays is the L2's figure: arrays together at most the L2 (" +
             std::to_string(dev.l2_bytes) + " B); beyond it each CTA would stream them from DRAM";
    const bandwidth_plan b = plan_bandwidth(t, bytes, dev.sm_count, static_cast<int>(p[ilp_axis]),
                                            static_cast<int>(p[ctas_per_sm_axis]), p[passes_axis]);
    if (t.writes == 0 && dot_tolerance(t, b) > 1e-3)
      return "the dot's float sums over " + std::to_string(b.passes) +
             " passes could be off by more than 1e-3 of them (the derived bound): fewer --passes";
    if (t.path == load_path::shared) {
      const std::uint64_t per_cta = 2 * b.slice * 16;
      const std::uint64_t per_sm = per_cta * p[ctas_per_sm_axis];
      if (dev.smem_per_block_optin > 0 && (per_cta > static_cast<std::uint64_t>(dev.smem_per_block_optin) ||
                                           per_sm > 228u * 1024u - 1024u * p[ctas_per_sm_axis]))
        return "the slices of a and b (" + std::to_string(per_sm) + " B per SM) do not fit an SM's shared memory";
    }
    return std::nullopt;
  }
  if (stride % 8 != 0) return std::string("--node-stride must be a multiple of 8 bytes (a node holds an address)");
  if (bytes / stride < 2) return std::string("the chain needs at least two nodes (size / stride >= 2)");
  if (t.path == load_path::shared) {
    const auto limit = static_cast<std::uint64_t>(dev.smem_per_block_optin > 0 ? dev.smem_per_block_optin : 48 * 1024);
    if (bytes > limit - 8 * 1024)
      return "a shared-memory chain must fit a CTA's shared memory with room for the samples (" +
             std::to_string(limit - 8 * 1024) + " B here)";
  }
  if (t.kind == rung_kind::loaded_chase &&
      p[load_ctas_axis] + 1 > static_cast<std::uint64_t>(std::max(dev.sm_count, 1)))
    return "--load-ctas must leave the probe an SM of its own (at most " + std::to_string(dev.sm_count - 1) + ")";
  return std::nullopt;
}

case_plan plan_case(const variant& v, const case_params& p, const device_info& dev) {
  const rung_traits& t = traits(v);
  case_plan out;
  const std::uint64_t bytes = chain_bytes(p);
  if (t.kind == rung_kind::bandwidth) {
    const int ilp = static_cast<int>(p[ilp_axis]), cps = static_cast<int>(p[ctas_per_sm_axis]);
    const bandwidth_plan b = plan_bandwidth(t, bytes, dev.sm_count, ilp, cps, p[passes_axis]);
    out.policy = {stream_threads, ilp, 16, 0, b.grid};
    out.bytes = b.bytes;
    out.flops = b.flops;
    out.working_set = bytes * static_cast<std::uint64_t>(t.reads + t.writes);
    out.buffers = {{"a", bytes, buffer_role::scratch},
                   {"b", bytes, buffer_role::scratch},
                   {"c", bytes, buffer_role::output},
                   {"partials", 4 * std::max<std::uint64_t>(b.grid, 1), buffer_role::output}};
    // The level each SM's share is served from: its L1 / shared memory (a slice the SM keeps), else
    // the L2, else DRAM.
    if (served_by_sm(t, bytes, dev.sm_count))
      out.roof = roof_kind::smem;
    else if (out.working_set <= dev.l2_bytes / 2)
      out.roof = roof_kind::l2;
    else
      out.roof = roof_kind::dram;
    const int cps_real = static_cast<int>(std::min<std::uint64_t>(
        static_cast<std::uint64_t>(cps), (b.grid + static_cast<std::uint64_t>(std::max(dev.sm_count, 1)) - 1) /
                                             static_cast<std::uint64_t>(std::max(dev.sm_count, 1))));
    out.model = {{"bytes_in_flight_per_sm",
                  static_cast<double>(bytes_in_flight_per_sm(t, stream_threads, ilp, std::max(cps_real, 1)))},
                 {"passes", static_cast<double>(b.passes)},
                 {"sms_busy", static_cast<double>(b.sms_busy)}};
    return out;
  }
  const chase_plan c = plan_chase(bytes, p[stride_axis], p[steps_axis], t.per_sm, dev.sm_count);
  const std::uint64_t walkers = t.kind == rung_kind::chase ? c.walkers : 1;
  out.policy = {1, 1, t.path == load_path::shared ? 4 : 8, 0, walkers};
  // One 8-byte (shared: 4-byte) load per step of every walker; the register chain moves nothing.
  out.bytes =
      t.kind == rung_kind::register_chain ? 0 : walkers * walk_length(c) * (t.path == load_path::shared ? 4 : 8);
  out.working_set = bytes;
  out.buffers = {{"out", walkers * sizeof(chase_out), buffer_role::output}};
  if (t.kind == rung_kind::register_chain) return out;
  out.buffers.push_back({"chain", bytes, buffer_role::scratch});
  out.buffers.push_back({"starts", 8 * walkers, buffer_role::scratch});
  out.transient_bytes = 8 * c.nodes;  // the links, uploaded once and scattered into place
  out.model = {{"nodes", static_cast<double>(c.nodes)}};
  if (t.kind == rung_kind::loaded_chase) {
    out.policy.grid = 1 + p[load_ctas_axis];
    out.buffers.push_back({"flags", sizeof(loaded_flags), buffer_role::scratch});
    out.buffers.push_back(
        {"generators", sizeof(generator_out) * std::max<std::uint64_t>(p[load_ctas_axis], 1), buffer_role::scratch});
    out.buffers.push_back({"stream", stream_bytes_for(dev), buffer_role::scratch});
  }
  return out;
}

// More than half an SM's shared memory: one CTA per SM.
int one_cta_per_sm_smem(const device_info& dev) { return std::max(dev.smem_per_block_optin / 2 + 1024, 48 * 1024); }

// The host builds the chain and the walkers' starts and ends; the links go up once and a kernel
// writes each at its node's place.
void setup(case_ctx& c) {
  const rung_traits& t = traits(*c.v);
  if (t.kind == rung_kind::bandwidth) {
    stream_state st;
    st.plan = plan_bandwidth(t, chain_bytes(c.p), c.dev.sm_count, static_cast<int>(c.p[ilp_axis]),
                             static_cast<int>(c.p[ctas_per_sm_axis]), c.p[passes_axis]);
    st.seed_a = next_seed();
    st.seed_b = next_seed();
    fill_stream_kernel<<<1024, 256>>>(c.ptr<float>(a_buffer), c.p.n, st.seed_a);
    fill_stream_kernel<<<1024, 256>>>(c.ptr<float>(b_buffer), c.p.n, st.seed_b);
    MEMLAB_CUDA_CHECK_LAUNCH();
    if (t.path == load_path::shared) {
      const auto smem = static_cast<int>(2 * st.plan.slice * 16);
      for (const void* k :
           {reinterpret_cast<const void*>(&smem_dot_kernel<1>), reinterpret_cast<const void*>(&smem_dot_kernel<2>),
            reinterpret_cast<const void*>(&smem_dot_kernel<4>), reinterpret_cast<const void*>(&smem_dot_kernel<8>)})
        MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    }
    MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
    c.state = std::make_shared<stream_state>(st);
    return;
  }
  auto st = std::make_shared<chase_state>();
  const std::uint64_t stride = c.p[stride_axis];
  st->plan = plan_chase(chain_bytes(c.p), stride, c.p[steps_axis], t.per_sm, c.dev.sm_count);
  if (t.kind == rung_kind::register_chain) {
    st->plan.warmup = 0;
    st->plan.samples = 0;
    st->plan.steps = (st->plan.steps + register_chain_unroll - 1) / register_chain_unroll * register_chain_unroll;
    c.state = st;
    return;
  }
  if (t.kind == rung_kind::loaded_chase) st->plan.walkers = 1;
  const chase_plan& p = st->plan;
  const std::vector<std::uint64_t> next = make_chain(p.nodes, t.order, next_seed());
  st->starts = walker_starts(next, p);
  for (std::uint64_t w = 0; w < p.walkers; ++w) st->ends.push_back(walk(next, st->starts[w], walk_length(p)));
  const bool shared = t.path == load_path::shared;
  const auto base = reinterpret_cast<std::uint64_t>(c.ptr(chain_buffer));
  device_buffer links(8 * p.nodes);
  if (shared) {
    std::vector<std::uint32_t> host(p.nodes);
    for (std::uint64_t i = 0; i < p.nodes; ++i) host[i] = static_cast<std::uint32_t>(next[i] * stride);
    MEMLAB_CUDA_CHECK(cudaMemcpy(links.data(), host.data(), 4 * p.nodes, cudaMemcpyHostToDevice));
    scatter_chain_kernel<<<1024, 256>>>(c.ptr<std::uint32_t>(chain_buffer),
                                        reinterpret_cast<const std::uint32_t*>(links.data()), p.nodes, stride / 4);
  } else {
    std::vector<std::uint64_t> host(p.nodes);
    for (std::uint64_t i = 0; i < p.nodes; ++i) host[i] = base + next[i] * stride;
    MEMLAB_CUDA_CHECK(cudaMemcpy(links.data(), host.data(), 8 * p.nodes, cudaMemcpyHostToDevice));
    scatter_chain_kernel<<<1024, 256>>>(c.ptr<std::uint64_t>(chain_buffer),
                                        reinterpret_cast<const std::uint64_t*>(links.data()), p.nodes, stride / 8);
  }
  MEMLAB_CUDA_CHECK_LAUNCH();
  st->cursor.resize(p.walkers);
  for (std::uint64_t w = 0; w < p.walkers; ++w)
    st->cursor[w] = shared ? st->starts[w] * stride : base + st->starts[w] * stride;
  rewind(c, *st);
  if (t.kind == rung_kind::loaded_chase) {
    fill_stream_kernel<<<1024, 256>>>(c.ptr<float>(stream_buffer), stream_bytes_for(c.dev) / 4, next_seed());
    MEMLAB_CUDA_CHECK_LAUNCH();
  }
  // Kernels that ask for more than 48 KiB of shared memory say so once, here, not inside a launch
  // (which a CUDA graph captures).
  const int one_per_sm = one_cta_per_sm_smem(c.dev);
  if (t.per_sm)
    MEMLAB_CUDA_CHECK(
        cudaFuncSetAttribute(reinterpret_cast<const void*>(&chase_kernel<load_path::l2, chase_order::random, true>),
                             cudaFuncAttributeMaxDynamicSharedMemorySize, one_per_sm));
  if (t.kind == rung_kind::loaded_chase)
    MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(&loaded_chase_kernel),
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, one_per_sm));
  if (shared)
    MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(&chase_shared_kernel),
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(chain_bytes(c.p))));
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  c.state = st;
}

// An L2-sized chain is made resident first (the cold samples flush the L2); a larger one is not
// touched, so that the walk's misses are DRAM's.
void touch_if_l2_sized(const case_ctx& c, cudaStream_t s) {
  if (chain_bytes(c.p) > c.dev.l2_bytes) return;
  touch_kernel<<<grid_of(4 * static_cast<std::uint64_t>(std::max(c.dev.sm_count, 1)), "hierarchy"), 256, 0, s>>>(
      c.ptr<const float4>(chain_buffer), chain_bytes(c.p) / 16, c.ptr<float>(out_buffer));
  MEMLAB_CUDA_CHECK_LAUNCH();
}

template <load_path Path, chase_order Order, bool PerSM>
void launch_chase(const case_ctx& c, cudaStream_t s) {
  const auto& st = *std::any_cast<std::shared_ptr<chase_state>>(c.state);
  const auto& p = st.plan;
  const int smem = PerSM ? one_cta_per_sm_smem(c.dev) : 0;
  touch_if_l2_sized(c, s);
  chase_kernel<Path, Order, PerSM><<<grid_of(p.walkers, "hierarchy"), 32, static_cast<std::size_t>(smem), s>>>(
      c.ptr<std::uint64_t>(starts_buffer), p.warmup, p.steps, p.samples, c.ptr<chase_out>(out_buffer));
  MEMLAB_CUDA_CHECK_LAUNCH();
}

void launch_chase_shared(const case_ctx& c, cudaStream_t s) {
  const auto& st = *std::any_cast<std::shared_ptr<chase_state>>(c.state);
  const auto& p = st.plan;
  const auto bytes = static_cast<int>(chain_bytes(c.p));
  chase_shared_kernel<<<1, 256, static_cast<std::size_t>(bytes), s>>>(
      c.ptr<const std::uint32_t>(chain_buffer), static_cast<std::uint32_t>(bytes / 4),
      static_cast<std::uint32_t>(st.starts[0] * c.p[stride_axis]), p.warmup, p.steps, p.samples,
      c.ptr<chase_out>(out_buffer));
  MEMLAB_CUDA_CHECK_LAUNCH();
}

void launch_register_chain(const case_ctx& c, cudaStream_t s) {
  const auto& st = *std::any_cast<std::shared_ptr<chase_state>>(c.state);
  register_chain_kernel<<<1, 32, 0, s>>>(chain_x0, chain_a, chain_b, st.plan.steps, c.ptr<chase_out>(out_buffer));
  MEMLAB_CUDA_CHECK_LAUNCH();
}

void launch_loaded(const case_ctx& c, cudaStream_t s) {
  const auto& st = *std::any_cast<std::shared_ptr<chase_state>>(c.state);
  const auto& p = st.plan;
  const int smem = one_cta_per_sm_smem(c.dev);
  touch_if_l2_sized(c, s);
  MEMLAB_CUDA_CHECK(cudaMemsetAsync(c.ptr(flags_buffer), 0, sizeof(loaded_flags), s));
  MEMLAB_CUDA_CHECK(cudaMemsetAsync(c.ptr(generators_buffer), 0, c.buffers[generators_buffer].size(), s));
  loaded_chase_kernel<<<grid_of(c.plan.policy.grid, "hierarchy"), 1024, static_cast<std::size_t>(smem), s>>>(
      c.ptr<std::uint64_t>(starts_buffer), p.warmup, p.steps, p.samples, c.ptr<chase_out>(out_buffer),
      c.ptr<const float4>(stream_buffer), stream_bytes_for(c.dev) / 16, c.ptr<loaded_flags>(flags_buffer),
      c.ptr<generator_out>(generators_buffer));
  MEMLAB_CUDA_CHECK_LAUNCH();
}

// The stream kernel of one op, path and ILP; and all of them, for `memlab inspect`.
template <stream_op Op, load_path Path, bool All = false>
void launch_stream(const case_ctx& c, cudaStream_t s) {
  const auto& st = *std::any_cast<std::shared_ptr<stream_state>>(c.state);
  const auto& b = st.plan;
  const auto args = [&](auto kernel) {
    kernel<<<grid_of(b.grid, "hierarchy"), stream_threads, 0, s>>>(
        c.ptr<const float4>(a_buffer), c.ptr<const float4>(b_buffer), c.ptr<float4>(c_buffer), b.vectors, b.passes,
        stream_scalar, c.ptr<float>(partials_buffer));
  };
  switch (b.ilp) {
    case 1: args(stream_kernel<Op, Path, 1, All>); break;
    case 2: args(stream_kernel<Op, Path, 2, All>); break;
    case 8: args(stream_kernel<Op, Path, 8, All>); break;
    default: args(stream_kernel<Op, Path, 4, All>); break;
  }
  MEMLAB_CUDA_CHECK_LAUNCH();
}
template <stream_op Op, load_path Path, bool All = false>
std::vector<kernel_ref> stream_kernels() {
  return {kernel_ref::of(&stream_kernel<Op, Path, 1, All>), kernel_ref::of(&stream_kernel<Op, Path, 2, All>),
          kernel_ref::of(&stream_kernel<Op, Path, 4, All>), kernel_ref::of(&stream_kernel<Op, Path, 8, All>)};
}

void launch_smem_dot(const case_ctx& c, cudaStream_t s) {
  const auto& st = *std::any_cast<std::shared_ptr<stream_state>>(c.state);
  const auto& b = st.plan;
  const auto smem = static_cast<int>(2 * b.slice * 16);
  const auto args = [&](auto kernel) {
    kernel<<<grid_of(b.grid, "hierarchy"), stream_threads, static_cast<std::size_t>(smem), s>>>(
        c.ptr<const float4>(a_buffer), c.ptr<const float4>(b_buffer), b.vectors, b.slice, b.passes,
        c.ptr<float>(partials_buffer));
  };
  switch (b.ilp) {
    case 1: args(smem_dot_kernel<1>); break;
    case 2: args(smem_dot_kernel<2>); break;
    case 8: args(smem_dot_kernel<8>); break;
    default: args(smem_dot_kernel<4>); break;
  }
  MEMLAB_CUDA_CHECK_LAUNCH();
}

template <class T>
T read_back(const device_buffer& b, std::uint64_t offset = 0) {
  T v{};
  MEMLAB_CUDA_CHECK(cudaMemcpy(&v, b.data() + offset, sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}
std::vector<chase_out> read_walkers(const case_ctx& c, std::uint64_t walkers) {
  std::vector<chase_out> out(walkers);
  MEMLAB_CUDA_CHECK(cudaMemcpy(out.data(), c.ptr(out_buffer), walkers * sizeof(chase_out), cudaMemcpyDeviceToHost));
  return out;
}

// The host replay of the register chain: the same FFMAs, rounded the same way (fmaf).
std::uint32_t register_chain_end(std::uint64_t steps) {
  float x = chain_x0;
  for (std::uint64_t i = 0; i < steps; ++i) x = std::fmaf(x, chain_a, chain_b);
  std::uint32_t u = 0;
  std::memcpy(&u, &x, 4);
  return u;
}

std::string verify(const case_ctx& c) {
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  const rung_traits& t = traits(*c.v);
  if (t.kind == rung_kind::bandwidth) {
    const auto& st = *std::any_cast<std::shared_ptr<stream_state>>(c.state);
    const auto& b = st.plan;
    const std::uint64_t n = c.p.n;
    if (t.writes == 0) {  // dot: the partial sums against the host's, per CTA
      std::vector<float> partials(b.grid);
      MEMLAB_CUDA_CHECK(cudaMemcpy(partials.data(), c.ptr(partials_buffer), 4 * b.grid, cudaMemcpyDeviceToHost));
      // The host's sums, one per slice (every_cta_reads_all: one for all), on every core.
      const std::uint64_t slices = t.every_cta_reads_all ? 1 : b.grid;
      std::vector<double> refs(slices);
      const unsigned workers = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
      std::vector<std::thread> pool;
      for (unsigned w = 0; w < workers; ++w) {
        pool.emplace_back([&, w] {
          // CTA g's share: the stream kernels' tiles g, g + grid, ... of 256 x ilp vectors (4 floats
          // each); smem_dot's one contiguous slice (what it copies into shared memory); all of it for
          // every_cta_reads_all.
          const std::uint64_t tile = t.path == load_path::shared ? b.slice * 4
                                                                 : std::uint64_t{stream_threads} *
                                                                       static_cast<std::uint64_t>(c.p[ilp_axis]) * 4;
          const std::uint64_t step = t.every_cta_reads_all ? n : t.path == load_path::shared ? n : b.grid * tile;
          for (std::uint64_t g = w; g < slices; g += workers) {
            double sum = 0;
            for (std::uint64_t from = t.every_cta_reads_all ? 0 : g * tile; from < n; from += step) {
              const std::uint64_t to = t.every_cta_reads_all ? n : std::min(n, from + tile);
              for (std::uint64_t i = from; i < to; ++i)
                sum += static_cast<double>(stream_value(st.seed_a, i)) * stream_value(st.seed_b, i);
            }
            refs[g] = sum;
          }
        });
      }
      for (auto& th : pool) th.join();
      // The host's sums are exact (products of multiples of 1/8, in double); the kernel's differ by
      // at most the derived rounding bound (dot_tolerance).
      const double tol = dot_tolerance(t, b);
      for (std::uint64_t g = 0; g < b.grid; ++g) {
        const double ref = refs[t.every_cta_reads_all ? 0 : g] * b.passes;
        const double got = partials[g];
        if (!(std::abs(got - ref) <= tol * ref))
          return "CTA " + std::to_string(g) + ": dot " + std::to_string(got) + ", expected " + std::to_string(ref) +
                 " (relative bound " + std::to_string(tol) + ")";
      }
      return {};
    }
    const auto expected = [&](std::uint64_t i) -> float {
      const float a = stream_value(st.seed_a, i), bb = stream_value(st.seed_b, i);
      if (t.reads == 0) return stream_scalar;
      if (t.reads == 1) return a;
      return t.flops == 1 ? a + bb : std::fmaf(stream_scalar, bb, a);
    };
    return check_bytes(c.buffers[c_buffer], 0, 4 * n, 4, [&](std::uint64_t j) {
      const float v = expected(j / 4);
      std::uint8_t bytes[4];
      std::memcpy(bytes, &v, 4);
      return bytes[j % 4];
    });
  }
  const auto& st = *std::any_cast<std::shared_ptr<chase_state>>(c.state);
  if (t.kind == rung_kind::register_chain) {
    const auto o = read_walkers(c, 1)[0];
    const std::uint32_t want = register_chain_end(st.plan.steps);
    if (o.end != want) return "register chain ended on " + std::to_string(o.end) + ", host " + std::to_string(want);
    return {};
  }
  const auto outs = read_walkers(c, st.plan.walkers);
  const std::uint64_t stride = c.p[stride_axis];
  const auto base = reinterpret_cast<std::uint64_t>(c.ptr(chain_buffer));
  for (std::uint64_t w = 0; w < outs.size(); ++w) {
    const std::uint64_t want = t.path == load_path::shared ? st.ends[w] * stride : base + st.ends[w] * stride;
    if (outs[w].end != want)
      return "walker " + std::to_string(w) + " ended at node " +
             std::to_string(t.path == load_path::shared ? outs[w].end / stride : (outs[w].end - base) / stride) +
             ", the host's walk at node " + std::to_string(st.ends[w]);
  }
  rewind(c, st);  // a check is of one launch from the first nodes: the next one starts there again
  return {};
}

std::vector<measured_figure> observe(const case_ctx& c) {
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  const rung_traits& t = traits(*c.v);
  if (t.kind == rung_kind::bandwidth) return {};
  const auto& st = *std::any_cast<std::shared_ptr<chase_state>>(c.state);
  const auto outs = read_walkers(c, st.plan.walkers);
  const auto samples = [](const chase_out& o) {
    return std::span<const std::uint32_t>(o.samples, std::min<std::uint32_t>(o.samples_taken, max_samples));
  };
  if (!t.per_sm) {
    auto f = walk_figures(outs[0].cycles, outs[0].ns, st.plan.steps, samples(outs[0]));
    if (t.kind == rung_kind::loaded_chase && c.p[load_ctas_axis] > 0) {
      std::vector<generator_out> gens(c.p[load_ctas_axis]);
      MEMLAB_CUDA_CHECK(cudaMemcpy(gens.data(), c.ptr(generators_buffer), gens.size() * sizeof(generator_out),
                                   cudaMemcpyDeviceToHost));
      double gbps = 0;
      for (const auto& g : gens) gbps += g.ns > 0 ? static_cast<double>(g.bytes) / static_cast<double>(g.ns) : 0.0;
      f.push_back({"load_gbps", gbps, "GB/s"});
    }
    return f;
  }
  // One walker per SM: the mean and spread over SMs, and each SM's own figure (detail).
  std::vector<measured_figure> f;
  std::vector<double> cyc;
  for (const auto& o : outs) cyc.push_back(static_cast<double>(o.cycles) / static_cast<double>(st.plan.steps));
  double sum_ns = 0, sum_c = 0;
  for (const auto& o : outs) sum_ns += static_cast<double>(o.ns), sum_c += static_cast<double>(o.cycles);
  const double walkers = static_cast<double>(outs.size()), steps = static_cast<double>(st.plan.steps);
  f.push_back({"cycles_per_load", sum_c / walkers / steps, "cycles"});
  f.push_back({"ns_per_load", sum_ns / walkers / steps, "ns"});
  f.push_back({"sm_clock_mhz", sum_ns > 0 ? 1e3 * sum_c / sum_ns : 0.0, "MHz"});
  f.push_back({"min_sm_cycles", *std::min_element(cyc.begin(), cyc.end()), "cycles"});
  f.push_back({"max_sm_cycles", *std::max_element(cyc.begin(), cyc.end()), "cycles"});
  for (std::size_t w = 0; w < outs.size(); ++w)
    f.push_back({"sm" + std::to_string(outs[w].smid) + "_cycles", cyc[w], "cycles", true});
  return f;
}

// Rungs read their kernels from here: each named once, by symbol.
rung_traits chase(load_path path, chase_order order = chase_order::random, bool per_sm = false) {
  return {.kind = rung_kind::chase, .path = path, .order = order, .per_sm = per_sm};
}
rung_traits stream(int reads, int writes, int flops, load_path path = load_path::l1, bool all = false) {
  return {.kind = rung_kind::bandwidth,
          .path = path,
          .reads = reads,
          .writes = writes,
          .flops = flops,
          .every_cta_reads_all = all};
}

}  // namespace

// ---- the lab's table
// -------------------------------------------------------------------------------------------------

const lab& table() {
  static const lab hierarchy_lab{
      .name = "hierarchy",
      .teaches =
          "what each memory level delivers: dependent-load latency (pointer chase), bandwidth against working "
          "set, TLB reach, L2 partitions, latency under load and Little's law",
      .dtypes = {dtype::f32},
      .default_dtype = dtype::f32,
      .default_sizes = "32KiB,16MiB,256MiB",
      .size_meaning = "f32 elements: a chase's chain is 4n bytes, a stream's arrays 4n bytes each",
      .axes = {stride_axis, steps_axis, ilp_axis, ctas_per_sm_axis, passes_axis, load_ctas_axis},
      .roof = roof_kind::l2,
      .variants =
          {
              {
                  .name = "register_chain",
                  .teaches = "dependent FFMAs, no memory: what 'registers: 1 cycle' means for a dependent operation",
                  .launch = launch_register_chain,
                  .kernels = {kernel_ref::of(&register_chain_kernel)},
                  .traits = rung_traits{.kind = rung_kind::register_chain},
              },
              {
                  .name = "chase_shared",
                  .teaches = "dependent shared-memory loads (LDS -> LDS): shared memory's latency",
                  .launch = launch_chase_shared,
                  .kernels = {kernel_ref::of(&chase_shared_kernel)},
                  .traits = chase(load_path::shared),
              },
              {
                  .name = "chase_l1",
                  .teaches =
                      "dependent ld.global over a random cycle: L1, then L2, then HBM as the chain outgrows each",
                  .launch = launch_chase<load_path::l1, chase_order::random, false>,
                  .kernels = {kernel_ref::of(&chase_kernel<load_path::l1, chase_order::random, false>)},
                  .traits = chase(load_path::l1),
              },
              {
                  .name = "chase_l2",
                  .teaches = "dependent ld.global.cg (past L1): the L2 at every size, then HBM",
                  .launch = launch_chase<load_path::l2, chase_order::random, false>,
                  .kernels = {kernel_ref::of(&chase_kernel<load_path::l2, chase_order::random, false>)},
                  .traits = chase(load_path::l2),
              },
              {
                  .name = "chase_stride",
                  .teaches = "the same loads in address order (the classic stride chase): TLB reach, page by page",
                  .launch = launch_chase<load_path::l1, chase_order::sequential, false>,
                  .kernels = {kernel_ref::of(&chase_kernel<load_path::l1, chase_order::sequential, false>)},
                  .traits = chase(load_path::l1, chase_order::sequential),
              },
              {
                  .name = "chase_l2_per_sm",
                  .teaches = "the .cg chase on every SM at once, one walker each: each SM's own L2 latency",
                  .launch = launch_chase<load_path::l2, chase_order::random, true>,
                  .kernels = {kernel_ref::of(&chase_kernel<load_path::l2, chase_order::random, true>)},
                  .traits = chase(load_path::l2, chase_order::random, true),
              },
              {
                  .name = "loaded_chase",
                  .teaches = "the .cg chase on one SM while --load-ctas SMs stream from DRAM: latency under load",
                  .launch = launch_loaded,
                  .kernels = {kernel_ref::of(&loaded_chase_kernel)},
                  .traits = rung_traits{.kind = rung_kind::loaded_chase, .path = load_path::l2},
              },
              {
                  .name = "smem_dot",
                  .teaches = "a dot product from shared memory (LDS.128), every SM: shared memory's bandwidth",
                  .launch = launch_smem_dot,
                  .kernels = {kernel_ref::of(&smem_dot_kernel<1>), kernel_ref::of(&smem_dot_kernel<2>),
                              kernel_ref::of(&smem_dot_kernel<4>), kernel_ref::of(&smem_dot_kernel<8>)},
                  .traits = stream(2, 0, 2, load_path::shared),
              },
              {
                  .name = "dot",
                  .teaches = "read only: s += a[i] * b[i] (BabelStream's Dot), each SM over its own slice",
                  .launch = launch_stream<stream_op::dot, load_path::l1>,
                  .kernels = stream_kernels<stream_op::dot, load_path::l1>(),
                  .traits = stream(2, 0, 2),
              },
              {
                  .name = "dot_l2",
                  .teaches = "the dot through ld.global.cg: each SM's own slice from L2, never L1",
                  .launch = launch_stream<stream_op::dot, load_path::l2>,
                  .kernels = stream_kernels<stream_op::dot, load_path::l2>(),
                  .traits = stream(2, 0, 2, load_path::l2),
              },
              {
                  .name = "dot_l2_all",
                  .teaches = "the .cg dot with every CTA reading the whole arrays: data that many SMs request",
                  .launch = launch_stream<stream_op::dot, load_path::l2, true>,
                  .kernels = stream_kernels<stream_op::dot, load_path::l2, true>(),
                  .traits = stream(2, 0, 2, load_path::l2, true),
              },
              {
                  .name = "write",
                  .teaches = "write only: c[i] = s",
                  .launch = launch_stream<stream_op::write, load_path::l1>,
                  .kernels = stream_kernels<stream_op::write, load_path::l1>(),
                  .traits = stream(0, 1, 0),
              },
              {
                  .name = "copy",
                  .teaches = "c[i] = a[i] (BabelStream's Copy)",
                  .launch = launch_stream<stream_op::copy, load_path::l1>,
                  .kernels = stream_kernels<stream_op::copy, load_path::l1>(),
                  .traits = stream(1, 1, 0),
              },
              {
                  .name = "add",
                  .teaches = "c[i] = a[i] + b[i]: the reference's roofline example, 1 FLOP per 12 bytes",
                  .launch = launch_stream<stream_op::add, load_path::l1>,
                  .kernels = stream_kernels<stream_op::add, load_path::l1>(),
                  .traits = stream(2, 1, 1),
              },
              {
                  .name = "triad",
                  .teaches = "c[i] = a[i] + s * b[i] (BabelStream's Triad): 2 FLOPs per 12 bytes",
                  .launch = launch_stream<stream_op::triad, load_path::l1>,
                  .kernels = stream_kernels<stream_op::triad, load_path::l1>(),
                  .traits = stream(2, 1, 2),
              },
          },
      .unsupported = refusal,
      .plan = plan_case,
      .setup = setup,
      .verify = verify,
      .observe = observe,
  };
  return hierarchy_lab;
}

}  // namespace memlab::labs::hierarchy
