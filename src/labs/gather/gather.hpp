// The gather lab's host-side model: out[i] = table[idx[i]] for i < n, with the same multiset of
// indices in random or in ascending order. The lab (kernels, reference, table): gather.cu.
//
// Assumptions: idx is u32 (a table of at most 2^32 elements), the table and out start at their
// 256-byte aligned allocations. The indices of a case are fixed when it is prepared (the same
// seed for both orders, so both gather exactly the same elements); the table's content is fresh
// random data at every reset.
#pragma once

#include <cstddef>
#include <cstdint>

#include "harness/fill.hpp"
#include "harness/lab.hpp"
#include "harness/sectors.hpp"
#include "memlab/arch/config.cuh"

namespace memlab::labs::gather {

// The order a rung's indices come in (its traits in the table): the draw as is, or sorted ascending.
// Both are the same multiset, so both gather exactly the same elements.
enum class index_order { random, sorted };
struct gather_rung {
  index_order order = index_order::random;
};

inline constexpr int threads_per_cta = 256;
// Lookups per thread, all index loads then all table loads issued before the first store: four
// independent table reads in flight per thread hide part of each random read's latency.
inline constexpr int lookups_per_thread = 4;
inline constexpr std::uint64_t max_table_elements = std::uint64_t{1} << 32;  // u32 indices
// Lookups a case may have: the merge sort counts items in 32 bits.
// 2^31: idx is u32 and the sort's offsets are 32-bit (cub::DeviceMergeSort with an int count), and
// verify() holds idx and out on the host.
inline constexpr std::uint64_t max_lookups = std::uint64_t{1} << 31;

// Index i of the random order, uniform over [0, table_elements): the high half of a 32 x 32-bit
// product maps a random u32 onto the table without a division. Host and device agree.
MEMLAB_HOST_DEVICE inline std::uint32_t random_index(std::uint64_t seed, std::uint64_t i,
                                                     std::uint64_t table_elements) {
  const std::uint64_t r = mix64(seed ^ mix64(i)) & 0xffffffffull;
  return static_cast<std::uint32_t>((r * table_elements) >> 32);
}

// The index seed of a case: fixed by (n, table elements), so a rerun gathers the same elements.
std::uint64_t index_seed(std::uint64_t n, std::uint64_t table_elements);

launch_policy plan(std::uint64_t n, std::size_t elem_size);

const lab& table();

}  // namespace memlab::labs::gather
