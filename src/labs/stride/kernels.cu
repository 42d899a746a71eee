// The stride lab's kernels, in reading order. Each is a copy of n useful elements; what changes is
// how far apart neighbouring threads' addresses are.
//   strided        thread-element e reads src[e x stride], writes dst[e] (gathers, coalesced stores)
//   strided_write  reads src[e], writes dst[e x stride] (coalesced loads, scattered stores)
//   strided_rw     reads src[e x stride], writes dst[e x stride] (both sides scattered)
//   vec16          stride 1, 16-byte loads and stores from any element offset of the source:
//                  a misaligned source is read as aligned 16-byte vectors and realigned in
//                  registers (a warp shuffle brings the neighbour's vector), not refused and not
//                  degraded to element-wise accesses.
// A warp instruction of the strided variants carries 32 consecutive thread-elements, so its
// addresses are 32 x stride x sizeof(T) bytes wide: one 128-byte line at stride 1 (f32), one
// 32-byte sector per element from stride 8 (f32) on. The hardware moves whole sectors.
#include <cstdint>

#include "harness/dispatch.cuh"
#include "harness/launch.cuh"
#include "labs/stride/stride.hpp"
#include "memlab/error.cuh"
#include "memlab/realign.cuh"
#include "memlab/vector.cuh"

