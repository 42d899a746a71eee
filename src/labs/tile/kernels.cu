// The tile ladder, in reading order. Every CTA does the same three steps, and only the first
// differs between variants:
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
//   ldg_sts16               16-byte LDG + STS, batches of 8 chunks (ptxas keeps <= 4 in flight)
//   ldgsts16                cp.async.cg 16 B (LDGSTS.E.BYPASS.128), every chunk in flight at once
#include <cuda_fp16.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include <cute/tensor.hpp>

#include "harness/dispatch.cuh"
#include "harness/launch.cuh"
#include "labs/tile/tile.hpp"
#include "memlab/error.cuh"
#include "memlab/tile.cuh"

namespace memlab::labs::tile {

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
  static __device__ void load(const T* g, T* s, int rows, int cols) { partitioned_copy(g, s, rows, cols, universal_fn<T>{}); }
};
struct cute_autovec64 {
  template <class T>
  static __device__ void load(const T* g, T* s, int rows, int cols) { partitioned_copy(g, s, rows, cols, autovec_fn<64>{}); }
};
struct cute_autovec128 {
  template <class T>
  static __device__ void load(const T* g, T* s, int rows, int cols) { partitioned_copy(g, s, rows, cols, autovec_fn<128>{}); }
};
struct cute_default {
  template <class T>
  static __device__ void load(const T* g, T* s, int rows, int cols) { partitioned_copy(g, s, rows, cols, default_fn{}); }
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
  static __device__ void load(const T* g, T* s, int rows, int cols) { tiled_copy(g, s, rows, cols, atom_universal_fn<T>{}); }
};
struct cute_tiled_default {
  template <class T>
  static __device__ void load(const T* g, T* s, int rows, int cols) { tiled_copy(g, s, rows, cols, default_fn{}); }
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
  static __device__ void load(const T* g, T* s, int rows, int cols) { tiled_copy(g, s, rows, cols, autovec_fn<128>{}); }
};
struct cute_tiled128 {
  template <class T>
  static __device__ void load(const T* g, T* s, int rows, int cols) { tiled_copy(g, s, rows, cols, atom_128_fn<T>{}); }
};

// memlab's movers: the tile is one contiguous byte range in global and in shared memory.
struct ldg_sts16 {
  template <class T>
  static __device__ void load(const T* g, T* s, int rows, int cols) {
    memlab::tile::load_ldg_sts16(s, g, static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * sizeof(T));
  }
};
struct ldgsts16 {
  template <class T>
  static __device__ void load(const T* g, T* s, int rows, int cols) {
    memlab::tile::load_ldgsts16(s, g, static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * sizeof(T));
  }
};

// ---- the kernel: one tile per CTA ------------------------------------------------------------------------

template <class Variant, class T>
__global__ void __launch_bounds__(threads_per_cta) tile_kernel(T* __restrict__ dst, const T* __restrict__ src,
                                                               int rows, int cols) {
  extern __shared__ __align__(128) unsigned char smem_bytes[];
  T* smem = reinterpret_cast<T*>(smem_bytes);
  const std::size_t tile_elems = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  const std::size_t first = blockIdx.x * tile_elems;
  Variant::load(src + first, smem, rows, cols);  // the only step that differs between variants
  __syncthreads();
  memlab::tile::store_lds_stg16(dst + first, smem, tile_elems * sizeof(T));
}

namespace {

// The kernel's address, for cudaFuncSetAttribute and cudaLaunchKernel (its parameters are
// (T*, const T*, int, int) whatever T is).
using kernel_fn = const void*;

template <class Variant, class T>
kernel_fn kernel_of() {
  return reinterpret_cast<const void*>(&tile_kernel<Variant, T>);
}

template <template <int, int> class Static, class T>
kernel_fn static_kernel(std::uint64_t rows, std::uint64_t cols) {
  if (rows == 128 && cols == 256) return kernel_of<Static<128, 256>, T>();
  if (rows == 128 && cols == 128) return kernel_of<Static<128, 128>, T>();
  if (rows == 64 && cols == 64) return kernel_of<Static<64, 64>, T>();
  throw std::invalid_argument("tile: no static instantiation for " + std::to_string(rows) + "x" + std::to_string(cols));
}

kernel_fn kernel_for(variant_id v, dtype t, std::uint64_t rows, std::uint64_t cols) {
  auto pick = [&](auto tag) -> kernel_fn {
    using T = decltype(tag);
    switch (v) {
      case variant_id::cute_universal: return kernel_of<cute_universal, T>();
      case variant_id::cute_autovec64: return kernel_of<cute_autovec64, T>();
      case variant_id::cute_autovec128: return kernel_of<cute_autovec128, T>();
      case variant_id::cute_default: return kernel_of<cute_default, T>();
      case variant_id::cute_universal_static: return static_kernel<cute_universal_static, T>(rows, cols);
      case variant_id::cute_autovec128_static: return static_kernel<cute_autovec128_static, T>(rows, cols);
      case variant_id::cute_default_static: return static_kernel<cute_default_static, T>(rows, cols);
      case variant_id::cute_tiled_universal: return kernel_of<cute_tiled_universal, T>();
      case variant_id::cute_tiled_default: return kernel_of<cute_tiled_default, T>();
      case variant_id::cute_tiled_default_static: return static_kernel<cute_tiled_default_static, T>(rows, cols);
      case variant_id::cute_tiled_autovec128: return kernel_of<cute_tiled_autovec128, T>();
      case variant_id::cute_tiled128: return kernel_of<cute_tiled128, T>();
      case variant_id::ldg_sts16: return kernel_of<ldg_sts16, T>();
      case variant_id::ldgsts16: return kernel_of<ldgsts16, T>();
    }
    throw std::invalid_argument("tile: unknown variant");
  };
  switch (t) {
    case dtype::f32: return pick(float{});
    case dtype::f16: return pick(__half{});
    default: throw std::invalid_argument("tile: dtype " + std::string(to_string(t)) + " is not built (f32, f16)");
  }
}

}  // namespace

// Lets the kernel use the device's whole opt-in shared memory, not just this case's tile: the
// dynamic variants share one kernel across tile shapes, and a smaller case prepared later must not
// shrink the limit under a larger one that is still alive.
void configure_kernel(variant_id v, dtype t, std::uint64_t rows, std::uint64_t cols) {
  int device = 0, optin = 0;
  MEMLAB_CUDA_CHECK(cudaGetDevice(&device));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const std::uint64_t bytes = rows * cols * size_of(t);
  const int limit = std::max(optin, static_cast<int>(bytes));  // unsupported() refused tiles over optin
  MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(kernel_for(v, t, rows, cols), cudaFuncAttributeMaxDynamicSharedMemorySize, limit));
}

void launch_kernel(variant_id v, dtype t, void* dst, const void* src, std::uint64_t rows, std::uint64_t cols,
                   std::uint64_t grid, cudaStream_t s) {
  if (grid == 0) return;
  const dim3 grid_dim = grid_of(grid, "tile");
  const std::size_t smem = rows * cols * size_of(t);
  int r = static_cast<int>(rows), c = static_cast<int>(cols);
  void* args[] = {&dst, &src, &r, &c};
  MEMLAB_CUDA_CHECK(cudaLaunchKernel(kernel_for(v, t, rows, cols), grid_dim,
                                     dim3(threads_per_cta), args, smem, s));
}

}  // namespace memlab::labs::tile
