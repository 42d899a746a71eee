// The copy lab's host-side model (copy.cu is the lab): its rungs and their launch policies, for
// the lab's tests.
#pragma once

#include <cstddef>
#include <cstdint>

#include "harness/lab.hpp"

namespace memlab::labs::copy {

// How a rung moves the bytes, as far as planning its launch goes.
enum class copy_method {
  elements,  // one element per thread
  vectors,   // one vector of vec_bytes per thread, the tail element-wise
  unrolled,  // `unroll_vectors` 16-byte vectors in flight per thread, grid-stride, grid by bytes in flight
  library,   // memlab::copy (include/memlab/copy.cuh): plans from the real addresses
  peer,      // a library peer: its own launch configuration
};
// What the lab's model reads of a rung (its table record's traits).
struct rung_traits {
  copy_method method = copy_method::peer;
  int vec_bytes = 0;  // vectors: the width of each access
};

inline constexpr int threads_per_cta = 256;
// vec16_unroll keeps this many 16-byte vectors in flight per thread before its first store.
inline constexpr int unroll_vectors = 4;
// Bytes of loads in flight per SM that vec16_unroll's grid is sized by: 4 CTAs of 256 threads x
// 64 B. H100 SXM (132 SMs), measured (docs/notes/copy.md): a persistent 16-byte copy saturates at
// 16-32 KiB per SM (Little's law at ~0.8 us predicts ~20 KB); 64 KiB is on the plateau with margin.
inline constexpr int bytes_in_flight_per_sm = 64 * 1024;

// The launch of the ladder's rungs (memlab::copy and the peers plan their own: all zero).
launch_policy plan(const rung_traits& r, std::size_t elem_size, std::uint64_t n, int sm_count);

const lab& table();

}  // namespace memlab::labs::copy
