// The copy lab: a 1D copy of n elements, from one element per thread to several 16-byte vectors in
// flight, memlab::copy at any alignment, and the libraries a user would otherwise call.
//
// Assumes: src and dst are separate cudaMalloc allocations (256-byte aligned) and the offsets
// (--src-offset, --dst-offset, bytes) move the pointers the copy sees away from that alignment; an
// offset must be a whole element. vec8, vec16 and vec16_unroll need both pointers aligned to their
// vector and refuse other offsets; scalar, auto and the peers take any element-aligned pointer.
//
// Reading order: the CPU reference, the ladder's kernels (each adds one thing), memlab::copy's
// kernels (include/memlab/copy.cuh), the peers, then plans, refusals and launchers, and the lab's
// table at the end.
#include <thrust/copy.h>
#include <thrust/execution_policy.h>
#include <thrust/system/cuda/execution_policy.h>
#include <cuda/cmath>

#include <cstdint>

#include "harness/check.hpp"
#include "harness/copy_peer.hpp"
#include "harness/dispatch.cuh"
#include "harness/error.hpp"
#include "harness/launch.cuh"
#include "harness/library_peers.cuh"
#include "labs/copy/copy.hpp"
#include "memlab/arch/ld_st256.cuh"
#include "memlab/copy.cuh"
#include "memlab/vector.cuh"

