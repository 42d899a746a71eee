// The transfer lab: bytes that leave the GPU's own memory. Host <-> device over PCIe (pageable,
// pinned, registered and write-combined host memory; the copy engines against the SMs reading or
// writing mapped host memory), GPU <-> GPU peer copies and the latency of one small access to a
// peer, and NCCL's collectives: one process driving every GPU, or one process per GPU (a rank of a
// distributed run, harness/world.hpp), each timed cold and by nccl-tests' own method.
//
// Assumes: host buffers are page-aligned (4 KiB) and device buffers 256-byte aligned, so every
// SM copy here moves 16-byte vectors from its first byte; a size that is not a multiple of 16 ends
// in a byte-wise tail. Bytes are counted once per direction (a 1 GiB host-to-device copy moves
// 1 GiB; bidirectional moves 1 GiB each way, 2 GiB in all), as nvbandwidth counts them.
//
// Reading order: the CPU reference, the SM copy kernel, the host memory kinds, the rungs'
// launchers (host, peer, NCCL), plans, refusals and checks, then the lab's table at the end.
#include <cuda_runtime.h>

#include <cuda/atomic>
#include <cuda/ptx>

#include <algorithm>
#include <thread>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "harness/check.hpp"
#include "harness/error.hpp"
#include "harness/fill.hpp"
#include "harness/lab.hpp"
#include "harness/launch.cuh"
#include "harness/world.hpp"
#include "labs/transfer/transfer.hpp"
#include "memlab/arch/ld_global_cache.cuh"
#include "memlab/copy.cuh"
#include "memlab/vector.cuh"

#if MEMLAB_HAVE_NCCL
#include <nccl.h>
#endif

namespace memlab::labs::transfer {

// ---- the CPU reference ----------------------------------------------------------------------------

// A transfer's destination byte j is its source byte j; every source holds the random stream of a
// seed from its first byte. (The collectives' reference is source_of() in model.cpp.)
std::uint8_t reference_byte(std::uint64_t seed, std::uint64_t j) { return random_byte(seed, j); }

// ---- checks on the GPU -------------------------------------------------------------------------------------
// A collective's outputs, or a peer copy's, run to gigabytes: the host would take seconds a case to
// replay them. The same reference runs here on the GPU, over the whole allocation (the poisoned guard
// after an output too), and finds the first byte that differs; the host then writes the message.
inline constexpr int max_checked_ranks = 64;
inline constexpr std::uint64_t no_mismatch = ~std::uint64_t{0};

// What byte `pos` of an allocation must hold.
struct expected_bytes {
  // a copy: the random stream of seeds[0] for [0, payload), poison after
  // a collective: rank `rank`'s output (source_of over the ranks' seeds), at [recv_from, recv_to)
  //   of its allocation; out of place the rest is the poisoned guard, in place it is rank's input
  bool collective_output = false;
  collective op = collective::none;
  std::uint64_t n = 0, payload = 0, recv_from = 0, recv_to = 0, send_step = 0;
  int ranks = 1, rank = 0;
  bool in_place = false;
  std::uint64_t seeds[max_checked_ranks] = {};

  MEMLAB_HOST_DEVICE std::uint8_t operator()(std::uint64_t pos) const {
    if (!collective_output) return pos < payload ? random_byte(seeds[0], pos) : poison_byte;
    if (pos < recv_from || pos >= recv_to) return in_place ? random_byte(seeds[rank], pos) : poison_byte;
    const source_bytes from = source_of(op, n, ranks, rank, pos - recv_from);
    unsigned sum = 0;
    for (int k = from.first_rank; k < from.first_rank + from.ranks; ++k) {
      sum += random_byte(seeds[k], (in_place ? send_step * static_cast<std::uint64_t>(k) : 0) + from.byte);
    }
    return static_cast<std::uint8_t>(sum);  // u8 sums wrap: exact in any order
  }
};

__global__ void check_bytes_kernel(const std::uint8_t* __restrict__ out, std::uint64_t bytes, expected_bytes e,
                                   unsigned long long* first_bad) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t pos = global_thread(); pos < bytes; pos += stride) {
    if (out[pos] != e(pos)) {
      atomicMin(first_bad, static_cast<unsigned long long>(pos));
      return;
    }
  }
}

// "" when every byte of `out` is what `e` says, else the first that differs, as check_bytes words it.
std::string check_on_gpu(const device_buffer& out, const expected_bytes& e, std::uint64_t payload_end) {
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  if (out.size() == 0) return {};
  device_buffer first(sizeof(unsigned long long));
  MEMLAB_CUDA_CHECK(cudaMemset(first.data(), 0xff, sizeof(unsigned long long)));
  int device = 0, sms = 0;
  MEMLAB_CUDA_CHECK(cudaGetDevice(&device));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const auto grid = static_cast<unsigned>(std::clamp<std::uint64_t>((out.size() + 255) / 256, 1, 8ull * sms));
  check_bytes_kernel<<<grid, 256>>>(reinterpret_cast<const std::uint8_t*>(out.data()), out.size(), e,
                                    reinterpret_cast<unsigned long long*>(first.data()));
  MEMLAB_CUDA_CHECK_LAUNCH();
  unsigned long long bad = 0;
  MEMLAB_CUDA_CHECK(cudaMemcpy(&bad, first.data(), sizeof bad, cudaMemcpyDeviceToHost));
  if (bad == no_mismatch) return {};
  std::uint8_t have = 0;
  MEMLAB_CUDA_CHECK(cudaMemcpy(&have, out.data() + bad, 1, cudaMemcpyDeviceToHost));
  const unsigned got = have, want = e(bad);
  if (bad >= payload_end) {
    return "out-of-bounds store: byte " + std::to_string(bad - payload_end) + " past the end of the output was written (" +
           hex_byte(got) + ")";
  }
  return "byte " + std::to_string(bad) + " is " + hex_byte(got) + ", expected " + hex_byte(want) +
         (got == poison_byte ? ": never written" : "");
}

// ---- the SM copy ----------------------------------------------------------------------------------
// One kernel for every SM rung: host -> device reads mapped host memory (each 16-byte load becomes
// a PCIe read request the GPU issues; the reply carries the data), device -> host writes it (posted
// writes: no reply to wait for), peer rungs read or write the other GPU's memory over NVLink.
// A thread keeps Unroll 16-byte vectors in flight: a read of host memory takes about a microsecond,
// and 55 GB/s x 1 us = 55 KB must be in flight across the GPU to cover it; the grid (8 CTAs of 256
// threads per SM x 4 x 16 B) holds about 17 MB on an H100, far more than enough.
inline constexpr int sm_threads = 256;
inline constexpr int sm_unroll = 4;
inline constexpr int sm_ctas_per_sm = 8;

template <int Unroll>
__global__ void __launch_bounds__(sm_threads)
    sm_copy_kernel(std::byte* __restrict__ dst, const std::byte* __restrict__ src, std::uint64_t n) {
  using vec = vector_t<16>;
  const std::uint64_t vectors = n / 16;
  const auto* s = reinterpret_cast<const vec*>(src);
  auto* d = reinterpret_cast<vec*>(dst);
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  std::uint64_t i = global_thread();
  // All Unroll loads issue before the first store.
  for (; i + (Unroll - 1) * stride < vectors; i += Unroll * stride) {
    vec r[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) r[u] = s[i + u * stride];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) d[i + u * stride] = r[u];
  }
