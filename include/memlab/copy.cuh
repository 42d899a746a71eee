// memlab/copy.cuh: a device-to-device copy that takes the widest safe path for the pointers it is
// given, whatever their alignment.
//
//   #include <memlab/copy.cuh>
//   cudaError_t e = memlab::copy(dst, src, count, stream);   // count elements of T
//   cudaError_t e = memlab::copy_bytes(dst, src, bytes, stream);
//
// Needs C++17 and CUDA 12 or newer; no other library.
// Assumptions: both ranges are device-accessible memory of the current device and do not overlap
// (overlap is refused with cudaErrorInvalidValue). The copy is enqueued on `stream`; nothing
// synchronizes. Errors are returned, never thrown, never fatal.
//
// How (the plan is in copy_plan.hpp): the destination is split into a byte-wise head up to its
// first 16-byte boundary, a body of 16-byte stores, and a byte-wise tail. When src and dst share
// their misalignment modulo 16 the body loads 16-byte vectors too. When they do not, every body
// vector still comes from 16-byte loads: the two aligned source vectors it straddles are loaded and
// the 16 bytes it needs are funnel-shifted out of them in registers (SHF), so a source 2 bytes off
// costs an extra load that L1/L2 serves, not four times the memory instructions.
// On sm_100 and newer, where src and dst share their misalignment modulo 32, the body moves 32-byte
// vectors instead (LDG.E.ENL2.256 / STG.E.ENL2.256); sm_80 and sm_90 keep the 16-byte body.
// The grid is one short-lived CTA per 256 (realigning: 248) x vectors_per_thread body vectors (never persistent:
// on H100 a persistent grid-stride copy trails it by ~6%); vectors_per_thread is what keeps
// ~32 KiB of loads in flight per SM: 1 on GPUs with 2048 threads per SM (copy_plan.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "memlab/arch/config.cuh"
#include "memlab/arch/ld_global.cuh"
#include "memlab/arch/ld_st256.cuh"
#include "memlab/arch/shfl.cuh"
#include "memlab/copy_plan.hpp"
#include "memlab/realign.cuh"
#include "memlab/vector.cuh"

namespace memlab {
namespace detail {

struct copy_args {
  std::byte* dst;
  const std::byte* src;
  std::size_t head, vectors, tail;
  unsigned shift;  // bytes, 0..15
};

// Head and tail (< 32 bytes each) byte by byte, in CTA 0: threads 0..31 (warp 0) copy the head,
// threads 64..95 (warp 2) the tail, so neither diverges inside the warp that does the other. The
// byte is loaded before the thread's body loads and stored after its body stores: done in one go
// instead, its load-to-store latency (a DRAM round trip) came before the body's, and a small
// misaligned copy took one round trip longer (~0.4 us at 8 KiB, H200).
template <int VecBytes = 16>
struct copy_edge {
  std::size_t at = 0;
  bool active = false;
  std::byte value{};

