// Experiment (not part of the build): what closes the last ~1% between a one-vector-per-thread
// 16-byte copy and cub::DeviceTransform (TMA bulk copies through shared memory) at 2^28..2^31 f16?
// Varies CTA size, load cache hints (.nc, L1::no_allocate, L2::evict_first) and streaming stores
// (.cs), cold medians (L2 flushed before each launch), all in one run.
//   nvcc -O3 -std=c++20 -arch=sm_90 tools/studies/copy_hint_sweep.cu -o /tmp/hints && /tmp/hints
#include <cuda_runtime.h>
#include <cub/device/device_transform.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cold_timer.cuh"

enum load_hint { ld_plain, ld_nc_noalloc, ld_evict_first };
enum store_hint { st_plain, st_cs };

template <load_hint L>
__device__ __forceinline__ uint4 load(const uint4* p) {
  uint4 v;
  if constexpr (L == ld_plain) {
    v = *p;
  } else if constexpr (L == ld_nc_noalloc) {
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
  } else {
    std::uint64_t policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(policy));
  }
  return v;
}

template <store_hint S>
__device__ __forceinline__ void store(uint4* p, const uint4& v) {
  if constexpr (S == st_plain) {
    *p = v;
  } else {
    asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
  }
}

template <int Threads, load_hint L, store_hint S>
__global__ void __launch_bounds__(Threads) copy16(uint4* d, const uint4* s, std::uint64_t v) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * Threads + threadIdx.x;
  if (i < v) store<S>(d + i, load<L>(s + i));
}

// One chunk per CTA, entirely through the TMA engine: a bulk load global -> shared completing on an
// mbarrier, then a bulk store shared -> global. One thread issues both; sm_90+.
template <int Chunk>
__global__ void __launch_bounds__(32) bulk_copy(std::byte* d, const std::byte* s, std::uint64_t bytes) {
  extern __shared__ __align__(128) std::byte smem[];
  __shared__ __align__(8) std::uint64_t bar;
  if (threadIdx.x != 0) return;
  const std::uint64_t at = std::uint64_t{blockIdx.x} * Chunk;
  const unsigned n = static_cast<unsigned>(bytes - at < Chunk ? bytes - at : Chunk);  // multiple of 16
  const unsigned sbar = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  const unsigned ssm = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sbar));
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sbar), "r"(n) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(ssm),
               "l"(s + at), "r"(n), "r"(sbar)
               : "memory");
  asm volatile(
      "{\n .reg .pred p;\n wait:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n @!p bra wait;\n}" ::"r"(sbar)
      : "memory");
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(d + at), "r"(ssm), "r"(n)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

// CUB's Hopper shape: one bulk load of the CTA's chunk into shared memory (TMA, one thread issues
// it), then every thread reads 16-byte vectors from shared memory and stores them with STG.128.
template <int Threads, int Chunk>
__global__ void __launch_bounds__(Threads) bulk_load_stg(uint4* d, const std::byte* s, std::uint64_t bytes) {
  extern __shared__ __align__(128) std::byte smem[];
  __shared__ __align__(8) std::uint64_t bar;
  const std::uint64_t at = std::uint64_t{blockIdx.x} * Chunk;
  const unsigned n = static_cast<unsigned>(bytes - at < Chunk ? bytes - at : Chunk);  // multiple of 16
  const unsigned sbar = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  const unsigned ssm = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sbar));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sbar), "r"(n) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(ssm),
                 "l"(s + at), "r"(n), "r"(sbar)
                 : "memory");
  }
  __syncthreads();
  asm volatile(
      "{\n .reg .pred p;\n wait:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n @!p bra wait;\n}" ::"r"(sbar)
      : "memory");
  const uint4* sv = reinterpret_cast<const uint4*>(smem);
  uint4* dv = d + at / 16;
#pragma unroll
  for (unsigned i = threadIdx.x; i < Chunk / 16; i += Threads)
    if (i < n / 16) dv[i] = sv[i];
}

struct identity {
  __device__ __half operator()(__half x) const { return x; }
};

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s\n", prop.name);
  cold_timer timer;
  for (int k : {24, 28, 31}) {
    const std::uint64_t n = 1ull << k, bytes = n * 2, v = bytes / 16;
    uint4 *s, *d;
    CHECK(cudaMalloc(&s, bytes));
    CHECK(cudaMalloc(&d, bytes));
    CHECK(cudaMemset(s, 1, bytes));
    auto time = [&](const char* name, auto launch) {
      const float ms = timer.median_ms(launch, 31);
      std::printf("2^%d %-34s %9.4f ms %8.1f GB/s\n", k, name, ms, gbps(2.0 * bytes, ms));
    };
#define K(T, L, S) time(#T " " #L " " #S, [&] { copy16<T, L, S><<<(v + T - 1) / T, T>>>(d, s, v); })
    for (int rep = 0; rep < 2; ++rep) {
      time("cub", [&] {
        CHECK(cub::DeviceTransform::Transform(reinterpret_cast<const __half*>(s), reinterpret_cast<__half*>(d),
                                              static_cast<std::int64_t>(n), identity{}));
      });
      time("memcpy", [&] { CHECK(cudaMemcpyAsync(d, s, bytes, cudaMemcpyDeviceToDevice)); });
      K(256, ld_plain, st_plain);
      K(512, ld_plain, st_plain);
      K(128, ld_plain, st_plain);
      K(64, ld_plain, st_plain);
#define B(C)                                                                                    \
  CHECK(cudaFuncSetAttribute(bulk_copy<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, C));    \
  time("bulk " #C, [&] {                                                                        \
    bulk_copy<C><<<(bytes + C - 1) / C, 32, C>>>(reinterpret_cast<std::byte*>(d),               \
                                                 reinterpret_cast<const std::byte*>(s), bytes); \
  })
      B(32768);
#define H(T, C)                                                                                     \
  CHECK(cudaFuncSetAttribute(bulk_load_stg<T, C>, cudaFuncAttributeMaxDynamicSharedMemorySize, C)); \
  time("bulk_load_stg " #T " " #C,                                                                  \
       [&] { bulk_load_stg<T, C><<<(bytes + C - 1) / C, T, C>>>(d, reinterpret_cast<const std::byte*>(s), bytes); })
      H(128, 4096);
      H(256, 4096);
      H(256, 8192);
      H(256, 16384);
      H(512, 16384);
      H(128, 8192);
    }
    {  // the bulk copy must copy: check against a fresh pattern
      CHECK(cudaMemset(s, 7, bytes));
      CHECK(cudaMemset(d, 0, bytes));
      CHECK(cudaFuncSetAttribute(bulk_copy<32768>, cudaFuncAttributeMaxDynamicSharedMemorySize, 32768));
      bulk_copy<32768><<<(bytes + 32767) / 32768, 32, 32768>>>(reinterpret_cast<std::byte*>(d),
                                                               reinterpret_cast<const std::byte*>(s), bytes);
      CHECK(cudaDeviceSynchronize());
      std::vector<unsigned char> h(1 << 20);
      CHECK(cudaMemcpy(h.data(), reinterpret_cast<std::byte*>(d) + bytes - h.size(), h.size(), cudaMemcpyDeviceToHost));
      std::printf("2^%d bulk check: %s\n", k,
                  std::all_of(h.begin(), h.end(), [](unsigned char c) { return c == 7; }) ? "ok" : "WRONG");
    }
    CHECK(cudaFree(s));
    CHECK(cudaFree(d));
  }
  return 0;
}