#pragma unroll 1
  for (; i < vectors; i += stride) d[i] = s[i];
  if (global_thread() == 0) {
#pragma unroll 1
    for (std::uint64_t b = vectors * 16; b < n; ++b) dst[b] = src[b];
  }
}

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

namespace {

// ---- host memory ----------------------------------------------------------------------------------
//   pageable        malloc'd (page-aligned): the copy engines cannot reach it. The driver copies
//                   through its own pinned staging buffers, chunk by chunk, with the CPU doing
//                   a memcpy for every chunk. Kernels cannot reach it (without HMM).
//   pinned          cudaMallocHost: page-locked and mapped into the device's address space: DMA
//                   reads and writes it directly, kernels load and store it (zero-copy).
//   registered      malloc'd memory page-locked afterwards with cudaHostRegister (mapped): what a
//                   library does with a buffer it did not allocate.
//   write_combined  cudaHostAlloc(WriteCombined): not cached by the CPU, so a CPU's writes stream
//                   out without reads for ownership, while a CPU's reads are very slow; the GPU
//                   sees ordinary pinned memory.
// Every host buffer is touched (written) when allocated, before anything is timed: the first touch
// of a pageable page is a page fault and a zeroing by the kernel, which would land in the first
// sample otherwise.
class host_buffer {
 public:
  host_buffer(host_memory kind, std::size_t bytes) : kind_(kind), bytes_(bytes) {
    const std::size_t rounded = std::max<std::size_t>((bytes + 4095) / 4096 * 4096, 4096);
    switch (kind) {
      case host_memory::pageable:
      case host_memory::registered:
        p_ = static_cast<std::byte*>(std::aligned_alloc(4096, rounded));
        if (p_ == nullptr) throw std::bad_alloc();
        std::memset(p_, 0, rounded);  // the first touch, here
        if (kind == host_memory::registered) {
          MEMLAB_CUDA_CHECK(cudaHostRegister(p_, rounded, cudaHostRegisterMapped | cudaHostRegisterPortable));
        }
        break;
      case host_memory::pinned:
        MEMLAB_CUDA_CHECK(
            cudaHostAlloc(reinterpret_cast<void**>(&p_), rounded, cudaHostAllocMapped | cudaHostAllocPortable));
        std::memset(p_, 0, rounded);
        break;
      case host_memory::write_combined:
        MEMLAB_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&p_), rounded,
                                        cudaHostAllocWriteCombined | cudaHostAllocMapped | cudaHostAllocPortable));
        std::memset(p_, 0, rounded);
        break;
    }
    if (kind != host_memory::pageable)
      MEMLAB_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), p_, 0));
  }
  ~host_buffer() {
    switch (kind_) {
      case host_memory::pageable: std::free(p_); break;
      case host_memory::registered:
        MEMLAB_CUDA_CHECK_NOEXCEPT(cudaHostUnregister(p_));
        std::free(p_);
        break;
      case host_memory::pinned:
      case host_memory::write_combined: MEMLAB_CUDA_CHECK_NOEXCEPT(cudaFreeHost(p_)); break;
    }
  }
  host_buffer(const host_buffer&) = delete;
  host_buffer& operator=(const host_buffer&) = delete;

  [[nodiscard]] std::byte* host() const { return p_; }
  // The address a kernel uses (mapped memory); nullptr for pageable memory.
  [[nodiscard]] std::byte* device() const { return device_; }
  [[nodiscard]] std::size_t size() const { return bytes_; }

 private:
  host_memory kind_;
  std::size_t bytes_;
  std::byte* p_ = nullptr;
  std::byte* device_ = nullptr;
};

// A second stream (on `device`) forked from and joined back into the case's stream: what lets the
// two directions of a bidirectional case, or the ranks of a collective, run at once inside one
// timed launch (and inside one CUDA graph: a capture follows the fork and the join).
struct side_stream {
  int device = 0;
  std::unique_ptr<cuda_stream> stream;
  std::unique_ptr<cuda_event> fork, join;

  // `home`: the device of the case's stream.
  side_stream(int home, int on) : device(on) {
    MEMLAB_CUDA_CHECK(cudaSetDevice(home));
    fork = std::make_unique<cuda_event>();
    MEMLAB_CUDA_CHECK(cudaSetDevice(on));
    stream = std::make_unique<cuda_stream>();
    join = std::make_unique<cuda_event>();
    MEMLAB_CUDA_CHECK(cudaSetDevice(home));
  }
  cudaStream_t begin(cudaStream_t s) {
    fork->record(s);
    MEMLAB_CUDA_CHECK(cudaStreamWaitEvent(stream->get(), fork->get(), 0));
    return stream->get();
  }
  void end(cudaStream_t s) {
    join->record(stream->get());
    MEMLAB_CUDA_CHECK(cudaStreamWaitEvent(s, join->get(), 0));
  }
};

// Sets the current device for a scope, and back.
struct on_device {
  int previous = 0;
  explicit on_device(int d) {
    MEMLAB_CUDA_CHECK(cudaGetDevice(&previous));
    MEMLAB_CUDA_CHECK(cudaSetDevice(d));
  }
  ~on_device() { MEMLAB_CUDA_CHECK_NOEXCEPT(cudaSetDevice(previous)); }
  on_device(const on_device&) = delete;
  on_device& operator=(const on_device&) = delete;
};

