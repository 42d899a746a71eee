// The smem lab: shared memory's 32 banks. A warp's request is served in wavefronts, one pass through
// the 32 banks of 4 bytes each (128 bytes); lanes that hit the same bank on different words wait for
// a wavefront each. A stride of s words puts the 32 lanes in 32 / gcd(s, 32) banks, so the request
// takes gcd(s, 32) wavefronts: time grows with the stride's power of two. Padding a row by one word
// or XOR-swizzling its columns makes the stride-32 pattern (a tile read by columns) conflict-free.
// 8- and 16-byte accesses need 2 and 4 wavefronts at best (their lanes carry 2 and 4 words), and
// move the same 128 bytes per wavefront. A copy from one shared array to another has no path of its
// own: it goes through registers (LDS, then STS).
//
// Assumes: f32 words (the data is bits: sums are taken mod 2^32); --lane-stride 1..32, in accesses of the
// rung's width; n counts threads (lanes). The bank-bound rungs make 1024 accesses per lane with
// volatile loads and stores (arch/ld_st_shared.cuh: each one issued, in order; the compiler cannot
// reuse, hoist or drop them), and their results leave the kernel: a load's sum, a store's last value.
// Bytes: the shared bytes the lanes ask for (lanes x width, loads + stores); hardware_bytes: the
// model's wavefronts x 128 B, the bytes the banks really deliver (model.cpp). The roof: 32 banks x
// 4 B x SMs x the SM clock measured during the case.
//
// Reading order: the CPU reference, the bank-bound kernels (stores, loads at a stride, smem_padded,
// smem_swizzled, 8- and 16-byte loads), the reference's copies, then plans, refusals and launchers, and the
// lab's table at the end.
#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "harness/check.hpp"
#include "harness/error.hpp"
#include "harness/fill.hpp"
#include "harness/launch.cuh"
#include "labs/smem/smem.hpp"
#include "memlab/arch/config.cuh"
#include "memlab/arch/ld_st_shared.cuh"

