// The launch memlab::copy plans for a lab's copy peer (a copy of the same bytes as the lab's job: the
// ceiling of a lab that moves bytes in another order). Host-only; no GPU work.
#pragma once

#include <cstdint>

#include "harness/result.hpp"
#include "memlab/copy_plan.hpp"

namespace memlab {

// memlab::copy plans from the real addresses. cudaMalloc returns 256-byte aligned allocations, so
// any multiple of 256 plus the shifts (bytes the lab adds to each pointer) gives the plan the run will get.
inline launch_policy copy_policy(std::uint64_t bytes, const device_info& dev, std::uint64_t dst_shift = 0,
                                 std::uint64_t src_shift = 0) {
  constexpr std::uintptr_t base = std::uintptr_t{1} << 40;
  const copy_plan cp = plan_copy(base + dst_shift, 2 * base + src_shift, bytes,
                                 copy_device{dev.sm_count, dev.max_threads_per_sm, dev.cc_major});
  return {.threads = cp.threads, .items_per_thread = cp.vectors_per_thread, .vec_bytes = cp.vec_bytes, .grid = cp.grid};
}

}  // namespace memlab
