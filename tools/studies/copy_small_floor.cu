// Experiment for docs/notes/copy.md, "Small copies on the launch floor": where a small memlab::copy's time
// goes next to cudaMemcpyAsync's, on the GPU side (a cold sample hides the host's launch). In one process,
// f16 aligned sizes 2^12..2^24, cold samples (a memset of 2 x L2 flushes it; a kernel spinning on a host flag
// holds the stream while the host enqueues start event, launch, stop event), interleaved: each round one sample
// of every contender, the order rotating. Then the same without the flush (warm: code, parameters and data in L2).
//
//   memcpy          cudaMemcpyAsync, device to device
//   memlab          memlab::copy_bytes (this binary's copy of the library's kernels: aligned, the edge-free body)
//   memlab_edges    the same body behind CTA 0's head-and-tail code: what memlab::copy ran before
//   memlab_u1/_u2/_u4  memlab::launch_copy with 1 / 2 / 4 vectors a thread (the same kernel family; u1 is the plan of
//                   every size on an H100 before copies of two to four waves ran as one wave)
//   plain<T>        a minimal copy: one 16-byte vector a thread, T threads a CTA, 32-bit index, no edge code
//   plain256_twin   plain256 compiled twice (another symbol, other addresses): the spread placement alone makes
//   plain256_u2     two vectors a thread
//   gridstride      SMs x 8 CTAs of 256, a grid-stride loop
//   empty1          an empty kernel, 1 CTA of 32: the launch floor
//   empty_grid      the empty kernel on memlab's grid (CTAs of 256): the floor of memlab's launch shape
//
// Every copy is verified first (random bytes, the destination poisoned). Prints, per size, each contender's
// median (us) and its paired median difference from memcpy (ns; a round's samples are paired), cold then warm.
//   nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -Iinclude -o copy_small_floor \
//        tools/studies/copy_small_floor.cu && ./copy_small_floor [samples=100] [first=12] [last=24] [peer]
//   (first and last: log2 of the f16 element counts; peer: a GPU whose memory receives the copies, peer access on)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "check.cuh"
#include "memlab/copy.cuh"

__global__ void block_kernel(volatile int* flag) {
  while (*flag == 0) {
  }
}

__global__ void empty_kernel() {}

template <int Threads, int Tag>
__global__ void __launch_bounds__(Threads) plain_copy(uint4* __restrict__ d, const uint4* __restrict__ s, unsigned n) {
  const unsigned i = blockIdx.x * Threads + threadIdx.x;
  if (i < n) d[i] = s[i];
}

template <int Threads, int U>
__global__ void __launch_bounds__(Threads)
    plain_copy_u(uint4* __restrict__ d, const uint4* __restrict__ s, unsigned n) {
  const unsigned base = blockIdx.x * Threads * U + threadIdx.x;
  uint4 r[U];
#pragma unroll
  for (int u = 0; u < U; ++u)
    if (base + u * Threads < n) r[u] = s[base + u * Threads];
#pragma unroll
  for (int u = 0; u < U; ++u)
    if (base + u * Threads < n) d[base + u * Threads] = r[u];
}

__global__ void __launch_bounds__(256)
    grid_stride_copy(uint4* __restrict__ d, const uint4* __restrict__ s, unsigned n) {
  for (unsigned i = blockIdx.x * 256 + threadIdx.x; i < n; i += gridDim.x * 256) d[i] = s[i];
}

static double quant(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double h = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(h);
  return lo + 1 < v.size() ? v[lo] + (h - static_cast<double>(lo)) * (v[lo + 1] - v[lo]) : v.back();
}

struct contender {
  std::string name;
  std::function<void(void* dst, const void* src, size_t bytes, cudaStream_t s)> launch;
  bool copies = true;
};

