// The hierarchy lab: what each level of the memory system delivers to one SM and to all of them,
// registers to HBM. Latency by pointer chase (cycles from clock64, ns from %globaltimer, the SM
// clock read during the walk) and latency under load here, in the chase part; bandwidth against
// working set in the stream part (stream.cu). The lab's table, one for both, ends this file.
//
// Assumes: one GPU, nothing else running on it. A chase's chain is n x 4 bytes (--sizes, f32
// elements; "1GiB" is a 1 GiB chain) with one node every `stride` bytes (default 128: one node per
// 128-byte cache line, so every load of a random chase touches a new line; stride 32: one per
// 32-byte sector). The chain is a random cyclic permutation built on the host (Sattolo), or the
// sequential stride order; each node holds the address of the next, so each load's address is the
// previous load's value. The walk's end node is checked against the host's walk (the verification).
//
// Reading order: the kernels (the chases, the register chain, the loaded chase), then for each kind
// of rung its record (refusal, plan, setup, verify, observe) and launchers, and the lab's table.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cuda/cmath>
#include <cuda/ptx>
#include <memory>

#include "harness/error.hpp"
#include "harness/fill.hpp"
#include "harness/lab.hpp"
#include "harness/launch.cuh"
#include "labs/hierarchy/hierarchy.hpp"
#include "memlab/arch/config.cuh"
#include "memlab/arch/ld_global_cache.cuh"
#include "memlab/arch/ld_st_shared.cuh"

