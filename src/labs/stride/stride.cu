// The stride lab: coalescing. A copy of n useful elements whose neighbouring threads touch elements
// `stride` apart, and a 16-byte vector copy from any element offset of its source (alignment).
//
// Assumes: source and destination are separate cudaMalloc allocations; --src-offset (bytes, a
// whole element) shifts the source start; the destination starts at its allocation. The host-side
// model (which elements each thread touches, the sectors its warps touch, launch policies) is in
// model.cpp; reading order here: the CPU reference, the kernels, the launchers, the table.
//
// The kernels, in reading order. Each is a copy of n useful elements; what changes is how far
// apart neighbouring threads' addresses are.
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

#include "harness/check.hpp"
#include "harness/dispatch.cuh"
#include "harness/error.hpp"
#include "harness/launch.cuh"
#include "labs/stride/stride.hpp"
#include "memlab/realign.cuh"
#include "memlab/vector.cuh"

namespace memlab::labs::stride {

// ---- the CPU reference ----------------------------------------------------------------------------

// The byte at destination byte `pos`: destination element e x (dst stride), e < n, holds source
// element e x (src stride), i.e. the random stream at src_offset + e x (src stride) x elem; every
// other byte (the gaps a scattered store skips) stays poison.
std::uint8_t reference_byte(std::uint64_t seed, std::uint64_t src_offset, access_strides st, std::uint64_t n,
                            std::size_t es, std::uint64_t pos) {
  const std::uint64_t e = pos / es;
  if (e % st.dst != 0 || e / st.dst >= n) return poison_byte;
  return random_byte(seed, src_offset + (e / st.dst) * st.src * es + pos % es);
}

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
__global__ void __launch_bounds__(threads_per_cta)
    strided_kernel(T* __restrict__ dst, const T* __restrict__ src, std::uint64_t n, std::uint64_t stride) {
  strided_copy<T, 0, 1>(dst, src, n, stride);
}

template <class T>
__global__ void __launch_bounds__(threads_per_cta)
    strided_write_kernel(T* __restrict__ dst, const T* __restrict__ src, std::uint64_t n, std::uint64_t stride) {
  strided_copy<T, 1, 0>(dst, src, n, stride);
}

template <class T>
__global__ void __launch_bounds__(threads_per_cta)
    strided_rw_kernel(T* __restrict__ dst, const T* __restrict__ src, std::uint64_t n, std::uint64_t stride) {
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
__global__ void __launch_bounds__(threads_per_cta)
    vec16_kernel(T* __restrict__ dst, const T* __restrict__ src, std::uint64_t n) {
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

// ---- launchers, refusals, plans -------------------------------------------------------------------------

namespace {

enum buffer_index { src_buffer, dst_buffer };

const axis stride_axis{.name = "stride",
                       .meaning = "elements between the accesses of neighbouring threads",
                       .unit = "elements",
                       .defaults = "1,2,3,4,6,8,12,16,24,32",
                       .min = 1,
                       .max = 1u << 20};
const axis src_offset_axis{.name = "src_offset",
                           .meaning = "bytes added to the source pointer (misalignment); a whole element",
                           .unit = "bytes",
                           .defaults = "0",
                           .max = 4096};

// A rung: its kernel for each element type, named once for launch and for `memlab inspect`.
struct strided_rung {
  template <class T>
  static auto kernel() {
    return &strided_kernel<T>;
  }
};
struct strided_write_rung {
  template <class T>
  static auto kernel() {
    return &strided_write_kernel<T>;
  }
};
struct strided_rw_rung {
  template <class T>
  static auto kernel() {
    return &strided_rw_kernel<T>;
  }
};
struct vec16_rung {
  template <class T>
  static auto kernel() {
    return &vec16_kernel<T>;
  }
};

// kernel(dst, src, n, stride) for the strided rungs; vec16 takes no stride.
template <class Rung>
void launch_rung(const case_ctx& c, cudaStream_t s) {
  const launch_policy& p = c.plan.policy;
  if (c.p.n == 0 || p.grid == 0) return;
  const dim3 grid = grid_of(p.grid, "stride"), block(static_cast<unsigned>(p.threads));
  visit_dtype(every_dtype{}, c.p.type, [&](auto tag) {
    using T = decltype(tag);
    auto* d = c.ptr<T>(dst_buffer);
    const auto* src = c.ptr<const T>(src_buffer, c.p[src_offset_axis]);
    if constexpr (std::is_same_v<Rung, vec16_rung>) {
      Rung::template kernel<T>()<<<grid, block, 0, s>>>(d, src, c.p.n);
    } else {
      Rung::template kernel<T>()<<<grid, block, 0, s>>>(d, src, c.p.n, c.p[stride_axis]);
    }
  });
  MEMLAB_CUDA_CHECK_LAUNCH();
}

std::optional<std::string> refusal(const variant& v, const case_params& p, const device_info& /*dev*/) {
  const std::uint64_t es = size_of(p.type), stride = p[stride_axis], offset = p[src_offset_axis];
  if (stride == 0) return std::string("a stride of 0 elements is not a strided access (use 1..)");
  if (offset % es != 0) {
    return "--src-offset is in bytes and must be a multiple of the " + std::to_string(es) + "-byte " +
           std::string(to_string(p.type)) + " element (got " + std::to_string(offset) + " B)";
  }
  if (v.traits_as<stride_rung>().vector_bytes != 0 && stride != 1) {
    return std::string(v.name) +
           " copies a dense source (stride 1): one 16-byte vector holds neighbouring elements (got stride " +
           std::to_string(stride) + ")";
  }
  // Byte counts (offset + the span of n accesses stride apart) must stay far from 64-bit overflow.
  constexpr std::uint64_t limit = std::uint64_t{1} << 62;
  if (p.n > 1 && (p.n - 1) > (limit / es) / stride) {
    return "n = " + std::to_string(p.n) + " at stride " + std::to_string(stride) + " spans more than 2^62 bytes";
  }
  return std::nullopt;
}

case_plan plan_case(const variant& v, const case_params& p, const device_info& /*dev*/) {
  const auto& r = v.traits_as<stride_rung>();
  const std::size_t es = size_of(p.type);
  const access_strides st = strides_of(r, p[stride_axis]);
  const sector_count sectors = sectors_touched(r, es, p.n, p[stride_axis], p[src_offset_axis]);
  case_plan out;
  out.policy = plan(r, es, p.n, p[src_offset_axis]);
  out.bytes = 2 * p.n * es;  // useful bytes: n elements read, n written, whatever the stride
  out.hardware_bytes = (sectors.read + sectors.write) * sector_bytes;
  out.working_set = out.hardware_bytes;  // what the caches must hold: every sector touched
  // The source to its exact last element (so compute-sanitizer flags any read past it); the
  // destination, gaps included.
  out.buffers = {{"src", p[src_offset_axis] + extent(p.n, st.src) * es, buffer_role::input},
                 {"dst", extent(p.n, st.dst) * es, buffer_role::output}};
  return out;
}

std::string verify(const case_ctx& c) {
  const std::size_t es = size_of(c.p.type);
  const access_strides st = strides_of(c.v->traits_as<stride_rung>(), c.p[stride_axis]);
  const std::uint64_t seed = c.seeds[src_buffer], offset = c.p[src_offset_axis], n = c.p.n;
  return check_bytes(
      c.buffers[dst_buffer], 0, extent(n, st.dst) * es, es,
      [&](std::uint64_t pos) { return reference_byte(seed, offset, st, n, es, pos); },
      [&](std::uint64_t e) {
        return e % st.dst == 0 ? "(source element " + std::to_string(e / st.dst * st.src) + ")"
                               : "(only every " + std::to_string(st.dst) + "th element is written)";
      });
}

}  // namespace

// ---- the lab's table ------------------------------------------------------------------------------------

const lab& table() {
  static const lab stride_lab{
      .name = "stride",
      .teaches =
          "coalescing: useful vs sector bandwidth as neighbouring threads' addresses move apart, and the cost "
          "of a misaligned start",
      .dtypes = dtypes_of(every_dtype{}),
      .default_dtype = dtype::f32,
      // 2^26 f32 is 256 MiB of useful reads (5x the H100's L2); at stride 32 the source spans 8 GiB.
      .default_sizes = "2^24",  // a tour; the pages' sweeps at 2^26 are documented commands
      .size_meaning = "elements copied (useful)",
      .axes = {stride_axis, src_offset_axis},
      .roof = roof_kind::dram,
      .variants =
          {
              {
                  .name = "strided",
                  .teaches = "thread e reads src[e x stride], writes dst[e]: a warp's loads span 32 x stride elements",
                  .launch = launch_rung<strided_rung>,
                  .kernels = kernels_per_dtype<strided_rung>(every_dtype{}),
                  .traits = stride_rung{.strided_src = true},
              },
              {
                  .name = "strided_write",
                  .teaches =
                      "thread e reads src[e], writes dst[e x stride]: coalesced loads, scattered partial-sector stores",
                  .launch = launch_rung<strided_write_rung>,
                  .kernels = kernels_per_dtype<strided_write_rung>(every_dtype{}),
                  .traits = stride_rung{.strided_dst = true},
              },
              {
                  .name = "strided_rw",
                  .teaches = "thread e copies element e x stride: both sides scattered",
                  .launch = launch_rung<strided_rw_rung>,
                  .kernels = kernels_per_dtype<strided_rw_rung>(every_dtype{}),
                  .traits = stride_rung{.strided_src = true, .strided_dst = true},
              },
              {
                  .name = "vec16",
                  .teaches = "stride 1, 16-byte loads and stores from any element offset: a misaligned source is read "
                             "aligned and realigned through a warp shuffle (+1 vector per warp)",
                  .launch = launch_rung<vec16_rung>,
                  .kernels = kernels_per_dtype<vec16_rung>(every_dtype{}),
                  .needs = {.shape = "--stride 1 (a dense source: one 16-byte vector holds neighbouring elements)"},
                  .traits = stride_rung{.vector_bytes = 16},
              },
          },
      .unsupported = refusal,
      .plan = plan_case,
      .setup = nullptr,
      .verify = verify,
  };
  return stride_lab;
}

}  // namespace memlab::labs::stride
