// cuBLAS status checks for the labs that compare with cuBLAS (the harness itself calls none).
#pragma once

#include <cublas_v2.h>

#include <stdexcept>
#include <string>

namespace memlab {

// Throws std::runtime_error naming the call and cuBLAS's status when `status` is not success.
inline void check_cublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(call) + " failed: " + cublasGetStatusName(status) + " (" +
                             cublasGetStatusString(status) + ")");
  }
}

}  // namespace memlab