namespace memlab::labs::smem {

// ---- the CPU reference ----------------------------------------------------------------------------

// Word i of an input buffer holding the random stream `seed` (little-endian, as the GPU reads it).
std::uint32_t input_word(std::uint64_t seed, std::uint64_t i) {
  std::uint32_t w = 0;
  for (int b = 3; b >= 0; --b) w = (w << 8) | random_byte(seed, 4 * i + static_cast<std::uint64_t>(b));
  return w;
}

// ---- the kernels ------------------------------------------------------------------------------------

namespace {

// Dynamic shared memory, 128-byte aligned: the address arithmetic below relies on it.
__device__ __forceinline__ std::uint32_t* region() {
  extern __shared__ __align__(128) std::uint32_t smem_words[];
  return smem_words;
}

// The persistent grid's warps and their tasks: warp g of the grid takes tasks g, g + warps, ...
struct warp_tasks {
  std::uint64_t first, step, count;
  __device__ warp_tasks(std::uint64_t n)
      : first(std::uint64_t{blockIdx.x} * warps_per_cta + threadIdx.x / 32),
        step(std::uint64_t{gridDim.x} * warps_per_cta),
        count((n + 31) / 32) {}
};

template <int Width>
__device__ __forceinline__ std::uint32_t sum_words(const vector_t<Width>& v) {
  if constexpr (Width == 4) {
    return v;
  } else if constexpr (Width == 8) {
    return v.x + v.y;
  } else {
    return v.x + v.y + v.z + v.w;
  }
}

}  // namespace

// ---- store_stride: 4-byte stores at a stride ---------------------------------------------------------
// Lane l stores to word l*stride of its warp's own region, 1024 times (the values in, in + 1, ...),
// then reads the word back once and writes it out. stride 1: 32 banks, 1 wavefront per request;
// stride 2: lanes l and l + 16 share a bank, 2 wavefronts; ... stride 32: one bank, 32.
__global__ void __launch_bounds__(threads_per_cta)
    store_stride_kernel(std::uint32_t* __restrict__ out, const std::uint32_t* __restrict__ in, std::uint64_t n,
                        std::uint32_t stride) {
  const std::uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::uint32_t word =
      arch::shared_address(region()) + 4 * (warp * lanes * stride + lane * stride);  // this lane's word
  const warp_tasks w(n);
  for (std::uint64_t task = w.first; task < w.count; task += w.step) {
    const std::uint64_t t = task * 32 + lane;
    if (t >= n) break;  // the last task's idle lanes
    const std::uint32_t x = in[t];
#pragma unroll 1
    for (int pass = 0; pass < accesses_per_thread / columns; ++pass) {
      const std::uint32_t base = x + static_cast<std::uint32_t>(pass * columns);
#pragma unroll
      for (int c = 0; c < columns; ++c) arch::st_shared_volatile(word, base + static_cast<std::uint32_t>(c));
    }
    out[t] = arch::ld_shared_volatile<4>(word);  // its own word: no other lane writes it
  }
}

// ---- the load rungs: fill a region once per CTA, then 1024 loads per lane -----------------------------
// Each pattern gives a lane's address for column c (0..31); request k reads column k mod 32. The
// addresses are a per-lane base plus a compile-time offset, so every load is one LDS [R + imm]
// (swizzled: one LOP3 more), and the loaded words are summed (IADD3: two per instruction).

// The patterns (strided_pattern<Width>, padded_pattern, swizzled_pattern) are in smem.hpp, shared with the host
// model: it replays the addresses the kernels form, from the same functions.

// The CTAs per SM the load kernels are built for (their launch bound), by architecture as CUB picks
// its policies. 8 (2048 threads, at most 32 registers each): without a bound ptxas kept smem_swizzled's 32
// addresses in 32 registers (44 in all), 5 CTAs fit per SM, and it ran 4% slower than smem_padded (H100,
// first run); bounded, it computes most addresses with a LOP3 as it goes. sm_100's ptxas spills 4
// bytes of swizzled at 32 registers (a build error under -warn-spills): 6 there (40 registers), not
// measured on a B200.
constexpr int load_ctas_per_sm() {
#if MEMLAB_ARCH >= 1000
  return 6;
#else
  return 8;
#endif
}

template <class Pattern>
__global__ void __launch_bounds__(threads_per_cta, load_ctas_per_sm())
    load_kernel(std::uint32_t* __restrict__ out, const std::uint32_t* __restrict__ in, std::uint64_t n,
                std::uint32_t stride, std::uint32_t fill) {
  std::uint32_t* words = region();
  for (std::uint32_t i = threadIdx.x; i < fill; i += threads_per_cta) words[i] = in[i];
  __syncthreads();
  const std::uint32_t lane = threadIdx.x % 32;
  const std::uint32_t base = Pattern::lane_base(arch::shared_address(words), lane, stride);
  const warp_tasks w(n);
  for (std::uint64_t task = w.first; task < w.count; task += w.step) {
    const std::uint64_t t = task * 32 + lane;
    if (t >= n) break;  // the last task's idle lanes
    std::uint32_t acc = 0;
#pragma unroll 1
    for (int pass = 0; pass < accesses_per_thread / columns; ++pass) {
#pragma unroll
      for (int c = 0; c < columns; ++c) {
        acc += sum_words<Pattern::width>(arch::ld_shared_volatile<Pattern::width>(Pattern::at(base, c)));
      }
    }
    out[t] = acc;
  }
}

// ---- the reference's copies: one element per thread ----------------------------------------------------
//   global_strided_store: global -> shared at word t*stride -> global (the reference's copy_shmem).
//   The thread reads back its own word; the barrier between is the reference's (BAR.SYNC in the SASS).
__global__ void __launch_bounds__(threads_per_cta)
    global_strided_store_kernel(std::uint32_t* __restrict__ out, const std::uint32_t* __restrict__ in, std::uint64_t n,
                                std::uint32_t stride) {
  std::uint32_t* a = region();
  const std::uint64_t t = std::uint64_t{blockIdx.x} * threads_per_cta + threadIdx.x;
  const bool active = t < n;
  const std::uint32_t at = threadIdx.x * stride;
  if (active) a[at] = in[t];
  __syncthreads();
  if (active) out[t] = a[at];
}

//   smem_to_smem: the same, plus a copy into a second shared array. C++ cannot say "copy shared to
//   shared": b[at] = a[at] compiles to an LDS into a register and an STS from it.
__global__ void __launch_bounds__(threads_per_cta)
    smem_to_smem_kernel(std::uint32_t* __restrict__ out, const std::uint32_t* __restrict__ in, std::uint64_t n,
                        std::uint32_t stride) {
  std::uint32_t* a = region();
  std::uint32_t* b = a + threads_per_cta * stride;
  const std::uint64_t t = std::uint64_t{blockIdx.x} * threads_per_cta + threadIdx.x;
  const bool active = t < n;
  const std::uint32_t at = threadIdx.x * stride;
  if (active) a[at] = in[t];
  __syncthreads();
  if (active) b[at] = a[at];
  __syncthreads();
  if (active) out[t] = b[at];
}

// ---- plans, refusals and launchers --------------------------------------------------------------------

namespace {

enum buffer_index { in_buffer, out_buffer };

const axis stride_axis{.name = "lane_stride",
                       .meaning =
                           "distance between neighbouring lanes' accesses, in accesses of the rung's width "
                           "(words for 4 B)",
                       .unit = "accesses",
                       .defaults = "1,2,4,8,16,32",
                       .min = 1,
                       .max = max_stride,
                       .formerly = {"stride"}};

// The rung's one kernel, as the table names it: for cudaFuncSetAttribute and cudaLaunchKernel.
const void* kernel_of(const variant& v) { return v.kernels.front().symbol; }

std::uint64_t input_words(const smem_rung& r, const case_params& p) {
  return r.load ? fill_words(r, p[stride_axis]) : p.n;
}

// The plan with `grid` CTAs: the policy, the bytes, the model's wavefronts as hardware bytes.
void fill_plan(case_plan& out, const smem_rung& r, const case_params& p, std::uint64_t grid) {
  const launch_counts c = predict(r, p[stride_axis], p.n, grid);
  out.policy = plan(r, p.n, grid);
  out.bytes = c.bytes;
  out.hardware_bytes = c.hardware_bytes();
}

std::optional<std::string> refusal(const variant& v, const case_params& p, const device_info& dev) {
  if (p.type != dtype::f32) return "smem moves 4-byte words: f32 only";
  if (auto why = stride_rule(v, p[stride_axis])) return why;
  const std::uint64_t need = region_bytes(v.traits_as<smem_rung>(), p[stride_axis]);
  if (dev.smem_per_block_optin > 0 && need > static_cast<std::uint64_t>(dev.smem_per_block_optin)) {
    return std::string(v.name) + " needs " + std::to_string(need) + " B of shared memory per CTA; this device allows " +
           std::to_string(dev.smem_per_block_optin) + " B";
  }
  return std::nullopt;
}

// The grid here assumes the thread limit alone sets residency (2048 threads per SM: 8 CTAs); setup
// asks the occupancy calculator, which also counts shared memory, and re-plans.
case_plan plan_case(const variant& v, const case_params& p, const device_info& dev) {
  const auto& r = v.traits_as<smem_rung>();
  const std::uint64_t per_sm =
      static_cast<std::uint64_t>(std::max(dev.max_threads_per_sm, threads_per_cta)) / threads_per_cta;
  case_plan out;
  fill_plan(out, r, p, grid_of_case(r, p.n, per_sm * static_cast<std::uint64_t>(std::max(dev.sm_count, 1))));
  out.working_set = 4 * (input_words(r, p) + p.n);
  out.buffers = {{"in", 4 * input_words(r, p), buffer_role::input}, {"out", 4 * p.n, buffer_role::output}};
  return out;
}

void setup(case_ctx& c) {
  const auto& r = c.v->traits_as<smem_rung>();
  const void* k = kernel_of(*c.v);
  const auto smem = static_cast<int>(region_bytes(r, c.p[stride_axis]));
  MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, c.dev.smem_per_block_optin));
  if (!is_bank_bound(r)) return;
  int per_sm = 0;
  MEMLAB_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, threads_per_cta, static_cast<std::size_t>(smem)));
  if (per_sm < 1) throw std::runtime_error("smem: " + std::string(c.v->name) + " cannot run one CTA per SM");
  fill_plan(c.plan, r, c.p,
            grid_of_case(r, c.p.n, static_cast<std::uint64_t>(per_sm) * static_cast<std::uint64_t>(c.dev.sm_count)));
}

