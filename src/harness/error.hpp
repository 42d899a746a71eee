// The one family of CUDA error macros (the harness's; the library returns cudaError_t instead).
//
// MEMLAB_CUDA_CHECK(expr)          throws memlab::cuda_error with file, line and the expression.
// MEMLAB_CUDA_CHECK_NOEXCEPT(expr) prints the same to stderr and goes on: for destructors.
// MEMLAB_CUDA_CHECK_LAUNCH()       checks the last error right after a kernel launch.
// MEMLAB_CU_CHECK(expr)            the same for a driver API call (a CUresult), e.g. a driver
//                                  function obtained through the runtime's entry points: throws
//                                  memlab::driver_error.
//
// Library entry points (include/memlab/) never throw: they return cudaError_t.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace memlab {

class cuda_error : public std::runtime_error {
 public:
  cuda_error(cudaError_t code, const char* expr, const char* file, int line)
      : std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expr +
                           " failed: " + cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")"),
        code_(code) {}
  [[nodiscard]] cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

// A driver API error. memlab does not link libcuda: the error's name comes from the driver's
// cuGetErrorName, found through the runtime (cudaGetDriverEntryPointByVersion); "CUresult N"
// when the driver has none.
class driver_error : public std::runtime_error {
 public:
  driver_error(CUresult code, const char* expr, const char* file, int line)
      : std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expr + " failed: " + name_of(code)),
        code_(code) {}
  [[nodiscard]] CUresult code() const noexcept { return code_; }

  static std::string name_of(CUresult code) {
    using get_name_fn = CUresult (*)(CUresult, const char**);
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const char* name = nullptr;
    if (cudaGetDriverEntryPointByVersion("cuGetErrorName", &fn, 12000, cudaEnableDefault, &found) == cudaSuccess &&
        found == cudaDriverEntryPointSuccess && fn != nullptr &&
        reinterpret_cast<get_name_fn>(fn)(code, &name) == CUDA_SUCCESS && name != nullptr) {
      return name;
    }
    (void)cudaGetLastError();
    return "CUresult " + std::to_string(static_cast<int>(code));
  }

 private:
  CUresult code_;
};

}  // namespace memlab

#define MEMLAB_CU_CHECK(expr)                                                     \
  do {                                                                            \
    const CUresult memlab_cu_status_ = (expr);                                    \
    if (memlab_cu_status_ != CUDA_SUCCESS) {                                      \
      throw ::memlab::driver_error(memlab_cu_status_, #expr, __FILE__, __LINE__); \
    }                                                                             \
  } while (0)

#define MEMLAB_CUDA_CHECK(expr)                                              \
  do {                                                                       \
    const cudaError_t memlab_status_ = (expr);                               \
    if (memlab_status_ != cudaSuccess) {                                     \
      throw ::memlab::cuda_error(memlab_status_, #expr, __FILE__, __LINE__); \
    }                                                                        \
  } while (0)

#define MEMLAB_CUDA_CHECK_NOEXCEPT(expr)                                                                           \
  do {                                                                                                             \
    const cudaError_t memlab_status_ = (expr);                                                                     \
    if (memlab_status_ != cudaSuccess) {                                                                           \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorName(memlab_status_)); \
    }                                                                                                              \
  } while (0)

#define MEMLAB_CUDA_CHECK_LAUNCH() MEMLAB_CUDA_CHECK(cudaGetLastError())
