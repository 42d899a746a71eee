// Experiment for docs/notes/timing.md, section 2: how the GPU runs launches queued behind a
// blocking kernel vs a CUDA graph, by queue depth; and how a cold sample of a tiny copy depends on
// the L2 flush (memset = dirty lines, a read kernel = clean lines, none) and on buffer placement.
// Standalone: nvcc -O3 -arch=sm_90 -o timing_method timing_method.cu && ./timing_method
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "check.cuh"

__global__ void block_kernel(volatile int* flag) {
  while (*flag == 0) {
  }
}
__global__ void copy16(uint4* d, const uint4* s, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = s[i];
}
__global__ void read_flush(const uint4* p, size_t n, unsigned* sink) {
  uint4 acc{0, 0, 0, 0};
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const uint4 v = p[i];
    acc.x ^= v.x;
  }
  if (acc.x == 0x12345678u) *sink = acc.x;  // keeps the loads
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
double quant(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * (v.size() - 1))];
}

int main(int argc, char** argv) {
  const bool cold_only = argc > 1 && std::string(argv[1]) == "cold";  // one allocation, both flushes
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int* flag_h;
  int* flag_d;
  CHECK(cudaHostAlloc(&flag_h, sizeof(int), cudaHostAllocMapped));
  CHECK(cudaHostGetDevicePointer(&flag_d, flag_h, 0));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  const unsigned vecs = 8192 / 16;  // an 8 KiB copy: 2^12 f16
  uint4 *src, *dst;
  CHECK(cudaMalloc(&src, 8192));
  CHECK(cudaMalloc(&dst, 8192));
  auto launch = [&] { copy16<<<(vecs + 255) / 256, 256, 0, s>>>(dst, src, vecs); };
  launch();
  CHECK(cudaStreamSynchronize(s));

  if (!cold_only)
    std::printf("== per launch (us) by queue depth k: queued behind a blocking kernel | CUDA graph of k | unblocked\n");
  for (int k : {1, 2, 4, 8, 16, 32, 64, 128, 256, 512}) {
    if (cold_only) break;
    std::vector<double> q, g, u;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < k; ++i) launch();
    CHECK(cudaStreamEndCapture(s, &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (int rep = 0; rep < 60; ++rep) {
      float ms;
      *flag_h = 0;
      block_kernel<<<1, 1, 0, s>>>(flag_d);
      CHECK(cudaEventRecord(a, s));
      for (int i = 0; i < k; ++i) launch();
      CHECK(cudaEventRecord(b, s));
      *flag_h = 1;
      CHECK(cudaStreamSynchronize(s));
      CHECK(cudaEventElapsedTime(&ms, a, b));
      q.push_back(ms * 1e3 / k);
      *flag_h = 0;
      block_kernel<<<1, 1, 0, s>>>(flag_d);
      CHECK(cudaEventRecord(a, s));
      CHECK(cudaGraphLaunch(exec, s));
      CHECK(cudaEventRecord(b, s));
      *flag_h = 1;
      CHECK(cudaStreamSynchronize(s));
      CHECK(cudaEventElapsedTime(&ms, a, b));
      g.push_back(ms * 1e3 / k);
      CHECK(cudaEventRecord(a, s));
      for (int i = 0; i < k; ++i) launch();
      CHECK(cudaEventRecord(b, s));
      CHECK(cudaStreamSynchronize(s));
      CHECK(cudaEventElapsedTime(&ms, a, b));
      u.push_back(ms * 1e3 / k);
    }
    std::printf("k=%4d  queued %.3f  graph %.3f  unblocked %.3f\n", k, median(q), median(g), median(u));
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
  }

  int dev = 0, l2 = 0;
  CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  const size_t flush_bytes = 2 * size_t(l2);
  uint4* flush;
  unsigned* sink;
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMalloc(&sink, 4));
  CHECK(cudaMemset(flush, 1, flush_bytes));
  std::printf("== cold sample of the 8 KiB copy (us): median [p25, p75] over 1500 samples, 3 fresh allocations each\n");
  for (int method = 0; method < (cold_only ? 2 : 3); ++method) {
    for (int alloc = 0; alloc < (cold_only ? 1 : 3); ++alloc) {
      // Fresh buffers, a spacer between them so each trial lands elsewhere.
      void* spacer;
      CHECK(cudaMalloc(&spacer, (alloc + 1) * (64u << 20)));
      uint4 *s2, *d2;
      CHECK(cudaMalloc(&s2, 8192));
      CHECK(cudaMalloc(&d2, 8192));
      std::vector<double> t;
      for (int rep = 0; rep < 1500; ++rep) {
        if (method == 0) CHECK(cudaMemsetAsync(flush, rep & 0xff, flush_bytes, s));
        if (method == 1) read_flush<<<132 * 4, 512, 0, s>>>(flush, flush_bytes / 16, sink);
        CHECK(cudaStreamSynchronize(s));
        *flag_h = 0;
        block_kernel<<<1, 1, 0, s>>>(flag_d);
        CHECK(cudaEventRecord(a, s));
        copy16<<<(vecs + 255) / 256, 256, 0, s>>>(d2, s2, vecs);
        CHECK(cudaEventRecord(b, s));
        *flag_h = 1;
        CHECK(cudaStreamSynchronize(s));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms * 1e3);
      }
      std::printf("%-12s alloc %d: %.3f [%.3f, %.3f]\n",
                  method == 0   ? "memset"
                  : method == 1 ? "read-flush"
                                : "no flush",
                  alloc, median(t), quant(t, 0.25), quant(t, 0.75));
      CHECK(cudaFree(s2));
      CHECK(cudaFree(d2));
      CHECK(cudaFree(spacer));
    }
  }
  return 0;
}