  __device__ __forceinline__ void load(const copy_args& a) {
    const unsigned t = threadIdx.x;
    const std::size_t tail_begin = a.head + VecBytes * a.vectors;
    if (blockIdx.x != 0) return;
    if (t < a.head) {
      at = t;
      active = true;
    } else if (t >= 64 && t - 64 < a.tail) {
      at = tail_begin + (t - 64);
      active = true;
    }
    if (active) value = a.src[at];
  }
  __device__ __forceinline__ void store(const copy_args& a) const {
    if (active) a.dst[at] = value;
  }
};

// Body, src and dst equally aligned: CTA b stores vectors [b, b + 1) x threads x U. Thread t takes
// vectors t, t + threads, ... so each load and store instruction stays coalesced across the warp,
// and issues its U loads before its first store (U x 16 B in flight per thread).
// Edges: whether the plan has a head or a tail. A copy of whole aligned vectors (the usual case: an
// aligned tensor of any dtype whose size is a multiple of 16 bytes) runs the body alone. Its code is
// then ~15 instructions instead of ~70 with a branch over CTA 0's edge code: after an L2 flush a small
// copy fetches its instructions from DRAM, and the edge code cost it extra instruction-cache lines
// ahead of the first load (docs/notes/copy.md, "Small copies on the launch floor").
template <int U, bool Edges = true>
MEMLAB_KERNEL void __launch_bounds__(copy_tuning::threads) copy_aligned16_kernel(copy_args a) {
  copy_edge<16> edge;
  if constexpr (Edges) edge.load(a);
  const std::size_t head = Edges ? a.head : 0;  // without edges the plan's head is 0: not read
  const auto* s = reinterpret_cast<const uint4*>(a.src + head);
  auto* d = reinterpret_cast<uint4*>(a.dst + head);
  const std::size_t base = std::size_t{blockIdx.x} * copy_tuning::threads * U + threadIdx.x;
  if (base + (U - 1) * copy_tuning::threads < a.vectors) {  // all U of this thread's vectors in range
    uint4 r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) r[u] = s[base + u * copy_tuning::threads];
#pragma unroll
    for (int u = 0; u < U; ++u) d[base + u * copy_tuning::threads] = r[u];
  } else {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::size_t i = base + u * copy_tuning::threads;
      if (i < a.vectors) d[i] = s[i];
    }
  }
  if constexpr (Edges) edge.store(a);
}

// Body, src and dst misaligned to each other by shift = 4 Words + shift % 4 bytes (the word offset a
// template argument, so register selection is static; the byte offset a run-time funnel shift).
// Output vector i needs bytes shift.. of the 32-byte pair (source vector i, source vector i + 1),
// counting aligned source vectors from src + head - shift.
//
// Each source vector is loaded once, 16 bytes, by one lane, and the lane to its left gets the words
// it needs with a shuffle: a warp loads 32 source vectors and stores the 31 output vectors between
// them (lane 31 only lends its words). Loading both vectors of the pair in every lane instead
// reads each vector twice, and ptxas narrows the second load to the words used (LDG.E.64 + LDG.E).
template <int Words, int U>
MEMLAB_KERNEL void __launch_bounds__(copy_tuning::threads) copy_realign16_kernel(copy_args a) {
  copy_edge<16> edge;
  edge.load(a);
  const auto* s = reinterpret_cast<const uint4*>(a.src + a.head - a.shift);
  auto* d = reinterpret_cast<uint4*>(a.dst + a.head);
  const unsigned shift_bits = 8 * (a.shift % 4);
  const unsigned lane = threadIdx.x % 32;
  constexpr std::size_t warps = copy_tuning::threads / 32, per_group = 31;
  // Groups of 31 output vectors; this warp's U groups are consecutive.
  const std::size_t group0 = (std::size_t{blockIdx.x} * warps + threadIdx.x / 32) * U;
  const auto realign = [&](const uint4& v) {
    // Words 0..Words of the next lane's vector complete this lane's 16 bytes.
    const unsigned mine[4] = {v.x, v.y, v.z, v.w};
    unsigned next[4] = {0, 0, 0, 0};
#pragma unroll
    for (int k = 0; k <= Words; ++k) next[k] = arch::shfl_down1(mine[k]);
    return funnel16<Words>(v, make_uint4(next[0], next[1], next[2], next[3]), shift_bits);
  };
  // One straight-line path, no branch around the shuffles: ptxas cannot tell that a condition on
  // threadIdx.x / 32 is warp-uniform, and a shuffle under a branch compiled to a divergence check
  // plus a call to a fallback that spilled on sm_80. Loads first (U x 16 B in flight per lane),
  // then shuffles and stores. Source vectors 0..vectors exist; a lane past them reloads the last
  // one, and what it lends is only ever used by lanes that store nothing.
  uint4 v[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const std::size_t i = (group0 + u) * per_group + lane;
    v[u] = arch::ld_global_v4(s + (i <= a.vectors ? i : a.vectors));
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const std::size_t i = (group0 + u) * per_group + lane;
    const uint4 out = realign(v[u]);
    if (lane < per_group && i < a.vectors) d[i] = out;
  }
  edge.store(a);
}

