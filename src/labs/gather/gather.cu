// The gather lab: access order. out[i] = table[idx[i]] for n lookups, the same indices in random or
// in ascending order, tables from L2-resident to several times L2.
//
// Assumes: idx is u32 (tables of at most 2^32 elements), f32 or f64 data. The indices of a case are
// drawn on the device when it is prepared, from a seed fixed by (n, table elements), then sorted for
// the sorted order; the table gets fresh random bytes at every reset.
//
// Reading order: the CPU reference, the kernel, the setup that makes the indices and counts what they
// touch, then the launchers and the table.
//
// One gather, launched on two orders of the same indices:
//   random  idx uniform over the table: neighbouring lanes hit unrelated sectors, so a warp's 32
//           lookups cost up to 32 sectors (32 B fetched per 4-byte f32 used) and, once the table
//           outgrows L2, mostly DRAM round trips.
//   sorted  the same multiset ascending: neighbouring lanes hit the same or adjacent sectors, so a
//           warp reads a few contiguous sectors and the table streams through L2 once.
// The kernel is the same; the template tag only gives each variant its own symbol for `inspect`.
#include <cub/device/device_merge_sort.cuh>
#include <cuda/cmath>
#include <cuda/std/functional>

#include <cstdint>
#include <vector>

#include "harness/buffer.hpp"
#include "harness/check.hpp"
#include "harness/dispatch.cuh"
#include "harness/error.hpp"
#include "harness/launch.cuh"
#include "labs/gather/gather.hpp"

