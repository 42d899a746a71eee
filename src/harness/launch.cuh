// Small pieces every lab's kernels.cu uses. Device-side translation units only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace memlab {

// This thread's index in the whole grid, 64-bit (a grid of 2^31 CTAs x 256 threads overflows 32).
__device__ __forceinline__ std::uint64_t global_thread() {
  return std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
}

// The grid dimension for `blocks` CTAs; throws std::invalid_argument (naming `lab`) above 2^31 - 1.
inline dim3 grid_of(std::uint64_t blocks, std::string_view lab) {
  if (blocks > 0x7fffffffu) {
    throw std::invalid_argument(std::string(lab) + ": a grid of " + std::to_string(blocks) + " CTAs exceeds 2^31 - 1");
  }
  return dim3(static_cast<unsigned>(blocks));
}

}  // namespace memlab