namespace memlab::labs::hierarchy {

// What a walker writes back: its end node (verification), the timed walk's cycles and ns, its SM,
// and the sampled per-load latencies.
struct chase_out {
  std::uint64_t end;
  std::uint64_t cycles;
  std::uint64_t ns;
  std::uint32_t smid;
  std::uint32_t samples_taken;
  std::uint32_t samples[max_samples];
};

// A generator CTA of the loaded chase: the bytes it read and for how long.
struct generator_out {
  unsigned long long bytes;
  unsigned long long ns;
};
// The loaded chase's flags, zeroed before each launch.
struct loaded_flags {
  unsigned started;  // generator CTAs running
  unsigned done;     // the probe has finished
};

namespace {

// ---- reading the clocks ---------------------------------------------------------------------------------

__device__ __forceinline__ std::uint64_t sm_clock() { return cuda::ptx::get_sreg_clock64(); }
__device__ __forceinline__ std::uint64_t global_ns() { return cuda::ptx::get_sreg_globaltimer(); }

// Makes the next instruction wait for `v`: a shared store cannot issue before its operand is
// ready, and the warp issues in order, so a clock read after it sees the load complete.
__device__ __forceinline__ void wait_for(std::uint64_t v) {
  __shared__ volatile std::uint64_t sink;
  sink = v;
}

template <load_path Path>
__device__ __forceinline__ std::uint64_t chase_load(std::uint64_t p) {
  if constexpr (Path == load_path::l2) {
    return arch::ld_global_cg_u64(p);
  } else {
    return arch::ld_global_u64(p);
  }
}

// The walk itself, shared by every global chase: warm-up, the timed walk, the per-load samples.
template <load_path Path>
__device__ __forceinline__ void walk_global(std::uint64_t p, std::uint64_t warmup, std::uint64_t steps,
                                            unsigned samples, chase_out* o) {
  __shared__ std::uint32_t lat[max_samples];
#pragma unroll 1
  for (std::uint64_t i = 0; i < warmup; ++i) p = chase_load<Path>(p);
  wait_for(p);
  const std::uint64_t c0 = sm_clock(), g0 = global_ns();
  // Unrolled by 4: four dependent loads per iteration (each address is the previous value), so the
  // loop's own instructions hide under the load latency.
  std::uint64_t i = 0;
#pragma unroll 1
  for (; i + 4 <= steps; i += 4) {
    p = chase_load<Path>(p);
    p = chase_load<Path>(p);
    p = chase_load<Path>(p);
    p = chase_load<Path>(p);
  }
#pragma unroll 1
  for (; i < steps; ++i) p = chase_load<Path>(p);
  wait_for(p);
  const std::uint64_t c1 = sm_clock(), g1 = global_ns();
#pragma unroll 1
  for (unsigned s = 0; s < samples; ++s) {
    const std::uint64_t t0 = sm_clock();
    p = chase_load<Path>(p);
    wait_for(p);
    lat[s] = static_cast<std::uint32_t>(sm_clock() - t0);
  }
  o->end = p;
  o->cycles = c1 - c0;
  o->ns = g1 - g0;
  o->smid = cuda::ptx::get_sreg_smid();
  o->samples_taken = samples;
#pragma unroll 1
  for (unsigned s = 0; s < samples; ++s) o->samples[s] = lat[s];
}

}  // namespace

// ---- the chases ---------------------------------------------------------------------------------------------
//   chase_l1      ld.global (LDG.E.64): L1 first, then L2, then HBM
//   chase_l2      ld.global.cg: past L1, the L2 (then HBM) latency at every working set
//   chase_stride  ld.global in address order: what a prefetch-friendly, TLB-friendly walk costs
//   chase_shared  ld.shared (LDS) over a chain copied into shared memory
//   chase_l2_per_sm  the .cg chase on every SM at once, one walker each: a latency per SM

// One walker per CTA (thread 0), starting at starts[blockIdx.x]; out is one chase_out per CTA.
// CTAs of the per-SM rung ask for more than half an SM's shared memory, so each lands on its own SM.
// Order and PerSM change no instruction (the chain's order is data, the grid is the launch's): they
// give each rung a kernel symbol of its own, which `memlab inspect` and the SASS tests read.
// Each launch goes on where the last one ended (starts[] is the walkers' cursor): over a chain larger
// than the L2 every timed load is then to a line no recent launch touched, so repeated launches (the
// batch and graph samples, and the launch whose figures are reported) measure the chain's level, not
// the few thousand nodes a single walk visits, which the previous launch left in the L2.
template <load_path Path, chase_order Order, bool PerSM>
__global__ void chase_kernel(std::uint64_t* starts, std::uint64_t warmup, std::uint64_t steps, unsigned samples,
                             chase_out* out) {
  if (threadIdx.x != 0) return;
  walk_global<Path>(starts[blockIdx.x], warmup, steps, samples, out + blockIdx.x);
  starts[blockIdx.x] = out[blockIdx.x].end;
}

// The chain (node offsets in bytes, as 32-bit words at each node) copied into shared memory by
// the whole CTA, then walked by thread 0: LDS -> LDS, each address the previous value.
__global__ void chase_shared_kernel(const std::uint32_t* chain, std::uint32_t words, std::uint32_t start,
                                    std::uint64_t warmup, std::uint64_t steps, unsigned samples, chase_out* out) {
  extern __shared__ std::uint32_t smem_chain[];
  __shared__ std::uint32_t lat[max_samples];
  for (std::uint32_t i = threadIdx.x; i < words; i += blockDim.x) smem_chain[i] = chain[i];
  __syncthreads();
  if (threadIdx.x != 0) return;
  const std::uint32_t base = arch::shared_address(smem_chain);
  std::uint32_t p = start;
#pragma unroll 1
  for (std::uint64_t i = 0; i < warmup; ++i) p = arch::ld_shared_volatile<4>(base + p);
  wait_for(p);
  const std::uint64_t c0 = sm_clock(), g0 = global_ns();
  std::uint64_t i = 0;
#pragma unroll 1
  for (; i + 4 <= steps; i += 4) {
    p = arch::ld_shared_volatile<4>(base + p);
    p = arch::ld_shared_volatile<4>(base + p);
    p = arch::ld_shared_volatile<4>(base + p);
    p = arch::ld_shared_volatile<4>(base + p);
  }
#pragma unroll 1
  for (; i < steps; ++i) p = arch::ld_shared_volatile<4>(base + p);
  wait_for(p);
  const std::uint64_t c1 = sm_clock(), g1 = global_ns();
#pragma unroll 1
  for (unsigned s = 0; s < samples; ++s) {
    const std::uint64_t t0 = sm_clock();
    p = arch::ld_shared_volatile<4>(base + p);
    wait_for(p);
    lat[s] = static_cast<std::uint32_t>(sm_clock() - t0);
  }
  out->end = p;
  out->cycles = c1 - c0;
  out->ns = g1 - g0;
  out->smid = cuda::ptx::get_sreg_smid();
  out->samples_taken = samples;
#pragma unroll 1
  for (unsigned s = 0; s < samples; ++s) out->samples[s] = lat[s];
}

// ---- the register chain --------------------------------------------------------------------------------------
// x = x * a + b, each FFMA waiting for the one before: the dependent-issue latency of the simplest
// register operation (what "registers: 1 cycle" can mean). Volatile asm so that no FFMA is folded.
__global__ void register_chain_kernel(float x, float a, float b, std::uint64_t steps, chase_out* out) {
  if (threadIdx.x != 0) return;
  wait_for(__float_as_uint(x));
  const std::uint64_t c0 = sm_clock(), g0 = global_ns();
#pragma unroll 1
  for (std::uint64_t i = 0; i < steps; i += register_chain_unroll) {
#pragma unroll
    for (unsigned k = 0; k < register_chain_unroll; ++k)
      asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x) : "f"(a), "f"(b));
  }
  wait_for(__float_as_uint(x));
  const std::uint64_t c1 = sm_clock(), g1 = global_ns();
  out->end = __float_as_uint(x);
  out->cycles = c1 - c0;
  out->ns = g1 - g0;
  out->smid = cuda::ptx::get_sreg_smid();
  out->samples_taken = 0;
}