int main(int argc, char** argv) {
  const int samples = argc > 1 ? std::atoi(argv[1]) : 100;
  const int lg_first = argc > 2 ? std::atoi(argv[2]) : 12, lg_last = argc > 3 ? std::atoi(argv[3]) : 24;
  const int peer = argc > 4 ? std::atoi(argv[4]) : -1;  // a second GPU: the destinations live there (peer access on)
  int dev = 0, l2 = 0, sms = 0;
  if (peer >= 0) {
    CHECK(cudaSetDevice(peer));
    CHECK(cudaDeviceEnablePeerAccess(dev, 0));
    CHECK(cudaSetDevice(dev));
    CHECK(cudaDeviceEnablePeerAccess(peer, 0));
  }
  CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, dev));
  cudaStream_t st;
  CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  int *flag_h, *flag_d;
  CHECK(cudaHostAlloc(&flag_h, sizeof(int), cudaHostAllocMapped));
  CHECK(cudaHostGetDevicePointer(&flag_d, flag_h, 0));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  const size_t flush_bytes = 2 * static_cast<size_t>(l2);
  void* flush;
  CHECK(cudaMalloc(&flush, flush_bytes));

  const auto vecs = [](size_t bytes) { return static_cast<unsigned>(bytes / 16); };
  const auto plan_with = [](void* d, const void* s, size_t bytes, int u) {
    int device = 0;
    cudaGetDevice(&device);
    memlab::copy_device cd;
    memlab::detail::copy_device_of(device, cd);
    memlab::copy_plan p =
        memlab::plan_copy(reinterpret_cast<std::uintptr_t>(d), reinterpret_cast<std::uintptr_t>(s), bytes, cd);
    p.vectors_per_thread = u;
    const std::size_t per_cta = static_cast<std::size_t>(p.threads) * static_cast<std::size_t>(u);
    p.grid = (p.vectors + per_cta - 1) / per_cta;
    return p;
  };
  std::vector<contender> cs = {
      {"memcpy", [](void* d, const void* s, size_t n,
                    cudaStream_t t) { CHECK(cudaMemcpyAsync(d, s, n, cudaMemcpyDefault, t)); }},
      {"memlab", [](void* d, const void* s, size_t n, cudaStream_t t) { CHECK(memlab::copy_bytes(d, s, n, t)); }},
      {"memlab_edges",
       [](void* d, const void* s, size_t n, cudaStream_t t) {
         // What memlab::copy launched for every aligned copy before the edge-free body: the same body behind
         // CTA 0's head-and-tail code (the plan of an aligned copy: head 0, n / 16 vectors, tail 0).
         const memlab::detail::copy_args args{
             static_cast<std::byte*>(d), static_cast<const std::byte*>(s), 0, n / 16, 0, 0};
         memlab::detail::copy_aligned16_kernel<1, true>
             <<<static_cast<unsigned>((n / 16 + 255) / 256), 256, 0, t>>>(args);
       }},
      {"memlab_u1", [&](void* d, const void* s, size_t n,
                        cudaStream_t t) { CHECK(memlab::launch_copy(plan_with(d, s, n, 1), d, s, t)); }},
      {"memlab_u2", [&](void* d, const void* s, size_t n,
                        cudaStream_t t) { CHECK(memlab::launch_copy(plan_with(d, s, n, 2), d, s, t)); }},
      {"memlab_u4", [&](void* d, const void* s, size_t n,
                        cudaStream_t t) { CHECK(memlab::launch_copy(plan_with(d, s, n, 4), d, s, t)); }},
      {"plain128",
       [&](void* d, const void* s, size_t n, cudaStream_t t) {
         plain_copy<128, 0>
             <<<(vecs(n) + 127) / 128, 128, 0, t>>>(static_cast<uint4*>(d), static_cast<const uint4*>(s), vecs(n));
       }},
      {"plain256",
       [&](void* d, const void* s, size_t n, cudaStream_t t) {
         plain_copy<256, 0>
             <<<(vecs(n) + 255) / 256, 256, 0, t>>>(static_cast<uint4*>(d), static_cast<const uint4*>(s), vecs(n));
       }},
      {"plain256_twin",
       [&](void* d, const void* s, size_t n, cudaStream_t t) {
         plain_copy<256, 1>
             <<<(vecs(n) + 255) / 256, 256, 0, t>>>(static_cast<uint4*>(d), static_cast<const uint4*>(s), vecs(n));
       }},
      {"plain512",
       [&](void* d, const void* s, size_t n, cudaStream_t t) {
         plain_copy<512, 0>
             <<<(vecs(n) + 511) / 512, 512, 0, t>>>(static_cast<uint4*>(d), static_cast<const uint4*>(s), vecs(n));
       }},
      {"plain1024",
       [&](void* d, const void* s, size_t n, cudaStream_t t) {
         plain_copy<1024, 0>
             <<<(vecs(n) + 1023) / 1024, 1024, 0, t>>>(static_cast<uint4*>(d), static_cast<const uint4*>(s), vecs(n));
       }},
      {"plain256_u2",
       [&](void* d, const void* s, size_t n, cudaStream_t t) {
         plain_copy_u<256, 2>
             <<<(vecs(n) + 511) / 512, 256, 0, t>>>(static_cast<uint4*>(d), static_cast<const uint4*>(s), vecs(n));
       }},
      {"gridstride",
       [&](void* d, const void* s, size_t n, cudaStream_t t) {
         const unsigned g = std::min<unsigned>((vecs(n) + 255) / 256, static_cast<unsigned>(sms) * 8);
         grid_stride_copy<<<g, 256, 0, t>>>(static_cast<uint4*>(d), static_cast<const uint4*>(s), vecs(n));
       }},
      {"empty1", [](void*, const void*, size_t, cudaStream_t t) { empty_kernel<<<1, 32, 0, t>>>(); }, false},
      {"empty_grid",
       [&](void*, const void*, size_t n, cudaStream_t t) { empty_kernel<<<(vecs(n) + 255) / 256, 256, 0, t>>>(); },
       false},
  };

  std::printf("# %s, %d SMs, L2 %d MB; f16 aligned copies; %d interleaved samples per contender and size%s\n",
              prop.name, sms, l2 >> 20, samples, peer >= 0 ? "; into GPU peer's memory (the copies run on GPU 0)" : "");
  for (int warm = 0; warm < 2; ++warm) {
    std::printf("\n== %s: median us | paired median difference from memcpy, ns\n%-8s",
                warm ? "warm (no flush)" : "cold (L2 flushed)", "n");
    for (const auto& c : cs) std::printf(" %16s", c.name.c_str());
    std::printf("\n");
    for (int lg = lg_first; lg <= lg_last; ++lg) {
      const size_t bytes = size_t{2} << lg;
      void* src;
      CHECK(cudaMalloc(&src, bytes));
      std::vector<unsigned char> host(bytes);
      for (size_t i = 0; i < bytes; ++i) host[i] = static_cast<unsigned char>(1 + (i * 2654435761u >> 13) % 255);
      CHECK(cudaMemcpy(src, host.data(), bytes, cudaMemcpyHostToDevice));
      std::vector<void*> dst(cs.size());
      std::vector<unsigned char> back(bytes);
      for (size_t k = 0; k < cs.size(); ++k) {
        if (peer >= 0) CHECK(cudaSetDevice(peer));
        CHECK(cudaMalloc(&dst[k], bytes));
        CHECK(cudaMemset(dst[k], 0, bytes));
        if (peer >= 0) CHECK(cudaSetDevice(dev));
        cs[k].launch(dst[k], src, bytes, st);
        CHECK(cudaStreamSynchronize(st));
        CHECK(cudaGetLastError());
        if (cs[k].copies) {
          CHECK(cudaMemcpy(back.data(), dst[k], bytes, cudaMemcpyDeviceToHost));
          if (std::memcmp(back.data(), host.data(), bytes) != 0) {
            std::printf("%s at 2^%d: WRONG BYTES\n", cs[k].name.c_str(), lg);
            return 1;
          }
        }
      }
      std::vector<std::vector<double>> t(cs.size());
      for (int r = 0; r < samples; ++r) {
        for (size_t j = 0; j < cs.size(); ++j) {
          const size_t k = (j + static_cast<size_t>(r)) % cs.size();
          if (!warm) CHECK(cudaMemsetAsync(flush, r & 0xff, flush_bytes, st));
          CHECK(cudaStreamSynchronize(st));
          *flag_h = 0;
          block_kernel<<<1, 1, 0, st>>>(flag_d);
          CHECK(cudaEventRecord(a, st));
          cs[k].launch(dst[k], src, bytes, st);
          CHECK(cudaEventRecord(b, st));
          *flag_h = 1;
          CHECK(cudaStreamSynchronize(st));
          float ms = 0;
          CHECK(cudaEventElapsedTime(&ms, a, b));
          t[k].push_back(ms * 1e3);
        }
      }
      std::printf("2^%-6d", lg);
      for (size_t k = 0; k < cs.size(); ++k) {
        std::vector<double> d(t[k].size());
        for (size_t i = 0; i < d.size(); ++i) d[i] = (t[k][i] - t[0][i]) * 1e3;
        std::printf(" %8.3f %+7.0f", quant(t[k], 0.5), quant(d, 0.5));
      }
      std::printf("\n");
      for (void* p : dst) CHECK(cudaFree(p));
      CHECK(cudaFree(src));
    }
  }
  return 0;
}