// Body, src and dst equally aligned modulo 32, on sm_100 and newer: the aligned16 kernel with
// 32-byte vectors (LDG.E.ENL2.256 / STG.E.ENL2.256), half the memory instructions for the same bytes.
// plan_copy takes this path only where the device has them; built for an older arch it traps.
template <int U>
MEMLAB_KERNEL void __launch_bounds__(copy_tuning::threads) copy_aligned32_kernel(copy_args a) {
#if MEMLAB_HAS_LDST256
  copy_edge<32> edge;
  edge.load(a);
  const auto* s = reinterpret_cast<const vector_t<32>*>(a.src + a.head);
  auto* d = reinterpret_cast<vector_t<32>*>(a.dst + a.head);
  const std::size_t base = std::size_t{blockIdx.x} * copy_tuning::threads * U + threadIdx.x;
  if (base + (U - 1) * copy_tuning::threads < a.vectors) {
    vector_t<32> r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) r[u] = arch::ld_global_256(s + base + u * copy_tuning::threads);
#pragma unroll
    for (int u = 0; u < U; ++u) arch::st_global_256(d + base + u * copy_tuning::threads, r[u]);
  } else {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::size_t i = base + u * copy_tuning::threads;
      if (i < a.vectors) arch::st_global_256(d + i, arch::ld_global_256(s + i));
    }
  }
  edge.store(a);
#else
  (void)a;
  __trap();
#endif
}

// A copy too small for a 16-byte body (< 63 bytes): one byte per thread, Threads per CTA.
template <int Threads>
MEMLAB_KERNEL void __launch_bounds__(Threads) copy_bytes_kernel(copy_args a) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < a.head) a.dst[i] = a.src[i];
}

// The device facts the plan needs, cached per device: a copy of a few kilobytes should not pay
// for two attribute queries each time. Racing first calls store the same values.
inline cudaError_t copy_device_of(int device, copy_device& out) {
  constexpr int cached_devices = 64;
  static std::atomic<int> sms[cached_devices] = {}, threads[cached_devices] = {}, majors[cached_devices] = {};
  const bool cacheable = device >= 0 && device < cached_devices;
  if (cacheable) {
    out.sm_count = sms[device].load(std::memory_order_relaxed);
    out.max_threads_per_sm = threads[device].load(std::memory_order_relaxed);
    out.cc_major = majors[device].load(std::memory_order_relaxed);
    if (out.sm_count > 0 && out.max_threads_per_sm > 0 && out.cc_major > 0) return cudaSuccess;
  }
  if (const cudaError_t e = cudaDeviceGetAttribute(&out.sm_count, cudaDevAttrMultiProcessorCount, device);
      e != cudaSuccess) {
    return e;
  }
  if (const cudaError_t e =
          cudaDeviceGetAttribute(&out.max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device);
      e != cudaSuccess) {
    return e;
  }
  if (const cudaError_t e = cudaDeviceGetAttribute(&out.cc_major, cudaDevAttrComputeCapabilityMajor, device);
      e != cudaSuccess) {
    return e;
  }
  if (cacheable) {
    sms[device].store(out.sm_count, std::memory_order_relaxed);
    threads[device].store(out.max_threads_per_sm, std::memory_order_relaxed);
    majors[device].store(out.cc_major, std::memory_order_relaxed);
  }
  return cudaSuccess;
}

// One launch, its own status returned (cudaLaunchKernel, not <<<>>> + cudaGetLastError, which would
// report and clear an unrelated error left pending by the caller).
template <class Kernel>
inline cudaError_t launch_one(Kernel* kernel, const copy_plan& p, copy_args a, cudaStream_t stream) {
  void* args[] = {&a};
  return cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(static_cast<unsigned>(p.grid)),
                          dim3(static_cast<unsigned>(p.threads)), args, 0, stream);
}

