// This GPU <-> another (the peer axis): peer copies by the copy engine, the SMs (loads or stores across the
// link) and memlab::copy, one way or both at once; and the latency of one small access to the peer, by the
// kernels below. NVLink where links join the two GPUs, else the PCIe link the bytes cross (routes.hpp).
#include <cuda_runtime.h>

#include <cuda/atomic>
#include <cuda/ptx>

#include <algorithm>
#include <utility>

#include "harness/error.hpp"
#include "harness/fill.hpp"
#include "labs/transfer/routes.hpp"
#include "memlab/arch/ld_global_cache.cuh"

namespace memlab::labs::transfer {

// ---- the latency of one small access to a peer ---------------------------------------------------
// A chase: one thread loads 8-byte words that each hold the address of the next, in a random cycle
// over the peer's memory (a node every 128 bytes), so every load waits for the one before: the time
// per load is the round trip of a read across the link (NVLink, or PCIe) to the peer's L2 or DRAM.
// L2-only loads (ld.global.cg): the reading GPU keeps none of the peer's lines in its L1. The walk
// goes once around the cycle untimed (the peer's L2 then holds what fits; at most `hops` loads of a
// large cycle), then `hops` loads between two clock readings.
struct probe_words {
  unsigned long long ns = 0, cycles = 0;  // over the timed part
  unsigned long long end = 0;             // the chase: the node it ended on; the ping-pong: rounds done
  unsigned long long timed_out = 0;       // the ping-pong: the other side never answered
};

__global__ void peer_chase_kernel(const std::uint64_t* __restrict__ first, std::uint64_t warm, std::uint64_t hops,
                                  probe_words* out) {
  std::uint64_t at = reinterpret_cast<std::uint64_t>(first);
#pragma unroll 1
  for (std::uint64_t i = 0; i < warm; ++i) at = arch::ld_global_cg_u64(at);  // untimed
  const std::uint64_t t0 = cuda::ptx::get_sreg_globaltimer(), c0 = cuda::ptx::get_sreg_clock64();
#pragma unroll 1
  for (std::uint64_t i = 0; i < hops; ++i) at = arch::ld_global_cg_u64(at);
  const std::uint64_t c1 = cuda::ptx::get_sreg_clock64(), t1 = cuda::ptx::get_sreg_globaltimer();
  out->ns = t1 - t0;
  out->cycles = c1 - c0;
  out->end = at;
}

// A ping-pong: this GPU's thread stores round r into a word of the peer's memory and spins on a word
// of its own until the peer's thread, spinning on its word, has stored r back across the link. Two
// link crossings a round: the one-way latency of a store is a round's time over two. System-scope
// relaxed atomics: a plain load could be hoisted out of the spin, and nothing here needs ordering
// beyond the word itself. Each launch starts by zeroing both words (a kernel on this GPU, ahead of
// both sides), so a launch replayed from a CUDA graph does the same work. Both sides give up after a
// second (the other never started), and the ping says so.
inline constexpr unsigned long long pingpong_rounds = 1024, pingpong_warmup = 32;
inline constexpr std::uint64_t spin_limit_ns = 1'000'000'000;

__device__ bool spin_until(cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> word,
                           unsigned long long value) {
  const std::uint64_t t0 = cuda::ptx::get_sreg_globaltimer();
  while (word.load(cuda::memory_order_relaxed) < value) {
    if (cuda::ptx::get_sreg_globaltimer() - t0 > spin_limit_ns) return false;
  }
  return true;
}

__global__ void reset_flags_kernel(unsigned long long* mine, unsigned long long* theirs) {
  *mine = 0;
  *theirs = 0;
}

__global__ void ping_kernel(unsigned long long* mine, unsigned long long* theirs, unsigned long long first,
                            probe_words* out) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> here(*mine), there(*theirs);
  std::uint64_t t0 = 0, c0 = 0;
  for (unsigned long long r = 1; r <= pingpong_warmup + pingpong_rounds; ++r) {
    if (r == pingpong_warmup + 1) {  // both sides are up: time from here
      t0 = cuda::ptx::get_sreg_globaltimer();
      c0 = cuda::ptx::get_sreg_clock64();
    }
    there.store(first + r, cuda::memory_order_relaxed);
    if (!spin_until(here, first + r)) {
      out->timed_out = 1;
      out->end = r - 1;
      return;
    }
  }
  out->cycles = cuda::ptx::get_sreg_clock64() - c0;
  out->ns = cuda::ptx::get_sreg_globaltimer() - t0;
  out->end = pingpong_warmup + pingpong_rounds;
  out->timed_out = 0;
}

