// The layout lab: AoS vs SoA. Read one field of n points of three fields and write it densely,
// from an array of structures (a 3-element stride), from a structure of arrays (contiguous), and from
// the array of structures loaded whole with 16-byte accesses.
//
// Assumes: f16, f32 or f64 fields; both input layouts are one cudaMalloc allocation of 3 n elements
// (aos: x0 y0 z0 x1 y1 z1 ...; soa: x0 x1 ... y0 y1 ... z0 z1 ...), `out` another of n; --field picks
// x, y or z (0, 1, 2). The host-side model (policies, sectors touched) is in model.cpp.
//
// The lesson is in the sectors: a warp reading field f of 32 consecutive f32 points from the AoS spans
// 32 x 12 bytes = 12 sectors for 4 useful ones; from the SoA, 4 sectors. With the 4 sectors of dense
// stores, AoS moves (12 + 4) / (4 + 4) = 2x the bytes of SoA, whatever the field and the element
// type. Loading whole structures with wide accesses (aos_vec) cuts the instructions, not the bytes.
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "harness/check.hpp"
#include "harness/dispatch.cuh"
#include "harness/error.hpp"
#include "harness/launch.cuh"
#include "labs/layout/layout.hpp"
#include "memlab/arch/ld_global.cuh"
#include "memlab/vector.cuh"

