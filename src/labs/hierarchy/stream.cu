// The hierarchy lab's stream part: the bandwidth each level delivers with every SM busy, against
// working set. BabelStream's operations (copy, add, triad, dot, ...) as one table, one row per
// operation: the arrays an element reads and writes, its FLOPs, and the element itself. The kernel,
// the bytes and FLOPs, the buffers a case fills and checks, and the check all follow from the row.
//
// Assumes: the arrays are n f32 elements each (--sizes), a whole number of 16-byte vectors, filled
// with small multiples of 1/8 so that every sum, product and FMA of the table is exact in f32 (the
// check is byte for byte, the dot's within a derived rounding bound). The lab's table is in chase.cu.
//
// Reading order: the operations' table, the kernels (the generic stream kernel, the shared-memory
// dot), plan, setup, launchers, verification, then the stream rungs.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cuda/cmath>
#include <memory>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <utility>

#include "harness/check.hpp"
#include "harness/error.hpp"
#include "harness/fill.hpp"
#include "harness/launch.cuh"
#include "labs/hierarchy/hierarchy.hpp"
#include "memlab/arch/config.cuh"
#include "memlab/arch/cp_async.cuh"
#include "memlab/arch/ld_global.cuh"
#include "memlab/arch/ld_global_cache.cuh"
#include "memlab/arch/ld_st_shared.cuh"
#include "memlab/arch/st_global.cuh"