__global__ void pong_kernel(unsigned long long* mine, unsigned long long* theirs, unsigned long long first) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> here(*mine), there(*theirs);
  for (unsigned long long r = 1; r <= pingpong_warmup + pingpong_rounds; ++r) {
    if (!spin_until(here, first + r)) return;
    there.store(first + r, cuda::memory_order_relaxed);
  }
}

std::vector<kernel_ref> chase_kernels() { return {kernel_ref::of(&peer_chase_kernel)}; }
std::vector<kernel_ref> pingpong_kernels() {
  return {kernel_ref::of(&ping_kernel), kernel_ref::of(&pong_kernel), kernel_ref::of(&reset_flags_kernel)};
}

namespace {

// A chase's nodes, one every 128 bytes (a line of their own, so no two share a fetch).
inline constexpr std::uint64_t chase_stride = 128;
inline constexpr std::uint64_t chase_max_hops = std::uint64_t{1} << 14;  // ~20 ms of loads
std::uint64_t chase_nodes_of(std::uint64_t n) { return n / chase_stride + (n % chase_stride >= 8); }

// What a peer case keeps: the other GPU's buffers, the reverse direction's stream; the latency probes'
// cycle (on the peer) and where it must end, the ping-pong's words (one on each GPU), and what the kernels
// measured.
struct peer_state {
  int peer = -1;
  std::unique_ptr<device_buffer> src, dst;  // on the peer
  std::uint64_t seed = 0;                   // the peer's source's random stream
  std::unique_ptr<side_stream> side;        // both ways, ping-pong: the peer's stream
  std::unique_ptr<device_buffer> chase, flag_here, flag_there, probe;
  std::uint64_t chase_nodes = 0, chase_hops = 0, chase_end = 0;
};

peer_state& state_of(const case_ctx& c) { return state_as<peer_state>(c); }

int peer_of(const case_params& p) { return static_cast<int>(p[peer_axis]); }

void launch_copy(const case_ctx& c, cudaStream_t s) {
  auto& st = state_of(c);
  const rung_traits& t = traits(*c.v);
  const std::uint64_t n = c.p.n, grid = c.plan.policy.grid;
  const auto push = [&](cudaStream_t on) {  // this GPU's source -> the peer's destination
    if (t.how == engine::copy_engine) {
      if (n > 0)
        MEMLAB_CUDA_CHECK(cudaMemcpyPeerAsync(st.dst->data(), st.peer, c.ptr(src_buffer), c.dev.ordinal, n, on));
    } else {
      copy_by(t.how, n, grid, st.dst->data(), st.dst->data(), c.ptr(src_buffer), c.ptr(src_buffer), on);
    }
  };
  const auto pull = [&](cudaStream_t on) {  // the peer's source -> this GPU's destination
    if (t.how == engine::copy_engine) {
      if (n > 0)
        MEMLAB_CUDA_CHECK(cudaMemcpyPeerAsync(c.ptr(dst_buffer), c.dev.ordinal, st.src->data(), st.peer, n, on));
    } else {
      copy_by(t.how, n, grid, c.ptr(dst_buffer), c.ptr(dst_buffer), st.src->data(), st.src->data(), on);
    }
  };
  switch (t.way) {
    case peer_way::push: push(s); break;
    case peer_way::pull: pull(s); break;
    case peer_way::both: {
      // Each GPU pushes: this one on `s`, the peer on its own stream (its copy engine or its SMs),
      // forked before this push so that the two run at once.
      const cudaStream_t other = st.side->begin(s);
      push(s);
      {
        const current_device peer(st.peer);
        pull(other);
      }
      st.side->end(s);
      break;
    }
    case peer_way::none: break;
  }
}

// The latency probes: one thread on this GPU (and, for the ping-pong, one on the peer, on its own
// stream forked from `s` so that both run at once inside one timed launch).
void launch_probe(const case_ctx& c, cudaStream_t s) {
  auto& st = state_of(c);
  auto* out = reinterpret_cast<probe_words*>(st.probe->data());
  if (traits(*c.v).probe == peer_probe::chase) {
    peer_chase_kernel<<<1, 1, 0, s>>>(reinterpret_cast<const std::uint64_t*>(st.chase->data()), st.chase_hops,
                                      st.chase_hops, out);
    MEMLAB_CUDA_CHECK_LAUNCH();
    return;
  }
  auto* here = reinterpret_cast<unsigned long long*>(st.flag_here->data());
  auto* there = reinterpret_cast<unsigned long long*>(st.flag_there->data());
  reset_flags_kernel<<<1, 1, 0, s>>>(here, there);
  MEMLAB_CUDA_CHECK_LAUNCH();
  const unsigned long long first = 0;
  const cudaStream_t other = st.side->begin(s);
  {
    const current_device peer(st.peer);
    pong_kernel<<<1, 1, 0, other>>>(there, here, first);
    MEMLAB_CUDA_CHECK_LAUNCH();
  }
  ping_kernel<<<1, 1, 0, s>>>(here, there, first, out);
  MEMLAB_CUDA_CHECK_LAUNCH();
  st.side->end(s);
}

void launch(const case_ctx& c, cudaStream_t s) {
  if (traits(*c.v).probe == peer_probe::copy) {
    launch_copy(c, s);
  } else {
    launch_probe(c, s);
  }
}

std::optional<std::string> refusal(const variant& v, const case_params& p, const device_info& dev) {
  const int peer = peer_of(p);
  if (dev.device_count < 2) return "peer rungs need 2 GPUs; this machine shows " + std::to_string(dev.device_count);
  if (peer == dev.ordinal) return "--peer " + std::to_string(peer) + " is this GPU (--device)";
  if (peer >= dev.device_count) {
    return "no GPU " + std::to_string(peer) + ": this machine shows " + std::to_string(dev.device_count);
  }
  if (traits(v).probe == peer_probe::chase && p.n < 8) return std::string("a chase needs at least one 8-byte node");
  // What the driver said when the device was opened (empty for a device made up on the host).
  if (static_cast<std::size_t>(peer) < dev.peer_access.size() && !dev.peer_access[static_cast<std::size_t>(peer)]) {
    return "GPU " + std::to_string(dev.ordinal) + " cannot access GPU " + std::to_string(peer) +
           "'s memory (cudaDeviceCanAccessPeer: no peer access between them)";
  }
  return std::nullopt;
}

case_plan plan(const variant& v, const case_params& p, const device_info& dev) {
  const rung_traits& t = traits(v);
  const std::uint64_t n = p.n;
  const int peer = peer_of(p);
  case_plan out;
  if (t.how == engine::sm) out.policy = {sm_threads, sm_unroll, 16, 0, sm_grid(n, dev.sm_count)};
  // NVLink where links join the two GPUs (through an NVSwitch, every GPU on it at the GPU's full rate;
  // else the links that go straight to the peer, by its bus id), else the PCIe link the bytes cross.
  out.roof = dev.nvlink_gbps > 0 ? roof_kind::nvlink : roof_kind::pcie;
  if (dev.nvlink_gbps > 0 && !dev.nvlink_switch) {
    const bool known = static_cast<std::size_t>(peer) < dev.bus_ids.size();
    const auto links =
        known ? std::count(dev.nvlink_gpus.begin(), dev.nvlink_gpus.end(), dev.bus_ids[static_cast<std::size_t>(peer)])
              : 0;
    if (links == 0) {
      out.roof = roof_kind::pcie;
    } else {
      out.link_gbps = static_cast<double>(links) * dev.nvlink_link_gbps;
    }
  }
  out.transient_bytes = 0;  // the peer's buffers are on the peer
  if (t.probe != peer_probe::copy) {
    // A latency: what the loads or stores move is beside the point; the bytes read (8 a load) or
    // stored are declared all the same, and the figures are the kernels' own (observe).
    const std::uint64_t hops =
        t.probe == peer_probe::chase ? std::min(chase_nodes_of(n), chase_max_hops) : 2 * pingpong_rounds;
    out.bytes = 8 * hops;
    out.working_set = t.probe == peer_probe::chase ? n : 16;
    out.buffers = {{"src", 0, buffer_role::input}, {"dst", 0, buffer_role::output}};
    out.policy = {1, 1, 8, 0, 1};
    return out;
  }
  out.directions = peer_directions(t.way, dev.ordinal, peer, n);
  out.buffers = {{"src", t.way == peer_way::pull ? 0 : n, buffer_role::input},
                 {"dst", t.way == peer_way::push ? 0 : n, buffer_role::output}};
  for (const auto& d : out.directions) out.bytes += d.bytes;
  out.working_set = out.bytes;
  return out;
}

// Both ways: this GPU's SMs load or store the other GPU's memory, the peer's own push needs it too.
void enable_peer_access(int self, int peer) {
  for (const auto& [from, to] : {std::pair{self, peer}, std::pair{peer, self}}) {
    const current_device on(from);
    const cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
    if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) MEMLAB_CUDA_CHECK(e);
    (void)cudaGetLastError();
  }
}

