// The tile lab: CuTe's copy atoms global -> shared, next to memlab's tile movers. Each CTA moves one
// tile of a column-major matrix (a stack of rows x cols tiles) into shared memory with the variant's
// copy, then writes it back with one fixed write-back: the output is the input, verified exactly.
//
// Assumes: f32 or f16; tile shapes multiples of the (8, 32) thread layout that fit in shared memory;
// the *_static variants only for the shapes they are compiled for; the source shifted by
// --src-offset bytes (variants that assume alignment refuse offsets below it). The host-side model
// (tile rules, alignment, policies) is in model.cpp.
//
// The ladder, in reading order. Every CTA does the same three steps, and only the first differs
// between variants:
//   1. global -> shared: the variant's copy of one rows x cols tile (column-major, ld = rows);
//   2. __syncthreads();
//   3. shared -> global: one fixed write-back for every variant (memlab::tile::store_lds_stg16,
//      LDS.128 + STG.E.128), so that the output can be verified and the variants compared on
//      their global -> shared part alone.
//
// The CuTe rungs (the "naive copy" tutorial, then one change at a time):
//   cute_universal          UniversalCopy<T>: one element per copy, by definition
//   cute_autovec64          AutoVectorizingCopyWithAssumedAlignment<64>
//   cute_autovec128         AutoVectorizingCopyWithAssumedAlignment<128>
//   cute_default            copy(src, dst), CuTe's default policy
//     all four on dynamic (M, N) column-major layouts, partitioned by local_partition over the
//     (8, 32) thread layout: a thread owns every 8th element of a column, never two neighbours.
//   *_static                the same with compile-time shapes (static layouts)
//   cute_tiled_*            the partition of make_tiled_copy over the same (8, 32) threads with a
//                           value layout (16 B / sizeof(T), 1): a thread owns 16 contiguous bytes
//                           per copy; then each copy policy again:
//     cute_tiled_universal       the TiledCopy's UniversalCopy<T> atom
//     cute_tiled_default         copy(src, dst), dynamic layouts
//     cute_tiled_default_static  copy(src, dst), static layouts
//     cute_tiled_autovec128      AutoVectorizingCopyWithAssumedAlignment<128>
//     cute_tiled128              a UniversalCopy<uint128_t> atom: 128 bits by construction
// memlab's movers (include/memlab/tile.cuh), on the tile as one contiguous byte range:
//   ldg_sts16               load_via_registers16: 16-byte LDG + STS, batches of 8 chunks (ptxas keeps
//                           <= 4 in flight)
//   ldgsts_cg16             load_cp_async16: cp.async.cg 16 B (LDGSTS.E.BYPASS.128), every chunk in
//                           flight at once (the async lab's name for the same instruction)
#include <cuda_fp16.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include <cute/tensor.hpp>

#include "harness/check.hpp"
#include "harness/dispatch.cuh"
#include "harness/error.hpp"
#include "harness/launch.cuh"
#include "labs/tile/tile.hpp"
#include "memlab/tile.cuh"