void launch(const case_ctx& c, cudaStream_t s) {
  const auto& r = c.v->traits_as<smem_rung>();
  if (c.plan.policy.grid == 0) return;
  auto* out = c.ptr<std::uint32_t>(out_buffer);
  const auto* in = c.ptr<const std::uint32_t>(in_buffer);
  std::uint64_t n = c.p.n;
  auto stride = static_cast<std::uint32_t>(c.p[stride_axis]);
  auto fill = static_cast<std::uint32_t>(fill_words(r, c.p[stride_axis]));
  void* load_args[] = {&out, &in, &n, &stride, &fill};
  void* other_args[] = {&out, &in, &n, &stride};
  MEMLAB_CUDA_CHECK(cudaLaunchKernel(kernel_of(*c.v), grid_of(c.plan.policy.grid, "smem"), dim3(threads_per_cta),
                                     r.load ? load_args : other_args, region_bytes(r, c.p[stride_axis]), s));
}

// A load rung, from its record: its kernel is the load kernel of the pattern its traits name.
template <smem_rung R>
variant load_rung(variant v) {
  static_assert(R.load && is_bank_bound(R), "the load rungs: a persistent grid reading a filled region");
  v.launch = launch;
  v.kernels = {kernel_ref::of(&load_kernel<pattern_t<R>>)};
  v.traits = R;
  return v;
}