namespace memlab::labs::gather {

// ---- the CPU reference ----------------------------------------------------------------------------

// Byte b of out[i] is byte idx[i] x elem + b of the table's random stream.
std::uint8_t reference_byte(std::uint64_t table_seed, const std::vector<std::uint32_t>& idx, std::size_t es,
                            std::uint64_t pos) {
  return random_byte(table_seed, std::uint64_t{idx[pos / es]} * es + pos % es);
}

std::uint64_t index_seed(std::uint64_t n, std::uint64_t table_elements) {
  return mix64(0x6761746865720000ull ^ mix64(n) ^ mix64(~table_elements));  // "gather"
}

launch_policy plan(std::uint64_t n, std::size_t elem_size) {
  const std::uint64_t tile = std::uint64_t{threads_per_cta} * lookups_per_thread;
  return {.threads = threads_per_cta,
          .items_per_thread = lookups_per_thread,
          .vec_bytes = static_cast<int>(elem_size),
          .grid = cuda::ceil_div(n, tile)};
}

// ---- the kernel -------------------------------------------------------------------------------------

struct random_order {};
struct sorted_order {};

// lookups_per_thread lookups per thread, lookup e = tile start + u x blockDim + threadIdx, so each
// load instruction carries 32 consecutive lookups across the warp. All index loads, then all
// table loads, are issued before the first store. Full tiles unchecked, the last tile rolled.
template <class T, class Order>
__global__ void __launch_bounds__(threads_per_cta)
    gather_kernel(T* __restrict__ out, const T* __restrict__ table, const std::uint32_t* __restrict__ idx,
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

// ---- the setup: the two orders of one draw, and what they touch ------------------------------------------

namespace {

constexpr int setup_threads = 256;

unsigned setup_grid(std::uint64_t n) {
  const std::uint64_t needed = cuda::ceil_div(n, setup_threads);
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

// What the indices of a case touch, counted on the device when it is prepared.
struct index_stats {
  std::uint64_t distinct_elements = 0;  // distinct idx values: the table elements a gather must read
  std::uint64_t warp_sectors = 0;       // per warp access of 32 consecutive lookups, distinct 32-byte
                                        // table sectors, summed
};

void generate_random(std::uint32_t* idx, std::uint64_t n, std::uint64_t seed, std::uint64_t table_elements) {
  if (n == 0) return;
  generate_kernel<<<setup_grid(n), setup_threads>>>(idx, n, seed, table_elements);
  MEMLAB_CUDA_CHECK_LAUNCH();
}

// sorted[0, n) = random[0, n) in ascending order. Synchronous. A merge sort, not
// cub::DeviceRadixSort: CUB 3.0's radix onesweep kernel spills registers on sm_100 (ptxas
// -warn-spills is an error in this build). Setup only, never timed.
void sort_indices(std::uint32_t* sorted, const std::uint32_t* random, std::uint64_t n) {
  if (n == 0) return;
  if (n > max_lookups) throw std::invalid_argument("gather: more than 2^31 lookups");
  const auto items = static_cast<std::uint32_t>(n);
  std::size_t temp_bytes = 0;
  MEMLAB_CUDA_CHECK(cub::DeviceMergeSort::SortKeysCopy(nullptr, temp_bytes, random, sorted, items,
                                                       ::cuda::std::less<std::uint32_t>{}));
  device_buffer temp(temp_bytes);
  MEMLAB_CUDA_CHECK(cub::DeviceMergeSort::SortKeysCopy(temp.data(), temp_bytes, random, sorted, items,
                                                       ::cuda::std::less<std::uint32_t>{}));
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
}

// Distinct elements from the sorted order; warp sectors of `order` (random or sorted). Synchronous.
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

// ---- launchers, refusals, plans ------------------------------------------------------------------------

enum buffer_index { table_buffer, out_buffer, idx_buffer };

// The element types the lab is built for (f32, f64: a table of 4- or 8-byte elements).
using lab_dtypes = dtype_list<float, double>;

const axis table_bytes_axis{.name = "table_bytes",
                            .meaning = "bytes of the table gathered from",
                            .unit = "bytes",
                            .grammar = axis_grammar::bytes,
                            // Fixed sizes around the H100's 50 MiB L2 (200 MiB = 4 x L2), not relative to
                            // the device's L2: a lab's defaults do not see the device.
                            .defaults = "8MiB,32MiB,128MiB,200MiB,512MiB,2GiB",
                            .min = 1,
                            .max = std::uint64_t{1} << 40};

std::uint64_t table_elements(const case_params& p) { return p[table_bytes_axis] / size_of(p.type); }

template <class Order>
struct order_rung {
  template <class T>
  static auto kernel() {
    return &gather_kernel<T, Order>;
  }
};

template <class Order>
void launch_order(const case_ctx& c, cudaStream_t s) {
  const launch_policy& p = c.plan.policy;
  if (c.p.n == 0 || p.grid == 0) return;
  const dim3 grid = grid_of(p.grid, "gather"), block(static_cast<unsigned>(p.threads));
  const auto* idx = c.ptr<const std::uint32_t>(idx_buffer);
  visit_dtype(lab_dtypes{}, c.p.type, [&](auto tag) {
    using T = decltype(tag);
    order_rung<Order>::template kernel<T>()<<<grid, block, 0, s>>>(c.ptr<T>(out_buffer), c.ptr<const T>(table_buffer),
                                                                   idx, c.p.n);
  });
  MEMLAB_CUDA_CHECK_LAUNCH();
}

std::optional<std::string> refusal(const variant& /*v*/, const case_params& p, const device_info& /*dev*/) {
  if (p.type != dtype::f32 && p.type != dtype::f64) {
    return "gather is built for f32 and f64 (got " + std::string(to_string(p.type)) + ")";
  }
  const std::uint64_t es = size_of(p.type), tb = p[table_bytes_axis];
  if (p.n > max_lookups) {
    return "at most 2^31 lookups (the sorted order is made by a merge sort with 32-bit counts, and the check holds "
           "idx on the host; got " +
           std::to_string(p.n) + ")";
  }
  if (tb == 0) return std::string("a table of 0 bytes has nothing to gather from (--table-bytes)");
  if (tb % es != 0) {
    return "--table-bytes " + std::to_string(tb) + " is not a whole number of " + std::to_string(es) + "-byte " +
           std::string(to_string(p.type)) + " elements";
  }
  if (tb / es > max_table_elements) {
    return "a table of " + std::to_string(tb / es) + " elements needs indices wider than u32 (at most 2^32 elements, " +
           format_bytes(max_table_elements * es) + ")";
  }
  return std::nullopt;
}

// Bytes are known once the indices are drawn (setup): the table elements the lookups need (each
// distinct index once), the indices, the output.
case_plan plan_case(const variant& /*v*/, const case_params& p, const device_info& /*dev*/) {
  const std::uint64_t es = size_of(p.type), idx_bytes = p.n * sizeof(std::uint32_t);
  case_plan out;
  out.policy = plan(p.n, es);
  out.working_set = p[table_bytes_axis] + idx_bytes + p.n * es;
  out.buffers = {{"table", p[table_bytes_axis], buffer_role::input},
                 {"out", p.n * es, buffer_role::output},
                 {"idx", idx_bytes, buffer_role::scratch}};
  // While the case is prepared: the other order of the indices and the merge sort's scratch
  // (about one more copy of the keys).
  out.transient_bytes = 2 * idx_bytes + (std::uint64_t{1} << 20);
  return out;
}

// Both orders come from one draw: the variant keeps its own in idx, the other lives only here.
void setup(case_ctx& c) {
  const std::uint64_t n = c.p.n, elements = table_elements(c.p);
  const bool random = c.v->traits_as<gather_rung>().order == index_order::random;
  device_buffer other(n * sizeof(std::uint32_t));
  auto* idx = c.ptr<std::uint32_t>(idx_buffer);
  auto* tmp = reinterpret_cast<std::uint32_t*>(other.data());
  std::uint32_t* r = random ? idx : tmp;
  std::uint32_t* s = random ? tmp : idx;
  generate_random(r, n, index_seed(n, elements), elements);
  sort_indices(s, r, n);
  const index_stats stats = count_touched(s, idx, n, size_of(c.p.type));
  const std::uint64_t es = size_of(c.p.type), rest = n * sizeof(std::uint32_t) + n * es;
  c.plan.bytes = stats.distinct_elements * es + rest;
  c.plan.hardware_bytes = stats.warp_sectors * sector_bytes + rest;  // table sectors per warp access, summed
}

std::string verify(const case_ctx& c) {
  const std::uint64_t n = c.p.n, elements = table_elements(c.p), seed = index_seed(n, elements);
  const std::size_t es = size_of(c.p.type);
  std::vector<std::uint32_t> idx(n);
  if (n > 0)
    MEMLAB_CUDA_CHECK(cudaMemcpy(idx.data(), c.ptr(idx_buffer), n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  // The indices first: the order the variant claims, over exactly the multiset of the draw.
  if (c.v->traits_as<gather_rung>().order == index_order::random) {
    const auto bad = first_where(n, [&](std::uint64_t i) { return idx[i] != random_index(seed, i, elements); });
    if (bad < n) return "idx[" + std::to_string(bad) + "] = " + std::to_string(idx[bad]) + " is not the random draw";
  } else {
    const auto bad = first_where(n, [&](std::uint64_t i) { return i > 0 && idx[i] < idx[i - 1]; });
    if (bad < n) return "idx is not ascending at " + std::to_string(bad);
    // Same multiset as the draw: equal sums of a hash of each value (order-independent).
    std::uint64_t got = 0, want = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      got += mix64(idx[i]);
      want += mix64(random_index(seed, i, elements));
    }
    if (got != want) return "sorted idx is not the same multiset as the random draw";
  }
  const auto outside = first_where(n, [&](std::uint64_t i) { return idx[i] >= elements; });
  if (outside < n)
    return "idx[" + std::to_string(outside) + "] = " + std::to_string(idx[outside]) + " is outside the table";
  const std::uint64_t table_seed = c.seeds[table_buffer];
  return check_bytes(
      c.buffers[out_buffer], 0, n * es, es, [&](std::uint64_t pos) { return reference_byte(table_seed, idx, es, pos); },
      [&](std::uint64_t i) { return "(out[" + std::to_string(i) + "] = table[" + std::to_string(idx[i]) + "])"; });
}

}  // namespace

// ---- the lab's table ------------------------------------------------------------------------------------

const lab& table() {
  static const lab gather_lab{
      .name = "gather",
      .teaches = "access order: the same lookups in random or sorted order, tables from L2-resident to several x L2",
      .dtypes = dtypes_of(lab_dtypes{}),
      .default_dtype = dtype::f32,
      .default_sizes = "2^24",  // a tour; the pages' sweeps at 2^26 are documented commands
      .size_meaning = "lookups (elements gathered)",
      .axes = {table_bytes_axis},
      .roof = roof_kind::dram,
      .variants =
          {
              {
                  .name = "random",
                  .teaches = "idx uniform over the table: each lane of a warp reads its own 32-byte sector",
                  .launch = launch_order<random_order>,
                  .kernels = kernels_per_dtype<order_rung<random_order>>(lab_dtypes{}),
                  .traits = gather_rung{.order = index_order::random},
              },
              {
                  .name = "sorted",
                  .teaches = "the same indices ascending: a warp's lookups share sectors and the table streams once",
                  .launch = launch_order<sorted_order>,
                  .kernels = kernels_per_dtype<order_rung<sorted_order>>(lab_dtypes{}),
                  .traits = gather_rung{.order = index_order::sorted},
              },
          },
      .unsupported = refusal,
      .plan = plan_case,
      .setup = setup,
      .verify = verify,
  };
  return gather_lab;
}

}  // namespace memlab::labs::gather