namespace memlab::labs::tile {

// ---- the CPU reference ----------------------------------------------------------------------------

// The output matrix is the input matrix, byte for byte: output byte j is byte src_offset + j of the
// input's random stream.
std::uint8_t reference_byte(std::uint64_t seed, std::uint64_t src_offset, std::uint64_t j) {
  return random_byte(seed, src_offset + j);
}

// ---- the kernels ------------------------------------------------------------------------------------

using thread_layout = cute::Layout<cute::Shape<cute::Int<thr_rows>, cute::Int<thr_cols>>>;  // (8, 32) -> tid

// ---- the tutorial's partition: local_partition over (8, 32) ----------------------------------------

// (M, N) column-major: stride (_1, M). With int extents the layout is dynamic; with Int<> static.
template <class T, class M, class N>
__device__ __forceinline__ auto tile_tensors(const T* g, T* s, M rows, N cols) {
  const auto layout = cute::make_layout(cute::make_shape(rows, cols));
  return cute::make_tuple(cute::make_tensor(cute::make_gmem_ptr(g), layout),
                          cute::make_tensor(cute::make_smem_ptr(s), layout));
}

// This thread's elements of the tile: (M / 8, N / 32), stride (8, 32 M).
template <class T, class M, class N, class Copy>
__device__ __forceinline__ void partitioned_copy(const T* g, T* s, M rows, N cols, Copy&& copy_fn) {
  auto [gA, sA] = tile_tensors(g, s, rows, cols);
  auto tg = cute::local_partition(gA, thread_layout{}, threadIdx.x);
  auto ts = cute::local_partition(sA, thread_layout{}, threadIdx.x);
  copy_fn(tg, ts);
}

// UniversalCopy<T>: CuTe's copy(Copy_Atom, ...) needs the atom's value count (1) as a static
// mode, which a dynamic partition lacks, so the atom is applied element by element.
template <class T>
struct universal_fn {
  template <class G, class S>
  __device__ __forceinline__ void operator()(const G& tg, S& ts) const {
    using op = cute::UniversalCopy<T>;
    CUTE_UNROLL
    for (int i = 0; i < cute::size(ts); ++i) op::copy(tg(i), ts(i));
  }
};

template <int MaxVecBits>
struct autovec_fn {
  template <class G, class S>
  __device__ __forceinline__ void operator()(const G& tg, S& ts) const {
    cute::copy(cute::AutoVectorizingCopyWithAssumedAlignment<MaxVecBits>{}, tg, ts);
  }
};

struct default_fn {
  template <class G, class S>
  __device__ __forceinline__ void operator()(const G& tg, S& ts) const {
    cute::copy(tg, ts);
  }
};

// ---- a contiguous partition: make_tiled_copy over the same (8, 32) threads --------------------------

// Value layout (16 B / sizeof(T), 1): a thread owns 16 contiguous bytes of a column per copy; the
// (8, 32) threads x values tile covers (8 x 16 B / sizeof(T), 32) elements. Only the partition
// changes; the copy policy is the caller's.
template <class T, class M, class N, class Copy>
__device__ __forceinline__ void tiled_copy(const T* g, T* s, M rows, N cols, Copy&& copy_fn) {
  using vec = cute::Int<16 / sizeof(T)>;
  const auto tiled = cute::make_tiled_copy(cute::Copy_Atom<cute::UniversalCopy<T>, T>{}, thread_layout{},
                                           cute::Layout<cute::Shape<vec, cute::_1>>{});
  auto [gA, sA] = tile_tensors(g, s, rows, cols);
  const auto thr = tiled.get_thread_slice(threadIdx.x);
  const auto tg = thr.partition_S(gA);  // ((vec, 1), M / (8 vec), N / 32)
  auto ts = thr.partition_D(sA);
  copy_fn(tg, ts);
}

// The TiledCopy's own atom, applied to the contiguous partition: one element per copy.
template <class T>
struct atom_universal_fn {
  template <class G, class S>
  __device__ __forceinline__ void operator()(const G& tg, S& ts) const {
    cute::copy(cute::Copy_Atom<cute::UniversalCopy<T>, T>{}, tg, ts);
  }
};

// A 128-bit atom: UniversalCopy<uint128_t> moves a (16 B / sizeof(T))-element value mode as one access.
template <class T>
struct atom_128_fn {
  template <class G, class S>
  __device__ __forceinline__ void operator()(const G& tg, S& ts) const {
    cute::copy(cute::Copy_Atom<cute::UniversalCopy<cute::uint128_t>, T>{}, tg, ts);
  }
};

// ---- variant tags: each names its kernel (memlab inspect finds it by this name) ------------------------

// The tutorial: local_partition (8, 32), dynamic layouts, four copy policies.
struct cute_universal {
  template <class T>
  static __device__ void load(const T* g, T* s, int rows, int cols) {
    partitioned_copy(g, s, rows, cols, universal_fn<T>{});
  }
};
struct cute_autovec64 {
  template <class T>
  static __device__ void load(const T* g, T* s, int rows, int cols) {
    partitioned_copy(g, s, rows, cols, autovec_fn<64>{});
  }
};
struct cute_autovec128 {
  template <class T>
  static __device__ void load(const T* g, T* s, int rows, int cols) {
    partitioned_copy(g, s, rows, cols, autovec_fn<128>{});
  }
};
struct cute_default {
  template <class T>
  static __device__ void load(const T* g, T* s, int rows, int cols) {
    partitioned_copy(g, s, rows, cols, default_fn{});
  }
};

// The same partition on static layouts (compile-time tile shapes).
template <int R, int C>
struct cute_universal_static {
  template <class T>
  static __device__ void load(const T* g, T* s, int, int) {
    partitioned_copy(g, s, cute::Int<R>{}, cute::Int<C>{}, universal_fn<T>{});
  }
};
template <int R, int C>
struct cute_autovec128_static {
  template <class T>
  static __device__ void load(const T* g, T* s, int, int) {
    partitioned_copy(g, s, cute::Int<R>{}, cute::Int<C>{}, autovec_fn<128>{});
  }
};
template <int R, int C>
struct cute_default_static {
  template <class T>
  static __device__ void load(const T* g, T* s, int, int) {
    partitioned_copy(g, s, cute::Int<R>{}, cute::Int<C>{}, default_fn{});
  }
};

// The contiguous partition (make_tiled_copy), dynamic layouts unless *_static, one copy policy each.
struct cute_tiled_universal {
  template <class T>
  static __device__ void load(const T* g, T* s, int rows, int cols) {
    tiled_copy(g, s, rows, cols, atom_universal_fn<T>{});
  }
};
struct cute_tiled_default {
  template <class T>
  static __device__ void load(const T* g, T* s, int rows, int cols) {
    tiled_copy(g, s, rows, cols, default_fn{});
  }
};
template <int R, int C>
struct cute_tiled_default_static {
  template <class T>
  static __device__ void load(const T* g, T* s, int, int) {
    tiled_copy(g, s, cute::Int<R>{}, cute::Int<C>{}, default_fn{});
  }
};
struct cute_tiled_autovec128 {
  template <class T>
  static __device__ void load(const T* g, T* s, int rows, int cols) {
    tiled_copy(g, s, rows, cols, autovec_fn<128>{});
  }
};
struct cute_tiled128 {
  template <class T>
  static __device__ void load(const T* g, T* s, int rows, int cols) {
    tiled_copy(g, s, rows, cols, atom_128_fn<T>{});
  }
};

// memlab's movers: the tile is one contiguous byte range in global and in shared memory.
struct ldg_sts16 {
  template <class T>
  static __device__ void load(const T* g, T* s, int rows, int cols) {
    memlab::tile::load_via_registers16(s, g,
                                       static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * sizeof(T));
  }
};
struct ldgsts_cg16 {
  template <class T>
  static __device__ void load(const T* g, T* s, int rows, int cols) {
    memlab::tile::load_cp_async16(s, g, static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * sizeof(T));
  }
};

// ---- the kernel: one tile per CTA ------------------------------------------------------------------------

template <class Variant, class T>
__global__ void __launch_bounds__(threads_per_cta)
    tile_kernel(T* __restrict__ dst, const T* __restrict__ src, int rows, int cols) {
  extern __shared__ __align__(128) unsigned char smem_bytes[];
  T* smem = reinterpret_cast<T*>(smem_bytes);
  const std::size_t tile_elems = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  const std::size_t first = blockIdx.x * tile_elems;
  Variant::load(src + first, smem, rows, cols);  // the only step that differs between variants
  __syncthreads();
  memlab::tile::store_lds_stg16(dst + first, smem, tile_elems * sizeof(T));
}

// ---- launchers, refusals, plans -------------------------------------------------------------------------

namespace {

enum buffer_index { src_buffer, dst_buffer };

const axis tile_axis{.name = "tile",
                     .meaning = "tile shape ROWSxCOLS in elements, each a multiple of the (8, 32) thread layout",
                     .unit = "elements",
                     .grammar = axis_grammar::shape,
                     .defaults = "128x256,128x128",
                     .min = 1,
                     .max = 1u << 16,
                     .extents = {"rows", "cols"}};
const axis ctas_axis{.name = "ctas",
                     .meaning = "CTAs to launch, each moving its own tile; 0 = one per tile of the whole matrix",
                     .unit = "CTAs",
                     .defaults = "0,1",
                     .min = 0,
                     .max = 0x7fffffffu};
const axis src_offset_axis{.name = "src_offset",
                           .meaning = "bytes added to the source pointer (misalignment); a whole element",
                           .unit = "bytes",
                           .defaults = "0",
                           .max = 4096};

std::uint64_t rows_of(const case_params& p) { return p.shape(tile_axis)[0]; }
std::uint64_t cols_of(const case_params& p) { return p.shape(tile_axis)[1]; }

// The kernel's address, for cudaFuncSetAttribute and cudaLaunchKernel (its parameters are
// (T*, const T*, int, int) whatever T is).
using kernel_fn = const void*;

template <class Variant, class T>
kernel_fn kernel_of() {
  return reinterpret_cast<const void*>(&tile_kernel<Variant, T>);
}

template <template <int, int> class Static, class T>
kernel_fn static_kernel_of(std::uint64_t rows, std::uint64_t cols) {
  if (rows == 128 && cols == 256) return kernel_of<Static<128, 256>, T>();
  if (rows == 128 && cols == 128) return kernel_of<Static<128, 128>, T>();
  if (rows == 64 && cols == 64) return kernel_of<Static<64, 64>, T>();
  throw std::invalid_argument("tile: no static instantiation for " + tile_text(rows, cols));
}

// The element types the lab is built for: f32 (the tutorial's) and f16.
using lab_dtypes = dtype_list<float, __half>;

// A rung's kernel_picker (its traits' `kernel`): one kernel per dtype for a dynamic layout, one per
// dtype and compiled shape for a static one.
template <class Variant>
kernel_fn dynamic_kernel(dtype t, std::uint64_t /*rows*/, std::uint64_t /*cols*/) {
  return visit_dtype(lab_dtypes{}, t, [](auto tag) { return kernel_of<Variant, decltype(tag)>(); });
}
template <template <int, int> class Static>
kernel_fn static_kernel(dtype t, std::uint64_t rows, std::uint64_t cols) {
  return visit_dtype(lab_dtypes{}, t, [&](auto tag) { return static_kernel_of<Static, decltype(tag)>(rows, cols); });
}

// A rung's `kernels` in the table: every dtype, and every compiled shape of a static layout, each by
// symbol; the same kernels its traits' picker gives (tests/labs/tile/test_tile_plan.cpp).
template <class Variant>
std::vector<kernel_ref> dynamic_kernels() {
  std::vector<kernel_ref> out;
  for (dtype t : dtypes_of(lab_dtypes{})) out.push_back({dynamic_kernel<Variant>(t, 0, 0), nullptr});
  return out;
}
template <template <int, int> class Static>
std::vector<kernel_ref> static_kernels() {
  std::vector<kernel_ref> out;
  for (dtype t : dtypes_of(lab_dtypes{})) {
    for (const auto& [rows, cols] : static_tiles)
      out.push_back(
          {static_kernel<Static>(t, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols)), nullptr});
  }
  return out;
}

// The shape rules of the rungs that have one, in words for `memlab list` (tile_rule() checks them;
// every rung also needs a tile that is a multiple of the (8, 32) threads and fits in shared memory).
constexpr std::string_view static_shapes = "the compiled tile shapes only: 128x256, 128x128, 64x64";
constexpr std::string_view column_pieces =
    "rows a multiple of 8 x (16 B / element): 16-byte column pieces over the 8 "
    "thread rows";
constexpr std::string_view static_tiled_shapes =
    "the compiled tile shapes only (128x256, 128x128, 64x64); rows a "
    "multiple of 8 x (16 B / element)";

// The case's kernel.
kernel_fn kernel_for(const variant& v, const case_params& p) {
  return v.traits_as<tile_rung>().kernel(p.type, p.shape(tile_axis)[0], p.shape(tile_axis)[1]);
}

// CTAs the case launches: 0 means one per tile of the whole matrix.
std::uint64_t grid_of_case(const case_params& p) {
  const std::uint64_t tile_elems = rows_of(p) * cols_of(p);
  return p[ctas_axis] != 0 ? p[ctas_axis] : (tile_elems == 0 ? 0 : p.n / tile_elems);
}
std::uint64_t payload_bytes(const case_params& p) {
  return grid_of_case(p) * rows_of(p) * cols_of(p) * size_of(p.type);
}

void launch_tile(const case_ctx& c, cudaStream_t s) {
  const std::uint64_t grid = c.plan.policy.grid, rows = rows_of(c.p), cols = cols_of(c.p);
  if (grid == 0) return;
  const std::size_t smem = rows * cols * size_of(c.p.type);
  void* dst = c.ptr(dst_buffer);
  const void* src = c.ptr(src_buffer, c.p[src_offset_axis]);
  int r = static_cast<int>(rows), cl = static_cast<int>(cols);
  void* args[] = {&dst, &src, &r, &cl};
  MEMLAB_CUDA_CHECK(
      cudaLaunchKernel(kernel_for(*c.v, c.p), grid_of(grid, "tile"), dim3(threads_per_cta), args, smem, s));
}

// The device-independent rules.
std::optional<std::string> case_rule(const variant& v, const case_params& p) {
  const std::size_t es = size_of(p.type);
  const std::uint64_t rows = rows_of(p), cols = cols_of(p), ctas = p[ctas_axis], offset = p[src_offset_axis];
  if (p.type != dtype::f32 && p.type != dtype::f16) return "tile is built for f32 and f16 only";
  if (auto why = tile_rule(v.traits_as<tile_rung>(), es, rows, cols)) return why;
  const std::uint64_t tile_elems = rows * cols;
  if (p.n < tile_elems) {
    return "n = " + std::to_string(p.n) + " is smaller than one " + tile_text(rows, cols) + " tile (" +
           std::to_string(tile_elems) + " elements): the matrix is a stack of tiles";
  }
  if (p.n % tile_elems != 0) {
    return "n = " + std::to_string(p.n) + " is not a whole number of " + tile_text(rows, cols) + " tiles (" +
           std::to_string(tile_elems) + " elements each): the matrix is a stack of tiles";
  }
  const std::uint64_t tiles = p.n / tile_elems;
  if (ctas > tiles) {
    return "--ctas " + std::to_string(ctas) + " exceeds the " + std::to_string(tiles) +
           " tiles of the matrix (each CTA moves its own tile)";
  }
  if (offset % es != 0) {
    return "src offset +" + std::to_string(offset) + " B is not a whole " + std::to_string(es) + "-byte " +
           std::string(to_string(p.type)) + " element";
  }
  const auto align = static_cast<std::uint64_t>(v.needs.alignment);
  if (align > 0 && offset % align != 0) {
    return std::string(v.name) + " assumes a " + std::to_string(align) + "-byte aligned source (src +" +
           std::to_string(offset) + " B)";
  }
  return std::nullopt;
}

std::optional<std::string> refusal(const variant& v, const case_params& p, const device_info& dev) {
  if (auto why = case_rule(v, p)) return why;
  const std::uint64_t tile_bytes = rows_of(p) * cols_of(p) * size_of(p.type);
  if (dev.smem_per_block_optin > 0 && tile_bytes > static_cast<std::uint64_t>(dev.smem_per_block_optin)) {
    return "a " + tile_text(rows_of(p), cols_of(p)) + " " + std::string(to_string(p.type)) + " tile needs " +
           std::to_string(tile_bytes) + " B of shared memory; this device allows " +
           std::to_string(dev.smem_per_block_optin) + " B per CTA";
  }
  return std::nullopt;
}

case_plan plan_case(const variant& v, const case_params& p, const device_info& /*dev*/) {
  const std::uint64_t payload = payload_bytes(p);
  case_plan out;
  out.policy = plan(v.traits_as<tile_rung>(), size_of(p.type), rows_of(p), cols_of(p), grid_of_case(p));
  out.bytes = 2 * payload;  // each tile read once, written once
  out.working_set = 2 * payload;
  out.buffers = {{"src", p[src_offset_axis] + payload, buffer_role::input}, {"dst", payload, buffer_role::output}};
  return out;
}

// Lets the kernel use the device's whole opt-in shared memory, not just this case's tile: the
// dynamic variants share one kernel across tile shapes, and a smaller case prepared later must not
// shrink the limit under a larger one that is still alive.
void setup(case_ctx& c) {
  const std::uint64_t bytes = rows_of(c.p) * cols_of(c.p) * size_of(c.p.type);
  const int limit = std::max(c.dev.smem_per_block_optin, static_cast<int>(bytes));  // refusal() capped bytes
  MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(kernel_for(*c.v, c.p), cudaFuncAttributeMaxDynamicSharedMemorySize, limit));
}

