// The transfer lab's parts, one concern a file, and what they share. The lab's table (transfer.cu) lists
// the rungs; each rung's route (its traits' `where`) names the file that plans, refuses, sets up,
// launches and checks it:
//
//   host.cpp         host <-> this GPU over PCIe: the host memory kinds, the copy engines against the SMs
//   peer.cu          this GPU <-> another: peer copies, and the latency of one small access (its kernels)
//   collectives.cpp  NCCL's collectives, by nccl-tests' calls and method, checked on every rank
//   ranks.cpp        the ranks a collective runs on: every GPU of this process (a communicator each), or
//                    this rank of a run of one process per GPU (harness/world.hpp); NCCL's memory
//   engines.cu       the SM copy kernel and memlab::copy, the engines the host and peer routes share
//   checks.cu        outputs checked on the GPU (gigabytes: the host would take seconds a case)
// Each .cu's name is unique in the tree: `memlab inspect` extracts the cubins by their source file's name.
//
// Planning and refusals make no CUDA call: what they need of the machine comes in device_info (its GPUs'
// bus ids, which it can reach by peer access, its links).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/lab.hpp"
#include "labs/transfer/transfer.hpp"

namespace memlab::labs::transfer {

// What a route provides the lab's table: its part of the lab's functions (harness/lab.hpp).
struct route_ops {
  launch_fn launch = nullptr;
  std::optional<std::string> (*refusal)(const variant& v, const case_params& p, const device_info& dev) = nullptr;
  case_plan (*plan)(const variant& v, const case_params& p, const device_info& dev) = nullptr;
  void (*setup)(case_ctx& c) = nullptr;
  std::string (*verify)(const case_ctx& c) = nullptr;
  std::vector<measured_figure> (*observe)(const case_ctx& c) = nullptr;  // optional
};
extern const route_ops host_route, peer_route;
// The collectives' route and nccl-tests' loop (collectives.cpp), where NCCL's headers were found.
extern const route_ops collective_route;
extern const loop_launcher collective_loop;

// ---- the lab's axes (transfer.cu), read by the routes ---------------------------------------------------
extern const axis direction_axis, host_memory_axis, peer_axis, gpus_axis, placement_axis;
inline direction dir_of(const case_params& p) { return static_cast<direction>(p[direction_axis]); }
inline host_memory memory_of(const case_params& p) { return static_cast<host_memory>(p[host_memory_axis]); }
inline bool in_place(const case_params& p) { return static_cast<placement>(p[placement_axis]) == placement::in_place; }
inline const rung_traits& traits(const variant& v) { return v.traits_as<rung_traits>(); }

// The harness's buffers of every case, in the plans' order.
enum buffer_index { src_buffer, dst_buffer };

// A route's state, kept by its setup in case_ctx::state (std::any needs a copyable value: a shared_ptr).
template <class State>
State& state_as(const case_ctx& c) {
  return *std::any_cast<const std::shared_ptr<State>&>(c.state);
}

// ---- the engines (engines.cu) ----------------------------------------------------------------------------
// The SM copy's launch: 256 threads a CTA, 4 16-byte vectors in flight a thread, at most 8 CTAs an SM.
inline constexpr int sm_threads = 256;
inline constexpr int sm_unroll = 4;
inline constexpr int sm_ctas_per_sm = 8;
// The SM copy's grid for n bytes on `sm_count` SMs.
std::uint64_t sm_grid(std::uint64_t n, int sm_count);
// The SM copy kernel, for the table and `memlab inspect`.
kernel_ref sm_copy_kernel_ref();
// dst <- src, n bytes, by `how` on `s`: the copy engine (cudaMemcpyAsync, `dst`/`src`), the SM copy or
// memlab::copy (the addresses a kernel uses: `dst_dev`/`src_dev`, mapped host memory). `grid`: the SM
// copy's, from the plan.
void copy_by(engine how, std::uint64_t n, std::uint64_t grid, std::byte* dst, std::byte* dst_dev, const std::byte* src,
             const std::byte* src_dev, cudaStream_t s);

// ---- the latency probes' kernels (peer.cu), for the table and `memlab inspect` --------------------------------
std::vector<kernel_ref> chase_kernels();
std::vector<kernel_ref> pingpong_kernels();

// ---- outputs checked on the GPU (checks.cu) ---------------------------------------------------------------
// A copy's destination: the random stream of `seed` for n bytes, then the poisoned guard. "" when every
// byte is right, else the first that is not, as check_bytes words it.
std::string check_copy(const device_buffer& out, std::uint64_t n, std::uint64_t seed);
// A collective's output on rank `rank` of `ranks` (out of place: the poisoned guard after it; in place: the
// rest of the buffer its untouched input), each rank k's input the random stream of seeds[k].
inline constexpr int max_checked_ranks = 64;
std::string check_collective(const device_buffer& out, collective op, std::uint64_t n, int ranks, int rank,
                             bool in_place, const std::vector<std::uint64_t>& seeds);

}  // namespace memlab::labs::transfer