template <int U>
inline cudaError_t launch_copy_body(const copy_plan& p, const copy_args& a, cudaStream_t stream) {
  if (p.path == copy_path::aligned32) return launch_one(&copy_aligned32_kernel<U>, p, a, stream);
  if (p.path == copy_path::aligned16) {
    return p.head == 0 && p.tail == 0 ? launch_one(&copy_aligned16_kernel<U, false>, p, a, stream)
                                      : launch_one(&copy_aligned16_kernel<U, true>, p, a, stream);
  }
  switch (p.shift / 4) {
    case 0: return launch_one(&copy_realign16_kernel<0, U>, p, a, stream);
    case 1: return launch_one(&copy_realign16_kernel<1, U>, p, a, stream);
    case 2: return launch_one(&copy_realign16_kernel<2, U>, p, a, stream);
    default: return launch_one(&copy_realign16_kernel<3, U>, p, a, stream);
  }
}

// Whether `p` is a plan these very pointers can run: what plan_copy guarantees and the kernels
// rely on (a plan for other pointers would issue misaligned 16-byte accesses, a fatal error).
inline bool plan_fits(const copy_plan& p, std::uintptr_t d, std::uintptr_t s) {
  if (p.grid == 0 || p.grid > 0x7fffffffu || p.threads != copy_tuning::threads) return false;
  if (p.path == copy_path::bytes) return p.vectors == 0 && p.tail == 0 && p.grid * 256 >= p.head;
  if (p.path == copy_path::aligned32) {
    const std::size_t per_cta = static_cast<std::size_t>(p.threads) *
                                static_cast<std::size_t>(p.vectors_per_thread > 0 ? p.vectors_per_thread : 0);
    return p.vec_bytes == 32 && p.shift == 0 && (d + p.head) % 32 == 0 && (s - d) % 32 == 0 && p.head < 32 &&
           p.tail < 32 && p.grid * per_cta >= p.vectors;
  }
  const auto shift = static_cast<std::size_t>(p.shift);
  const std::size_t per_warp = p.path == copy_path::realign16 ? 31 : 32;
  const std::size_t per_cta = static_cast<std::size_t>(p.threads / 32) * per_warp *
                              static_cast<std::size_t>(p.vectors_per_thread > 0 ? p.vectors_per_thread : 0);
  return p.vec_bytes == 16 && (d + p.head) % 16 == 0 && shift == (s - d) % 16 &&
         (p.path == copy_path::aligned16) == (shift == 0) && p.head >= shift && p.head < 32 && p.tail < 32 &&
         p.grid * per_cta >= p.vectors;
}

// What both entry points check before they plan (memlab::copy_bytes, memlab::transpose_bytes): the two
// ranges of `bytes` inside the address space and disjoint; then the current device's facts into `dev`.
inline cudaError_t check_ranges_and_device(std::uintptr_t d, std::uintptr_t s, std::uint64_t bytes,
                                           copy_device& dev) noexcept {
  if (d + bytes < d || s + bytes < s) return cudaErrorInvalidValue;  // wraps around the address space
  if (d < s + bytes && s < d + bytes) return cudaErrorInvalidValue;  // the ranges overlap
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  return copy_device_of(device, dev);
}

// Copies between GPUs (device memory of two devices, through peer access) of at least this many bytes
// go to a copy engine: on an H100 with 18 NVLinks a copy engine moves 397 GB/s at 1 GiB, this
// library's SM kernel 369 (stores into the peer) to 375 (loads from it) (docs/labs/transfer.md).
inline constexpr std::size_t engine_between_gpus_bytes = std::size_t{64} << 20;

// Whether dst and src lie in the memory of two different devices. Asked only where the answer changes the plan
// (copy_bytes): a pointer query costs about a microsecond on the host.
inline bool between_gpus(const void* dst, const void* src) noexcept {
  cudaPointerAttributes a{}, b{};
  if (cudaPointerGetAttributes(&a, dst) != cudaSuccess || cudaPointerGetAttributes(&b, src) != cudaSuccess) {
    (void)cudaGetLastError();  // not device memory CUDA knows: the kernel path decides
    return false;
  }
  return a.type == cudaMemoryTypeDevice && b.type == cudaMemoryTypeDevice && a.device != b.device;
}

}  // namespace detail