// ---- the loaded chase ------------------------------------------------------------------------------------------
// CTA 0's thread 0 chases (.cg) while CTAs 1..load_ctas stream 16-byte loads from a DRAM-sized array
// until it is done; each CTA on its own SM (more than half an SM's shared memory each). The probe
// starts once every generator runs (or after 50 ms, if some could not be resident).
__global__ void __launch_bounds__(1024)
    loaded_chase_kernel(std::uint64_t* starts, std::uint64_t warmup, std::uint64_t steps, unsigned samples,
                        chase_out* out, const float4* stream, std::uint64_t stream_vectors, loaded_flags* flags,
                        generator_out* gen) {
  volatile loaded_flags* f = flags;
  if (blockIdx.x == 0) {
    if (threadIdx.x != 0) return;
    const std::uint64_t t0 = global_ns();
    while (f->started < gridDim.x - 1 && global_ns() - t0 < 50'000'000) {
    }
    walk_global<load_path::l2>(starts[0], warmup, steps, samples, out);
    starts[0] = out->end;  // the next launch goes on from here (see chase_kernel)
    __threadfence();
    f->done = 1;
    return;
  }
  if (threadIdx.x == 0) atomicAdd(const_cast<unsigned*>(&f->started), 1u);
  const std::uint64_t g = blockIdx.x - 1, gens = gridDim.x - 1;
  const std::uint64_t slice = stream_vectors / gens, begin = g * slice;
  const std::uint64_t t0 = global_ns();
  constexpr int ilp = 4;
  float4 acc{0, 0, 0, 0};
  unsigned long long vectors = 0;
  std::uint64_t i = threadIdx.x;
  while (f->done == 0 && global_ns() - t0 < 1'000'000'000) {
    float4 v[ilp];
#pragma unroll
    for (int u = 0; u < ilp; ++u) {
      std::uint64_t j = i + static_cast<std::uint64_t>(u) * blockDim.x;
      if (j >= slice) j -= slice;
      v[u] = arch::ld_global_v4_f32(stream + begin + j);
    }
#pragma unroll
    for (int u = 0; u < ilp; ++u) acc.x += v[u].x, acc.y += v[u].y, acc.z += v[u].z, acc.w += v[u].w;
    vectors += ilp;
    i += static_cast<std::uint64_t>(ilp) * blockDim.x;
    if (i >= slice) i -= slice;
  }
  if (acc.x + acc.y + acc.z + acc.w == -1.0f) vectors = 0;  // keeps the loads; never true for the lab's data
  atomicAdd(&gen[g].bytes, vectors * 16);
  if (threadIdx.x == 0) gen[g].ns = global_ns() - t0;
}
// Reads every 16 bytes of the chain through L2 (.cg), from every SM: an L2-sized chain is resident
// before the walk, also after the harness's L2 flush (the walker's own warm-up covers only 4096 nodes).
__global__ void touch_kernel(const float4* p, std::uint64_t vectors, float* sink) {
  float acc = 0;
  for (std::uint64_t i = global_thread(); i < vectors; i += std::uint64_t{gridDim.x} * blockDim.x) {
    const float4 v = arch::ld_global_cg_v4_f32(p + i);
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 1.2345e-38f) *sink = acc;  // never true for addresses read as floats; keeps the loads
}

// ---- setup kernels ----------------------------------------------------------------------------------------------

// Writes each node's link at its place in the chain: node i sits at byte i x stride.
template <class Word>
__global__ void scatter_chain_kernel(Word* chain, const Word* links, std::uint64_t nodes, std::uint64_t stride_words) {
  for (std::uint64_t i = global_thread(); i < nodes; i += std::uint64_t{gridDim.x} * blockDim.x)
    chain[i * stride_words] = links[i];
}

// ---- the rungs' kinds: plans, setup, launchers, verification, figures -------------------------------------------