namespace memlab::labs::hierarchy {

// ---- the operations: BabelStream's table ----------------------------------------------------------------
// One row each: `row` says what an element reads (in order: x, then y) and writes and its FLOPs;
// `element` is the operation on one element, x and y the elements read (0 where fewer) and s the
// scalar. A reduction (writes nothing) folds each element into the running sum, passed in place of s;
// the host replays its terms as element(x, y, 0), exact for the lab's data. The kernel and the host's
// check both call `element`: the check is of the row, not of a second copy of it.
namespace op {
constexpr auto a = stream_array::a, b = stream_array::b, c = stream_array::c;

struct dot {  // s += a[i] * b[i] (BabelStream's Dot: the read-only operation)
  static constexpr stream_op row{.reads = {a, b}, .flops = 2};
  MEMLAB_HOST_DEVICE static float element(float x, float y, float sum) { return fmaf(x, y, sum); }
};
struct write {  // c[i] = s (write only)
  static constexpr stream_op row{.writes = c};
  MEMLAB_HOST_DEVICE static float element(float, float, float s) { return s; }
};
struct copy {  // c[i] = a[i] (BabelStream's Copy)
  static constexpr stream_op row{.reads = {a}, .writes = c};
  MEMLAB_HOST_DEVICE static float element(float x, float, float) { return x; }
};
struct mul {  // b[i] = s * c[i] (BabelStream's Mul)
  static constexpr stream_op row{.reads = {c}, .writes = b, .flops = 1};
  MEMLAB_HOST_DEVICE static float element(float x, float, float s) { return s * x; }
};
struct add {  // c[i] = a[i] + b[i] (BabelStream's Add; the reference's roofline example: 1 FLOP per 12 bytes)
  static constexpr stream_op row{.reads = {a, b}, .writes = c, .flops = 1};
  MEMLAB_HOST_DEVICE static float element(float x, float y, float) { return x + y; }
};
struct triad {  // c[i] = a[i] + s * b[i] (BabelStream's Triad)
  static constexpr stream_op row{.reads = {a, b}, .writes = c, .flops = 2};
  MEMLAB_HOST_DEVICE static float element(float x, float y, float s) { return fmaf(s, y, x); }
};
}  // namespace op

// How a stream rung reads: through which path, and whether every CTA reads the whole arrays (data that
// many SMs request) instead of its own tiles.
struct stream_access {
  load_path path = load_path::l1;
  bool every_cta_reads_all = false;
};

// ---- the stream kernel ------------------------------------------------------------------------------------------
// Each CTA owns one share of every array and goes over it `passes` times: a share that fits the
// SM's L1 is served from there after the first pass (per-SM-private data). A share is every
// gridDim.x-th tile of 256 x Ilp vectors (CTA b: tiles b, b + grid, ...), not one contiguous slice:
// the grid then sweeps the arrays front to back together, as a grid-stride loop does, instead of 528
// streams each in its own DRAM pages (contiguous slices cost the write streams 7-11% on the H100:
// docs/notes/hierarchy.md). The .cg rungs read past L1; dot_l2_all makes every CTA read the whole
// array (data many SMs request).
// Only the arrays' last tile can be partial, so whole tiles are read without a test per vector: a
// thread's Ilp vectors of a tile sit at compile-time offsets from one pointer (LDG.E.128 [R.64+imm]),
// all 2 x Ilp loads issue before the arithmetic, and a reduction keeps Ilp independent accumulators.
// The generic loop this replaces issued 13.75 instructions per 512 bytes at --ilp 4 and let each
// vector's FFMAs wait before the next vector's loads (docs/notes/hierarchy_l1_bandwidth.md).
// x, y: the arrays the operation reads (its row's order); out: the one it writes.

template <load_path Path>
__device__ __forceinline__ float4 stream_load(const float4* p) {
  if constexpr (Path == load_path::l2) {
    return arch::ld_global_cg_v4_f32(p);
  } else {
    return arch::ld_global_v4_f32(p);
  }
}

// The operation on the four elements of a vector; a reduction folds them into `sum` in order.
template <class Op>
__device__ __forceinline__ float4 element4(float4 x, float4 y, float s) {
  return make_float4(Op::element(x.x, y.x, s), Op::element(x.y, y.y, s), Op::element(x.z, y.z, s),
                     Op::element(x.w, y.w, s));
}
template <class Op>
__device__ __forceinline__ float fold4(float4 x, float4 y, float sum) {
  sum = Op::element(x.x, y.x, sum);
  sum = Op::element(x.y, y.y, sum);
  sum = Op::element(x.z, y.z, sum);
  return Op::element(x.w, y.w, sum);
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

// One tile as one thread sees it: its vectors u = 0 .. Ilp-1 at x + 256 u (y and out alike). Partial:
// the tile holds only `valid` vectors, and this thread's vector u is threadIdx.x + 256 u of them.
template <class Op, load_path Path, int Ilp, bool Partial>
__device__ __forceinline__ void stream_tile(const float4* x, const float4* y, float4* out, std::uint32_t valid, float s,
                                            float (&acc)[Ilp]) {
  constexpr stream_op row = Op::row;
  const auto here = [&](int u) {
    return !Partial || threadIdx.x + static_cast<std::uint32_t>(u) * stream_threads < valid;
  };
  float4 xs[Ilp], ys[Ilp];
#pragma unroll
  for (int u = 0; u < Ilp; ++u) {
    if (!here(u)) continue;
    xs[u] = ys[u] = float4{};  // in place of an array the operation does not read (unused)
    if constexpr (row.arrays_read() >= 1) xs[u] = stream_load<Path>(x + u * stream_threads);
    if constexpr (row.arrays_read() >= 2) ys[u] = stream_load<Path>(y + u * stream_threads);
  }
#pragma unroll
  for (int u = 0; u < Ilp; ++u) {
    if (!here(u)) continue;
    if constexpr (row.reduces()) {
      acc[u] = fold4<Op>(xs[u], ys[u], acc[u]);
    } else {
      arch::st_global_v4_f32(out + u * stream_threads, element4<Op>(xs[u], ys[u], s));
    }
  }
}

// `count` whole tiles, `step` vectors apart, from this thread's vector `first`: one pointer per array,
// moved on by `step` per tile.
template <class Op, load_path Path, int Ilp>
__device__ __forceinline__ void stream_tiles(const float4* x, const float4* y, float4* out, std::uint64_t first,
                                             std::uint32_t count, std::uint32_t step, float s, float (&acc)[Ilp]) {
#pragma unroll 1
  for (std::uint32_t i = 0; i < count; ++i, first += step)
    stream_tile<Op, Path, Ilp, false>(x + first, y + first, out + first, 0, s, acc);
}

// CTAs of 256 threads an SM must hold at once (the launch bound), so that --ctas-per-sm means what
// it says on the H100: 8 (at most 32 registers) up to --ilp 2, 4 at --ilp 4, and 2 at --ilp 8, where
// a dot's 16 loaded vectors take 64 registers by themselves. Unbounded, sm_90's ptxas gave dot<2> 48
// registers (5 CTAs). sm_80's and sm_100's ptxas (nvcc 13.0) spill under these bounds (a build error
// under -warn-spills): unbounded there, not measured on an A100 or a B200.
constexpr int stream_min_ctas([[maybe_unused]] int ilp) {
#if MEMLAB_ARCH == 900
  return ilp <= 2 ? 8 : ilp == 4 ? 4 : 2;
#else
  return 1;
#endif
}

// Tile counts are 32-bit (arrays below 64 TiB at 256-vector tiles), so is dot_l2_all's first tile
// (its arrays fit the L2: whole x grid < 2^32).
template <class Op, load_path Path, int Ilp, bool All>
__global__ void __launch_bounds__(stream_threads, stream_min_ctas(Ilp))
    stream_kernel(const float4* x, const float4* y, float4* out, std::uint64_t vectors, unsigned passes, float s,
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
      stream_tiles<Op, Path, Ilp>(x, y, out, std::uint64_t{r} * tile + me, whole - r, tile, s, acc);
      stream_tiles<Op, Path, Ilp>(x, y, out, me, r, tile, s, acc);
    } else {
      stream_tiles<Op, Path, Ilp>(x, y, out, std::uint64_t{g} * tile + me, mine, grid * tile, s, acc);
    }
    if (partial) {
      const std::uint64_t at = std::uint64_t{whole} * tile + me;
      stream_tile<Op, Path, Ilp, true>(x + at, y + at, out + at, rest, s, acc);
    }
  }
  if constexpr (Op::row.reduces()) {
    float sum = acc[0];
#pragma unroll
    for (int u = 1; u < Ilp; ++u) sum += acc[u];
    const float total = block_sum(sum);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
  }
}

