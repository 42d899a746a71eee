// The one family of CUDA error macros (the harness's; the library returns cudaError_t instead).
//
// MEMLAB_CUDA_CHECK(expr)          throws memlab::cuda_error with file, line and the expression.
// MEMLAB_CUDA_CHECK_NOEXCEPT(expr) prints the same to stderr and goes on: for destructors.
// MEMLAB_CUDA_CHECK_LAUNCH()       checks the last error right after a kernel launch.
//
// Library entry points (include/memlab/) never throw: they return cudaError_t.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace memlab {

class cuda_error : public std::runtime_error {
 public:
  cuda_error(cudaError_t code, const char* expr, const char* file, int line)
      : std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expr + " failed: " +
                           cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")"),
        code_(code) {}
  [[nodiscard]] cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

}  // namespace memlab

#define MEMLAB_CUDA_CHECK(expr)                                                \
  do {                                                                         \
    const cudaError_t memlab_status_ = (expr);                                 \
    if (memlab_status_ != cudaSuccess) {                                       \
      throw ::memlab::cuda_error(memlab_status_, #expr, __FILE__, __LINE__);   \
    }                                                                          \
  } while (0)

#define MEMLAB_CUDA_CHECK_NOEXCEPT(expr)                                       \
  do {                                                                         \
    const cudaError_t memlab_status_ = (expr);                                 \
    if (memlab_status_ != cudaSuccess) {                                       \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, \
                   cudaGetErrorName(memlab_status_));                          \
    }                                                                          \
  } while (0)

#define MEMLAB_CUDA_CHECK_LAUNCH() MEMLAB_CUDA_CHECK(cudaGetLastError())