namespace {

const axis stride_axis{.name = "node_stride",
                       .meaning =
                           "chases: bytes between chase nodes, a multiple of 8: 128 = one per cache line, 32 = "
                           "one per sector; the TLB sweep goes to MiBs",
                       .unit = "bytes",
                       .grammar = axis_grammar::bytes,
                       .defaults = "128",
                       .min = 8,
                       .max = std::uint64_t{1} << 32,
                       .multiple_of = 8,
                       .formerly = {"stride"}};
const axis steps_axis{.name = "steps",
                      .meaning = "timed dependent loads (or FFMAs) per walk",
                      .unit = "loads",
                      .defaults = "4096",
                      .min = 64,
                      .max = std::uint64_t{1} << 24};
const axis load_ctas_axis{.name = "load_ctas",
                          .meaning = "loaded chase: SMs streaming from DRAM beside the probe",
                          .unit = "CTAs",
                          .defaults = "0",
                          .min = 0,
                          .max = 1024};

constexpr float chain_a = 0.5f, chain_b = 1.0f, chain_x0 = 3.0f;

const rung_traits& traits(const variant& v) { return v.traits_as<rung_traits>(); }

// Buffers of a chase: its output, the chain, the walkers' first nodes; the loaded chase adds its
// flags, the generators' figures and the array they stream.
enum chase_buffer { out_buffer, chain_buffer, starts_buffer, flags_buffer, generators_buffer, stream_buffer };

std::uint64_t chain_bytes(const case_params& p) { return p.n * 4; }

// What setup keeps for launch and verify.
struct chase_state {
  chase_plan plan;
  std::vector<std::uint64_t> starts;  // first node of each walker
  std::vector<std::uint64_t> ends;    // node each walker must end on (host walk)
  std::vector<std::uint64_t> cursor;  // the walkers' first addresses as the kernels read them (starts_buffer)
};
const chase_state& state_of(const case_ctx& c) { return *std::any_cast<std::shared_ptr<chase_state>>(c.state); }

// Puts the walkers back at their first nodes: the chase kernels move the cursor on at every launch.
void rewind(const case_ctx& c, const chase_state& st) {
  MEMLAB_CUDA_CHECK(cudaMemcpy(c.ptr(starts_buffer), st.cursor.data(), 8 * st.cursor.size(), cudaMemcpyHostToDevice));
}

std::uint64_t stream_bytes_for(const device_info& dev) { return std::max<std::uint64_t>(8 * dev.l2_bytes, 256u << 20); }
std::uint64_t walk_length(const chase_plan& p) { return p.warmup + p.steps + p.samples; }

// More than half an SM's shared memory: one CTA per SM.
int one_cta_per_sm_smem(const device_info& dev) { return std::max(dev.smem_per_block_optin / 2 + 1024, 48 * 1024); }

std::vector<chase_out> read_walkers(const case_ctx& c, std::uint64_t walkers) {
  std::vector<chase_out> out(walkers);
  MEMLAB_CUDA_CHECK(cudaMemcpy(out.data(), c.ptr(out_buffer), walkers * sizeof(chase_out), cudaMemcpyDeviceToHost));
  return out;
}
std::span<const std::uint32_t> samples_of(const chase_out& o) {
  return {o.samples, std::min<std::uint32_t>(o.samples_taken, max_samples)};
}

// ---- the register chain: one thread's dependent FFMAs, no memory ----

std::optional<std::string> register_chain_refusal(const variant&, const case_params& p, const device_info&) {
  if (chain_bytes(p) > (32u << 10))
    return std::string("the register chain has no working set: it runs at sizes up to 32KiB only (one figure)");
  return std::nullopt;
}

case_plan register_chain_plan(const variant&, const case_params& p, const device_info&) {
  case_plan out;
  out.policy = {.threads = 1, .items_per_thread = 1, .vec_bytes = 8, .grid = 1};
  out.bytes = 0;  // it moves nothing
  out.working_set = chain_bytes(p);
  out.buffers = {{"out", sizeof(chase_out), buffer_role::output}};
  return out;
}

// Whole loop iterations of register_chain_unroll FFMAs; no warm-up, no samples.
void register_chain_setup(case_ctx& c) {
  auto st = std::make_shared<chase_state>();
  st->plan = plan_chase(chain_bytes(c.p), c.p[stride_axis], c.p[steps_axis], false, c.dev.sm_count);
  st->plan.warmup = 0;
  st->plan.samples = 0;
  st->plan.steps = cuda::ceil_div(st->plan.steps, std::uint64_t{register_chain_unroll}) * register_chain_unroll;
  c.state = st;
}

// The host replay of the register chain: the same FFMAs, rounded the same way (fmaf).
std::uint32_t register_chain_end(std::uint64_t steps) {
  float x = chain_x0;
  for (std::uint64_t i = 0; i < steps; ++i) x = std::fmaf(x, chain_a, chain_b);
  std::uint32_t u = 0;
  std::memcpy(&u, &x, 4);
  return u;
}

std::string register_chain_verify(const case_ctx& c) {
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  const auto o = read_walkers(c, 1)[0];
  const std::uint32_t want = register_chain_end(state_of(c).plan.steps);
  if (o.end != want) return "register chain ended on " + std::to_string(o.end) + ", host " + std::to_string(want);
  return {};
}

// One walker's figures (the register chain and the single-walker chases).
std::vector<measured_figure> walker_observe(const case_ctx& c) {
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  const chase_state& st = state_of(c);
  const auto o = read_walkers(c, 1)[0];
  return walk_figures(o.cycles, o.ns, st.plan.steps, samples_of(o));
}

void launch_register_chain(const case_ctx& c, cudaStream_t s) {
  register_chain_kernel<<<1, 32, 0, s>>>(chain_x0, chain_a, chain_b, state_of(c).plan.steps,
                                         c.ptr<chase_out>(out_buffer));
  MEMLAB_CUDA_CHECK_LAUNCH();
}

const rung_kind register_chain_kind{.name = "ffma_chain",
                                    .refusal = register_chain_refusal,
                                    .plan = register_chain_plan,
                                    .setup = register_chain_setup,
                                    .verify = register_chain_verify,
                                    .observe = walker_observe};

// ---- the chases: one walker, or one per SM, over global or shared memory ----

std::optional<std::string> chase_refusal(const variant& v, const case_params& p, const device_info& dev) {
  const std::uint64_t bytes = chain_bytes(p), stride = p[stride_axis];
  if (stride % 8 != 0) return std::string("--node-stride must be a multiple of 8 bytes (a node holds an address)");
  if (bytes / stride < 2) return std::string("the chain needs at least two nodes (size / stride >= 2)");
  if (traits(v).path == load_path::shared) {
    const auto limit = static_cast<std::uint64_t>(dev.smem_per_block_optin > 0 ? dev.smem_per_block_optin : 48 * 1024);
    if (bytes > limit - 8 * 1024)
      return "a shared-memory chain must fit a CTA's shared memory with room for the samples (" +
             std::to_string(limit - 8 * 1024) + " B here)";
  }
  return std::nullopt;
}

case_plan chase_plan_case(const variant& v, const case_params& p, const device_info& dev) {
  const rung_traits& t = traits(v);
  case_plan out;
  const std::uint64_t bytes = chain_bytes(p);
  const chase_plan c = plan_chase(bytes, p[stride_axis], p[steps_axis], t.per_sm, dev.sm_count);
  const int node_bytes = t.path == load_path::shared ? 4 : 8;  // one 8-byte (shared: 4-byte) load per step
  out.policy = {.threads = 1, .items_per_thread = 1, .vec_bytes = node_bytes, .grid = c.walkers};
  out.bytes = c.walkers * walk_length(c) * static_cast<std::uint64_t>(node_bytes);
  out.working_set = bytes;
  out.buffers = {{"out", c.walkers * sizeof(chase_out), buffer_role::output},
                 {"chain", bytes, buffer_role::scratch},
                 {"starts", 8 * c.walkers, buffer_role::scratch}};
  out.transient_bytes = 8 * c.nodes;  // the links, uploaded once and scattered into place
  out.model = {{"nodes", static_cast<double>(c.nodes)}};
  return out;
}

// The host builds the chain and the walkers' starts and ends; the links go up once and a kernel
// writes each at its node's place. Kernels that ask for more than 48 KiB of shared memory say so
// once, here, not inside a launch (which a CUDA graph captures).
std::shared_ptr<chase_state> build_chain(case_ctx& c) {
  const rung_traits& t = traits(*c.v);
  auto st = std::make_shared<chase_state>();
  const std::uint64_t stride = c.p[stride_axis];
  st->plan = plan_chase(chain_bytes(c.p), stride, c.p[steps_axis], t.per_sm, c.dev.sm_count);
  const chase_plan& p = st->plan;
  const std::vector<std::uint64_t> next = make_chain(p.nodes, t.order, next_seed());
  st->starts = walker_starts(next, p);
  for (std::uint64_t w = 0; w < p.walkers; ++w) st->ends.push_back(walk(next, st->starts[w], walk_length(p)));
  const bool shared = t.path == load_path::shared;
  const auto base = reinterpret_cast<std::uint64_t>(c.ptr(chain_buffer));
  device_buffer links(8 * p.nodes);
  if (shared) {
    std::vector<std::uint32_t> host(p.nodes);
    for (std::uint64_t i = 0; i < p.nodes; ++i) host[i] = static_cast<std::uint32_t>(next[i] * stride);
    MEMLAB_CUDA_CHECK(cudaMemcpy(links.data(), host.data(), 4 * p.nodes, cudaMemcpyHostToDevice));
    scatter_chain_kernel<<<1024, 256>>>(c.ptr<std::uint32_t>(chain_buffer),
                                        reinterpret_cast<const std::uint32_t*>(links.data()), p.nodes, stride / 4);
  } else {
    std::vector<std::uint64_t> host(p.nodes);
    for (std::uint64_t i = 0; i < p.nodes; ++i) host[i] = base + next[i] * stride;
    MEMLAB_CUDA_CHECK(cudaMemcpy(links.data(), host.data(), 8 * p.nodes, cudaMemcpyHostToDevice));
    scatter_chain_kernel<<<1024, 256>>>(c.ptr<std::uint64_t>(chain_buffer),
                                        reinterpret_cast<const std::uint64_t*>(links.data()), p.nodes, stride / 8);
  }
  MEMLAB_CUDA_CHECK_LAUNCH();
  st->cursor.resize(p.walkers);
  for (std::uint64_t w = 0; w < p.walkers; ++w)
    st->cursor[w] = shared ? st->starts[w] * stride : base + st->starts[w] * stride;
  rewind(c, *st);
  return st;
}

void chase_setup(case_ctx& c) {
  const rung_traits& t = traits(*c.v);
  auto st = build_chain(c);
  const void* kernel = c.v->kernels.front().symbol;
  if (t.per_sm)
    MEMLAB_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, one_cta_per_sm_smem(c.dev)));
  if (t.path == load_path::shared)
    MEMLAB_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(chain_bytes(c.p))));
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  c.state = st;
}