#if MEMLAB_HAVE_NCCL
#define MEMLAB_NCCL_CHECK(expr)                                                              \
  do {                                                                                       \
    const ncclResult_t memlab_nccl_rc = (expr);                                              \
    if (memlab_nccl_rc != ncclSuccess) {                                                     \
      throw std::runtime_error(std::string(__FILE__) + ":" + std::to_string(__LINE__) +      \
                               ": " #expr " failed: " + ncclGetErrorString(memlab_nccl_rc)); \
    }                                                                                        \
  } while (0)

// Device memory as nccl-tests allocates its buffers (ncclMemAlloc, NCCL >= 2.19: cuMem memory NCCL can
// register when a CUDA graph captures a collective, so a captured loop over it may move its bytes
// without NCCL's own staging buffers, as nccl-tests -G does; memory from cudaMalloc is not registered
// there). On the current device.
class nccl_memory {
 public:
  explicit nccl_memory(std::size_t bytes) : bytes_(bytes) {
    if (bytes > 0) MEMLAB_NCCL_CHECK(ncclMemAlloc(&ptr_, bytes));
  }
  nccl_memory(nccl_memory&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  nccl_memory& operator=(nccl_memory&&) = delete;
  nccl_memory(const nccl_memory&) = delete;
  nccl_memory& operator=(const nccl_memory&) = delete;
  ~nccl_memory() {
    if (ptr_ != nullptr) (void)ncclMemFree(ptr_);
  }
  [[nodiscard]] std::byte* data() const noexcept { return static_cast<std::byte*>(ptr_); }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};
using loop_memory = nccl_memory;
#else
using loop_memory = device_buffer;
#endif

#if MEMLAB_HAVE_NCCL
// One communicator per GPU set for the process's life: ncclCommInitAll costs a second or more, a
// case milliseconds. Never destroyed (the process ends with them).
const std::vector<ncclComm_t>& communicators(const std::vector<int>& devices) {
  static std::map<std::vector<int>, std::vector<ncclComm_t>> cache;
  auto it = cache.find(devices);
  if (it == cache.end()) {
    // NVLink multicast stays off also where no runner set it (tests): unless the user set it.
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    std::vector<ncclComm_t> comms(devices.size());
    MEMLAB_NCCL_CHECK(ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()));
    it = cache.emplace(devices, std::move(comms)).first;
  }
  return it->second;
}
#endif

// What a case's setup keeps (case_ctx::state holds a shared_ptr to it: std::any needs a copy).
struct transfer_state {
  // host rungs
  std::unique_ptr<host_buffer> host_src, host_dst;
  std::uint64_t host_seed = 0;
  // peer rungs: the other GPU's buffers, its source's stream; the reverse direction's stream
  int peer = -1;
  std::unique_ptr<device_buffer> peer_src, peer_dst;
  std::uint64_t peer_seed = 0;
  std::vector<std::unique_ptr<side_stream>> sides;  // bidir, ping-pong: one; collectives: one per other rank
  // latency probes: the chase's cycle (on the peer) and where it must end; the ping-pong's words (one
  // on each GPU) and its launches so far; what the kernels measured
  std::unique_ptr<device_buffer> chase, flag_here, flag_there, probe;
  std::uint64_t chase_nodes = 0, chase_hops = 0, chase_end = 0;
  // collectives, one process: rank r >= 1's devices, buffers and seeds (rank 0 is the case's own)
  std::vector<int> devices;
  std::vector<device_buffer> rank_send, rank_recv;
  std::vector<std::uint64_t> rank_seed;
  // nccl-tests' method: each rank's own stream (one in a distributed run), and the buffers its loop
  // rotates through, allocated as nccl-tests allocates them (loop_memory): nccl-tests moves every
  // iteration's buffers `region` bytes on (its `shift`), over as many regions as its largest size
  // holds; here up to 20 (its iterations) within 1 GiB a buffer, at least one.
  std::vector<std::unique_ptr<cuda_stream>> loop_streams;
  std::vector<loop_memory> loop_send, loop_recv;  // per rank (this rank alone in a distributed run)
  std::uint64_t loop_regions = 1, loop_region = 0;
};

transfer_state& state_of(const case_ctx& c) { return *std::any_cast<const std::shared_ptr<transfer_state>&>(c.state); }

const rung_traits& traits(const variant& v) { return v.traits_as<rung_traits>(); }

// ---- axes ----------------------------------------------------------------------------------------------

const axis direction_axis{.name = "direction",
                          .meaning = "host <-> device: h2d, d2h, or bidir (both at once)",
                          .grammar = axis_grammar::words,
                          .defaults = "h2d,d2h,bidir",
                          .words = {"h2d", "d2h", "bidir"}};
const axis host_memory_axis{.name = "host_memory",
                            .meaning =
                                "the host buffer: pageable (malloc), pinned (cudaMallocHost), registered "
                                "(cudaHostRegister), write_combined (cudaHostAllocWriteCombined)",
                            .grammar = axis_grammar::words,
                            .defaults = "pageable,pinned",
                            .words = {"pageable", "pinned", "registered", "write_combined"}};
const axis peer_axis{.name = "peer",
                     .meaning = "peer rungs: the other GPU's ordinal (this one is --device); all: every other GPU",
                     .unit = "device ordinal",
                     .grammar = axis_grammar::counts,
                     .defaults = "1",
                     .min = 0,
                     .max = 63,
                     .other_gpus = true};
const axis gpus_axis{.name = "gpus",
                     .meaning =
                         "collectives: GPUs (ranks), one process driving all, from --device on (a run of one "
                         "process per GPU: its world size)",
                     .unit = "GPUs",
                     .defaults = "2",
                     .min = 1,
                     .max = 64};
const axis placement_axis{.name = "placement",
                          .meaning =
                              "collectives: the output in its own buffer (out_of_place) or over the input "
                              "(in_place), nccl-tests' two columns",
                          .grammar = axis_grammar::words,
                          .defaults = "out_of_place,in_place",
                          .words = {"out_of_place", "in_place"}};

direction dir_of(const case_params& p) { return static_cast<direction>(p[direction_axis]); }
host_memory memory_of(const case_params& p) { return static_cast<host_memory>(p[host_memory_axis]); }
bool in_place(const case_params& p) { return static_cast<placement>(p[placement_axis]) == placement::in_place; }

enum buffer_index { src_buffer, dst_buffer };

// ---- the copies, by engine ---------------------------------------------------------------------------------

std::uint64_t sm_grid(std::uint64_t n, int sm_count) {
  const std::uint64_t per_cta = std::uint64_t{sm_threads} * sm_unroll * 16;
  const std::uint64_t most = static_cast<std::uint64_t>(std::max(sm_count, 1)) * sm_ctas_per_sm;
  return std::clamp<std::uint64_t>((n + per_cta - 1) / per_cta, 1, most);
}

// dst <- src, n bytes, by the rung's engine. `dst_dev`/`src_dev`: the addresses a kernel uses
// (mapped host memory); dst/src the ones cudaMemcpy takes.
void copy_by(const case_ctx& c, engine how, std::byte* dst, std::byte* dst_dev, const std::byte* src,
             const std::byte* src_dev, cudaStream_t s) {
  const std::uint64_t n = c.p.n;
  if (n == 0) return;
  switch (how) {
    case engine::copy_engine: MEMLAB_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s)); break;
    case engine::sm:
      sm_copy_kernel<sm_unroll><<<grid_of(c.plan.policy.grid, "transfer"), sm_threads, 0, s>>>(dst_dev, src_dev, n);
      MEMLAB_CUDA_CHECK_LAUNCH();
      break;
    case engine::library: MEMLAB_CUDA_CHECK(memlab::copy_bytes(dst_dev, src_dev, n, s)); break;
    case engine::nccl: throw std::logic_error("transfer: an NCCL rung has no copy");
  }
}

// ---- host <-> device ---------------------------------------------------------------------------------------

void launch_host(const case_ctx& c, cudaStream_t s) {
  auto& st = state_of(c);
  const engine how = traits(*c.v).how;
  const auto h2d = [&](cudaStream_t on) {
    copy_by(c, how, c.ptr(dst_buffer), c.ptr(dst_buffer), st.host_src->host(), st.host_src->device(), on);
  };
  const auto d2h = [&](cudaStream_t on) {
    copy_by(c, how, st.host_dst->host(), st.host_dst->device(), c.ptr(src_buffer), c.ptr(src_buffer), on);
  };
  switch (dir_of(c.p)) {
    case direction::h2d: h2d(s); break;
    case direction::d2h: d2h(s); break;
    case direction::bidir: {
      // Fork first: the side stream must not wait behind the h2d copy (the fork event is recorded
      // where it is enqueued, so after h2d it would serialize the two directions).
      const cudaStream_t other = st.sides[0]->begin(s);
      h2d(s);
      d2h(other);
      st.sides[0]->end(s);
      break;
    }
  }
}

// ---- GPU <-> GPU ----------------------------------------------------------------------------------------------