// A random cycle through `nodes` nodes `chase_stride` bytes apart, laid out at `base` (the peer's
// address): node k holds the address of the node after it. Returns the bytes and where a walk of
// 2 x `hops` loads (the untimed pass and the timed one) from the first node ends.
std::pair<std::vector<std::uint64_t>, std::uint64_t> chase_cycle(std::uint64_t base, std::uint64_t nodes,
                                                                 std::uint64_t hops, std::uint64_t seed) {
  std::vector<std::uint64_t> order(nodes);
  for (std::uint64_t k = 0; k < nodes; ++k) order[k] = k;
  std::uint64_t x = seed | 1;
  for (std::uint64_t k = nodes; k > 1; --k) {  // Fisher-Yates with a xorshift: a single cycle (Sattolo)
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    std::swap(order[k - 1], order[x % (k - 1)]);
  }
  const std::uint64_t words = chase_stride / 8;
  std::vector<std::uint64_t> image(nodes * words, 0);
  std::vector<std::uint64_t> next(nodes);
  for (std::uint64_t k = 0; k < nodes; ++k) next[order[k]] = order[(k + 1) % nodes];
  for (std::uint64_t k = 0; k < nodes; ++k) image[k * words] = base + next[k] * chase_stride;
  std::uint64_t at = 0;
  for (std::uint64_t i = 0; i < (2 * hops) % nodes; ++i) at = next[at];
  return {std::move(image), base + at * chase_stride};
}

