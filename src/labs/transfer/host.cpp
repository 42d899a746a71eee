// Host <-> this GPU over PCIe: the host memory kinds, and the copy engines against the SMs reading or
// writing mapped host memory (routes.hpp). Bytes are counted once per direction (a 1 GiB host-to-device
// copy moves 1 GiB; bidirectional moves 1 GiB each way, 2 GiB in all), as nvbandwidth counts them.
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <variant>

#include "harness/check.hpp"
#include "harness/error.hpp"
#include "harness/fill.hpp"
#include "labs/transfer/routes.hpp"

namespace memlab::labs::transfer {

namespace {

// ---- host memory ----------------------------------------------------------------------------------
//   pageable        malloc'd (page-aligned): the copy engines cannot reach it. The driver copies
//                   through its own pinned staging buffers, chunk by chunk, with the CPU doing
//                   a memcpy for every chunk. Kernels cannot reach it (without HMM).
//   pinned          cudaHostAlloc(Mapped): page-locked and mapped into the device's address space: DMA
//                   reads and writes it directly, kernels load and store it (zero-copy).
//   registered      malloc'd memory page-locked afterwards with cudaHostRegister (mapped): what a
//                   library does with a buffer it did not allocate.
//   write_combined  cudaHostAlloc(WriteCombined): not cached by the CPU, so a CPU's writes stream
//                   out without reads for ownership, while a CPU's reads are very slow; the GPU
//                   sees ordinary pinned memory.
// Each kind is the harness's cuda_memory with its allocator. Every host buffer is touched (written) when
// allocated, before anything is timed: the first touch of a pageable page is a page fault and a zeroing
// by the kernel, which would land in the first sample otherwise. Whole pages, at least one.
std::size_t pages(std::size_t bytes) { return std::max<std::size_t>((bytes + 4095) / 4096 * 4096, 4096); }

cudaError_t alloc_pageable(void** p, std::size_t bytes) {
  *p = std::aligned_alloc(4096, pages(bytes));
  if (*p == nullptr) return cudaErrorMemoryAllocation;
  std::memset(*p, 0, pages(bytes));  // the first touch, here
  return cudaSuccess;
}
cudaError_t free_pageable(void* p) {
  std::free(p);
  return cudaSuccess;
}
cudaError_t alloc_registered(void** p, std::size_t bytes) {
  if (const cudaError_t e = alloc_pageable(p, bytes); e != cudaSuccess) return e;
  const cudaError_t e = cudaHostRegister(*p, pages(bytes), cudaHostRegisterMapped | cudaHostRegisterPortable);
  if (e != cudaSuccess) std::free(*p);
  return e;
}
cudaError_t free_registered(void* p) {
  const cudaError_t e = cudaHostUnregister(p);
  std::free(p);
  return e;
}
template <unsigned Flags>
cudaError_t alloc_host(void** p, std::size_t bytes) {
  const cudaError_t e = cudaHostAlloc(p, pages(bytes), Flags | cudaHostAllocMapped | cudaHostAllocPortable);
  if (e == cudaSuccess) std::memset(*p, 0, pages(bytes));
  return e;
}

// In host_memory's order.
using host_memory_buffer =
    std::variant<cuda_memory<&alloc_pageable, &free_pageable>, cuda_memory<&alloc_host<0>, &cudaFreeHost>,
                 cuda_memory<&alloc_registered, &free_registered>,
                 cuda_memory<&alloc_host<cudaHostAllocWriteCombined>, &cudaFreeHost>>;
template <std::size_t Kind>
host_memory_buffer make_host(std::size_t bytes) {
  return host_memory_buffer(std::in_place_index<Kind>, bytes);
}
constexpr host_memory_buffer (*host_allocators[])(std::size_t) = {make_host<0>, make_host<1>, make_host<2>,
                                                                  make_host<3>};

// A host buffer of one kind: where the host sees it, and where a kernel does (mapped memory; nullptr for
// pageable memory).
struct host_buffer {
  host_buffer(host_memory kind, std::size_t bytes) : memory(host_allocators[static_cast<std::size_t>(kind)](bytes)) {
    host = std::visit([](const auto& m) { return m.data(); }, memory);
    size = bytes;
    if (kind != host_memory::pageable)
      MEMLAB_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device), host, 0));
  }
  host_memory_buffer memory;
  std::byte* host = nullptr;
  std::byte* device = nullptr;
  std::size_t size = 0;
};

struct host_state {
  std::unique_ptr<host_buffer> src, dst;
  std::uint64_t seed = 0;             // the host source's random stream
  std::unique_ptr<side_stream> side;  // bidir: the d2h direction's stream
};

host_state& state_of(const case_ctx& c) { return state_as<host_state>(c); }

// ---- the route ----------------------------------------------------------------------------------------------