std::string chase_verify(const case_ctx& c) {
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  const rung_traits& t = traits(*c.v);
  const chase_state& st = state_of(c);
  const auto outs = read_walkers(c, st.plan.walkers);
  const std::uint64_t stride = c.p[stride_axis];
  const auto base = reinterpret_cast<std::uint64_t>(c.ptr(chain_buffer));
  for (std::uint64_t w = 0; w < outs.size(); ++w) {
    const std::uint64_t want = t.path == load_path::shared ? st.ends[w] * stride : base + st.ends[w] * stride;
    if (outs[w].end != want)
      return "walker " + std::to_string(w) + " ended at node " +
             std::to_string(t.path == load_path::shared ? outs[w].end / stride : (outs[w].end - base) / stride) +
             ", the host's walk at node " + std::to_string(st.ends[w]);
  }
  rewind(c, st);  // a check is of one launch from the first nodes: the next one starts there again
  return {};
}

// One walker: its walk's figures. One walker per SM: the mean and spread over SMs, and each SM's own
// figure (detail).
std::vector<measured_figure> chase_observe(const case_ctx& c) {
  if (!traits(*c.v).per_sm) return walker_observe(c);
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  const chase_state& st = state_of(c);
  const auto outs = read_walkers(c, st.plan.walkers);
  std::vector<measured_figure> f;
  std::vector<double> cyc;
  for (const auto& o : outs) cyc.push_back(static_cast<double>(o.cycles) / static_cast<double>(st.plan.steps));
  double sum_ns = 0, sum_c = 0;
  for (const auto& o : outs) sum_ns += static_cast<double>(o.ns), sum_c += static_cast<double>(o.cycles);
  const double walkers = static_cast<double>(outs.size()), steps = static_cast<double>(st.plan.steps);
  f.push_back({"cycles_per_load", sum_c / walkers / steps, "cycles"});
  f.push_back({"ns_per_load", sum_ns / walkers / steps, "ns"});
  f.push_back({"sm_clock_mhz", sum_ns > 0 ? 1e3 * sum_c / sum_ns : 0.0, "MHz"});
  f.push_back({"min_sm_cycles", *std::min_element(cyc.begin(), cyc.end()), "cycles"});
  f.push_back({"max_sm_cycles", *std::max_element(cyc.begin(), cyc.end()), "cycles"});
  for (std::size_t w = 0; w < outs.size(); ++w)
    f.push_back({"sm" + std::to_string(outs[w].smid) + "_cycles", cyc[w], "cycles", true});
  return f;
}