std::string verify(const case_ctx& c) {
  const std::uint64_t seed = c.seeds[src_buffer], offset = c.p[src_offset_axis];
  return check_bytes(c.buffers[dst_buffer], 0, payload_bytes(c.p), size_of(c.p.type),
                     [&](std::uint64_t j) { return reference_byte(seed, offset, j); });
}

}  // namespace

// ---- the lab's table ------------------------------------------------------------------------------------

const lab& table() {
  static const lab tile_lab{
      .name = "tile",
      .teaches =
          "CuTe copy atoms global -> shared: which partition, policy, layout and alignment give 128-bit "
          "accesses; next to memlab's LDG+STS and cp.async tile movers",
      .dtypes = dtypes_of(lab_dtypes{}),
      .default_dtype = dtype::f32,
      .default_sizes = "2^28",  // 1 GiB of f32: ~20 x the H100's 50 MB L2
      .size_meaning = "elements of the matrix (a column-major stack of tiles: tile rows x tiles * tile cols)",
      // The tutorial's 128x256 tile (128 KiB of f32: one CTA per SM) and 128x128 (64 KiB: three per
      // SM); the full grid and the tutorial's single CTA.
      .axes = {tile_axis, ctas_axis, src_offset_axis},
      .roof = roof_kind::dram,
      .variants =
          {
              {
                  .name = "cute_universal",
                  .teaches = "the tutorial: local_partition (8, 32) on dynamic layouts, UniversalCopy<T>, one element "
                             "per copy",
                  .launch = launch_tile,
                  .kernels = dynamic_kernels<cute_universal>(),
                  .traits = tile_rung{.partition = tile_partition::local, .kernel = dynamic_kernel<cute_universal>},
              },
              {
                  .name = "cute_autovec64",
                  .teaches = "the tutorial's partition, AutoVectorizingCopyWithAssumedAlignment<64>",
                  .launch = launch_tile,
                  .kernels = dynamic_kernels<cute_autovec64>(),
                  .needs = {.alignment = 8},
                  .traits = tile_rung{.partition = tile_partition::local, .kernel = dynamic_kernel<cute_autovec64>},
              },
              {
                  .name = "cute_autovec128",
                  .teaches = "the tutorial's partition, AutoVectorizingCopyWithAssumedAlignment<128>",
                  .launch = launch_tile,
                  .kernels = dynamic_kernels<cute_autovec128>(),
                  .needs = {.alignment = 16},
                  .traits = tile_rung{.partition = tile_partition::local, .kernel = dynamic_kernel<cute_autovec128>},
              },
              {
                  .name = "cute_default",
                  .teaches = "the tutorial's partition, copy(src, dst): CuTe's default policy",
                  .launch = launch_tile,
                  .kernels = dynamic_kernels<cute_default>(),
                  .traits = tile_rung{.partition = tile_partition::local, .kernel = dynamic_kernel<cute_default>},
              },
              {
                  .name = "cute_universal_static",
                  .teaches = "cute_universal on static layouts (compile-time tile shape)",
                  .launch = launch_tile,
                  .kernels = static_kernels<cute_universal_static>(),
                  .needs = {.shape = static_shapes},
                  .traits = tile_rung{.partition = tile_partition::local,
                                      .static_layout = true,
                                      .kernel = static_kernel<cute_universal_static>},
              },
              {
                  .name = "cute_autovec128_static",
                  .teaches = "cute_autovec128 on static layouts",
                  .launch = launch_tile,
                  .kernels = static_kernels<cute_autovec128_static>(),
                  .needs = {.alignment = 16, .shape = static_shapes},
                  .traits = tile_rung{.partition = tile_partition::local,
                                      .static_layout = true,
                                      .kernel = static_kernel<cute_autovec128_static>},
              },
              {
                  .name = "cute_default_static",
                  .teaches = "cute_default on static layouts (copy() then assumes 128-bit alignment)",
                  .launch = launch_tile,
                  .kernels = static_kernels<cute_default_static>(),
                  .needs = {.alignment = 16, .shape = static_shapes},
                  .traits = tile_rung{.partition = tile_partition::local,
                                      .static_layout = true,
                                      .kernel = static_kernel<cute_default_static>},
              },
              {
                  .name = "cute_tiled_universal",
                  .teaches = "contiguous partition: make_tiled_copy, (8, 32) threads x (16 B, 1) values, "
                             "UniversalCopy<T> atom",
                  .launch = launch_tile,
                  .kernels = dynamic_kernels<cute_tiled_universal>(),
                  .needs = {.shape = column_pieces},
                  .traits =
                      tile_rung{.partition = tile_partition::tiled, .kernel = dynamic_kernel<cute_tiled_universal>},
              },
              {
                  .name = "cute_tiled_default",
                  .teaches = "contiguous partition, copy(src, dst) on dynamic layouts",
                  .launch = launch_tile,
                  .kernels = dynamic_kernels<cute_tiled_default>(),
                  .needs = {.shape = column_pieces},
                  .traits = tile_rung{.partition = tile_partition::tiled, .kernel = dynamic_kernel<cute_tiled_default>},
              },
              {
                  .name = "cute_tiled_default_static",
                  .teaches = "contiguous partition, copy(src, dst) on static layouts",
                  .launch = launch_tile,
                  .kernels = static_kernels<cute_tiled_default_static>(),
                  .needs = {.alignment = 16, .shape = static_tiled_shapes},
                  .traits = tile_rung{.partition = tile_partition::tiled,
                                      .access_bytes = 16,
                                      .static_layout = true,
                                      .kernel = static_kernel<cute_tiled_default_static>},
              },
              {
                  .name = "cute_tiled_autovec128",
                  .teaches = "contiguous partition, AutoVectorizingCopyWithAssumedAlignment<128>",
                  .launch = launch_tile,
                  .kernels = dynamic_kernels<cute_tiled_autovec128>(),
                  .needs = {.alignment = 16, .shape = column_pieces},
                  .traits = tile_rung{.partition = tile_partition::tiled,
                                      .access_bytes = 16,
                                      .kernel = dynamic_kernel<cute_tiled_autovec128>},
              },
              {
                  .name = "cute_tiled128",
                  .teaches = "contiguous partition, a UniversalCopy<uint128_t> atom: 128 bits by construction",
                  .launch = launch_tile,
                  .kernels = dynamic_kernels<cute_tiled128>(),
                  .needs = {.alignment = 16, .shape = column_pieces},
                  .traits = tile_rung{.partition = tile_partition::tiled,
                                      .access_bytes = 16,
                                      .kernel = dynamic_kernel<cute_tiled128>},
              },
              {
                  .name = "ldg_sts16",
                  .teaches = "memlab::tile::load_via_registers16: the tile as one byte range, 16-byte LDG + STS, "
                             "batches of 8 per thread (ptxas keeps <= 4 in flight)",
                  .launch = launch_tile,
                  .kernels = dynamic_kernels<ldg_sts16>(),
                  .needs = {.alignment = 16},
                  .traits = tile_rung{.partition = tile_partition::byte_range,
                                      .access_bytes = 16,
                                      .kernel = dynamic_kernel<ldg_sts16>},
              },
              {
                  .name = "ldgsts_cg16",
                  .teaches = "memlab::tile::load_cp_async16: cp.async.cg 16 B (L1 bypass), every chunk in flight, "
                             "commit + wait",
                  .launch = launch_tile,
                  .kernels = dynamic_kernels<ldgsts_cg16>(),
                  .needs = {.alignment = 16},
                  .traits = tile_rung{.partition = tile_partition::byte_range,
                                      .access_bytes = 16,
                                      .async_copy = true,
                                      .kernel = dynamic_kernel<ldgsts_cg16>},
                  .formerly = {"ldgsts16"},
              },
          },
      .unsupported = refusal,
      .plan = plan_case,
      .setup = setup,
      .verify = verify,
  };
  return tile_lab;
}

}  // namespace memlab::labs::tile