// ---- the shared-memory dot --------------------------------------------------------------------------------------
// The CTA copies its slices of a and b into shared memory once, then reads them `passes` times with
// LDS.128: the shared-memory bandwidth of every SM at once. Thread t reads vector t of each 256-vector
// row (a warp: 512 contiguous bytes, 4 wavefronts, no bank conflict); whole tiles of Ilp rows at
// compile-time offsets from one 32-bit address (LDS.128 [R+imm]), all 2 x Ilp loads before the FFMAs,
// Ilp accumulators; then the slice's remaining rows one by one.
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

// ---- setup kernels ----------------------------------------------------------------------------------------------

// The streams' data: small multiples of 1/8, so that sums, products and FMAs are exact in f32.
MEMLAB_HOST_DEVICE inline float stream_value(std::uint64_t seed, std::uint64_t i) {
  return static_cast<float>((mix64(seed ^ mix64(i)) & 15) + 1) * 0.125f;
}
__global__ void fill_stream_kernel(float* x, std::uint64_t n, std::uint64_t seed) {
  for (std::uint64_t i = global_thread(); i < n; i += std::uint64_t{gridDim.x} * blockDim.x)
    x[i] = stream_value(seed, i);
}

void fill_stream_array(float* x, std::uint64_t n, std::uint64_t seed) {
  fill_stream_kernel<<<1024, 256>>>(x, n, seed);
  MEMLAB_CUDA_CHECK_LAUNCH();
}

// ---- plan, setup, launchers, verification ------------------------------------------------------------------------

