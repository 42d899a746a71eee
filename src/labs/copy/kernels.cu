// The copy ladder, in reading order. Each rung changes one thing:
//   scalar        one element per thread: a 1- or 2-byte type issues 1- or 2-byte accesses, and a
//                 warp moves only 32-64 bytes per instruction.
//   vec8          one 8-byte vector per thread (LDG.E.64 / STG.E.64).
//   vec16         one 16-byte vector per thread (LDG.E.128 / STG.E.128), the widest access before
//                 sm_100: a warp moves 512 bytes per instruction.
//   vec16_unroll  several 16-byte vectors in flight per thread, grid-stride, the grid sized by bytes
//                 in flight per SM instead of by the problem size.
// vec8, vec16 and vec16_unroll need both pointers aligned to their vector width (checked by the
// launcher's caller) and copy any n: the ragged tail (< one vector) goes element by element.
#include <cstdint>

#include "harness/dispatch.cuh"
#include "harness/launch.cuh"
#include "labs/copy/copy.hpp"
#include "memlab/copy.cuh"
#include "memlab/error.cuh"
#include "memlab/vector.cuh"

namespace memlab::labs::copy {

namespace {

// Copies elements [from, n) one at a time. Kept rolled so the SASS shows exactly one narrow load
// and store for the tail, apart from the vector path.
template <class T>
__device__ __forceinline__ void copy_tail(T* __restrict__ dst, const T* __restrict__ src, std::uint64_t from,
                                          std::uint64_t n) {
#pragma unroll 1
  for (std::uint64_t i = from; i < n; ++i) dst[i] = src[i];
}

// One vector of VecBytes per thread; the thread just past the last vector copies the tail.
template <class T, int VecBytes>
__device__ __forceinline__ void copy_one_vector(T* __restrict__ dst, const T* __restrict__ src, std::uint64_t n) {
  using vec = vector_t<VecBytes>;
  constexpr std::uint64_t per_vec = VecBytes / sizeof(T);  // elements per vector
  const std::uint64_t vectors = n / per_vec;
  const std::uint64_t i = global_thread();
  if (i < vectors) {
    reinterpret_cast<vec*>(dst)[i] = reinterpret_cast<const vec*>(src)[i];
  } else if (i == vectors) {
    copy_tail(dst, src, vectors * per_vec, n);
  }
}

}  // namespace

template <class T>
__global__ void scalar_kernel(T* __restrict__ dst, const T* __restrict__ src, std::uint64_t n) {
  const std::uint64_t i = global_thread();
  if (i < n) dst[i] = src[i];
}

template <class T>
__global__ void vec8_kernel(T* __restrict__ dst, const T* __restrict__ src, std::uint64_t n) {
  copy_one_vector<T, 8>(dst, src, n);
}

template <class T>
__global__ void vec16_kernel(T* __restrict__ dst, const T* __restrict__ src, std::uint64_t n) {
  copy_one_vector<T, 16>(dst, src, n);
}

// Each iteration a CTA moves one tile of threads x Unroll vectors: thread t loads vectors t,
// t + threads, ... (each load instruction stays coalesced across the warp) and issues all Unroll
// loads before its first store, so Unroll x 16 bytes per thread are in flight. Full tiles carry no
// bounds checks: with a predicate on each load, ptxas hoisted the first store above the later
// loads (seen in sm_90 SASS), and the thread then waited on one load at a time. The grid strides
// over tiles; the one partial tile and the sub-vector tail are handled after the loop.
template <class T, int Unroll>
__global__ void __launch_bounds__(threads_per_cta) vec16_unroll_kernel(T* __restrict__ dst, const T* __restrict__ src,
                                                                       std::uint64_t n) {
  using vec = vector_t<16>;
  constexpr std::uint64_t per_vec = 16 / sizeof(T);
  const std::uint64_t vectors = n / per_vec;
  const auto* s = reinterpret_cast<const vec*>(src);
  auto* d = reinterpret_cast<vec*>(dst);
  const std::uint64_t tile = std::uint64_t{blockDim.x} * Unroll;
  const std::uint64_t full_tiles = vectors / tile;
  for (std::uint64_t t = blockIdx.x; t < full_tiles; t += gridDim.x) {
    const std::uint64_t base = t * tile + threadIdx.x;
    vec r[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) r[u] = s[base + static_cast<std::uint64_t>(u) * blockDim.x];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) d[base + static_cast<std::uint64_t>(u) * blockDim.x] = r[u];
  }
  // The partial tile goes to the CTA whose turn it would be next.
  if (blockIdx.x == full_tiles % gridDim.x) {
#pragma unroll 1
    for (std::uint64_t i = full_tiles * tile + threadIdx.x; i < vectors; i += blockDim.x) d[i] = s[i];
  }
  if (global_thread() == 0) copy_tail(dst, src, vectors * per_vec, n);
}

void launch_kernel(variant_id v, dtype t, void* dst, const void* src, std::uint64_t n, const launch_policy& p,
                   cudaStream_t s) {
  if (n == 0 || p.grid == 0) return;
  const dim3 grid = grid_of(p.grid, "copy"), block(static_cast<unsigned>(p.threads));
  visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    auto* d = static_cast<T*>(dst);
    const auto* sp = static_cast<const T*>(src);
    switch (v) {
      case variant_id::scalar: scalar_kernel<T><<<grid, block, 0, s>>>(d, sp, n); break;
      case variant_id::vec8: vec8_kernel<T><<<grid, block, 0, s>>>(d, sp, n); break;
      case variant_id::vec16: vec16_kernel<T><<<grid, block, 0, s>>>(d, sp, n); break;
      case variant_id::vec16_unroll: vec16_unroll_kernel<T, unroll_vectors><<<grid, block, 0, s>>>(d, sp, n); break;
      default: throw std::invalid_argument("launch_kernel: not a kernel variant");
    }
  });
  MEMLAB_CUDA_CHECK_LAUNCH();
}

launch_policy plan_library(const void* dst, const void* src, std::uint64_t bytes) {
  int device = 0;
  copy_device dev;
  MEMLAB_CUDA_CHECK(cudaGetDevice(&device));
  MEMLAB_CUDA_CHECK(memlab::detail::copy_device_of(device, dev));
  const copy_plan p = plan_copy(reinterpret_cast<std::uintptr_t>(dst), reinterpret_cast<std::uintptr_t>(src), bytes, dev);
  return {p.threads, p.vectors_per_thread, p.vec_bytes, 0, p.grid};
}

void launch_library(dtype t, void* dst, const void* src, std::uint64_t n, cudaStream_t s) {
  visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    MEMLAB_CUDA_CHECK(memlab::copy(static_cast<T*>(dst), static_cast<const T*>(src), n, s));
  });
}

}  // namespace memlab::labs::copy