namespace memlab::labs::stride {

namespace {

// Items = 16 / sizeof(T) elements per thread: element e = tile start + u x blockDim + threadIdx,
// so each of the Items load instructions is 32 consecutive elements across the warp. All loads are
// issued before the first store (16 bytes in flight per thread). Full tiles carry no bounds
// checks (a check per load let ptxas hoist a store above later loads in the copy lab); the last,
// partial tile goes element by element, rolled.
template <class T, std::uint64_t SrcStride, std::uint64_t DstStride>
__device__ __forceinline__ void strided_copy(T* __restrict__ dst, const T* __restrict__ src, std::uint64_t n,
                                             std::uint64_t stride) {
  constexpr int items = bytes_per_thread / static_cast<int>(sizeof(T));
  // A stride of 0 in the template means "the runtime stride"; 1 means dense.
  const std::uint64_t ss = SrcStride == 0 ? stride : 1;
  const std::uint64_t ds = DstStride == 0 ? stride : 1;
  const std::uint64_t tile = std::uint64_t{blockDim.x} * items;
  const std::uint64_t first = blockIdx.x * tile + threadIdx.x;
  if ((blockIdx.x + 1) * tile <= n) {
    T r[items];
#pragma unroll
    for (int u = 0; u < items; ++u) r[u] = src[(first + static_cast<std::uint64_t>(u) * blockDim.x) * ss];
#pragma unroll
    for (int u = 0; u < items; ++u) dst[(first + static_cast<std::uint64_t>(u) * blockDim.x) * ds] = r[u];
  } else {
#pragma unroll 1
    for (int u = 0; u < items; ++u) {
      const std::uint64_t e = first + static_cast<std::uint64_t>(u) * blockDim.x;
      if (e < n) dst[e * ds] = src[e * ss];
    }
  }
}

// Bytes misalign .. misalign + 15 of the 32 bytes lo:hi: the 16 source bytes an output vector
// needs, from the two aligned vectors that hold them (memlab/realign.cuh).
__device__ __forceinline__ uint4 realign(const uint4& lo, const uint4& hi, unsigned misalign) {
  const unsigned shift = 8 * (misalign % 4);
  switch (misalign / 4) {
    case 0: return funnel16<0>(lo, hi, shift);
    case 1: return funnel16<1>(lo, hi, shift);
    case 2: return funnel16<2>(lo, hi, shift);
    default: return funnel16<3>(lo, hi, shift);
  }
}

__device__ __forceinline__ uint4 shfl_down(const uint4& v) {
  return uint4{__shfl_down_sync(0xffffffffu, v.x, 1), __shfl_down_sync(0xffffffffu, v.y, 1),
               __shfl_down_sync(0xffffffffu, v.z, 1), __shfl_down_sync(0xffffffffu, v.w, 1)};
}

}  // namespace

template <class T>
__global__ void __launch_bounds__(threads_per_cta) strided_kernel(T* __restrict__ dst, const T* __restrict__ src,
                                                                  std::uint64_t n, std::uint64_t stride) {
  strided_copy<T, 0, 1>(dst, src, n, stride);
}

template <class T>
__global__ void __launch_bounds__(threads_per_cta) strided_write_kernel(T* __restrict__ dst, const T* __restrict__ src,
                                                                        std::uint64_t n, std::uint64_t stride) {
  strided_copy<T, 1, 0>(dst, src, n, stride);
}

template <class T>
__global__ void __launch_bounds__(threads_per_cta) strided_rw_kernel(T* __restrict__ dst, const T* __restrict__ src,
                                                                     std::uint64_t n, std::uint64_t stride) {
  strided_copy<T, 0, 0>(dst, src, n, stride);
}

// One 16-byte output vector per thread; dst is 16-byte aligned, src any element-aligned address.
// Aligned source: vector j = source vector j. Misaligned by m bytes: output vector j is bytes
// m..m+15 of the aligned source vectors j and j + 1 (counted from src - m). Thread j loads vector
// j; lane l takes vector j + 1 from lane l + 1 by a shuffle, and lane 31 loads it itself: 33
// aligned vectors per warp for 32 outputs, one sector more than the aligned copy. The thread just
// past the last vector (`main`) copies the rest element by element. m is the same for the whole
// grid, so every branch around the shuffle is uniform and all 32 lanes reach it.
template <class T>
__global__ void __launch_bounds__(threads_per_cta) vec16_kernel(T* __restrict__ dst, const T* __restrict__ src,
                                                                std::uint64_t n) {
  const std::uint64_t j = global_thread();
  const unsigned lane = threadIdx.x % 32;
  const auto address = reinterpret_cast<std::uintptr_t>(src);
  const auto misalign = static_cast<unsigned>(address % 16);
  const std::uint64_t main = vec16_main_vectors(n * sizeof(T), misalign);
  auto* d = reinterpret_cast<uint4*>(dst);
  if (misalign == 0) {
    if (j < main) d[j] = reinterpret_cast<const uint4*>(src)[j];
  } else {
    // Pointer arithmetic, not an integer cast back to a pointer: the compiler must still see a
    // global address to emit LDG (an integer round trip gives generic LD).
    const auto* aligned = reinterpret_cast<const uint4*>(reinterpret_cast<const char*>(src) - misalign);  // main + 1
    uint4 cur{0, 0, 0, 0};
    // Vector `main` is loaded only for the lane below (lane 0 has none in its warp).
    if (j < main || (j == main && lane != 0)) cur = aligned[j];
    uint4 next = shfl_down(cur);
    if (lane == 31 && j < main) next = aligned[j + 1];
    if (j < main) d[j] = realign(cur, next, misalign);
  }
  if (j == main) {
    constexpr std::uint64_t per_vec = 16 / sizeof(T);
#pragma unroll 1
    for (std::uint64_t i = main * per_vec; i < n; ++i) dst[i] = src[i];
  }
}

void launch_kernel(variant_id v, dtype t, void* dst, const void* src, std::uint64_t n, std::uint64_t stride,
                   const launch_policy& p, cudaStream_t s) {
  if (n == 0 || p.grid == 0) return;
  if (v == variant_id::vec16 && stride != 1) throw std::invalid_argument("stride: vec16 copies stride 1 only");
  const dim3 grid = grid_of(p.grid, "stride"), block(static_cast<unsigned>(p.threads));
  visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    auto* d = static_cast<T*>(dst);
    const auto* sp = static_cast<const T*>(src);
    switch (v) {
      case variant_id::strided: strided_kernel<T><<<grid, block, 0, s>>>(d, sp, n, stride); break;
      case variant_id::strided_write: strided_write_kernel<T><<<grid, block, 0, s>>>(d, sp, n, stride); break;
      case variant_id::strided_rw: strided_rw_kernel<T><<<grid, block, 0, s>>>(d, sp, n, stride); break;
      case variant_id::vec16: vec16_kernel<T><<<grid, block, 0, s>>>(d, sp, n); break;
    }
  });
  MEMLAB_CUDA_CHECK_LAUNCH();
}

}  // namespace memlab::labs::stride