// Enqueues the copy that `p` describes, which must come from plan_copy for these very pointers
// (any copy_device; vectors_per_thread may be changed to 1, 2 or 4 with the grid recomputed).
// For tools that print or vary the plan; a plan that does not fit the pointers is refused with
// cudaErrorInvalidValue. memlab::copy_bytes is the usual entry point.
inline cudaError_t launch_copy(const copy_plan& p, void* dst, const void* src, cudaStream_t stream = 0) noexcept {
  if (p.path == copy_path::none) return cudaSuccess;
  if (!detail::plan_fits(p, reinterpret_cast<std::uintptr_t>(dst), reinterpret_cast<std::uintptr_t>(src))) {
    return cudaErrorInvalidValue;
  }
  const detail::copy_args a{
      static_cast<std::byte*>(dst),  static_cast<const std::byte*>(src), p.head, p.vectors, p.tail,
      static_cast<unsigned>(p.shift)};
  switch (p.path) {
    case copy_path::bytes: return detail::launch_one(&detail::copy_bytes_kernel<copy_tuning::threads>, p, a, stream);
    case copy_path::aligned16:
    case copy_path::realign16:
    case copy_path::aligned32:
      switch (p.vectors_per_thread) {
        case 1: return detail::launch_copy_body<1>(p, a, stream);
        case 2: return detail::launch_copy_body<2>(p, a, stream);
        case 4: return detail::launch_copy_body<4>(p, a, stream);
        default: return cudaErrorInvalidValue;
      }
    default: return cudaErrorInvalidValue;
  }
}

// Copies `bytes` bytes from `src` to `dst` (device memory, not overlapping) on `stream`. Between
// two GPUs, from 64 MiB up, a copy engine moves them (faster than SMs over NVLink, and it leaves the
// SMs free); otherwise a kernel of this library (between two GPUs without the one-wave rule).
inline cudaError_t copy_bytes(void* dst, const void* src, std::size_t bytes, cudaStream_t stream = 0) noexcept {
  if (bytes == 0) return cudaSuccess;
  if (dst == nullptr || src == nullptr) return cudaErrorInvalidValue;
  const auto d = reinterpret_cast<std::uintptr_t>(dst), s = reinterpret_cast<std::uintptr_t>(src);
  copy_device dev;
  if (const cudaError_t e = detail::check_ranges_and_device(d, s, bytes, dev); e != cudaSuccess) return e;
  const copy_plan plan = plan_copy(d, s, bytes, dev);
  // Ask where the pointers are only where the answer changes what runs: from 64 MiB (the copy engine), and where a
  // peer copy's plan differs (the one-wave rule, which peer copies do without).
  copy_device peer = dev;
  peer.peer = true;
  const copy_plan peer_plan = plan_copy(d, s, bytes, peer);
  const bool ask =
      bytes >= detail::engine_between_gpus_bytes || peer_plan.vectors_per_thread != plan.vectors_per_thread;
  if (ask && detail::between_gpus(dst, src)) {
    if (bytes >= detail::engine_between_gpus_bytes) return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream);
    return launch_copy(peer_plan, dst, src, stream);
  }
  return launch_copy(plan, dst, src, stream);
}

// Copies `count` elements of T from `src` to `dst` (device memory, not overlapping) on `stream`.
template <class T>
inline cudaError_t copy(T* dst, const T* src, std::size_t count, cudaStream_t stream = 0) noexcept {
  static_assert(std::is_trivially_copyable_v<T>, "memlab::copy moves bytes: T must be trivially copyable");
  if (count > SIZE_MAX / sizeof(T)) return cudaErrorInvalidValue;
  return copy_bytes(dst, src, count * sizeof(T), stream);
}

}  // namespace memlab