namespace memlab::labs::layout {

// ---- the CPU reference ----------------------------------------------------------------------------

// Output element i holds input element aos: 3 i + f, soa: f n + i (the input holds the random stream
// from its first byte). Byte k of it: byte (that element) x es + k of the stream.
std::uint64_t source_element(point_layout layout, std::uint64_t n, std::uint64_t field, std::uint64_t i) {
  return layout == point_layout::soa ? field * n + i : 3 * i + field;
}

// ---- the kernels ------------------------------------------------------------------------------------

namespace {

// Items = 16 / sizeof(T) points per thread: point e = tile start + u x blockDim + threadIdx, so each
// load instruction covers 32 consecutive points across the warp; all loads before the first store.
// Full tiles carry no bounds checks; the last, partial tile goes point by point, rolled. (The stride
// lab's strided_copy, with the source index a function of the point.)
template <class T, class Source>
__device__ __forceinline__ void gather_field(T* __restrict__ out, const T* __restrict__ in, std::uint64_t n,
                                             Source source) {
  constexpr int items = bytes_per_thread / static_cast<int>(sizeof(T));
  const std::uint64_t tile = std::uint64_t{blockDim.x} * items;
  const std::uint64_t first = blockIdx.x * tile + threadIdx.x;
  if ((blockIdx.x + 1) * tile <= n) {
    T r[items];
#pragma unroll
    for (int u = 0; u < items; ++u) r[u] = in[source(first + static_cast<std::uint64_t>(u) * blockDim.x)];
#pragma unroll
    for (int u = 0; u < items; ++u) out[first + static_cast<std::uint64_t>(u) * blockDim.x] = r[u];
  } else {
#pragma unroll 1
    for (int u = 0; u < items; ++u) {
      const std::uint64_t e = first + static_cast<std::uint64_t>(u) * blockDim.x;
      if (e < n) out[e] = in[source(e)];
    }
  }
}

}  // namespace

// Field f of point e at element 3 e + f: neighbouring lanes 3 elements (12 bytes for f32) apart.
template <class T>
__global__ void __launch_bounds__(threads_per_cta)
    aos_kernel(T* __restrict__ out, const T* __restrict__ points, std::uint64_t n, std::uint64_t field) {
  gather_field(out, points, n, [field](std::uint64_t e) { return 3 * e + field; });
}

// Field f of point e at element f n + e: neighbouring lanes adjacent.
template <class T>
__global__ void __launch_bounds__(threads_per_cta)
    soa_kernel(T* __restrict__ out, const T* __restrict__ fields, std::uint64_t n, std::uint64_t field) {
  const T* __restrict__ f = fields + field * n;
  gather_field(out, f, n, [](std::uint64_t e) { return e; });
}

namespace {

// The bits of one element in registers: a 2-byte element in the low half of a 32-bit word (masked
// there, then packed with shifts; picked as 16-bit values, the same fields compiled to other SASS).
template <class T>
using element_bits = std::common_type_t<bits_t<sizeof(T)>, std::uint32_t>;

// Element K (0 .. 3 V - 1) of the 48 bytes w[0..11] (32-bit words, little-endian).
template <class T, int K>
__device__ __forceinline__ element_bits<T> element(const unsigned (&w)[12]) {
  if constexpr (sizeof(T) == 8)
    return w[2 * K] | std::uint64_t{w[2 * K + 1]} << 32;
  else if constexpr (sizeof(T) == 4)
    return w[K];
  else
    return (w[K / 2] >> (16 * (K % 2))) & 0xffffu;
}

// Field `field` of point K of the V points in w: one of three elements, picked by selects. The field
// is a run-time value on purpose: every word of the 48 bytes may be picked, so every word is used and
// the 16-byte loads stay whole (with the field known at compile time ptxas narrowed each LDG.E.128,
// even written in PTX, to the words it needs: the aos rung's scalar loads again).
template <class T, int K>
__device__ __forceinline__ element_bits<T> field_of(const unsigned (&w)[12], std::uint64_t field) {
  const auto x = element<T, 3 * K>(w), y = element<T, 3 * K + 1>(w), z = element<T, 3 * K + 2>(w);
  return field == 0 ? x : field == 1 ? y : z;
}

template <class T, int... K>
__device__ __forceinline__ uint4 pick_fields(const unsigned (&w)[12], std::uint64_t field,
                                             std::integer_sequence<int, K...>) {
  const element_bits<T> f[] = {field_of<T, K>(w, field)...};
  if constexpr (sizeof(T) == 8) {
    return {static_cast<unsigned>(f[0]), static_cast<unsigned>(f[0] >> 32), static_cast<unsigned>(f[1]),
            static_cast<unsigned>(f[1] >> 32)};
  } else if constexpr (sizeof(T) == 4) {
    return {f[0], f[1], f[2], f[3]};
  } else {
    return {f[0] | f[1] << 16, f[2] | f[3] << 16, f[4] | f[5] << 16, f[6] | f[7] << 16};
  }
}

}  // namespace

// Whole structures: thread j loads points V j .. V j + V - 1 as three 16-byte vectors (48 bytes,
// LDG.E.128), picks field f of each in registers, and stores the V results as one 16-byte vector.
// Thread `main` (= n / V) copies the points past the last whole group one by one.
template <class T>
__global__ void __launch_bounds__(threads_per_cta)
    aos_vec_kernel(T* __restrict__ out, const T* __restrict__ points, std::uint64_t n, std::uint64_t field) {
  constexpr std::uint64_t per = 16 / sizeof(T);
  const std::uint64_t j = global_thread(), main = n / per;
  if (j < main) {
    // In PTX (arch/ld_global.cuh): from C++, nvcc for sm_100 split f64's 16-byte loads into 8-byte ones.
    const auto* src = reinterpret_cast<const uint4*>(points) + 3 * j;
    const uint4 a = arch::ld_global_v4(src), b = arch::ld_global_v4(src + 1), c = arch::ld_global_v4(src + 2);
    const unsigned w[12] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, c.x, c.y, c.z, c.w};
    reinterpret_cast<uint4*>(out)[j] =
        pick_fields<T>(w, field, std::make_integer_sequence<int, static_cast<int>(per)>{});
  } else if (j == main) {
#pragma unroll 1
    for (std::uint64_t e = main * per; e < n; ++e) out[e] = points[3 * e + field];
  }
}

// ---- launchers, refusals, plans -------------------------------------------------------------------------

