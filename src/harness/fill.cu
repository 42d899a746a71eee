#include "harness/fill.hpp"

#include <cuda/cmath>

#include <atomic>
#include <chrono>

#include "harness/error.hpp"

namespace memlab {

std::uint64_t next_seed() {
  static std::atomic<std::uint64_t> counter{0};
  const auto now = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return mix64(now ^ mix64(counter.fetch_add(1)));
}
namespace {

// Each thread writes 4 consecutive bytes, then moves on by the whole grid (test data, not a timed path).
__global__ void fill_random_kernel(std::uint8_t* dst, std::size_t bytes, std::uint64_t seed) {
  const std::size_t step = 4ull * gridDim.x * blockDim.x;
  for (std::size_t i = 4ull * (blockIdx.x * std::size_t{blockDim.x} + threadIdx.x); i < bytes; i += step) {
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      if (i + b < bytes) dst[i + b] = random_byte(seed, i + b);
    }
  }
}

}  // namespace

void fill_random(std::byte* dst, std::size_t bytes, std::uint64_t seed, cudaStream_t stream) {
  if (bytes == 0) return;
  constexpr int threads = 256;
  const std::size_t needed = cuda::ceil_div(bytes, 4 * threads);
  const auto blocks = static_cast<unsigned>(needed < 65536 ? needed : 65536);
  fill_random_kernel<<<blocks, threads, 0, stream>>>(reinterpret_cast<std::uint8_t*>(dst), bytes, seed);
  MEMLAB_CUDA_CHECK_LAUNCH();
}

}  // namespace memlab