namespace {

const axis ilp_axis{.name = "ilp",
                    .meaning = "streams: 16-byte vectors per array in flight per thread (1, 2, 4, 8)",
                    .unit = "vectors",
                    .defaults = "4",
                    .min = 1,
                    .max = 8,
                    .choices = [] {  // the ILPs a kernel is built for: another is refused when parsed
                      std::vector<std::uint64_t> c;
                      for (int i : stream_ilps) c.push_back(static_cast<std::uint64_t>(i));
                      return c;
                    }()};
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

constexpr float stream_scalar = 0.5f;

const rung_traits& traits(const variant& v) { return v.traits_as<rung_traits>(); }

// Buffers of a stream: a, b and c (stream_array's order: those the operation reads are filled by
// setup, the one it writes is the output), then a reduction's partial sums, one per CTA.
constexpr std::size_t partials_buffer = 3;

std::uint64_t array_bytes(const case_params& p) { return p.n * 4; }

// What setup keeps for launch and verify.
struct stream_state {
  bandwidth_plan plan;
  std::array<std::uint64_t, 3> seeds{};  // per array read (buffer_of): the stream_value seed it was filled with
};
const stream_state& state_of(const case_ctx& c) { return *std::any_cast<std::shared_ptr<stream_state>>(c.state); }

bandwidth_plan plan_of(const rung_traits& t, const case_params& p, const device_info& dev) {
  return plan_bandwidth(t, array_bytes(p), dev.sm_count, static_cast<int>(p[ilp_axis]),
                        static_cast<int>(p[ctas_per_sm_axis]), p[passes_axis]);
}

// Calls f(std::integral_constant<int, ilp>{}) for one of stream_ilps (the refusal turns others away).
template <class F, std::size_t... I>
bool call_with_ilp(int ilp, F& f, std::index_sequence<I...>) {
  return ((ilp == stream_ilps[I] ? (f(std::integral_constant<int, stream_ilps[I]>{}), true) : false) || ...);
}
template <class F>
void with_ilp(int ilp, F&& f) {
  if (!call_with_ilp(ilp, f, std::make_index_sequence<stream_ilps.size()>{}))
    throw std::logic_error("hierarchy: no stream kernel for --ilp " + std::to_string(ilp));
}

std::optional<std::string> refusal(const variant& v, const case_params& p, const device_info& dev) {
  const rung_traits& t = traits(v);
  const std::uint64_t bytes = array_bytes(p);
  if (bytes % 16 != 0 || bytes == 0) return std::string("streams need whole 16-byte vectors (n a multiple of 4)");
  if (std::find(stream_ilps.begin(), stream_ilps.end(), static_cast<int>(p[ilp_axis])) == stream_ilps.end())
    return std::string("--ilp must be 1, 2, 4 or 8");
  if (t.every_cta_reads_all && static_cast<std::uint64_t>(t.op.arrays_read()) * bytes > dev.l2_bytes)
    return "every CTA reading the whole arrays is the L2's figure: arrays together at most the L2 (" +
           std::to_string(dev.l2_bytes) + " B); beyond it each CTA would stream them from DRAM";
  const bandwidth_plan b = plan_of(t, p, dev);
  if (t.op.reduces() && dot_tolerance(t, b) > 1e-3)
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

case_plan plan(const variant& v, const case_params& p, const device_info& dev) {
  const rung_traits& t = traits(v);
  case_plan out;
  const std::uint64_t bytes = array_bytes(p);
  const int ilp = static_cast<int>(p[ilp_axis]), cps = static_cast<int>(p[ctas_per_sm_axis]);
  const bandwidth_plan b = plan_of(t, p, dev);
  out.policy = {.threads = stream_threads, .items_per_thread = ilp, .vec_bytes = 16, .grid = b.grid};
  out.bytes = b.bytes;
  out.flops = b.flops;
  out.working_set = bytes * static_cast<std::uint64_t>(t.op.arrays_read() + t.op.arrays_written());
  const auto role = [&](stream_array x) { return x == t.op.writes ? buffer_role::output : buffer_role::scratch; };
  out.buffers = {{"a", bytes, role(stream_array::a)},
                 {"b", bytes, role(stream_array::b)},
                 {"c", bytes, role(stream_array::c)},
                 {"partials", 4 * std::max<std::uint64_t>(b.grid, 1), buffer_role::output}};
  // The level each SM's share is served from: its L1 / shared memory (a slice the SM keeps), else
  // the L2, else DRAM.
  if (served_by_sm(t, bytes, dev.sm_count))
    out.roof = roof_kind::smem;
  else if (out.working_set <= dev.l2_bytes / 2)
    out.roof = roof_kind::l2;
  else
    out.roof = roof_kind::dram;
  const auto sms = static_cast<std::uint64_t>(std::max(dev.sm_count, 1));
  const int cps_real =
      static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(cps), cuda::ceil_div(b.grid, sms)));
  out.model = {{"bytes_in_flight_per_sm",
                static_cast<double>(bytes_in_flight_per_sm(t, stream_threads, ilp, std::max(cps_real, 1)))},
               {"passes", static_cast<double>(b.passes)},
               {"sms_busy", static_cast<double>(b.sms_busy)}};
  return out;
}

