// Random test data that host and device agree on, and the byte-exact check against it.
//
// Byte k of the stream `seed` is a counter-based hash of (seed, k): the GPU fills a gigabyte in
// milliseconds and the CPU reference replays the same bytes without a 4 GiB upload. No byte is ever
// zero, and outputs are poisoned with zero bytes, so an element the kernel never wrote cannot
// pass for a written one.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "memlab/arch/config.cuh"

namespace memlab {

inline constexpr std::uint8_t poison_byte = 0x00;
// Bytes every lab allocates after an output, poisoned and checked: an out-of-bounds store lands there.
inline constexpr std::size_t guard_bytes = 256;

// splitmix64's finaliser: a bijection that mixes every input bit into every output bit.
MEMLAB_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Byte k of stream `seed`, in 1..255.
MEMLAB_HOST_DEVICE inline std::uint8_t random_byte(std::uint64_t seed, std::uint64_t k) {
  const std::uint64_t word = mix64(seed ^ mix64(k >> 3));
  const auto b = static_cast<std::uint8_t>(word >> (8 * (k & 7)));
  return b != 0 ? b : static_cast<std::uint8_t>(1 + (word >> 61));  // never zero
}

// A fresh seed for each call (a process-wide counter mixed with the clock).
std::uint64_t next_seed();

// dst[j] = random_byte(seed, j) for j in [0, bytes). Asynchronous on `stream`.
void fill_random(std::byte* dst, std::size_t bytes, std::uint64_t seed, cudaStream_t stream);

}  // namespace memlab