// An L2-sized chain is made resident first (the cold samples flush the L2); a larger one is not
// touched, so that the walk's misses are DRAM's.
void touch_if_l2_sized(const case_ctx& c, cudaStream_t s) {
  if (chain_bytes(c.p) > c.dev.l2_bytes) return;
  touch_kernel<<<grid_of(4 * static_cast<std::uint64_t>(std::max(c.dev.sm_count, 1)), "hierarchy"), 256, 0, s>>>(
      c.ptr<const float4>(chain_buffer), chain_bytes(c.p) / 16, c.ptr<float>(out_buffer));
  MEMLAB_CUDA_CHECK_LAUNCH();
}

// How a chase walks: through which path, in which order, and whether every SM walks at once.
struct chase_access {
  load_path path = load_path::l1;
  chase_order order = chase_order::random;
  bool per_sm = false;
};

template <chase_access A>
void launch_chase(const case_ctx& c, cudaStream_t s) {
  const chase_plan& p = state_of(c).plan;
  const int smem = A.per_sm ? one_cta_per_sm_smem(c.dev) : 0;
  touch_if_l2_sized(c, s);
  chase_kernel<A.path, A.order, A.per_sm><<<grid_of(p.walkers, "hierarchy"), 32, static_cast<std::size_t>(smem), s>>>(
      c.ptr<std::uint64_t>(starts_buffer), p.warmup, p.steps, p.samples, c.ptr<chase_out>(out_buffer));
  MEMLAB_CUDA_CHECK_LAUNCH();
}