// Fills the arrays the operation reads, each from a seed of its own; a shared-memory rung's kernels ask
// for their slices' shared memory here, once, not inside a launch (which a CUDA graph captures).
void setup(case_ctx& c) {
  const rung_traits& t = traits(*c.v);
  auto st = std::make_shared<stream_state>();
  st->plan = plan_of(t, c.p, c.dev);
  for (const stream_array x : t.op.reads) {
    if (x == stream_array::none) continue;
    const std::size_t i = buffer_of(x);
    st->seeds[i] = next_seed();
    fill_stream_array(c.ptr<float>(i), c.p.n, st->seeds[i]);
  }
  if (t.path == load_path::shared) {
    const auto smem = static_cast<int>(2 * st->plan.slice * 16);
    for (const kernel_ref& k : c.v->kernels)
      MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(k.symbol, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  }
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  c.state = st;
}

// The buffer of an array the operation names; for none (a kernel argument the operation never reads or
// writes) a's, so that the kernel's pointer arithmetic stays within an allocation.
template <class T>
T* array_ptr(const case_ctx& c, stream_array x) {
  return c.ptr<T>(buffer_of(x == stream_array::none ? stream_array::a : x));
}

// The stream kernel of one operation, path and ILP; and all of them, for `memlab inspect`.
template <class Op, stream_access A>
void launch_stream(const case_ctx& c, cudaStream_t s) {
  const bandwidth_plan& b = state_of(c).plan;
  with_ilp(b.ilp, [&](auto ilp) {
    stream_kernel<Op, A.path, decltype(ilp)::value, A.every_cta_reads_all>
        <<<grid_of(b.grid, "hierarchy"), stream_threads, 0, s>>>(
            array_ptr<const float4>(c, Op::row.reads[0]), array_ptr<const float4>(c, Op::row.reads[1]),
            array_ptr<float4>(c, Op::row.writes), b.vectors, b.passes, stream_scalar, c.ptr<float>(partials_buffer));
  });
  MEMLAB_CUDA_CHECK_LAUNCH();
}

void launch_smem_dot(const case_ctx& c, cudaStream_t s) {
  const bandwidth_plan& b = state_of(c).plan;
  const stream_op& op = traits(*c.v).op;
  const auto smem = static_cast<std::size_t>(2 * b.slice * 16);
  with_ilp(b.ilp, [&](auto ilp) {
    smem_dot_kernel<decltype(ilp)::value><<<grid_of(b.grid, "hierarchy"), stream_threads, smem, s>>>(
        array_ptr<const float4>(c, op.reads[0]), array_ptr<const float4>(c, op.reads[1]), b.vectors, b.slice, b.passes,
        c.ptr<float>(partials_buffer));
  });
  MEMLAB_CUDA_CHECK_LAUNCH();
}

// A reduction: each CTA's partial sum against the host's sum of the same elements, within the derived
// rounding bound (dot_tolerance).
std::string verify_partials(const case_ctx& c) {
  const rung_traits& t = traits(*c.v);
  const stream_state& st = state_of(c);
  const bandwidth_plan& b = st.plan;
  const std::uint64_t n = c.p.n;
  std::vector<float> partials(b.grid);
  MEMLAB_CUDA_CHECK(cudaMemcpy(partials.data(), c.ptr(partials_buffer), 4 * b.grid, cudaMemcpyDeviceToHost));
  const auto value = [&](stream_array x, std::uint64_t i) {
    return x == stream_array::none ? 0.0f : stream_value(st.seeds[buffer_of(x)], i);
  };
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
      const std::uint64_t tile = t.path == load_path::shared
                                     ? b.slice * 4
                                     : std::uint64_t{stream_threads} * static_cast<std::uint64_t>(c.p[ilp_axis]) * 4;
      const std::uint64_t step = t.every_cta_reads_all ? n : t.path == load_path::shared ? n : b.grid * tile;
      for (std::uint64_t g = w; g < slices; g += workers) {
        double sum = 0;
        for (std::uint64_t from = t.every_cta_reads_all ? 0 : g * tile; from < n; from += step) {
          const std::uint64_t to = t.every_cta_reads_all ? n : std::min(n, from + tile);
          for (std::uint64_t i = from; i < to; ++i)
            sum += static_cast<double>(t.element(value(t.op.reads[0], i), value(t.op.reads[1], i), 0.0f));
        }
        refs[g] = sum;
      }
    });
  }
  for (auto& th : pool) th.join();
  // The host's sums are exact (each term exact in f32, summed in double); the kernel's differ by at
  // most the derived rounding bound.
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

