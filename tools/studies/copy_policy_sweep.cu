// Experiment (not part of the build): memlab::copy's launch policy. For f16 copies of 2^12..2^31
// elements, aligned and with the source 2 bytes off, times memlab::copy's own plan and the same
// plan forced to 1, 2 and 4 vectors per thread, next to cudaMemcpyAsync. Cold (L2 flushed before
// each launch) and batch (20 launches back to back) medians.
// Build and run on the GPU machine, from the repository root:
//   nvcc -O3 -std=c++20 -arch=sm_90 -Iinclude tools/studies/copy_policy_sweep.cu -o /tmp/policy && /tmp/policy
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "memlab/copy.cuh"

#include "cold_timer.cuh"

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cold_timer timer;
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  const std::uint64_t max_bytes = (1ull << 31) * 2;
  std::byte *s, *d;
  CHECK(cudaMalloc(&s, max_bytes + 64));
  CHECK(cudaMalloc(&d, max_bytes + 64));
  CHECK(cudaMemset(s, 1, max_bytes + 64));
  std::printf("%-6s %-9s %-12s %10s %10s %10s %10s\n", "n", "src_off", "policy", "cold_ms", "cold_GB/s", "batch_ms",
              "batch_GB/s");
  for (int k : {12, 16, 20, 24, 26, 28, 30, 31}) {
    const std::uint64_t bytes = (1ull << k) * 2;
    for (int so : {0, 2}) {
      auto time = [&](const char* name, auto launch) {
        const double c = timer.median_ms(launch, 25);
        std::vector<float> batch;
        const int reps = bytes < (1ull << 26) ? 200 : 10;
        for (int i = 0; i < 9; ++i) {
          CHECK(cudaEventRecord(a));
          for (int r = 0; r < reps; ++r) launch();
          CHECK(cudaEventRecord(b));
          CHECK(cudaEventSynchronize(b));
          float t;
          CHECK(cudaEventElapsedTime(&t, a, b));
          batch.push_back(t / reps);
        }
        std::sort(batch.begin(), batch.end());
        const double bt = batch[batch.size() / 2];
        std::printf("2^%-4d %-9d %-12s %10.4f %10.1f %10.4f %10.1f\n", k, so, name, c, gbps(2.0 * bytes, c), bt,
                    gbps(2.0 * bytes, bt));
      };
      const memlab::copy_plan plan =
          memlab::plan_copy(reinterpret_cast<std::uintptr_t>(d), reinterpret_cast<std::uintptr_t>(s + so), bytes,
                            memlab::copy_device{sms, 2048});
      char name[32];
      std::snprintf(name, sizeof name, "auto(u%d)", plan.vectors_per_thread);
      time(name, [&] { CHECK(memlab::copy_bytes(d, s + so, bytes)); });
      for (int u : {1, 2, 4}) {
        memlab::copy_plan p = plan;
        p.vectors_per_thread = u;
        const std::uint64_t per_cta = (p.path == memlab::copy_path::realign16 ? 8 * 31 : 256) * std::uint64_t(u);
        p.grid = (p.vectors + per_cta - 1) / per_cta;
        std::snprintf(name, sizeof name, "u%d", u);
        time(name, [&] { CHECK(memlab::launch_copy(p, d, s + so)); });
      }
      time("memcpy", [&] { CHECK(cudaMemcpyAsync(d, s + so, bytes, cudaMemcpyDeviceToDevice)); });
    }
  }
  return 0;
}
