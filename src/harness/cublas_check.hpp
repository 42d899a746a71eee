// cuBLAS status checks for the labs that compare with cuBLAS (the harness itself calls none).
#pragma once

#include <stdexcept>
#include <string>

#include "harness/cublas_loader.hpp"

namespace memlab {

// Throws std::runtime_error naming the call and cuBLAS's status when `status` is not success.
inline void check_cublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    const cublas_api& api = cublas();  // loaded: `status` came from it
    throw std::runtime_error(std::string(call) + " failed: " + api.cublasGetStatusName(status) + " (" +
                             api.cublasGetStatusString(status) + ")");
  }
}

}  // namespace memlab