void launch_chase_shared(const case_ctx& c, cudaStream_t s) {
  const chase_state& st = state_of(c);
  const chase_plan& p = st.plan;
  const auto bytes = static_cast<int>(chain_bytes(c.p));
  chase_shared_kernel<<<1, 256, static_cast<std::size_t>(bytes), s>>>(
      c.ptr<const std::uint32_t>(chain_buffer), static_cast<std::uint32_t>(bytes / 4),
      static_cast<std::uint32_t>(st.starts[0] * c.p[stride_axis]), p.warmup, p.steps, p.samples,
      c.ptr<chase_out>(out_buffer));
  MEMLAB_CUDA_CHECK_LAUNCH();
}

const rung_kind chase_kind{.name = "chase",
                           .walks = true,
                           .refusal = chase_refusal,
                           .plan = chase_plan_case,
                           .setup = chase_setup,
                           .verify = chase_verify,
                           .observe = chase_observe};

// A chase rung: `v`'s name and what it teaches, with the kernel, launch and traits of a chase that
// walks as A says (through shared memory: one walker over a chain copied there, chase_shared_kernel).
template <chase_access A = chase_access{}>
variant chase_rung(variant v) {
  v.traits = rung_traits{.kind = &chase_kind, .path = A.path, .order = A.order, .per_sm = A.per_sm};
  if constexpr (A.path == load_path::shared) {
    static_assert(A.order == chase_order::random && !A.per_sm, "shared memory: one walker, a random chain");
    v.launch = launch_chase_shared;
    v.kernels = {kernel_ref::of(&chase_shared_kernel)};
  } else {
    v.launch = launch_chase<A>;
    v.kernels = {kernel_ref::of(&chase_kernel<A.path, A.order, A.per_sm>)};
  }
  return v;
}

// ---- the loaded chase: the .cg chase on one SM while other SMs stream from DRAM ----

std::optional<std::string> loaded_chase_refusal(const variant& v, const case_params& p, const device_info& dev) {
  if (auto why = chase_refusal(v, p, dev)) return why;
  if (p[load_ctas_axis] + 1 > static_cast<std::uint64_t>(std::max(dev.sm_count, 1)))
    return "--load-ctas must leave the probe an SM of its own (at most " + std::to_string(dev.sm_count - 1) + ")";
  return std::nullopt;
}

case_plan loaded_chase_plan(const variant& v, const case_params& p, const device_info& dev) {
  case_plan out = chase_plan_case(v, p, dev);
  out.policy.grid = 1 + p[load_ctas_axis];
  out.buffers.push_back({"flags", sizeof(loaded_flags), buffer_role::scratch});
  out.buffers.push_back(
      {"generators", sizeof(generator_out) * std::max<std::uint64_t>(p[load_ctas_axis], 1), buffer_role::scratch});
  out.buffers.push_back({"stream", stream_bytes_for(dev), buffer_role::scratch});
  return out;
}

void loaded_chase_setup(case_ctx& c) {
  auto st = build_chain(c);
  fill_stream_array(c.ptr<float>(stream_buffer), stream_bytes_for(c.dev) / 4, next_seed());
  MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(c.v->kernels.front().symbol, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         one_cta_per_sm_smem(c.dev)));
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  c.state = st;
}

// The probe's walk, and the bandwidth the generators drew meanwhile.
std::vector<measured_figure> loaded_chase_observe(const case_ctx& c) {
  auto f = walker_observe(c);
  if (c.p[load_ctas_axis] == 0) return f;
  std::vector<generator_out> gens(c.p[load_ctas_axis]);
  MEMLAB_CUDA_CHECK(
      cudaMemcpy(gens.data(), c.ptr(generators_buffer), gens.size() * sizeof(generator_out), cudaMemcpyDeviceToHost));
  double gbps = 0;
  for (const auto& g : gens) gbps += g.ns > 0 ? static_cast<double>(g.bytes) / static_cast<double>(g.ns) : 0.0;
  f.push_back({"load_gbps", gbps, "GB/s"});
  return f;
}

