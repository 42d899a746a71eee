#include "harness/fill.hpp"
#include "memlab/error.cuh"

namespace memlab {
namespace {

// Grid-stride; each thread writes 4 consecutive bytes (test data, not a timed path).
__global__ void fill_random_kernel(std::uint8_t* dst, std::size_t bytes, std::uint64_t seed) {
  const std::size_t stride = 4ull * gridDim.x * blockDim.x;
  for (std::size_t i = 4ull * (blockIdx.x * std::size_t{blockDim.x} + threadIdx.x); i < bytes; i += stride) {
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
  const std::size_t needed = (bytes + 4 * threads - 1) / (4 * threads);
  const auto blocks = static_cast<unsigned>(needed < 65536 ? needed : 65536);
  fill_random_kernel<<<blocks, threads, 0, stream>>>(reinterpret_cast<std::uint8_t*>(dst), bytes, seed);
  MEMLAB_CUDA_CHECK_LAUNCH();
}

}  // namespace memlab