// The peer's buffers, filled here once: their seed is fixed for the case (the harness refreshes only its
// own inputs at every reset).
void setup(case_ctx& c) {
  auto st = std::make_shared<peer_state>();
  const rung_traits& t = traits(*c.v);
  const std::uint64_t n = c.p.n;
  st->peer = peer_of(c.p);
  enable_peer_access(c.dev.ordinal, st->peer);
  st->probe = std::make_unique<device_buffer>(sizeof(probe_words));
  MEMLAB_CUDA_CHECK(cudaMemset(st->probe->data(), 0, sizeof(probe_words)));
  const current_device on(st->peer);
  if (t.probe == peer_probe::chase) {
    st->chase_nodes = chase_nodes_of(n);
    st->chase_hops = std::min(st->chase_nodes, chase_max_hops);
    st->chase = std::make_unique<device_buffer>(st->chase_nodes * chase_stride);
    auto [image, end] =
        chase_cycle(reinterpret_cast<std::uint64_t>(st->chase->data()), st->chase_nodes, st->chase_hops, next_seed());
    st->chase_end = end;
    MEMLAB_CUDA_CHECK(cudaMemcpy(st->chase->data(), image.data(), image.size() * 8, cudaMemcpyHostToDevice));
  } else if (t.probe == peer_probe::ping_pong) {
    st->flag_there = std::make_unique<device_buffer>(256);  // a line of its own
    MEMLAB_CUDA_CHECK(cudaMemset(st->flag_there->data(), 0, 256));
    {
      const current_device home(c.dev.ordinal);
      st->flag_here = std::make_unique<device_buffer>(256);
      MEMLAB_CUDA_CHECK(cudaMemset(st->flag_here->data(), 0, 256));
    }
    st->side = std::make_unique<side_stream>(c.dev.ordinal, st->peer);
  } else {
    if (t.way != peer_way::push) {
      st->src = std::make_unique<device_buffer>(n);
      st->seed = next_seed();
      fill_random(st->src->data(), n, st->seed, nullptr);
    }
    if (t.way != peer_way::pull) {
      st->dst = std::make_unique<device_buffer>(n + guard_bytes);
      MEMLAB_CUDA_CHECK(cudaMemset(st->dst->data(), poison_byte, n + guard_bytes));
    }
    if (t.way == peer_way::both) st->side = std::make_unique<side_stream>(c.dev.ordinal, st->peer);
  }
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  c.state = std::move(st);
}