namespace memlab::labs::copy {

// ---- the CPU reference ----------------------------------------------------------------------------

// A copy's output byte j is input byte src_offset + j: the input allocation holds the random
// stream `seed` from its first byte, and the copy starts src_offset bytes in.
std::uint8_t reference_byte(std::uint64_t seed, std::uint64_t src_offset, std::uint64_t j) {
  return random_byte(seed, src_offset + j);
}

// ---- the ladder -----------------------------------------------------------------------------------
//   scalar        one element per thread: a 1- or 2-byte type issues 1- or 2-byte accesses, and a
//                 warp moves only 32-64 bytes per instruction.
//   vec8          one 8-byte vector per thread (LDG.E.64 / STG.E.64).
//   vec16         one 16-byte vector per thread (LDG.E.128 / STG.E.128), the widest access before
//                 sm_100: a warp moves 512 bytes per instruction.
//   vec16_unroll  several 16-byte vectors in flight per thread, grid-stride, the grid sized by bytes
//                 in flight per SM instead of by the problem size.
//   vec32         one 32-byte vector per thread (LDG.E.ENL2.256 / STG.E.ENL2.256): sm_100 and newer
//                 only; refused, with the reason, on older devices.
// The vector rungs copy any n: the ragged tail (< one vector) goes element by element.

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
__global__ void __launch_bounds__(threads_per_cta)
    vec16_unroll_kernel(T* __restrict__ dst, const T* __restrict__ src, std::uint64_t n) {
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

// One 32-byte vector per thread, through arch/ld_st256.cuh. Built for an arch without 256-bit
// accesses the kernel only traps: the lab refuses it there before any launch.
template <class T>
__global__ void vec32_kernel(T* __restrict__ dst, const T* __restrict__ src, std::uint64_t n) {
#if MEMLAB_HAS_LDST256
  constexpr std::uint64_t per_vec = 32 / sizeof(T);
  const std::uint64_t vectors = n / per_vec;
  const std::uint64_t i = global_thread();
  if (i < vectors) {
    arch::st_global_256(reinterpret_cast<vector_t<32>*>(dst) + i,
                        arch::ld_global_256(reinterpret_cast<const vector_t<32>*>(src) + i));
  } else if (i == vectors) {
    copy_tail(dst, src, vectors * per_vec, n);
  }
#else
  (void)dst, (void)src, (void)n;
  __trap();
#endif
}

// ---- the peers --------------------------------------------------------------------------------------
//   memcpy  cudaMemcpyAsync, device to device (the copy engine or the driver's own kernel)
//   cub     cub::DeviceTransform::Transform with an identity functor
//   thrust  thrust::copy on raw device pointers; CCCL 3.0 forwards trivially copyable, contiguous
//           data to cudaMemcpyAsync (thrust/system/cuda/detail/internal/copy_device_to_device.h)

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

const axis src_offset_axis{.name = "src_offset",
                           .meaning = "bytes added to the source pointer (misalignment); a whole element",
                           .unit = "bytes",
                           .defaults = "0",
                           .max = 4096};
const axis dst_offset_axis{.name = "dst_offset",
                           .meaning = "bytes added to the destination pointer; a whole element",
                           .unit = "bytes",
                           .defaults = "0",
                           .max = 4096};

const auto* source(const case_ctx& c) { return c.ptr(src_buffer, c.p[src_offset_axis]); }
auto* destination(const case_ctx& c) { return c.ptr(dst_buffer, c.p[dst_offset_axis]); }

// A ladder rung's kernel for each element type, as its traits say how it moves the bytes (the kernel named
// once, by symbol, for launch and for `memlab inspect`).
template <rung_traits R>
struct ladder_kernel {
  template <class T>
  static auto kernel() {
    if constexpr (R.method == copy_method::elements) {
      return &scalar_kernel<T>;
    } else if constexpr (R.method == copy_method::unrolled) {
      static_assert(R.vec_bytes == 16, "vec16_unroll_kernel moves 16-byte vectors");
      return &vec16_unroll_kernel<T, unroll_vectors>;
    } else if constexpr (R.vec_bytes == 8) {
      return &vec8_kernel<T>;
    } else if constexpr (R.vec_bytes == 16) {
      return &vec16_kernel<T>;
    } else {
      static_assert(R.method == copy_method::vectors && R.vec_bytes == 32, "8-, 16- or 32-byte vectors");
      return &vec32_kernel<T>;
    }
  }
};

// The rung's kernel for the case's dtype on the planned grid: kernel(dst, src, n).
template <class Rung>
void launch_rung(const case_ctx& c, cudaStream_t s) {
  const launch_policy& p = c.plan.policy;
  if (c.p.n == 0 || p.grid == 0) return;
  visit_dtype(every_dtype{}, c.p.type, [&](auto tag) {
    using T = decltype(tag);
    Rung::template kernel<T>()<<<grid_of(p.grid, "copy"), static_cast<unsigned>(p.threads), 0, s>>>(
        reinterpret_cast<T*>(destination(c)), reinterpret_cast<const T*>(source(c)), c.p.n);
  });
  MEMLAB_CUDA_CHECK_LAUNCH();
}

void launch_auto(const case_ctx& c, cudaStream_t s) {
  visit_dtype(every_dtype{}, c.p.type, [&](auto tag) {
    using T = decltype(tag);
    MEMLAB_CUDA_CHECK(
        memlab::copy(reinterpret_cast<T*>(destination(c)), reinterpret_cast<const T*>(source(c)), c.p.n, s));
  });
}

// memlab::copy's kernels (include/memlab/copy.cuh): every body width and word offset it may launch.
std::vector<kernel_ref> auto_kernels() {
  using namespace memlab::detail;
  std::vector<kernel_ref> k{kernel_ref::of(&copy_bytes_kernel<copy_tuning::threads>)};
  const auto add = [&](auto u) {
    constexpr int U = decltype(u)::value;
    k.push_back(kernel_ref::of(&copy_aligned16_kernel<U, true>));
    k.push_back(kernel_ref::of(&copy_aligned16_kernel<U, false>));  // no head or tail: the body alone
    k.push_back(kernel_ref::of(&copy_aligned32_kernel<U>));
    k.push_back(kernel_ref::of(&copy_realign16_kernel<0, U>));
    k.push_back(kernel_ref::of(&copy_realign16_kernel<1, U>));
    k.push_back(kernel_ref::of(&copy_realign16_kernel<2, U>));
    k.push_back(kernel_ref::of(&copy_realign16_kernel<3, U>));
  };
  add(std::integral_constant<int, 1>{});
  add(std::integral_constant<int, 2>{});
  add(std::integral_constant<int, 4>{});
  return k;
}

// The bytes the library peers copy (harness/library_peers.cuh): the rungs' own.
copy_operands operands(const case_ctx& c) { return {destination(c), source(c)}; }

void launch_thrust(const case_ctx& c, cudaStream_t s) {
  visit_dtype(every_dtype{}, c.p.type, [&](auto tag) {
    using T = decltype(tag);
    const auto* sp = reinterpret_cast<const T*>(source(c));
    thrust::copy(thrust::cuda::par_nosync.on(s), sp, sp + c.p.n, reinterpret_cast<T*>(destination(c)));  // throws
  });
  MEMLAB_CUDA_CHECK_LAUNCH();
}

// A rung of the ladder, from its record: its kernels and launch follow from its traits, and so does the alignment
// its vectors need (both pointers aligned to a vector).
template <rung_traits R>
variant ladder_rung(variant v) {
  v.launch = launch_rung<ladder_kernel<R>>;
  v.kernels = kernels_per_dtype<ladder_kernel<R>>(every_dtype{});
  v.needs.alignment = R.vec_bytes;
  v.traits = R;
  return v;
}

std::optional<std::string> refusal(const variant& v, const case_params& p, const device_info&) {
  const std::uint64_t es = size_of(p.type), so = p[src_offset_axis], dso = p[dst_offset_axis];
  const std::string where = " (src +" + std::to_string(so) + " B, dst +" + std::to_string(dso) + " B)";
  if (so % es != 0 || dso % es != 0) {
    return "offsets must be multiples of the " + std::to_string(es) + "-byte " + std::string(to_string(p.type)) +
           " element" + where;
  }
  const auto align = static_cast<std::uint64_t>(v.needs.alignment);
  if (align > 0 && (so % align != 0 || dso % align != 0)) {
    return std::string(v.name) + " needs src and dst " + std::to_string(align) + "-byte aligned" + where;
  }
  return std::nullopt;
}

case_plan plan_case(const variant& v, const case_params& p, const device_info& dev) {
  const std::uint64_t es = size_of(p.type), payload = p.n * es;
  case_plan out;
  const auto& r = v.traits_as<rung_traits>();
  if (r.method == copy_method::library) {
    out.policy = copy_policy(payload, dev, p[dst_offset_axis], p[src_offset_axis]);
  } else {
    out.policy = plan(r, es, p.n, dev.sm_count);
  }
  out.bytes = 2 * payload;  // read n, write n
  out.working_set = 2 * payload;
  // The source to its exact end, so compute-sanitizer flags any read past it.
  out.buffers = {{"src", p[src_offset_axis] + payload, buffer_role::input},
                 {"dst", p[dst_offset_axis] + payload, buffer_role::output}};
  return out;
}

std::string verify(const case_ctx& c) {
  const std::uint64_t seed = c.seeds[src_buffer], so = c.p[src_offset_axis];
  return check_bytes(c.buffers[dst_buffer], c.p[dst_offset_axis], c.p.n * size_of(c.p.type), size_of(c.p.type),
                     [&](std::uint64_t j) { return reference_byte(seed, so, j); });
}

}  // namespace

launch_policy plan(const rung_traits& r, std::size_t elem_size, std::uint64_t n, int sm_count) {
  const std::uint64_t bytes = n * elem_size;
  switch (r.method) {
    case copy_method::elements:
      return {.threads = threads_per_cta,
              .items_per_thread = 1,
              .vec_bytes = static_cast<int>(elem_size),
              .grid = cuda::ceil_div(n, threads_per_cta)};
    case copy_method::vectors: {
      const auto vb = static_cast<std::uint64_t>(r.vec_bytes);
      const std::uint64_t vectors = bytes / vb;
      const std::uint64_t tail_thread = vectors * vb != bytes ? 1 : 0;  // the thread that copies the tail
      return {.threads = threads_per_cta,
              .items_per_thread = 1,
              .vec_bytes = static_cast<int>(vb),
              .grid = cuda::ceil_div(vectors + tail_thread, threads_per_cta)};
    }
    case copy_method::unrolled: {
      const std::uint64_t vectors = bytes / 16;
      const std::uint64_t cta_bytes = std::uint64_t{threads_per_cta} * unroll_vectors * 16;  // in flight per CTA
      const std::uint64_t resident = std::max<std::uint64_t>(1, bytes_in_flight_per_sm / cta_bytes) *
                                     static_cast<std::uint64_t>(std::max(sm_count, 1));
      std::uint64_t grid = std::min(cuda::ceil_div(vectors, std::uint64_t{threads_per_cta} * unroll_vectors), resident);
      if (grid == 0 && n > 0) grid = 1;  // a tail and no whole vector
      return {.threads = threads_per_cta, .items_per_thread = unroll_vectors, .vec_bytes = 16, .grid = grid};
    }
    default: return {};  // memlab::copy and the peers choose their own launch configuration
  }
}

// ---- the lab's table ------------------------------------------------------------------------------------

const lab& table() {
  static const lab copy_lab{
      .name = "copy",
      .teaches =
          "scalar vs vectorized global copies: access width, bytes in flight, any alignment, and the library peers",
      .dtypes = dtypes_of(every_dtype{}),
      .default_dtype = dtype::f32,
      .default_sizes = "2^16..2^28:*4",
      .size_meaning = "elements copied",
      .axes = {src_offset_axis, dst_offset_axis},
      .roof = roof_kind::dram,
      .variants =
          {
              ladder_rung<rung_traits{.method = copy_method::elements}>({
                  .name = "scalar",
                  .teaches = "one element per thread: 1- and 2-byte types waste most of each memory instruction",
              }),
              ladder_rung<rung_traits{.method = copy_method::vectors, .vec_bytes = 8}>({
                  .name = "vec8",
                  .teaches = "one 8-byte vector per thread (64-bit loads and stores)",
              }),
              ladder_rung<rung_traits{.method = copy_method::vectors, .vec_bytes = 16}>({
                  .name = "vec16",
                  .teaches = "one 16-byte vector per thread (128-bit loads and stores), tail element-wise",
              }),
              ladder_rung<rung_traits{.method = copy_method::unrolled, .vec_bytes = 16}>({
                  .name = "vec16_unroll",
                  .teaches =
                      "4 x 16-byte vectors in flight per thread, grid-stride, grid sized by bytes in flight per SM",
              }),
              ladder_rung<rung_traits{.method = copy_method::vectors, .vec_bytes = 32}>({
                  .name = "vec32",
                  .teaches =
                      "one 32-byte vector per thread (256-bit loads and stores, LDG.E.ENL2.256): sm_100 and newer only",
                  .needs = {.min_cc = 100, .feature = "32-byte global loads and stores (LDG.E.ENL2.256)"},
              }),
              {
                  .name = "auto",
                  .teaches =
                      "memlab::copy: 16-byte loads and stores at any alignment (byte-wise head and tail, "
                      "funnel-shift realignment when src and dst are misaligned to each other), one short-lived grid",
                  .launch = launch_auto,
                  .kernels = auto_kernels(),
                  .traits = rung_traits{.method = copy_method::library},
              },
              {
                  .name = "memcpy",
                  .teaches = "cudaMemcpyAsync device to device",
                  .launch = launch_memcpy_peer<operands>,
                  .peer = true,
                  .traits = rung_traits{},
              },
              {
                  .name = "cub",
                  .teaches = "cub::DeviceTransform::Transform with an identity functor",
                  .launch = launch_cub_peer<identity_op, every_dtype, operands>,
                  .kernels = {kernel_ref::with_type<identity_op>()},
                  .peer = true,
                  .traits = rung_traits{},
              },
              {
                  .name = "thrust",
                  .teaches = "thrust::copy on raw device pointers (CCCL forwards it to cudaMemcpyAsync)",
                  .launch = launch_thrust,
                  .peer = true,
                  .traits = rung_traits{},
              },
          },
      .unsupported = refusal,
      .plan = plan_case,
      .setup = nullptr,
      .verify = verify,
  };
  return copy_lab;
}

}  // namespace memlab::labs::copy