std::string verify(const case_ctx& c) {
  const auto& r = c.v->traits_as<smem_rung>();
  const std::uint64_t seed = c.seeds[in_buffer], stride = c.p[stride_axis];
  std::array<std::uint32_t, lanes> sums{};  // a load rung's output depends on the lane only
  if (r.load) {
    for (int l = 0; l < lanes; ++l)
      sums[static_cast<std::size_t>(l)] = load_sum(r, stride, l, [&](std::uint32_t i) { return input_word(seed, i); });
  }
  const auto expected_word = [&](std::uint64_t t) -> std::uint32_t {
    if (r.load) return sums[t % lanes];
    if (is_bank_bound(r)) return stored_value(input_word(seed, t));  // store_stride: its last value
    return input_word(seed, t);
  };
  return check_bytes(
      c.buffers[out_buffer], 0, 4 * c.p.n, 4,
      [&](std::uint64_t j) { return static_cast<std::uint8_t>(expected_word(j / 4) >> (8 * (j % 4))); },
      [&](std::uint64_t e) { return "(thread " + std::to_string(e) + ", lane " + std::to_string(e % lanes) + ")"; });
}

}  // namespace

// ---- the lab's table ------------------------------------------------------------------------------------

const lab& table() {
  static const lab smem_lab{
      .name = "smem",
      .teaches =
          "shared memory's 32 banks: wavefronts per request, conflicts by stride, padding and XOR swizzles, "
          "8/16-byte accesses, and that shared -> shared goes through registers",
      .dtypes = {dtype::f32},
      .default_dtype = dtype::f32,
      .default_sizes = "2^20",  // 2^20 lanes x 1024 accesses: 4 GiB of requests, ~0.15 ms at stride 1 on an H100
      .size_meaning = "threads (lanes); each makes 1024 shared accesses (the copies: moves one element)",
      .axes = {stride_axis},
      .roof = roof_kind::smem,
      .variants =
          {
              {
                  .name = "store_stride",
                  .teaches = "4-byte stores at --lane-stride words: gcd(stride, 32) wavefronts per request",
                  .launch = launch,
                  .kernels = {kernel_ref::of(&store_stride_kernel)},
                  .traits = smem_rung{.pattern = address_pattern::strided, .access_bytes = 4},
              },
              load_rung<smem_rung{.pattern = address_pattern::strided, .access_bytes = 4, .load = true}>({
                  .name = "load_stride",
                  .teaches = "4-byte loads at --lane-stride words: gcd(stride, 32) wavefronts per request",
              }),
              load_rung<smem_rung{.pattern = address_pattern::padded, .access_bytes = 4, .load = true}>({
                  .name = "smem_padded",
                  .teaches = "stride 32 (a 32x32 tile read by columns) with rows padded to 33 words: 1 wavefront",
                  .needs = {.shape = "--lane-stride 32 (the 32 x 32 tile read by columns)"},
                  .formerly = {"padded"},
              }),
              load_rung<smem_rung{.pattern = address_pattern::swizzled, .access_bytes = 4, .load = true}>({
                  .name = "smem_swizzled",
                  .teaches =
                      "stride 32 with columns XOR-swizzled by row, no padding: 1 wavefront, one LOP3 per address",
                  .needs = {.shape = "--lane-stride 32 (the 32 x 32 tile read by columns)"},
                  .formerly = {"swizzled"},
              }),
              load_rung<smem_rung{.pattern = address_pattern::strided, .access_bytes = 8, .load = true}>({
                  .name = "load_vec8",
                  .teaches = "8-byte loads (LDS.64) at --lane-stride vectors: 2 wavefronts at best (half-warps)",
              }),
              load_rung<smem_rung{.pattern = address_pattern::strided, .access_bytes = 16, .load = true}>({
                  .name = "load_vec16",
                  .teaches = "16-byte loads (LDS.128) at --lane-stride vectors: 4 wavefronts at best (quarter-warps)",
              }),
              {
                  .name = "global_strided_store",
                  .teaches =
                      "the reference's copy_shmem: global -> shared at a stride -> global, one element per thread",
                  .launch = launch,
                  .kernels = {kernel_ref::of(&global_strided_store_kernel)},
                  .traits = smem_rung{.pattern = address_pattern::strided, .access_bytes = 4, .copy_arrays = 1},
              },
              {
                  .name = "smem_to_smem",
                  .teaches = "the same through a second shared array: shared -> shared is LDS + STS through a register",
                  .launch = launch,
                  .kernels = {kernel_ref::of(&smem_to_smem_kernel)},
                  .traits = smem_rung{.pattern = address_pattern::strided, .access_bytes = 4, .copy_arrays = 2},
              },
          },
      .unsupported = refusal,
      .plan = plan_case,
      .setup = setup,
      .verify = verify,
  };
  return smem_lab;
}

}  // namespace memlab::labs::smem