probe_words read_probe(const peer_state& st) {
  probe_words w;
  MEMLAB_CUDA_CHECK(cudaMemcpy(&w, st.probe->data(), sizeof w, cudaMemcpyDeviceToHost));
  return w;
}

std::string verify(const case_ctx& c) {
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  auto& st = state_of(c);
  const rung_traits& t = traits(*c.v);
  const std::uint64_t n = c.p.n;
  if (t.probe == peer_probe::chase) {
    if (read_probe(st).end != st.chase_end)
      return "the chase ended on another node than the cycle's: a load went astray";
    return {};
  }
  if (t.probe == peer_probe::ping_pong) {
    const probe_words w = read_probe(st);
    if (w.timed_out != 0 || w.end != pingpong_warmup + pingpong_rounds) {
      return "the ping-pong stopped after " + std::to_string(w.end) + " of " +
             std::to_string(pingpong_warmup + pingpong_rounds) + " rounds: the peer's answer never came";
    }
    return {};
  }
  if (t.way != peer_way::pull) {
    const current_device peer(st.peer);  // the check runs where the bytes are
    if (auto e = check_copy(*st.dst, n, c.seeds[src_buffer]); !e.empty()) return "on the peer: " + e;
  }
  if (t.way != peer_way::push) {
    if (auto e = check_copy(c.buffers[dst_buffer], n, st.seed); !e.empty()) return "from the peer: " + e;
  }
  return {};
}

// What the latency probes measured during their last launch.
std::vector<measured_figure> observe(const case_ctx& c) {
  const rung_traits& t = traits(*c.v);
  if (t.probe == peer_probe::copy) return {};
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  const probe_words w = read_probe(state_of(c));
  const auto per = [](unsigned long long total, double count) { return static_cast<double>(total) / count; };
  if (t.probe == peer_probe::chase) {
    const auto hops = static_cast<double>(state_of(c).chase_hops);
    return {{"ns_per_load", per(w.ns, hops), "ns"}, {"cycles_per_load", per(w.cycles, hops), "cycles"}};
  }
  const auto crossings = 2.0 * static_cast<double>(pingpong_rounds);  // two a round
  return {{"ns_one_way", per(w.ns, crossings), "ns"}, {"cycles_one_way", per(w.cycles, crossings), "cycles"}};
}

}  // namespace

const route_ops peer_route{
    .launch = launch, .refusal = refusal, .plan = plan, .setup = setup, .verify = verify, .observe = observe};

}  // namespace memlab::labs::transfer
