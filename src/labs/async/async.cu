// The async lab: the paths from global to shared memory. A DRAM-sized array is copied global ->
// shared -> global, tile by tile, every tile written back and verified exactly; what differs
// between the rungs is how a tile gets into shared memory:
//   through registers (LDG + STS), 4, 8 or 16 bytes per access;
//   with cp.async (LDGSTS): straight to shared memory, allocating in L1 (.ca: 4, 8, 16 B) or
//   bypassing it (.cg: 16 B only), with commit groups and waits instead of register scoreboards;
//   through a ring of stages (commit / wait_group per tile), so that enough bytes stay in flight,
//   and the pitfall of committing inside a divergent branch;
//   with the Tensor Memory Accelerator on sm_90 (one thread issues a bulk or a 2D tensor copy of the
//   whole tile, an mbarrier counts its bytes), which also writes the tile back;
// next to cub::DeviceTransform (its Hopper path stages through shared memory with bulk copies) and
// cudaMemcpyAsync over the same bytes. Bytes = 2 x payload (read + write).
//
// Assumes: src and dst are separate cudaMalloc allocations (256-byte aligned); --src-offset moves
// the source, --smem-offset each CTA's tile in its dynamic shared memory (128-byte aligned). A path
// runs only where both addresses meet its alignment and refuses other offsets with the reason; the
// host model (model.cpp) has the rules and the launch policies.
//
// Reading order: the CPU reference, the kernels from the first rung to the last, the peers, then
// plans, refusals, launchers and the lab's table at the end.
#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "harness/check.hpp"
#include "harness/dispatch.cuh"
#include "harness/error.hpp"
#include "harness/launch.cuh"
#include "harness/library_peers.cuh"
#include "labs/async/async.hpp"
#include "memlab/arch/config.cuh"
#include "memlab/arch/cp_async.cuh"
#include "memlab/tensor_map.hpp"
#include "memlab/tile.cuh"

