// The gather lab's kernels: one gather, launched on two orders of the same indices, and the setup
// that makes those orders (device-side generation, CUB merge sort) and counts what they touch.
//   random  idx uniform over the table: neighbouring lanes hit unrelated sectors, so a warp's 32
//           lookups cost up to 32 sectors (32 B fetched per 4-byte f32 used) and, once the table
//           outgrows L2, mostly DRAM round trips.
//   sorted  the same multiset ascending: neighbouring lanes hit the same or adjacent sectors, so a
//           warp reads a few contiguous sectors and the table streams through L2 once.
// The kernel is the same; the template tag only gives each variant its own symbol for `inspect`.
#include <cub/device/device_merge_sort.cuh>
#include <cuda/std/functional>

#include <cstdint>

#include "harness/buffer.hpp"
#include "harness/dispatch.cuh"
#include "harness/launch.cuh"
#include "labs/gather/gather.hpp"
#include "memlab/error.cuh"

namespace memlab::labs::gather {

struct random_order {};
struct sorted_order {};

// lookups_per_thread lookups per thread, lookup e = tile start + u x blockDim + threadIdx, so each
// load instruction carries 32 consecutive lookups across the warp. All index loads, then all
// table loads, are issued before the first store. Full tiles unchecked, the last tile rolled.
template <class T, class Order>
__global__ void __launch_bounds__(threads_per_cta) gather_kernel(T* __restrict__ out, const T* __restrict__ table,
                                                                 const std::uint32_t* __restrict__ idx,
                                                                 std::uint64_t n) {
  constexpr int items = lookups_per_thread;
  const std::uint64_t tile = std::uint64_t{blockDim.x} * items;
  const std::uint64_t first = blockIdx.x * tile + threadIdx.x;
  if ((blockIdx.x + 1) * tile <= n) {
    std::uint32_t k[items];
#pragma unroll
    for (int u = 0; u < items; ++u) k[u] = idx[first + static_cast<std::uint64_t>(u) * blockDim.x];
    T v[items];
#pragma unroll
    for (int u = 0; u < items; ++u) v[u] = table[k[u]];
#pragma unroll
    for (int u = 0; u < items; ++u) out[first + static_cast<std::uint64_t>(u) * blockDim.x] = v[u];
  } else {
#pragma unroll 1
    for (int u = 0; u < items; ++u) {
      const std::uint64_t e = first + static_cast<std::uint64_t>(u) * blockDim.x;
      if (e < n) out[e] = table[idx[e]];
    }
  }
}

namespace {

constexpr int setup_threads = 256;

unsigned setup_grid(std::uint64_t n) {
  const std::uint64_t needed = (n + setup_threads - 1) / setup_threads;
  return static_cast<unsigned>(needed < 65536 ? needed : 65536);
}

__global__ void generate_kernel(std::uint32_t* idx, std::uint64_t n, std::uint64_t seed, std::uint64_t table_elements) {
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    idx[i] = random_index(seed, i, table_elements);
}

// counts[0] += distinct values of `sorted` (positions where it steps up);
// counts[1] += for each aligned group of 32 lookups of `order`, the distinct sectors it reads
// (a lane counts when it is the lowest lane of its warp with its sector: __match_any_sync).
// The loop bound is block-uniform, so every lane reaches the warp and block collectives.
__global__ void count_kernel(const std::uint32_t* sorted, const std::uint32_t* order, std::uint64_t n,
                             std::uint32_t elems_per_sector, unsigned long long* counts) {
  const unsigned lane = threadIdx.x % 32;
  for (std::uint64_t b = std::uint64_t{blockIdx.x} * blockDim.x; b < n; b += std::uint64_t{gridDim.x} * blockDim.x) {
    const std::uint64_t i = b + threadIdx.x;
    const bool active = i < n;
    const bool steps = active && (i == 0 || sorted[i] != sorted[i - 1]);
    const std::uint32_t sector = active ? order[i] / elems_per_sector : 0xffffffffu;
    const unsigned same = __match_any_sync(0xffffffffu, sector);
    const bool leader = active && static_cast<unsigned>(__ffs(static_cast<int>(same)) - 1) == lane;
    const int distinct = __syncthreads_count(steps);
    const int sectors = __syncthreads_count(leader);
    if (threadIdx.x == 0) {
      atomicAdd(&counts[0], static_cast<unsigned long long>(distinct));
      atomicAdd(&counts[1], static_cast<unsigned long long>(sectors));
    }
  }
}

}  // namespace

void generate_random(std::uint32_t* idx, std::uint64_t n, std::uint64_t seed, std::uint64_t table_elements,
                     cudaStream_t s) {
  if (n == 0) return;
  generate_kernel<<<setup_grid(n), setup_threads, 0, s>>>(idx, n, seed, table_elements);
  MEMLAB_CUDA_CHECK_LAUNCH();
}

void sort_indices(std::uint32_t* sorted, const std::uint32_t* random, std::uint64_t n, std::uint64_t /*table_elements*/) {
  if (n == 0) return;
  // A merge sort, not cub::DeviceRadixSort: CUB 3.0's radix onesweep kernel spills registers on
  // sm_100 (ptxas -warn-spills is an error in this build). Setup only, never timed.
  if (n > max_lookups) throw std::invalid_argument("gather: more than 2^32 - 1 lookups");
  const auto items = static_cast<std::uint32_t>(n);
  std::size_t temp_bytes = 0;
  MEMLAB_CUDA_CHECK(cub::DeviceMergeSort::SortKeysCopy(nullptr, temp_bytes, random, sorted, items,
                                                       ::cuda::std::less<std::uint32_t>{}));
  device_buffer temp(temp_bytes);
  MEMLAB_CUDA_CHECK(cub::DeviceMergeSort::SortKeysCopy(temp.data(), temp_bytes, random, sorted, items,
                                                       ::cuda::std::less<std::uint32_t>{}));
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
}

index_stats count_touched(const std::uint32_t* sorted, const std::uint32_t* order, std::uint64_t n,
                          std::size_t elem_size) {
  if (n == 0) return {};
  device_buffer counts(2 * sizeof(unsigned long long));
  auto* c = reinterpret_cast<unsigned long long*>(counts.data());
  MEMLAB_CUDA_CHECK(cudaMemset(c, 0, counts.size()));
  count_kernel<<<setup_grid(n), setup_threads>>>(sorted, order, n, static_cast<std::uint32_t>(sector_bytes / elem_size),
                                                 c);
  MEMLAB_CUDA_CHECK_LAUNCH();
  unsigned long long host[2] = {0, 0};
  MEMLAB_CUDA_CHECK(cudaMemcpy(host, c, sizeof host, cudaMemcpyDeviceToHost));
  return {host[0], host[1]};
}

void launch_kernel(variant_id v, dtype t, void* out, const void* table, const std::uint32_t* idx, std::uint64_t n,
                   const launch_policy& p, cudaStream_t s) {
  if (n == 0 || p.grid == 0) return;
  const dim3 grid = grid_of(p.grid, "gather"), block(static_cast<unsigned>(p.threads));
  auto run = [&](auto tag) {
    using T = decltype(tag);
    auto* o = static_cast<T*>(out);
    const auto* tb = static_cast<const T*>(table);
    switch (v) {
      case variant_id::random: gather_kernel<T, random_order><<<grid, block, 0, s>>>(o, tb, idx, n); break;
      case variant_id::sorted: gather_kernel<T, sorted_order><<<grid, block, 0, s>>>(o, tb, idx, n); break;
    }
  };
  switch (t) {
    case dtype::f32: run(float{}); break;
    case dtype::f64: run(double{}); break;
    default: throw std::invalid_argument("gather: dtype " + std::string(to_string(t)) + " not built (f32, f64)");
  }
  MEMLAB_CUDA_CHECK_LAUNCH();
}

}  // namespace memlab::labs::gather
