// Experiment for docs/labs/transfer.md ("Every ordered pair"): does one peer copy reach more of the NVLink
// when it is split over several copy engines? cudaMemcpyPeerAsync of S bytes from GPU a to GPU b, cut into
// k equal parts, each on its own stream (k = 1, 2, 4, 8), the streams on the source GPU (the copy engines
// write to the peer) or on the destination GPU (they read from it). Timed by events: a start event the k
// streams wait on, an end event on each, the first stream waiting for all; median of 9 repetitions after
// one warm-up. The destination is verified once per configuration (a byte pattern, counted on the device).
//   nvcc -O3 -arch=sm_90 -o peer_ce_split peer_ce_split.cu && ./peer_ce_split [SRC DST [MiB]]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check.cuh"

__global__ void count_mismatches(const unsigned char* p, size_t n, unsigned char want, unsigned long long* bad) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    local += p[i] != want;
  if (local) atomicAdd(bad, local);
}

int main(int argc, char** argv) {
  const int src = argc > 2 ? std::atoi(argv[1]) : 0, dst = argc > 2 ? std::atoi(argv[2]) : 1;
  const size_t bytes = (argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1024ull) << 20;
  int n = 0;
  CHECK(cudaGetDeviceCount(&n));
  if (n < 2 || src >= n || dst >= n || src == dst) {
    std::printf("needs two distinct GPUs (this machine shows %d)\n", n);
    return 3;
  }
  void *a = nullptr, *b = nullptr;
  CHECK(cudaSetDevice(dst));
  CHECK(cudaDeviceEnablePeerAccess(src, 0));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaSetDevice(src));
  CHECK(cudaDeviceEnablePeerAccess(dst, 0));
  CHECK(cudaMalloc(&a, bytes));
  unsigned long long* bad = nullptr;
  CHECK(cudaSetDevice(dst));
  CHECK(cudaMalloc(&bad, sizeof(*bad)));
  std::printf("GPU %d -> GPU %d, %zu MiB, cudaMemcpyPeerAsync cut into k parts on k streams; median of 9, GB/s\n", src,
              dst, bytes >> 20);
  std::printf("%-22s %3s %10s %10s %8s\n", "streams on", "k", "us", "GB/s", "verified");
  unsigned char pattern = 0x11;
  for (const int on : {src, dst}) {
    for (const int k : {1, 2, 4, 8}) {
      CHECK(cudaSetDevice(on));
      std::vector<cudaStream_t> s(k);
      std::vector<cudaEvent_t> end(k);
      cudaEvent_t start, stop;
      for (int i = 0; i < k; ++i) {
        CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
        CHECK(cudaEventCreateWithFlags(&end[i], cudaEventDisableTiming));
      }
      CHECK(cudaEventCreate(&start));
      CHECK(cudaEventCreate(&stop));
      // A fresh pattern at the source, the destination poisoned: the check below sees this configuration's copy.
      ++pattern;
      CHECK(cudaSetDevice(src));
      CHECK(cudaMemset(a, pattern, bytes));
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaSetDevice(dst));
      CHECK(cudaMemset(b, 0, bytes));
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaSetDevice(on));
      const size_t part = (bytes / k) & ~size_t(4095);
      std::vector<float> us;
      for (int rep = 0; rep < 10; ++rep) {
        CHECK(cudaEventRecord(start, s[0]));
        for (int i = 0; i < k; ++i) {
          if (i > 0) CHECK(cudaStreamWaitEvent(s[i], start, 0));
          const size_t off = i * part, len = i == k - 1 ? bytes - off : part;
          CHECK(cudaMemcpyPeerAsync(static_cast<char*>(b) + off, dst, static_cast<const char*>(a) + off, src, len,
                                    s[i]));
          CHECK(cudaEventRecord(end[i], s[i]));
        }
        for (int i = 1; i < k; ++i) CHECK(cudaStreamWaitEvent(s[0], end[i], 0));
        CHECK(cudaEventRecord(stop, s[0]));
        CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        if (rep > 0) us.push_back(ms * 1e3f);
      }
      std::sort(us.begin(), us.end());
      const float med = us[us.size() / 2];
      CHECK(cudaSetDevice(dst));
      CHECK(cudaMemset(bad, 0, sizeof(*bad)));
      count_mismatches<<<1024, 256>>>(static_cast<const unsigned char*>(b), bytes, pattern, bad);
      CHECK(cudaGetLastError());
      unsigned long long wrong = 0;
      CHECK(cudaMemcpy(&wrong, bad, sizeof(wrong), cudaMemcpyDeviceToHost));
      std::printf("%-22s %3d %10.1f %10.1f %8s\n", on == src ? "source (write)" : "destination (read)", k, med,
                  bytes / (med * 1e3), wrong == 0 ? "yes" : "NO");
      CHECK(cudaSetDevice(on));
      for (int i = 0; i < k; ++i) {
        CHECK(cudaStreamDestroy(s[i]));
        CHECK(cudaEventDestroy(end[i]));
      }
      CHECK(cudaEventDestroy(start));
      CHECK(cudaEventDestroy(stop));
      if (wrong != 0) return 1;
    }
  }
  return 0;
}