namespace {

enum buffer_index { in_buffer, out_buffer };

// The element types the lab is built for (f16, f32, f64: a field of 2, 4 or 8 bytes).
using lab_dtypes = dtype_list<__half, float, double>;

const axis field_axis{.name = "field",
                      .meaning = "which field of each point is read: 0 (x), 1 (y) or 2 (z)",
                      .unit = "field index",
                      .defaults = "0",
                      .min = 0,
                      .max = 2};

struct aos_rung {
  template <class T>
  static auto kernel() {
    return &aos_kernel<T>;
  }
};
struct soa_rung {
  template <class T>
  static auto kernel() {
    return &soa_kernel<T>;
  }
};

struct aos_vec_rung {
  template <class T>
  static auto kernel() {
    return &aos_vec_kernel<T>;
  }
};

// kernel(out, in, n, field), whatever the rung.
template <class Rung>
void launch_rung(const case_ctx& c, cudaStream_t s) {
  const launch_policy& p = c.plan.policy;
  if (c.p.n == 0 || p.grid == 0) return;
  const std::uint64_t field = c.p[field_axis];
  const dim3 grid = grid_of(p.grid, "layout"), block(static_cast<unsigned>(p.threads));
  visit_dtype(lab_dtypes{}, c.p.type, [&](auto tag) {
    using T = decltype(tag);
    T* out = c.ptr<T>(out_buffer);
    const T* in = c.ptr<const T>(in_buffer);
    Rung::template kernel<T>()<<<grid, block, 0, s>>>(out, in, c.p.n, field);
  });
  MEMLAB_CUDA_CHECK_LAUNCH();
}

std::optional<std::string> refusal(const variant& /*v*/, const case_params& p, const device_info& /*dev*/) {
  constexpr std::uint64_t limit = std::uint64_t{1} << 62;
  if (p.n > limit / 3 / size_of(p.type)) return "3 x n = " + std::to_string(p.n) + " points spans more than 2^62 bytes";
  return std::nullopt;
}

case_plan plan_case(const variant& v, const case_params& p, const device_info& /*dev*/) {
  const auto& r = v.traits_as<layout_rung>();
  const std::size_t es = size_of(p.type);
  const layout_sectors s = sectors_touched(r, es, p.n, p[field_axis]);
  case_plan out;
  out.policy = plan(r, es, p.n);
  out.bytes = 2 * p.n * es;  // one field of n points read, n elements written
  out.hardware_bytes = (s.ld_per_warp + s.st_per_warp) * sector_bytes;
  out.working_set = out.hardware_bytes;
  const auto per = [](std::uint64_t units, std::uint64_t requests) {
    return requests == 0 ? 0.0 : static_cast<double>(units) / static_cast<double>(requests);
  };
  out.model = {{"ld_sectors", per(s.ld_per_request, s.ld_requests)},
               {"st_sectors", per(s.st_per_request, s.st_requests)}};
  out.buffers = {{"points", 3 * p.n * es, buffer_role::input}, {"out", p.n * es, buffer_role::output}};
  return out;
}

std::string verify(const case_ctx& c) {
  const std::size_t es = size_of(c.p.type);
  const point_layout layout = c.v->traits_as<layout_rung>().layout;
  const std::uint64_t n = c.p.n, field = c.p[field_axis];
  return check_elements_from(c.buffers[out_buffer], n, es, c.seeds[in_buffer],
                             [&](std::uint64_t i) { return source_element(layout, n, field, i); });
}

}  // namespace

// ---- the lab's table ------------------------------------------------------------------------------------

const lab& table() {
  static const lab layout_lab{
      .name = "layout",
      .teaches =
          "AoS vs SoA: one field of n three-field points, from a 3-element stride, from its own array, and "
          "from whole structures loaded 16 bytes at a time",
      .dtypes = dtypes_of(lab_dtypes{}),
      .default_dtype = dtype::f32,
      // 2^26 f32 points: a 768 MiB array of structures (15x the H100's L2), 256 MiB of output.
      .default_sizes = "2^24,2^26",
      .size_meaning = "points (one field of each read, written densely)",
      .axes = {field_axis},
      .roof = roof_kind::dram,
      .variants =
          {
              {
                  .name = "aos",
                  .teaches =
                      "array of structures: field f of point i at element 3 i + f (a warp spans 3x the bytes it uses)",
                  .launch = launch_rung<aos_rung>,
                  .kernels = kernels_per_dtype<aos_rung>(lab_dtypes{}),
                  .traits = layout_rung{.layout = point_layout::aos},
              },
              {
                  .name = "soa",
                  .teaches = "structure of arrays: field f of point i at element f n + i (contiguous)",
                  .launch = launch_rung<soa_rung>,
                  .kernels = kernels_per_dtype<soa_rung>(lab_dtypes{}),
                  .traits = layout_rung{.layout = point_layout::soa},
              },
              {
                  .name = "aos_vec",
                  .teaches = "array of structures loaded whole: V = 16 / sizeof(T) points per thread as three 16-byte "
                             "loads, the field picked in registers, one 16-byte store",
                  .launch = launch_rung<aos_vec_rung>,
                  .kernels = kernels_per_dtype<aos_vec_rung>(lab_dtypes{}),
                  .traits = layout_rung{.layout = point_layout::aos, .whole_structures = true},
              },
          },
      .unsupported = refusal,
      .plan = plan_case,
      .setup = nullptr,
      .verify = verify,
  };
  return layout_lab;
}

}  // namespace memlab::labs::layout