void launch_loaded(const case_ctx& c, cudaStream_t s) {
  const chase_plan& p = state_of(c).plan;
  const int smem = one_cta_per_sm_smem(c.dev);
  touch_if_l2_sized(c, s);
  MEMLAB_CUDA_CHECK(cudaMemsetAsync(c.ptr(flags_buffer), 0, sizeof(loaded_flags), s));
  MEMLAB_CUDA_CHECK(cudaMemsetAsync(c.ptr(generators_buffer), 0, c.buffers[generators_buffer].size(), s));
  loaded_chase_kernel<<<grid_of(c.plan.policy.grid, "hierarchy"), 1024, static_cast<std::size_t>(smem), s>>>(
      c.ptr<std::uint64_t>(starts_buffer), p.warmup, p.steps, p.samples, c.ptr<chase_out>(out_buffer),
      c.ptr<const float4>(stream_buffer), stream_bytes_for(c.dev) / 16, c.ptr<loaded_flags>(flags_buffer),
      c.ptr<generator_out>(generators_buffer));
  MEMLAB_CUDA_CHECK_LAUNCH();
}

const rung_kind loaded_chase_kind{.name = "chase_under_load",
                                  .walks = true,
                                  .refusal = loaded_chase_refusal,
                                  .plan = loaded_chase_plan,
                                  .setup = loaded_chase_setup,
                                  .verify = chase_verify,
                                  .observe = loaded_chase_observe};

// ---- the lab's functions: each the rung's kind's ----

const rung_kind& kind_of(const variant& v) { return *traits(v).kind; }
std::optional<std::string> refusal(const variant& v, const case_params& p, const device_info& dev) {
  return kind_of(v).refusal(v, p, dev);
}
case_plan plan(const variant& v, const case_params& p, const device_info& dev) { return kind_of(v).plan(v, p, dev); }
void setup(case_ctx& c) { kind_of(*c.v).setup(c); }
std::string verify(const case_ctx& c) { return kind_of(*c.v).verify(c); }
std::vector<measured_figure> observe(const case_ctx& c) {
  const rung_kind& k = kind_of(*c.v);
  return k.observe != nullptr ? k.observe(c) : std::vector<measured_figure>{};
}

// The chases, then the streams (stream.cu): the lab's ladder.
std::vector<variant> rungs() {
  std::vector<variant> out{
      {
          .name = "register_chain",
          .teaches = "dependent FFMAs, no memory: what 'registers: 1 cycle' means for a dependent operation",
          .launch = launch_register_chain,
          .kernels = {kernel_ref::of(&register_chain_kernel)},
          .traits = rung_traits{.kind = &register_chain_kind},
      },
      chase_rung<chase_access{.path = load_path::shared}>({
          .name = "chase_shared",
          .teaches = "dependent shared-memory loads (LDS -> LDS): shared memory's latency",
      }),
      chase_rung<chase_access{.path = load_path::l1}>({
          .name = "chase_l1",
          .teaches = "dependent ld.global over a random cycle: L1, then L2, then HBM as the chain outgrows each",
      }),
      chase_rung<chase_access{.path = load_path::l2}>({
          .name = "chase_l2",
          .teaches = "dependent ld.global.cg (past L1): the L2 at every size, then HBM",
      }),
      chase_rung<chase_access{.path = load_path::l1, .order = chase_order::sequential}>({
          .name = "chase_stride",
          .teaches = "the same loads in address order (the classic stride chase): a prefetch- and page-friendly walk",
      }),
      chase_rung<chase_access{.path = load_path::l2, .per_sm = true}>({
          .name = "chase_l2_per_sm",
          .teaches = "the .cg chase on every SM at once, one walker each: each SM's own L2 latency",
      }),
      {
          .name = "loaded_chase",
          .teaches = "the .cg chase on one SM while --load-ctas SMs stream from DRAM: latency under load",
          .launch = launch_loaded,
          .kernels = {kernel_ref::of(&loaded_chase_kernel)},
          .traits = rung_traits{.kind = &loaded_chase_kind, .path = load_path::l2},
      },
  };
  for (variant& v : stream_rungs()) out.push_back(std::move(v));
  return out;
}

std::vector<axis> axes() {
  std::vector<axis> out{stride_axis, steps_axis};
  for (const axis& a : stream_axes()) out.push_back(a);
  out.push_back(load_ctas_axis);
  return out;
}

}  // namespace

// ---- the lab's table ---------------------------------------------------------------------------------------------

const lab& table() {
  static const lab hierarchy_lab{
      .name = "hierarchy",
      .teaches =
          "what each memory level delivers: dependent-load latency (pointer chase), bandwidth against working "
          "set, address translation, L2 partitions, latency under load and Little's law",
      .dtypes = {dtype::f32},
      .default_dtype = dtype::f32,
      .default_sizes = "32KiB,16MiB,256MiB",
      .size_meaning = "f32 elements: a chase's chain is 4n bytes, a stream's arrays 4n bytes each",
      .axes = axes(),
      .roof = roof_kind::l2,
      .variants = rungs(),
      .unsupported = refusal,
      .plan = plan,
      .setup = setup,
      .verify = verify,
      .observe = observe,
      .facts = facts,
  };
  return hierarchy_lab;
}

}  // namespace memlab::labs::hierarchy