// The array the operation writes, byte for byte against the host's element of the same inputs; a
// reduction's partial sums.
std::string verify(const case_ctx& c) {
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  const rung_traits& t = traits(*c.v);
  if (t.op.reduces()) return verify_partials(c);
  const stream_state& st = state_of(c);
  const auto value = [&](stream_array x, std::uint64_t i) {
    return x == stream_array::none ? 0.0f : stream_value(st.seeds[buffer_of(x)], i);
  };
  return check_bytes(c.buffers[buffer_of(t.op.writes)], 0, 4 * c.p.n, 4, [&](std::uint64_t j) {
    const std::uint64_t i = j / 4;
    const float v = t.element(value(t.op.reads[0], i), value(t.op.reads[1], i), stream_scalar);
    std::uint8_t bytes[4];
    std::memcpy(bytes, &v, 4);
    return bytes[j % 4];
  });
}

const rung_kind stream_kind{
    .name = "stream", .streams = true, .refusal = refusal, .plan = plan, .setup = setup, .verify = verify};

// The kernels of operation Op read as A says, one per --ilp (stream_ilps): through shared memory the
// dot of a CTA's slice (smem_dot_kernel), else the stream kernel.
template <class Op, stream_access A, std::size_t... I>
std::vector<kernel_ref> stream_kernels(std::index_sequence<I...>) {
  if constexpr (A.path == load_path::shared) {
    static_assert(std::is_same_v<Op, op::dot> && !A.every_cta_reads_all, "shared memory: the dot of a CTA's slice");
    return {kernel_ref::of(&smem_dot_kernel<stream_ilps[I]>)...};
  } else {
    return {kernel_ref::of(&stream_kernel<Op, A.path, stream_ilps[I], A.every_cta_reads_all>)...};
  }
}

// A stream rung: `v`'s name and what it teaches, with the kernels, launch and traits of operation Op
// read as A says.
template <class Op, stream_access A = stream_access{}>
variant stream_rung(variant v) {
  static_assert(Op::row.reads[0] != stream_array::none || Op::row.reads[1] == stream_array::none,
                "an operation's arrays read come first in its row");
  v.traits = rung_traits{.kind = &stream_kind,
                         .path = A.path,
                         .op = Op::row,
                         .element = &Op::element,
                         .every_cta_reads_all = A.every_cta_reads_all};
  if constexpr (A.path == load_path::shared) {
    v.launch = launch_smem_dot;
  } else {
    v.launch = launch_stream<Op, A>;
  }
  v.kernels = stream_kernels<Op, A>(std::make_index_sequence<stream_ilps.size()>{});
  return v;
}

}  // namespace

// ---- the stream rungs (the lab's table, chase.cu, lists them after the chases) ------------------------------------

std::vector<variant> stream_rungs() {
  return {
      stream_rung<op::dot, stream_access{.path = load_path::shared}>({
          .name = "smem_dot",
          .teaches = "a dot product from shared memory (LDS.128), every SM: shared memory's bandwidth",
      }),
      stream_rung<op::dot>({
          .name = "dot",
          .teaches = "read only: s += a[i] * b[i] (BabelStream's Dot), each SM over its own slice",
      }),
      stream_rung<op::dot, stream_access{.path = load_path::l2}>({
          .name = "dot_l2",
          .teaches = "the dot through ld.global.cg: each SM's own slice from L2, never L1",
      }),
      stream_rung<op::dot, stream_access{.path = load_path::l2, .every_cta_reads_all = true}>({
          .name = "dot_l2_all",
          .teaches = "the .cg dot with every CTA reading the whole arrays: data that many SMs request",
      }),
      stream_rung<op::write>({.name = "write", .teaches = "write only: c[i] = s"}),
      stream_rung<op::copy>({.name = "copy", .teaches = "c[i] = a[i] (BabelStream's Copy)"}),
      stream_rung<op::mul>({.name = "mul", .teaches = "b[i] = s * c[i] (BabelStream's Mul)"}),
      stream_rung<op::add>({
          .name = "add",
          .teaches = "c[i] = a[i] + b[i]: the reference's roofline example, 1 FLOP per 12 bytes",
      }),
      stream_rung<op::triad>({
          .name = "triad",
          .teaches = "c[i] = a[i] + s * b[i] (BabelStream's Triad): 2 FLOPs per 12 bytes",
      }),
  };
}

// The stream axes, for the lab's table (chase.cu).
std::vector<axis> stream_axes() { return {ilp_axis, ctas_per_sm_axis, passes_axis}; }

}  // namespace memlab::labs::hierarchy