void launch_peer(const case_ctx& c, cudaStream_t s) {
  auto& st = state_of(c);
  const rung_traits& t = traits(*c.v);
  const auto push = [&](cudaStream_t on) {  // this GPU's source -> the peer's destination
    if (t.how == engine::copy_engine) {
      if (c.p.n > 0) {
        MEMLAB_CUDA_CHECK(
            cudaMemcpyPeerAsync(st.peer_dst->data(), st.peer, c.ptr(src_buffer), c.dev.ordinal, c.p.n, on));
      }
    } else {
      copy_by(c, t.how, st.peer_dst->data(), st.peer_dst->data(), c.ptr(src_buffer), c.ptr(src_buffer), on);
    }
  };
  const auto pull = [&](cudaStream_t on) {  // the peer's source -> this GPU's destination
    if (t.how == engine::copy_engine) {
      if (c.p.n > 0) {
        MEMLAB_CUDA_CHECK(
            cudaMemcpyPeerAsync(c.ptr(dst_buffer), c.dev.ordinal, st.peer_src->data(), st.peer, c.p.n, on));
      }
    } else {
      copy_by(c, t.how, c.ptr(dst_buffer), c.ptr(dst_buffer), st.peer_src->data(), st.peer_src->data(), on);
    }
  };
  switch (t.way) {
    case peer_way::push: push(s); break;
    case peer_way::pull: pull(s); break;
    case peer_way::both: {
      // Each GPU pushes: this one on `s`, the peer on its own stream (its copy engine or its SMs),
      // forked before this push so that the two run at once.
      const cudaStream_t other = st.sides[0]->begin(s);
      push(s);
      {
        on_device peer(st.peer);
        pull(other);
      }
      st.sides[0]->end(s);
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
  const cudaStream_t other = st.sides[0]->begin(s);
  {
    on_device peer(st.peer);
    pong_kernel<<<1, 1, 0, other>>>(there, here, first);
    MEMLAB_CUDA_CHECK_LAUNCH();
  }
  ping_kernel<<<1, 1, 0, s>>>(here, there, first, out);
  MEMLAB_CUDA_CHECK_LAUNCH();
  st.sides[0]->end(s);
}

// ---- NCCL collectives -------------------------------------------------------------------------------------------

#if MEMLAB_HAVE_NCCL
// Rank `rank` of `ranks`: its collective on its stream, nccl-tests' calls for size S (model.cpp:
// buffers_of), out of place or in place. Returns NCCL's result: a rank of a distributed run (a
// non-blocking communicator) may get ncclInProgress, which the world settles.
ncclResult_t collective_call(collective op, std::byte* send, std::byte* recv, std::uint64_t size, int ranks, int rank,
                             ncclComm_t comm, cudaStream_t s) {
  const std::size_t share = size / static_cast<std::uint64_t>(ranks);
  switch (op) {
    case collective::all_reduce: return ncclAllReduce(send, recv, size, ncclUint8, ncclSum, comm, s);
    case collective::all_gather: return ncclAllGather(send, recv, share, ncclUint8, comm, s);
    case collective::reduce_scatter: return ncclReduceScatter(send, recv, share, ncclUint8, ncclSum, comm, s);
    case collective::broadcast: return ncclBroadcast(send, recv, size, ncclUint8, 0, comm, s);
    case collective::all_to_all: {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
      // As nccl-tests: NCCL's own all-to-all where the library has it (2.28 and later) ...
      int version = 0;
      if (ncclGetVersion(&version) == ncclSuccess && version >= NCCL_VERSION(2, 28, 0)) {
        return ncclAlltoAll(send, recv, share, ncclUint8, comm, s);
      }
#endif
      // ... else a send and a receive of S/n with every rank, in one group.
      if (const ncclResult_t r = ncclGroupStart(); r != ncclSuccess) return r;
      for (int k = 0; k < ranks; ++k) {
        (void)ncclSend(send + static_cast<std::size_t>(k) * share, share, ncclUint8, k, comm, s);
        (void)ncclRecv(recv + static_cast<std::size_t>(k) * share, share, ncclUint8, k, comm, s);
      }
      return ncclGroupEnd();
    }
    case collective::send_recv: {  // a ring, as nccl-tests' sendrecv_perf: to rank + 1, from rank - 1
      if (const ncclResult_t r = ncclGroupStart(); r != ncclSuccess) return r;
      (void)ncclSend(send, size, ncclUint8, (rank + 1) % ranks, comm, s);
      (void)ncclRecv(recv, size, ncclUint8, (rank + ranks - 1) % ranks, comm, s);
      return ncclGroupEnd();
    }
    case collective::none: break;
  }
  return ncclSuccess;
}

// Rank r's send and receive pointers: its own buffers out of place; in place, the one buffer at
// nccl-tests' offsets (model.cpp: collective_buffers). `iteration` >= 0: the loop's buffers, moved on
// by a region each iteration as nccl-tests moves them.
std::pair<std::byte*, std::byte*> rank_pointers(const case_ctx& c, int r, int local, int iteration = -1) {
  auto& st = state_of(c);
  const rung_traits& t = traits(*c.v);
  const auto i = static_cast<std::size_t>(local);
  std::byte* send = local == 0 ? c.ptr(src_buffer) : st.rank_send[i - 1].data();
  std::byte* recv = in_place(c.p) ? nullptr : local == 0 ? c.ptr(dst_buffer) : st.rank_recv[i - 1].data();
  if (iteration >= 0) {
    const std::uint64_t shift = st.loop_region * (static_cast<std::uint64_t>(iteration) % st.loop_regions);
    send = st.loop_send[i].data() + shift;
    recv = in_place(c.p) ? nullptr : st.loop_recv[i].data() + shift;
  }
  if (!in_place(c.p)) return {send, recv};
  const collective_buffers b = buffers_of(t.op, c.p.n, static_cast<int>(c.p[gpus_axis]));
  const auto rank = static_cast<std::uint64_t>(r);
  return {send + b.send_step * rank, send + b.recv_step * rank};
}
#endif

// The case's collective, every rank at once: in one process, every rank's call inside one group (NCCL
// launches them together), each on a stream forked from `s`; in a distributed run, this rank's call
// on `s`.
void launch_collective(const case_ctx& c, cudaStream_t s) {
#if MEMLAB_HAVE_NCCL
  auto& st = state_of(c);
  const collective op = traits(*c.v).op;
  const world& w = this_world();
  if (w.distributed()) {
    const auto [send, recv] = rank_pointers(c, w.rank(), 0);
    w.settle(collective_call(op, send, recv, c.p.n, w.size(), w.rank(), static_cast<ncclComm_t>(w.communicator()), s),
             "the collective");
    return;
  }
  const int ranks = static_cast<int>(st.devices.size());
  const auto& comms = communicators(st.devices);
  std::vector<cudaStream_t> on(static_cast<std::size_t>(ranks), s);
  for (int r = 1; r < ranks; ++r) on[static_cast<std::size_t>(r)] = st.sides[static_cast<std::size_t>(r - 1)]->begin(s);
  MEMLAB_NCCL_CHECK(ncclGroupStart());
  for (int r = 0; r < ranks; ++r) {
    const auto [send, recv] = rank_pointers(c, r, r);
    MEMLAB_NCCL_CHECK(collective_call(op, send, recv, c.p.n, ranks, r, comms[static_cast<std::size_t>(r)],
                                      on[static_cast<std::size_t>(r)]));
  }
  MEMLAB_NCCL_CHECK(ncclGroupEnd());
  for (int r = 1; r < ranks; ++r) st.sides[static_cast<std::size_t>(r - 1)]->end(s);
#else
  (void)c, (void)s;
  throw std::logic_error("transfer: built without NCCL");
#endif
}

// nccl-tests' loop (the rung's loop_launcher): `launches` collectives back to back, each rank on its own
// stream with no join between launches (in one process, one group per launch over every rank, as
// nccl-tests -g N does); the wait polls every stream, as nccl-tests does.
std::vector<cudaStream_t> loop_streams(const case_ctx& c) {
  std::vector<cudaStream_t> out;
  for (const auto& s : state_of(c).loop_streams) out.push_back(s->get());
  return out;
}

void loop_enqueue(const case_ctx& c, int launches) {
#if MEMLAB_HAVE_NCCL
  auto& st = state_of(c);
  const collective op = traits(*c.v).op;
  const world& w = this_world();
  if (w.distributed()) {
    const cudaStream_t s = st.loop_streams.front()->get();
    const auto comm = static_cast<ncclComm_t>(w.communicator());
    for (int i = 0; i < launches; ++i) {
      const auto [send, recv] = rank_pointers(c, w.rank(), 0, i);
      w.settle(collective_call(op, send, recv, c.p.n, w.size(), w.rank(), comm, s), "the collective");
    }
    return;
  }
  const int ranks = static_cast<int>(st.devices.size());
  const auto& comms = communicators(st.devices);
  for (int i = 0; i < launches; ++i) {
    MEMLAB_NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < ranks; ++r) {
      const auto [send, recv] = rank_pointers(c, r, r, i);
      MEMLAB_NCCL_CHECK(collective_call(op, send, recv, c.p.n, ranks, r, comms[static_cast<std::size_t>(r)],
                                        st.loop_streams[static_cast<std::size_t>(r)]->get()));
    }
    MEMLAB_NCCL_CHECK(ncclGroupEnd());
  }
#else
  (void)c, (void)launches;
  throw std::logic_error("transfer: built without NCCL");
#endif
}

void loop_wait(const case_ctx& c) {
  auto& st = state_of(c);
  const world& w = this_world();
  if (w.distributed()) {
    w.wait(st.loop_streams.front()->get());  // also notices a rank that stopped
    return;
  }
  for (bool busy = true; busy;) {
    busy = false;
    for (const auto& stream : st.loop_streams) {
      const cudaError_t e = cudaStreamQuery(stream->get());
      if (e == cudaErrorNotReady) {
        busy = true;
      } else {
        MEMLAB_CUDA_CHECK(e);
      }
    }
    if (busy) std::this_thread::yield();
  }
}

const loop_launcher collective_loop{.streams = loop_streams, .enqueue = loop_enqueue, .wait = loop_wait};

// ---- refusals, plans, setup, checks ------------------------------------------------------------------------------

std::optional<std::string> refusal(const variant& v, const case_params& p, const device_info& dev) {
  const rung_traits& t = traits(v);
  switch (t.where) {
    case route::host:
      if (memory_of(p) == host_memory::pageable && t.how != engine::copy_engine) {
        return std::string(v.name) +
               " needs host memory mapped into the GPU (pinned, registered or write_combined); "
               "kernels cannot reach pageable memory (without HMM, not used here)";
      }
      return std::nullopt;
    case route::peer: {
      const auto peer = static_cast<int>(p[peer_axis]);
      if (dev.device_count < 2) {
        return "peer rungs need 2 GPUs; this machine shows " + std::to_string(dev.device_count);
      }
      if (peer == dev.ordinal) return "--peer " + std::to_string(peer) + " is this GPU (--device)";
      if (peer >= dev.device_count) {
        return "no GPU " + std::to_string(peer) + ": this machine shows " + std::to_string(dev.device_count);
      }
      if (t.probe == peer_probe::chase && p.n < 8) return std::string("a chase needs at least one 8-byte node");
      int can = 0;
      if (cudaDeviceCanAccessPeer(&can, dev.ordinal, peer) != cudaSuccess) (void)cudaGetLastError();
      if (can == 0) {
        return "GPU " + std::to_string(dev.ordinal) + " cannot access GPU " + std::to_string(peer) +
               "'s memory (cudaDeviceCanAccessPeer: no peer access between them)";
      }
      return std::nullopt;
    }
    case route::collective: {
      const auto ranks = static_cast<int>(p[gpus_axis]);
      // A distributed run has a process per rank, each with its GPU: the machine's count is not the limit.
      if (!this_world().distributed() && ranks > dev.device_count) {
        return "--gpus " + std::to_string(ranks) + " needs " + std::to_string(ranks) + " GPUs; this machine shows " +
               std::to_string(dev.device_count);
      }
      if (p.n == 0) return std::string("a collective of 0 bytes moves nothing");
      if (in_place(p) && (t.op == collective::all_to_all || t.op == collective::send_recv)) {
        return std::string(v.name) +
               " has no in-place form in NCCL (a receive could overwrite what a send has not read yet); nccl-tests "
               "prints a column for it all the same";
      }
      return collective_refusal(t.op, p.n, ranks);
    }
  }
  return std::nullopt;
}

// nccl-tests' method rotates its buffers (rank_pointers): at most this many regions, within this much.
inline constexpr std::uint64_t loop_rotation_regions = 20;
inline constexpr std::uint64_t loop_rotation_bytes = std::uint64_t{1} << 30;
// How many regions of `region` bytes (a collective's max(send, recv): nccl-tests' `shift`) the loop rotates
// through: as many as fit loop_rotation_bytes, at least one, at most its loop_rotation_regions iterations.
constexpr std::uint64_t loop_regions_of(std::uint64_t region) {
  return std::clamp<std::uint64_t>(loop_rotation_bytes / std::max<std::uint64_t>(region, 1), 1, loop_rotation_regions);
}

// A chase's nodes, one every 128 bytes (a line of their own, so no two share a fetch).
inline constexpr std::uint64_t chase_stride = 128;
inline constexpr std::uint64_t chase_max_hops = std::uint64_t{1} << 14;  // ~20 ms of loads

case_plan plan_case(const variant& v, const case_params& p, const device_info& dev) {
  const rung_traits& t = traits(v);
  const std::uint64_t n = p.n;
  case_plan out;
  if (t.how == engine::sm) out.policy = {sm_threads, sm_unroll, 16, 0, sm_grid(n, dev.sm_count)};
  // Between GPUs: NVLink where NVML found active links, else the PCIe link the bytes then cross.
  const roof_kind between_gpus = dev.nvlink_gbps > 0 ? roof_kind::nvlink : roof_kind::pcie;
  switch (t.where) {
    case route::host: {
      const direction d = dir_of(p);
      out.roof = roof_kind::pcie;
      out.directions = host_directions(d, n);
      out.host_waits = memory_of(p) == host_memory::pageable;
      // The device side: the source of d2h, the destination of h2d (a direction not taken: 0 bytes).
      out.buffers = {{"src", d == direction::h2d ? 0 : n, buffer_role::input},
                     {"dst", d == direction::d2h ? 0 : n, buffer_role::output}};
      break;
    }
    case route::peer: {
      // NVLink where links join the two GPUs (through an NVSwitch, every GPU on it at the GPU's full
      // rate; else the links that go straight to the peer), else the PCIe link the bytes cross.
      out.roof = between_gpus;
      if (dev.nvlink_gbps > 0 && !dev.nvlink_switch) {
        char bus[32] = {};
        const auto peer = static_cast<int>(p[peer_axis]);
        const bool known = cudaDeviceGetPCIBusId(bus, sizeof bus - 1, peer) == cudaSuccess;
        if (!known) (void)cudaGetLastError();
        const auto links = known ? std::count(dev.nvlink_gpus.begin(), dev.nvlink_gpus.end(), std::string(bus)) : 0;
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
        const std::uint64_t hops = t.probe == peer_probe::chase ? std::min(n / chase_stride + (n % chase_stride >= 8),
                                                                           chase_max_hops)
                                                                : 2 * pingpong_rounds;
        out.bytes = 8 * hops;
        out.working_set = t.probe == peer_probe::chase ? n : 16;
        out.buffers = {{"src", 0, buffer_role::input}, {"dst", 0, buffer_role::output}};
        out.policy = {1, 1, 8, 0, 1};
        return out;
      }
      out.directions = peer_directions(t.way, dev.ordinal, static_cast<int>(p[peer_axis]), n);
      out.buffers = {{"src", t.way == peer_way::pull ? 0 : n, buffer_role::input},
                     {"dst", t.way == peer_way::push ? 0 : n, buffer_role::output}};
      break;
    }
    case route::collective: {
      const auto ranks = static_cast<int>(p[gpus_axis]);
      const collective_buffers b = buffers_of(t.op, n, ranks);
      out.roof = between_gpus;
      out.bus_factor = bus_factor(t.op, ranks);
      // Ranks that reach each other through NCCL's network transport: NCCL's host side may wait on the
      // GPU while it enqueues (a run of sockets between processes hung there behind the blocking
      // kernel), so these collectives are timed without holding the stream (events around the launch,
      // the host's launch cost inside) and have no graph figure.
      out.host_waits = this_world().distributed() && this_world().over_network();
      // In place: one buffer, input and output at once (filled with random input; the check reads
      // the reduced or gathered part and the untouched rest).
      // nccl-tests' rotation: its loop's own buffers, one region or more (setup).
      const std::uint64_t region = std::max(b.send, b.recv);
      const std::uint64_t regions = loop_regions_of(region);
      out.transient_bytes = regions * region * (in_place(p) ? 1 : 2);
      out.buffers = in_place(p) ? std::vector<buffer_spec>{{"data", b.in_place_bytes(), buffer_role::input},
                                                           {"none", 0, buffer_role::scratch}}
                                : std::vector<buffer_spec>{{"send", b.send, buffer_role::input},
                                                           {"recv", b.recv, buffer_role::output}};
      break;
    }
  }
  std::uint64_t moved = 0;
  for (const auto& d : out.directions) moved += d.bytes;
  out.bytes = t.where == route::collective ? n : moved;  // collectives: nccl-tests' S (algbw = S / t)
  out.working_set = out.bytes;
  return out;
}

// Both ways: this GPU's SMs load or store the other GPU's memory, the peer's own push needs it too.
void enable_peer_access(int self, int peer) {
  for (const auto& [from, to] : {std::pair{self, peer}, std::pair{peer, self}}) {
    on_device on(from);
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

// The lab's own buffers: host memory, the peer's memory, the other ranks'. Filled here, once: their
// seeds are fixed for the case (the harness refreshes only its own inputs at every reset).
void setup(case_ctx& c) {
  auto st = std::make_shared<transfer_state>();
  const rung_traits& t = traits(*c.v);
  const std::uint64_t n = c.p.n;
  switch (t.where) {
    case route::host: {
      const direction d = dir_of(c.p);
      if (d != direction::d2h) {
        st->host_src = std::make_unique<host_buffer>(memory_of(c.p), n);
        st->host_seed = next_seed();
        // Random bytes made on the GPU, brought over once: a CPU fill of a gigabyte takes seconds.
        device_buffer staging(n);
        fill_random(staging.data(), n, st->host_seed, nullptr);
        if (n > 0) MEMLAB_CUDA_CHECK(cudaMemcpy(st->host_src->host(), staging.data(), n, cudaMemcpyDefault));
      }
      if (d != direction::h2d) {
        st->host_dst = std::make_unique<host_buffer>(memory_of(c.p), n + guard_bytes);
        std::memset(st->host_dst->host(), poison_byte, n + guard_bytes);
      }
      if (d == direction::bidir) st->sides.push_back(std::make_unique<side_stream>(c.dev.ordinal, c.dev.ordinal));
      break;
    }
    case route::peer: {
      st->peer = static_cast<int>(c.p[peer_axis]);
      enable_peer_access(c.dev.ordinal, st->peer);
      st->probe = std::make_unique<device_buffer>(sizeof(probe_words));
      MEMLAB_CUDA_CHECK(cudaMemset(st->probe->data(), 0, sizeof(probe_words)));
      on_device on(st->peer);
      if (t.probe == peer_probe::chase) {
        st->chase_nodes = n / chase_stride + (n % chase_stride >= 8);
        st->chase_hops = std::min(st->chase_nodes, chase_max_hops);
        st->chase = std::make_unique<device_buffer>(st->chase_nodes * chase_stride);
        auto [image, end] = chase_cycle(reinterpret_cast<std::uint64_t>(st->chase->data()), st->chase_nodes,
                                        st->chase_hops, next_seed());
        st->chase_end = end;
        MEMLAB_CUDA_CHECK(cudaMemcpy(st->chase->data(), image.data(), image.size() * 8, cudaMemcpyHostToDevice));
      } else if (t.probe == peer_probe::ping_pong) {
        st->flag_there = std::make_unique<device_buffer>(256);  // a line of its own
        MEMLAB_CUDA_CHECK(cudaMemset(st->flag_there->data(), 0, 256));
        {
          on_device home(c.dev.ordinal);
          st->flag_here = std::make_unique<device_buffer>(256);
          MEMLAB_CUDA_CHECK(cudaMemset(st->flag_here->data(), 0, 256));
        }
        st->sides.push_back(std::make_unique<side_stream>(c.dev.ordinal, st->peer));
      } else {
        if (t.way != peer_way::push) {
          st->peer_src = std::make_unique<device_buffer>(n);
          st->peer_seed = next_seed();
          fill_random(st->peer_src->data(), n, st->peer_seed, nullptr);
        }
        if (t.way != peer_way::pull) {
          st->peer_dst = std::make_unique<device_buffer>(n + guard_bytes);
          MEMLAB_CUDA_CHECK(cudaMemset(st->peer_dst->data(), poison_byte, n + guard_bytes));
        }
        if (t.way == peer_way::both) st->sides.push_back(std::make_unique<side_stream>(c.dev.ordinal, st->peer));
      }
      MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
      break;
    }
    case route::collective: {
      const auto ranks = static_cast<int>(c.p[gpus_axis]);
      const collective_buffers b = buffers_of(t.op, n, ranks);
      // nccl-tests' rotation: a region is max(send, recv) bytes (its `shift`); as many as fit 1 GiB, at
      // most its 20 iterations.
      st->loop_region = std::max(b.send, b.recv);
      st->loop_regions = loop_regions_of(st->loop_region);
      const auto loop_buffers = [&] {
        const std::uint64_t bytes = st->loop_regions * st->loop_region;
        st->loop_send.emplace_back(bytes);
        st->loop_recv.emplace_back(in_place(c.p) ? 0 : bytes);
        fill_random(st->loop_send.back().data(), bytes, next_seed(), nullptr);
      };
      if (this_world().distributed()) {  // this rank's buffers are the case's own
        st->loop_streams.push_back(std::make_unique<cuda_stream>());
        loop_buffers();
        MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
        break;
      }
      loop_buffers();
      for (int r = 0; r < ranks; ++r) st->devices.push_back((c.dev.ordinal + r) % std::max(c.dev.device_count, 1));
      {
        on_device home(c.dev.ordinal);
        st->loop_streams.push_back(std::make_unique<cuda_stream>());
      }
      for (int r = 1; r < ranks; ++r) {
        const int d = st->devices[static_cast<std::size_t>(r)];
        {
          on_device on(d);
          st->rank_seed.push_back(next_seed());
          if (in_place(c.p)) {
            st->rank_send.emplace_back(b.in_place_bytes());
            fill_random(st->rank_send.back().data(), b.in_place_bytes(), st->rank_seed.back(), nullptr);
          } else {
            st->rank_send.emplace_back(b.send);
            st->rank_recv.emplace_back(b.recv + guard_bytes);
            fill_random(st->rank_send.back().data(), b.send, st->rank_seed.back(), nullptr);
            MEMLAB_CUDA_CHECK(cudaMemset(st->rank_recv.back().data(), poison_byte, b.recv + guard_bytes));
          }
          st->loop_streams.push_back(std::make_unique<cuda_stream>());
          loop_buffers();
          MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
        }
        st->sides.push_back(std::make_unique<side_stream>(c.dev.ordinal, d));
      }
#if MEMLAB_HAVE_NCCL
      (void)communicators(st->devices);  // created now, outside every timed sample
#endif
      break;
    }
  }
  c.state = std::move(st);
}

// A host destination, staged into device memory by DMA (a CPU read of write-combined memory
// crawls), then checked like any output: payload, then the poisoned guard.
std::string check_host(const host_buffer& h, std::uint64_t n, std::uint64_t seed) {
  device_buffer copy(h.size());
  if (h.size() > 0) MEMLAB_CUDA_CHECK(cudaMemcpy(copy.data(), h.host(), h.size(), cudaMemcpyDefault));
  return check_bytes(copy, 0, n, 1, [&](std::uint64_t j) { return reference_byte(seed, j); });
}

probe_words read_probe(const transfer_state& st) {
  probe_words w;
  MEMLAB_CUDA_CHECK(cudaMemcpy(&w, st.probe->data(), sizeof w, cudaMemcpyDeviceToHost));
  return w;
}

// Rank r's output, on the GPU: every byte the sum (mod 256) of the input bytes source_of() names, each
// rank k's input the random stream of seeds[k] (in place, from k's place in its one buffer); out of
// place the poisoned guard after it, in place the rest of r's buffer its untouched input.
std::string check_rank(const case_ctx& c, const device_buffer& out, int ranks, int r,
                       const std::vector<std::uint64_t>& seeds) {
  if (ranks > max_checked_ranks) throw std::logic_error("transfer: more ranks than the check holds");
  const collective op = traits(*c.v).op;
  const collective_buffers b = buffers_of(op, c.p.n, ranks);
  expected_bytes e;
  e.collective_output = true;
  e.op = op;
  e.n = c.p.n;
  e.ranks = ranks;
  e.rank = r;
  e.in_place = in_place(c.p);
  e.send_step = b.send_step;
  e.recv_from = e.in_place ? b.recv_step * static_cast<std::uint64_t>(r) : 0;
  e.recv_to = e.recv_from + b.recv;
  for (std::size_t k = 0; k < seeds.size(); ++k) e.seeds[k] = seeds[k];
  return check_on_gpu(out, e, e.in_place ? out.size() : b.recv);
}

// A copy's destination, on the GPU: the random stream of `seed`, then the poisoned guard.
std::string check_copy(const device_buffer& out, std::uint64_t n, std::uint64_t seed) {
  expected_bytes e;
  e.payload = n;
  e.seeds[0] = seed;
  return check_on_gpu(out, e, n);
}

std::string verify(const case_ctx& c) {
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  auto& st = state_of(c);
  const rung_traits& t = traits(*c.v);
  const std::uint64_t n = c.p.n;
  const auto device_side = [&](std::uint64_t seed) {
    return check_bytes(c.buffers[dst_buffer], 0, n, 1, [&](std::uint64_t j) { return reference_byte(seed, j); });
  };
  switch (t.where) {
    case route::host: {
      const direction d = dir_of(c.p);
      if (d != direction::d2h) {
        if (auto e = device_side(st.host_seed); !e.empty()) return "h2d: " + e;
      }
      if (d != direction::h2d) {
        if (auto e = check_host(*st.host_dst, n, c.seeds[src_buffer]); !e.empty()) return "d2h: " + e;
      }
      return {};
    }
    case route::peer: {
      if (t.probe == peer_probe::chase) {
        const probe_words w = read_probe(st);
        if (w.end != st.chase_end) return "the chase ended on another node than the cycle's: a load went astray";
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
        on_device peer(st.peer);  // the check runs where the bytes are
        if (auto e = check_copy(*st.peer_dst, n, c.seeds[src_buffer]); !e.empty()) return "on the peer: " + e;
      }
      if (t.way != peer_way::push) {
        if (auto e = check_copy(c.buffers[dst_buffer], n, st.peer_seed); !e.empty()) return "from the peer: " + e;
      }
      return {};
    }
    case route::collective: {
      const world& w = this_world();
      const auto ranks = static_cast<int>(c.p[gpus_axis]);
      const device_buffer& own = in_place(c.p) ? c.buffers[src_buffer] : c.buffers[dst_buffer];
      if (w.distributed()) {  // this rank's output; every rank's seed, from every rank
        const auto seeds = w.gather(c.seeds[src_buffer]);
        if (auto e = check_rank(c, own, ranks, w.rank(), seeds); !e.empty()) return "rank " + std::to_string(w.rank()) + ": " + e;
        return {};
      }
      std::vector<std::uint64_t> seeds{c.seeds[src_buffer]};
      seeds.insert(seeds.end(), st.rank_seed.begin(), st.rank_seed.end());
      for (int r = 0; r < ranks; ++r) {
        const auto i = static_cast<std::size_t>(r);
        const device_buffer& out = r == 0 ? own : in_place(c.p) ? st.rank_send[i - 1] : st.rank_recv[i - 1];
        on_device on(st.devices[i]);  // the check runs where the bytes are
        if (auto e = check_rank(c, out, ranks, r, seeds); !e.empty()) return "rank " + std::to_string(r) + ": " + e;
      }
      return {};
    }
  }
  return {};
}

// What the latency probes measured during their last launch.
std::vector<measured_figure> observe(const case_ctx& c) {
  const rung_traits& t = traits(*c.v);
  if (t.where != route::peer || t.probe == peer_probe::copy) return {};
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

// Every axis a route does not read.
const std::vector<std::string_view> host_ignores{"peer", "gpus", "placement"};
const std::vector<std::string_view> peer_ignores{"direction", "host_memory", "gpus", "placement"};
const std::vector<std::string_view> collective_ignores{"direction", "host_memory", "peer"};

// The SM copy's kernel, labelled once, by the `sm` rung (`memlab inspect transfer`); the peer SM
// rungs launch the same kernel on a peer's pointers and list none, as memlab::copy's users do.
std::vector<kernel_ref> sm_kernels() { return {kernel_ref::of(&sm_copy_kernel<sm_unroll>)}; }

// 16-byte vectors from the first byte: host pages and cudaMalloc both align far more than that.
const rung_needs vec16_needs{.alignment = 16, .min_cc = 0, .feature = "", .shape = ""};
const rung_needs no_needs{.alignment = 0, .min_cc = 0, .feature = "", .shape = ""};

std::vector<variant> rungs() {
  std::vector<variant> v{
      // host <-> device
      {.name = "ce",
       .teaches = "cudaMemcpyAsync: the copy engines' DMA; from pageable memory through the driver's pinned staging",
       .launch = launch_host,
       .kernels = {},
       .needs = no_needs,
       .ignores = host_ignores,
       .traits = rung_traits{.where = route::host, .how = engine::copy_engine}},
      {.name = "sm",
       .teaches = "a kernel of 16-byte loads and stores on mapped host memory (zero-copy): PCIe read requests "
                  "from the SMs (h2d), posted writes (d2h)",
       .launch = launch_host,
       .kernels = sm_kernels(),
       .needs = vec16_needs,
       .ignores = host_ignores,
       .traits = rung_traits{.where = route::host, .how = engine::sm}},
      {.name = "auto",
       .teaches = "memlab::copy on mapped host pointers: the library's widest safe path, unchanged",
       .launch = launch_host,
       .needs = no_needs,
       .ignores = host_ignores,
       .traits = rung_traits{.where = route::host, .how = engine::library}},
      // GPU <-> GPU
      {.name = "peer_ce",
       .teaches = "cudaMemcpyPeerAsync this GPU -> the peer: a copy engine over NVLink (PCIe without it)",
       .launch = launch_peer,
       .kernels = {},
       .needs = no_needs,
       .ignores = peer_ignores,
       .traits = rung_traits{.where = route::peer, .how = engine::copy_engine, .way = peer_way::push}},
      {.name = "peer_ce_bidir",
       .teaches = "cudaMemcpyPeerAsync both ways at once, each GPU's copy engine pushing",
       .launch = launch_peer,
       .kernels = {},
       .needs = no_needs,
       .ignores = peer_ignores,
       .traits = rung_traits{.where = route::peer, .how = engine::copy_engine, .way = peer_way::both}},
      {.name = "peer_sm_read",
       .teaches = "this GPU's SMs load the peer's memory (16-byte loads): reads wait for the reply",
       .launch = launch_peer,
       .needs = vec16_needs,
       .ignores = peer_ignores,
       .traits = rung_traits{.where = route::peer, .how = engine::sm, .way = peer_way::pull}},
      {.name = "peer_sm_write",
       .teaches = "this GPU's SMs store into the peer's memory (16-byte stores): posted writes",
       .launch = launch_peer,
       .needs = vec16_needs,
       .ignores = peer_ignores,
       .traits = rung_traits{.where = route::peer, .how = engine::sm, .way = peer_way::push}},
      {.name = "peer_sm_bidir",
       .teaches = "each GPU's SMs store into the other's memory, at once",
       .launch = launch_peer,
       .needs = vec16_needs,
       .ignores = peer_ignores,
       .traits = rung_traits{.where = route::peer, .how = engine::sm, .way = peer_way::both}},
      {.name = "peer_auto",
       .teaches = "memlab::copy from this GPU's memory into the peer's (peer access on)",
       .launch = launch_peer,
       .needs = no_needs,
       .ignores = peer_ignores,
       .traits = rung_traits{.where = route::peer, .how = engine::library, .way = peer_way::push}},
      {.name = "peer_auto_bidir",
       .teaches = "memlab::copy both ways at once, each GPU pushing into the other's memory",
       .launch = launch_peer,
       .needs = no_needs,
       .ignores = peer_ignores,
       .traits = rung_traits{.where = route::peer, .how = engine::library, .way = peer_way::both}},
      {.name = "peer_chase",
       .teaches = "one thread's dependent 8-byte loads over the peer's memory (size: the bytes chased): the "
                  "round trip of a read across the link",
       .launch = launch_probe,
       .kernels = {kernel_ref::of(&peer_chase_kernel)},
       .needs = no_needs,
       .ignores = peer_ignores,
       .traits = rung_traits{.where = route::peer, .how = engine::sm, .way = peer_way::pull, .probe = peer_probe::chase}},
      {.name = "peer_pingpong",
       .teaches = "a flag stored into the other GPU's memory and answered, 1024 rounds (size unused): the one-way "
                  "latency of a store across the link",
       .launch = launch_probe,
       .kernels = {kernel_ref::of(&ping_kernel), kernel_ref::of(&pong_kernel), kernel_ref::of(&reset_flags_kernel)},
       .needs = no_needs,
       .ignores = peer_ignores,
       .traits =
           rung_traits{.where = route::peer, .how = engine::sm, .way = peer_way::both, .probe = peer_probe::ping_pong}},
  };
#if MEMLAB_HAVE_NCCL
  const auto nccl = [](std::string_view name, std::string_view teaches, collective op) {
    return variant{.name = name,
                   .teaches = teaches,
                   .launch = launch_collective,
                   .kernels = {},
                   .needs = no_needs,
                   .peer = true,
                   .ignores = collective_ignores,
                   .traits = rung_traits{.where = route::collective, .how = engine::nccl, .op = op},
                   .all_ranks = true,
                   .loop = collective_loop};
  };
  v.push_back(nccl("nccl_all_reduce", "ncclAllReduce (u8 sum): busbw = algbw x 2(n-1)/n", collective::all_reduce));
  v.push_back(nccl("nccl_all_gather", "ncclAllGather: busbw = algbw x (n-1)/n", collective::all_gather));
  v.push_back(
      nccl("nccl_reduce_scatter", "ncclReduceScatter (u8 sum): busbw = algbw x (n-1)/n", collective::reduce_scatter));
  v.push_back(nccl("nccl_broadcast", "ncclBroadcast from rank 0: busbw = algbw", collective::broadcast));
  v.push_back(nccl("nccl_all_to_all",
                   "ncclAlltoAll (NCCL 2.28+; before, ncclSend/ncclRecv with every rank in one group): busbw = "
                   "algbw x (n-1)/n",
                   collective::all_to_all));
  v.push_back(nccl("nccl_sendrecv", "ncclSend to the next rank, ncclRecv from the previous, a ring (nccl-tests' "
                                    "sendrecv_perf): busbw = algbw",
                   collective::send_recv));
#endif
  return v;
}

}  // namespace

// ---- the lab's table --------------------------------------------------------------------------------------------

const lab& table() {
  static const lab transfer_lab {
    .name = "transfer",
    .teaches =
        "beyond the GPU's memory: host <-> device (pageable, pinned, registered, write-combined; copy engine "
        "vs SM zero-copy), GPU <-> GPU peer copies and latency, NCCL collectives (algbw, busbw; cold and "
        "nccl-tests' method), one process or one per GPU",
    .dtypes = {dtype::u8}, .default_dtype = dtype::u8, .default_sizes = "256KiB,64MiB",
    .size_meaning = "bytes per direction (collectives: nccl-tests' size S; peer_chase: the bytes chased)",
    .axes = {direction_axis, host_memory_axis, peer_axis, gpus_axis, placement_axis}, .roof = roof_kind::pcie,
    .variants = rungs(),
    // NVLink multicast stays off: memlab never creates multicast objects, nor lets NCCL.
        .environment = {{"NCCL_NVLS_ENABLE", "0"}},
#if MEMLAB_HAVE_NCCL
    .built_without = "",
#else
    .built_without =
        "NCCL (pip install nvidia-nccl-cu13, or apt-get install libnccl-dev, then re-run cmake): the "
        "nccl_* rungs are not built",
#endif
    .ranks_axis = "gpus", .unsupported = refusal, .plan = plan_case, .setup = setup, .verify = verify,
    .observe = observe,
  };
  return transfer_lab;
}

}  // namespace memlab::labs::transfer