namespace memlab::labs::async {

// ---- the CPU reference ----------------------------------------------------------------------------

// Output byte j is input byte src_offset + j: the input allocation holds the random stream `seed`
// from its first byte, and the copy starts src_offset bytes in.
std::uint8_t reference_byte(std::uint64_t seed, std::uint64_t src_offset, std::uint64_t j) {
  return random_byte(seed, src_offset + j);
}

// ---- what every kernel shares ---------------------------------------------------------------------

// One case, as the kernels see it (src already src_offset bytes in).
struct copy_args {
  std::byte* dst;
  const std::byte* src;
  std::uint64_t payload;  // bytes
  std::uint64_t main;     // bytes the path moves: a multiple of 16 (tma_tensor: 256)
  std::uint64_t tile;     // bytes per tile (per stage)
  std::uint32_t smem_offset;
};

namespace {

// The bytes past `main` (< 16; < 256 for tma_tensor), one by one, global to global, by thread 0 of
// the last CTA: the only bytes that do not pass through shared memory. Kept rolled.
__device__ __forceinline__ void copy_tail(const copy_args& a) {
  if (blockIdx.x != gridDim.x - 1 || threadIdx.x != 0) return;
#pragma unroll 1
  for (std::uint64_t i = a.main; i < a.payload; ++i) a.dst[i] = a.src[i];
}

// The bytes of tile t (the last one may be partial).
__device__ __forceinline__ std::uint64_t tile_bytes(const copy_args& a, std::uint64_t t) {
  return std::min(a.tile, a.main - t * a.tile);
}

// Dynamic shared memory: 128-byte aligned, so that smem_offset alone decides the tile's alignment.
__device__ __forceinline__ std::byte* dynamic_smem() {
  extern __shared__ __align__(128) std::byte smem_raw[];
  return smem_raw;
}

}  // namespace

// ---- the tile rungs: one tile per CTA ---------------------------------------------------------------
// Each CTA moves tile blockIdx.x into shared memory with the rung's path, waits for the whole CTA,
// then writes it back with one fixed write-back (LDS + STG of WriteBack bytes: 16 unless the tile
// sits at a smem offset that only allows 8 or 4). Many short-lived CTAs: on the H100 a persistent
// grid loses ~6% on a pure copy (docs/notes/copy.md), and the SMs overlap one CTA's load with
// another's write-back.

//   ldg_sts4, ldg_sts8, ldg_sts16: through registers. Each thread loads a batch of chunks, then
//   stores them to shared memory: the register round trip costs a scoreboard wait per batch, and
//   the narrow rungs need 4x / 2x the instructions of ldg_sts16 for the same bytes.
template <int Width>
struct ldg_sts_path {
  static __device__ __forceinline__ void load(std::byte* smem, const std::byte* gmem, std::uint64_t bytes) {
    memlab::tile::load_via_registers<Width>(smem, gmem, bytes);
  }
};

//   ldgsts_ca4, ldgsts_ca8, ldgsts_ca16: cp.async.ca (LDGSTS.E[.64|.128]). No registers: every
//   chunk of the thread is issued back to back, then one commit and one wait. .ca allocates the
//   line in L1 on its way to shared memory.
template <int Width>
struct ldgsts_ca_path {
  static __device__ __forceinline__ void load(std::byte* smem, const std::byte* gmem, std::uint64_t bytes) {
    memlab::tile::load_cp_async_ca<Width>(smem, gmem, bytes);
  }
};

//   ldgsts_cg16: cp.async.cg (LDGSTS.E.BYPASS.128): 16 bytes only, L2 to shared memory, L1 bypassed.
struct ldgsts_cg_path {
  static __device__ __forceinline__ void load(std::byte* smem, const std::byte* gmem, std::uint64_t bytes) {
    memlab::tile::load_cp_async16(smem, gmem, bytes);
  }
};

template <class Path, int WriteBack>
__global__ void __launch_bounds__(threads_per_cta) tile_kernel(copy_args a) {
  std::byte* tile = dynamic_smem() + a.smem_offset;
  const std::uint64_t t = blockIdx.x, first = t * a.tile;
  if (first < a.main) {  // uniform across the CTA: only a tail-only launch has no tile
    const std::uint64_t bytes = tile_bytes(a, t);
    Path::load(tile, a.src + first, bytes);
    __syncthreads();
    memlab::tile::store_lds_stg<WriteBack>(a.dst + first, tile, bytes);
  }
  copy_tail(a);
}

// ---- pipelined: a ring of stages ----------------------------------------------------------------------
// One CTA per SM, as a GEMM main loop that fills its SM's shared memory: no other CTA hides its
// latency, only its own stages do. The CTA streams tiles blockIdx.x, + gridDim.x, ... through
// Stages buffers with memlab::tile::pipeline_cp_async16: Stages tiles in flight while it waits for
// the oldest, so Stages x tile bytes per SM (Little's law: ~20 KB per SM cover the H100's latency).
template <int Stages>
__global__ void __launch_bounds__(threads_per_cta) pipelined_kernel(copy_args a) {
  std::byte* ring = dynamic_smem() + a.smem_offset;
  const std::uint64_t tiles = (a.main + a.tile - 1) / a.tile;
  const std::uint64_t mine = blockIdx.x < tiles ? (tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  const auto tile_of = [&](std::size_t k) { return blockIdx.x + k * std::uint64_t{gridDim.x}; };
  memlab::tile::pipeline_cp_async16<Stages>(
      ring, a.tile, mine,
      [&](std::size_t k) {
        const std::uint64_t t = tile_of(k);
        return memlab::tile::tile_span{a.src + t * a.tile, tile_bytes(a, t)};
      },
      [&](const void* smem, std::size_t k) {
        const std::uint64_t t = tile_of(k);
        memlab::tile::store_lds_stg<16>(a.dst + t * a.tile, smem, tile_bytes(a, t));
      });
  copy_tail(a);
}

// ---- divergent_commit: the pitfall ----------------------------------------------------------------------
// The same ring, with the commit written inside a branch that splits every warp (even and odd
// lanes). Per thread it is still one commit per tile; but the hardware counts commit groups per
// warp (LDGDEPBAR), the warp runs both branches one after the other, and each counts: two groups
// per tile, one of them empty. wait_group<Stages - 1> then lets only (Stages - 1) / 2 tiles stay in
// flight behind the one it needs: the ring behaves as if it had about half its stages. Correct,
// only slower (it over-waits); the lab shows by how much, and the SASS test counts the two
// LDGDEPBARs.
template <int Stages>
__global__ void __launch_bounds__(threads_per_cta) divergent_commit_kernel(copy_args a) {
  std::byte* ring = dynamic_smem() + a.smem_offset;
  const std::uint64_t tiles = (a.main + a.tile - 1) / a.tile;
  const std::uint64_t mine = blockIdx.x < tiles ? (tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  const auto tile_of = [&](std::uint64_t k) { return blockIdx.x + k * std::uint64_t{gridDim.x}; };
  const auto issue = [&](std::uint64_t k) {
    if (k < mine) {
      const std::uint64_t t = tile_of(k);
      memlab::tile::issue_cp_async_cg16(ring + (k % Stages) * a.tile, a.src + t * a.tile, tile_bytes(a, t));
    }
    if (threadIdx.x % 2 == 0) {
      arch::cp_async_commit();  // even lanes
    } else {
      arch::cp_async_commit();  // odd lanes: the same commit, in the other branch
    }
  };
#pragma unroll
  for (int s = 0; s < Stages - 1; ++s) issue(static_cast<std::uint64_t>(s));
  for (std::uint64_t k = 0; k < mine; ++k) {
    issue(k + Stages - 1);
    arch::cp_async_wait<Stages - 1>();
    __syncthreads();
    const std::uint64_t t = tile_of(k);
    memlab::tile::store_lds_stg<16>(a.dst + t * a.tile, ring + (k % Stages) * a.tile, tile_bytes(a, t));
    __syncthreads();
  }
  copy_tail(a);
}

// ---- TMA (sm_90+) ------------------------------------------------------------------------------------
// One warp per CTA; lane 0 does everything: it arms an mbarrier with the tile's byte count, issues
// ONE copy instruction for the whole tile, waits on the barrier, and issues ONE bulk store back
// (waiting, before the CTA exits, until that store has read its shared memory). No thread touches
// the data. Built for an arch without TMA the kernels only trap: the lab refuses them there first.

//   tma_bulk: cp.async.bulk (UBLKCP) both ways, a tile as one contiguous byte range.
__global__ void __launch_bounds__(tma_threads) tma_bulk_kernel(copy_args a) {
#if MEMLAB_HAS_TMA
  __shared__ __align__(8) std::uint64_t bar;
  std::byte* tile = dynamic_smem() + a.smem_offset;
  const std::uint64_t t = blockIdx.x, first = t * a.tile;
  if (threadIdx.x == 0 && first < a.main) {
    const auto bytes = static_cast<std::uint32_t>(tile_bytes(a, t));
    memlab::tile::init_tile_barrier(&bar);
    memlab::tile::load_bulk(tile, a.src + first, bytes, &bar);
    memlab::tile::wait_tile(&bar, 0);
    memlab::tile::store_bulk(a.dst + first, tile, bytes);
    memlab::tile::wait_stores_read();
  }
  copy_tail(a);
#else
  (void)a;
  __trap();
#endif
}

//   tma_tensor: the payload seen as a 2D tensor of 256-byte rows (tensor maps made on the host with
//   cuTensorMapEncodeTiled); a tile is a box of tile / 256 rows, loaded with UTMALDG and stored
//   back with UTMASTG. The last box may reach past the last row: TMA fills those rows with zeros
//   on the way in (they still count as transaction bytes) and writes nothing of them on the way out.
__global__ void __launch_bounds__(tma_threads)
    tma_tensor_kernel(const __grid_constant__ CUtensorMap src_map, const __grid_constant__ CUtensorMap dst_map,
                      copy_args a) {
#if MEMLAB_HAS_TMA
  __shared__ __align__(8) std::uint64_t bar;
  std::byte* tile = dynamic_smem() + a.smem_offset;
  const std::uint64_t t = blockIdx.x, first = t * a.tile;
  if (threadIdx.x == 0 && first < a.main) {
    const auto row = static_cast<int>(first / tensor_row_bytes);
    memlab::tile::init_tile_barrier(&bar);
    memlab::tile::load_tensor_2d(tile, &src_map, 0, row, static_cast<std::uint32_t>(a.tile), &bar);
    memlab::tile::wait_tile(&bar, 0);
    memlab::tile::store_tensor_2d(&dst_map, 0, row, tile);
    memlab::tile::wait_stores_read();
  }
  copy_tail(a);
#else
  (void)src_map, (void)dst_map, (void)a;
  __trap();
#endif
}

// ---- the peers --------------------------------------------------------------------------------------
//   cub     cub::DeviceTransform::Transform with an identity functor (as the copy lab's)
//   memcpy  cudaMemcpyAsync, device to device

// Its type names CUB's kernels instantiated for this lab: `memlab inspect` finds them by it.
struct identity_op {
  template <class T>
  __device__ T operator()(T x) const {
    return x;
  }
};

// ---- plans, refusals and launchers --------------------------------------------------------------------

namespace {

enum buffer_index { src_buffer, dst_buffer };

const axis src_offset_axis{
    .name = "src_offset",
    .meaning = "bytes added to the global source (a whole element); each path needs its alignment",
    .unit = "bytes",
    .defaults = "0",
    .min = 0,
    .max = 4096};
const axis smem_offset_axis{.name = "smem_offset",
                            .meaning = "bytes added to each CTA's shared tile; each path needs its alignment",
                            .unit = "bytes",
                            .defaults = "0",
                            .min = 0,
                            .max = 1024};
const axis stages_axis{.name = "stages",
                       .meaning = "shared-memory stages in flight per CTA (pipelined, divergent_commit; the others: 1)",
                       .unit = "stages",
                       .defaults = "1,4",
                       .min = 1,
                       .max = max_stages};
const axis tile_axis{.name = "tile_bytes",
                     .meaning = "bytes per tile (per stage): a multiple of 16; tma_tensor: of 256, at most 64 KiB",
                     .unit = "bytes",
                     .grammar = axis_grammar::bytes,
                     .defaults = "4KiB",
                     .min = 16,
                     .max = 1u << 20,
                     .multiple_of = 16};

case_shape shape_of(const case_params& p) {
  return {size_of(p.type), p.n, p[src_offset_axis], p[smem_offset_axis], p[stages_axis], p[tile_axis]};
}

copy_args args_of(const case_ctx& c) {
  const copy_geometry g = geometry(*c.v, c.p.n * size_of(c.p.type), c.p[tile_axis]);
  return {c.ptr(dst_buffer),
          c.ptr(src_buffer, c.p[src_offset_axis]),
          g.payload,
          g.main,
          g.tile,
          static_cast<std::uint32_t>(c.p[smem_offset_axis])};
}

// The kernel of a case: by rung, write-back width and stages. Every kernel but tma_tensor's takes
// (copy_args).
template <template <int> class Path, int Width>
const void* tile_rung_kernel(int writeback, std::uint64_t) {
  switch (writeback) {
    case 4: return reinterpret_cast<const void*>(&tile_kernel<Path<Width>, 4>);
    case 8: return reinterpret_cast<const void*>(&tile_kernel<Path<Width>, 8>);
    default: return reinterpret_cast<const void*>(&tile_kernel<Path<Width>, 16>);
  }
}
template <int>
using cg_path = ldgsts_cg_path;

template <template <int> class Kernel>
const void* staged_kernel(int, std::uint64_t stages) {
  switch (stages) {
    case 1: return reinterpret_cast<const void*>(Kernel<1>::fn);
    case 2: return reinterpret_cast<const void*>(Kernel<2>::fn);
    case 3: return reinterpret_cast<const void*>(Kernel<3>::fn);
    default: return reinterpret_cast<const void*>(Kernel<4>::fn);
  }
}
template <int S>
struct pipelined_fn {
  static constexpr auto fn = &pipelined_kernel<S>;
};
template <int S>
struct divergent_fn {
  static constexpr auto fn = &divergent_commit_kernel<S>;
};

const void* tma_bulk_fn(int, std::uint64_t) { return reinterpret_cast<const void*>(&tma_bulk_kernel); }
const void* tma_tensor_fn(int, std::uint64_t) { return reinterpret_cast<const void*>(&tma_tensor_kernel); }

// Every kernel a rung may launch (each write-back width, each stage count), for `memlab inspect`.
std::vector<kernel_ref> kernels_of(const rung_traits& t) {
  std::vector<kernel_ref> out;
  const auto add = [&](const void* k) {
    for (const auto& r : out)
      if (r.symbol == k) return;
    out.push_back({k, nullptr});
  };
  if (t.kernel == nullptr) return out;
  if (t.pipelined) {
    for (std::uint64_t s = 1; s <= static_cast<std::uint64_t>(max_stages); ++s) add(t.kernel(16, s));
  } else if (is_tma(t)) {
    add(t.kernel(16, 1));
  } else {
    // The write-back widths the path can meet: smem offsets are multiples of its access width.
    for (int wb : {16, 8, 4})
      if (wb >= t.access_bytes) add(t.kernel(wb, 1));
  }
  return out;
}

// The tensor maps of a tma_tensor case, made once in setup.
struct tensor_maps {
  CUtensorMap src, dst;
};

CUtensorMapDataType tensor_type(dtype t) {
  switch (t) {
    case dtype::u8: return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    case dtype::f16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case dtype::bf16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case dtype::f32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case dtype::f64: return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
  }
  throw std::invalid_argument("async: no tensor-map type for this dtype");
}

void launch_path(const case_ctx& c, cudaStream_t s) {
  const launch_policy& p = c.plan.policy;
  if (p.grid == 0) return;
  const auto& t = c.v->traits_as<rung_traits>();
  copy_args a = args_of(c);
  const std::size_t smem = smem_bytes(*c.v, a.tile, c.p[stages_axis], a.smem_offset);
  const void* kernel = t.kernel(writeback_bytes(a.smem_offset), c.p[stages_axis]);
  if (t.path == tile_path::tma_tensor) {
    auto& maps = std::any_cast<const tensor_maps&>(c.state);
    void* args[] = {const_cast<CUtensorMap*>(&maps.src), const_cast<CUtensorMap*>(&maps.dst), &a};
    MEMLAB_CUDA_CHECK(
        cudaLaunchKernel(kernel, grid_of(p.grid, "async"), dim3(static_cast<unsigned>(p.threads)), args, smem, s));
    return;
  }
  void* args[] = {&a};
  MEMLAB_CUDA_CHECK(
      cudaLaunchKernel(kernel, grid_of(p.grid, "async"), dim3(static_cast<unsigned>(p.threads)), args, smem, s));
}

// The bytes the library peers copy (harness/library_peers.cuh): the source at its offset, the
// destination aligned, as the rungs copy them.
copy_operands operands(const case_ctx& c) { return {c.ptr(dst_buffer), c.ptr(src_buffer, c.p[src_offset_axis])}; }

std::optional<std::string> refusal(const variant& v, const case_params& p, const device_info& dev) {
  return device_rule(v, shape_of(p), dev.smem_per_block_optin);
}

case_plan plan_case(const variant& v, const case_params& p, const device_info& dev) {
  const std::uint64_t payload = p.n * size_of(p.type);
  case_plan out;
  out.policy = plan(v, shape_of(p), dev.sm_count);
  out.bytes = 2 * payload;  // read n, write n
  out.working_set = 2 * payload;
  // The source to its exact end, so compute-sanitizer flags any read past it.
  out.buffers = {{"src", p[src_offset_axis] + payload, buffer_role::input}, {"dst", payload, buffer_role::output}};
  return out;
}

// Lets every kernel of the variant use the device's whole opt-in shared memory (the kernels are
// shared by cases of different tiles); makes tma_tensor's two tensor maps.
void setup(case_ctx& c) {
  if (c.v->peer) return;
  for (const auto& k : c.v->kernels) {
    cudaFuncAttributes attr{};
    MEMLAB_CUDA_CHECK(cudaFuncGetAttributes(&attr, k.symbol));
    const int limit = c.dev.smem_per_block_optin - static_cast<int>(attr.sharedSizeBytes);
    MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(k.symbol, cudaFuncAttributeMaxDynamicSharedMemorySize, limit));
  }
  if (c.v->traits_as<rung_traits>().path != tile_path::tma_tensor) return;
  const copy_args a = args_of(c);
  tensor_maps maps{};
  if (a.main > 0) {  // no rows, no map: the launch copies only the tail
    const std::uint64_t es = size_of(c.p.type), rows = a.main / tensor_row_bytes;
    const auto box_cols = static_cast<std::uint32_t>(tensor_row_bytes / es);
    const auto box_rows = static_cast<std::uint32_t>(a.tile / tensor_row_bytes);
    MEMLAB_CU_CHECK(encode_tensor_map_2d(&maps.src, tensor_type(c.p.type), a.src, box_cols, rows, tensor_row_bytes,
                                         box_cols, box_rows));
    MEMLAB_CU_CHECK(encode_tensor_map_2d(&maps.dst, tensor_type(c.p.type), a.dst, box_cols, rows, tensor_row_bytes,
                                         box_cols, box_rows));
  }
  c.state = maps;
}

std::string verify(const case_ctx& c) {
  const std::uint64_t seed = c.seeds[src_buffer], so = c.p[src_offset_axis];
  return check_bytes(c.buffers[dst_buffer], 0, c.p.n * size_of(c.p.type), size_of(c.p.type),
                     [&](std::uint64_t j) { return reference_byte(seed, so, j); });
}

// A rung of memlab's: its record, completed with every kernel its traits may launch.
variant with_kernels(variant v) {
  v.kernels = kernels_of(v.traits_as<rung_traits>());
  return v;
}

// The rungs' traits, named once: the path, its access width, and how it picks its kernel.
template <template <int> class Path, int Width>
constexpr rung_traits tile_rung(tile_path path) {
  return {.path = path, .access_bytes = Width, .kernel = &tile_rung_kernel<Path, Width>};
}

}  // namespace

// ---- the lab's table ------------------------------------------------------------------------------------

const lab& table() {
  static const lab async_lab{
      .name = "async",
      .teaches =
          "the paths from global to shared memory: LDG+STS vs cp.async (.ca/.cg), commit/wait stages, TMA bulk "
          "and tensor copies, and what alignment costs each",
      .dtypes = dtypes_of(every_dtype{}),
      .default_dtype = dtype::f32,
      .default_sizes = "2^26",  // 256 MiB of f32: 5 x the H100's 50 MB L2
      .size_meaning = "elements copied global -> shared -> global",
      .axes = {src_offset_axis, smem_offset_axis, stages_axis, tile_axis},
      .roof = roof_kind::dram,
      .variants =
          {
              with_kernels({
                  .name = "ldg_sts4",
                  .teaches = "through registers, 4-byte accesses: LDG.E + STS",
                  .launch = launch_path,
                  .needs = {.alignment = 4},
                  .traits = tile_rung<ldg_sts_path, 4>(tile_path::registers),
              }),
              with_kernels({
                  .name = "ldg_sts8",
                  .teaches = "through registers, 8-byte accesses: LDG.E.64 + STS.64",
                  .launch = launch_path,
                  .needs = {.alignment = 8},
                  .traits = tile_rung<ldg_sts_path, 8>(tile_path::registers),
              }),
              with_kernels({
                  .name = "ldg_sts16",
                  .teaches = "through registers, 16-byte accesses: LDG.E.128 + STS.128",
                  .launch = launch_path,
                  .needs = {.alignment = 16},
                  .traits = tile_rung<ldg_sts_path, 16>(tile_path::registers),
              }),
              with_kernels({
                  .name = "ldgsts_ca4",
                  .teaches = "cp.async.ca 4 B (LDGSTS.E): no registers, allocates in L1, every chunk in flight",
                  .launch = launch_path,
                  .needs = {.alignment = 4},
                  .traits = tile_rung<ldgsts_ca_path, 4>(tile_path::cp_async),
              }),
              with_kernels({
                  .name = "ldgsts_ca8",
                  .teaches = "cp.async.ca 8 B (LDGSTS.E.64)",
                  .launch = launch_path,
                  .needs = {.alignment = 8},
                  .traits = tile_rung<ldgsts_ca_path, 8>(tile_path::cp_async),
              }),
              with_kernels({
                  .name = "ldgsts_ca16",
                  .teaches = "cp.async.ca 16 B (LDGSTS.E.128): still through L1",
                  .launch = launch_path,
                  .needs = {.alignment = 16},
                  .traits = tile_rung<ldgsts_ca_path, 16>(tile_path::cp_async),
              }),
              with_kernels({
                  .name = "ldgsts_cg16",
                  .teaches = "cp.async.cg 16 B (LDGSTS.E.BYPASS.128): L2 straight to shared memory, L1 bypassed",
                  .launch = launch_path,
                  .needs = {.alignment = 16},
                  .traits = tile_rung<cg_path, 16>(tile_path::cp_async),
              }),
              with_kernels({
                  .name = "pipelined",
                  .teaches = "ldgsts_cg16 through --stages shared buffers, one CTA per SM: commit per tile, "
                             "wait_group<stages-1>",
                  .launch = launch_path,
                  .needs = {.alignment = 16},
                  .traits = rung_traits{.path = tile_path::cp_async,
                                        .access_bytes = 16,
                                        .pipelined = true,
                                        .kernel = &staged_kernel<pipelined_fn>},
              }),
              with_kernels({
                  .name = "divergent_commit",
                  .teaches =
                      "pipelined with its commit inside a divergent branch: the warp counts two groups per tile and "
                      "over-waits",
                  .launch = launch_path,
                  .needs = {.alignment = 16},
                  .traits = rung_traits{.path = tile_path::cp_async,
                                        .access_bytes = 16,
                                        .pipelined = true,
                                        .kernel = &staged_kernel<divergent_fn>},
              }),
              with_kernels({
                  .name = "tma_bulk",
                  .teaches = "TMA (sm_90): one cp.async.bulk per tile (UBLKCP) on an mbarrier, and one bulk store back",
                  .launch = launch_path,
                  .needs = {.alignment = 16,
                            .min_cc = 90,
                            .feature = "the Tensor Memory Accelerator (cp.async.bulk, UBLKCP/UTMALDG)"},
                  .traits = rung_traits{.path = tile_path::tma_bulk, .access_bytes = 16, .kernel = &tma_bulk_fn},
              }),
              with_kernels({
                  .name = "tma_tensor",
                  .teaches =
                      "TMA (sm_90): a 2D tensor map of 256-byte rows, a box per tile in (UTMALDG) and out (UTMASTG)",
                  .launch = launch_path,
                  .needs = {.alignment = 16,
                            .min_cc = 90,
                            .feature = "the Tensor Memory Accelerator (cp.async.bulk, UBLKCP/UTMALDG)",
                            .shape = "tiles of whole 256-byte rows, at most 256 of them"},
                  .traits = rung_traits{.path = tile_path::tma_tensor, .access_bytes = 16, .kernel = &tma_tensor_fn},
              }),
              {
                  .name = "cub",
                  .teaches = "cub::DeviceTransform::Transform with an identity functor (Hopper: bulk copies into "
                             "shared memory)",
                  .launch = launch_cub_peer<identity_op, every_dtype, operands>,
                  .kernels = {kernel_ref::with_type<identity_op>()},
                  .peer = true,
                  .traits = rung_traits{},
              },
              {
                  .name = "memcpy",
                  .teaches = "cudaMemcpyAsync device to device",
                  .launch = launch_memcpy_peer<operands>,
                  .peer = true,
                  .traits = rung_traits{},
              },
          },
      .unsupported = refusal,
      .plan = plan_case,
      .setup = setup,
      .verify = verify,
  };
  return async_lab;
}

}  // namespace memlab::labs::async
