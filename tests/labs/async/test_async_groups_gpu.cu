// The divergent-commit pitfall, measured: how many cp.async groups a commit inside a divergent branch
// adds. PTX says cp.async.commit_group is per thread; the reference (and the async lab's
// divergent_commit rung) says the hardware counts per warp, once per branch that commits.
//
// One warp: every lane issues one 16-byte cp.async from global memory and commits it (group A), then
// commits one empty group, either from one branch (uniform) or from two (even and odd lanes), then
// waits with cp.async.wait_group 2 and times that wait with clock64.
//   uniform: the warp has 2 groups, A and the empty one; "at most 2 in flight" holds at once.
//   divergent: counted per thread still 2; counted per warp 3 (A and one empty group per branch):
//   the wait must retire A first and lasts a memory round trip.
// Without a GPU the test reports SKIPPED.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "gpu_fixture.hpp"
#include "harness/buffer.hpp"
#include "harness/error.hpp"
#include "memlab/arch/cp_async.cuh"

namespace memlab {
namespace {

template <bool Divergent>
__global__ void commit_count_kernel(long long* cycles, const uint4* src) {
  __shared__ __align__(16) uint4 dst[32];
  arch::cp_async_cg<16>(&dst[threadIdx.x], &src[threadIdx.x * 64]);  // 32 lines of 1 KiB apart
  arch::cp_async_commit();                                           // group A
  if constexpr (Divergent) {
    if (threadIdx.x % 2 == 0) {
      arch::cp_async_commit();  // an empty group, even lanes
    } else {
      arch::cp_async_commit();  // and odd lanes: one commit per thread, two per warp
    }
  } else {
    arch::cp_async_commit();  // the same empty group, one branch
  }
  const long long t0 = clock64();
  arch::cp_async_wait<2>();
  const long long t1 = clock64();
  arch::cp_async_wait_all();
  cycles[threadIdx.x] = t1 - t0;
}

struct async_groups : test::gpu_test<> {
  // Cycles lane 0 spent in wait_group 2, the median of `runs` launches (each from a freshly
  // written source, so that A has to come from L2 or DRAM).
  template <bool Divergent>
  long long wait_cycles(int runs) {
    device_buffer src(32 * 64 * sizeof(uint4));
    device_buffer cycles(32 * sizeof(long long));
    std::vector<long long> lane0;
    for (int i = 0; i < runs; ++i) {
      MEMLAB_CUDA_CHECK(cudaMemset(src.data(), i, src.size()));
      commit_count_kernel<Divergent>
          <<<1, 32>>>(reinterpret_cast<long long*>(cycles.data()), reinterpret_cast<const uint4*>(src.data()));
      MEMLAB_CUDA_CHECK(cudaGetLastError());
      long long c = 0;
      MEMLAB_CUDA_CHECK(cudaMemcpy(&c, cycles.data(), sizeof c, cudaMemcpyDeviceToHost));
      lane0.push_back(c);
    }
    std::sort(lane0.begin(), lane0.end());
    return lane0[lane0.size() / 2];
  }
};

TEST_F(async_groups, a_commit_in_a_divergent_branch_counts_once_per_branch) {
  const long long uniform = wait_cycles<false>(15);
  const long long divergent = wait_cycles<true>(15);
  RecordProperty("uniform_wait_cycles", std::to_string(uniform));
  RecordProperty("divergent_wait_cycles", std::to_string(divergent));
  std::printf("wait_group 2 after a uniform commit: %lld cycles; after a divergent one: %lld cycles\n", uniform,
              divergent);
  // Uniform: nothing to wait for. Divergent: a memory round trip (hundreds of cycles from L2).
  EXPECT_LT(uniform, 100);
  EXPECT_GT(divergent, 200);
  EXPECT_GT(divergent, 4 * uniform);
}

}  // namespace
}  // namespace memlab