void launch(const case_ctx& c, cudaStream_t s) {
  auto& st = state_of(c);
  const engine how = traits(*c.v).how;
  const std::uint64_t n = c.p.n, grid = c.plan.policy.grid;
  const auto h2d = [&](cudaStream_t on) {
    copy_by(how, n, grid, c.ptr(dst_buffer), c.ptr(dst_buffer), st.src->host, st.src->device, on);
  };
  const auto d2h = [&](cudaStream_t on) {
    copy_by(how, n, grid, st.dst->host, st.dst->device, c.ptr(src_buffer), c.ptr(src_buffer), on);
  };
  switch (dir_of(c.p)) {
    case direction::h2d: h2d(s); break;
    case direction::d2h: d2h(s); break;
    case direction::bidir: {
      // Fork first: the side stream must not wait behind the h2d copy (the fork event is recorded
      // where it is enqueued, so after h2d it would serialize the two directions).
      const cudaStream_t other = st.side->begin(s);
      h2d(s);
      d2h(other);
      st.side->end(s);
      break;
    }
  }
}

std::optional<std::string> refusal(const variant& v, const case_params& p, const device_info&) {
  if (memory_of(p) == host_memory::pageable && traits(v).how != engine::copy_engine) {
    return std::string(v.name) +
           " needs host memory mapped into the GPU (pinned, registered or write_combined); "
           "kernels cannot reach pageable memory (without HMM, not used here)";
  }
  return std::nullopt;
}

case_plan plan(const variant& v, const case_params& p, const device_info& dev) {
  const std::uint64_t n = p.n;
  const direction d = dir_of(p);
  case_plan out;
  if (traits(v).how == engine::sm) out.policy = {sm_threads, sm_unroll, 16, 0, sm_grid(n, dev.sm_count)};
  out.roof = roof_kind::pcie;
  out.directions = host_directions(d, n);
  out.host_waits = memory_of(p) == host_memory::pageable;
  // The device side: the source of d2h, the destination of h2d (a direction not taken: 0 bytes).
  out.buffers = {{"src", d == direction::h2d ? 0 : n, buffer_role::input},
                 {"dst", d == direction::d2h ? 0 : n, buffer_role::output}};
  for (const auto& x : out.directions) out.bytes += x.bytes;
  out.working_set = out.bytes;
  return out;
}

// The host buffers, filled here once: their seed is fixed for the case (the harness refreshes only its own
// inputs at every reset).
void setup(case_ctx& c) {
  auto st = std::make_shared<host_state>();
  const std::uint64_t n = c.p.n;
  const direction d = dir_of(c.p);
  if (d != direction::d2h) {
    st->src = std::make_unique<host_buffer>(memory_of(c.p), n);
    st->seed = next_seed();
    // Random bytes made on the GPU, brought over once: a CPU fill of a gigabyte takes seconds.
    device_buffer staging(n);
    fill_random(staging.data(), n, st->seed, nullptr);
    if (n > 0) MEMLAB_CUDA_CHECK(cudaMemcpy(st->src->host, staging.data(), n, cudaMemcpyDefault));
  }
  if (d != direction::h2d) {
    st->dst = std::make_unique<host_buffer>(memory_of(c.p), n + guard_bytes);
    std::memset(st->dst->host, poison_byte, n + guard_bytes);
  }
  if (d == direction::bidir) st->side = std::make_unique<side_stream>(c.dev.ordinal, c.dev.ordinal);
  c.state = std::move(st);
}

// A host destination, staged into device memory by DMA (a CPU read of write-combined memory crawls), then
// checked like any output: payload, then the poisoned guard.
std::string check_host(const host_buffer& h, std::uint64_t n, std::uint64_t seed) {
  device_buffer copy(h.size);
  if (h.size > 0) MEMLAB_CUDA_CHECK(cudaMemcpy(copy.data(), h.host, h.size, cudaMemcpyDefault));
  return check_bytes(copy, 0, n, 1, [&](std::uint64_t j) { return random_byte(seed, j); });
}

std::string verify(const case_ctx& c) {
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  auto& st = state_of(c);
  const std::uint64_t n = c.p.n;
  const direction d = dir_of(c.p);
  if (d != direction::d2h) {
    const std::string e =
        check_bytes(c.buffers[dst_buffer], 0, n, 1, [&](std::uint64_t j) { return random_byte(st.seed, j); });
    if (!e.empty()) return "h2d: " + e;
  }
  if (d != direction::h2d) {
    if (auto e = check_host(*st.dst, n, c.seeds[src_buffer]); !e.empty()) return "d2h: " + e;
  }
  return {};
}

}  // namespace

const route_ops host_route{.launch = launch, .refusal = refusal, .plan = plan, .setup = setup, .verify = verify};

}  // namespace memlab::labs::transfer
