// cuBLAS and cuBLASLt, opened with dlopen on first use instead of linked: the loader's relocations of
// these two libraries cost every process that links them ~0.08 s and ~215 MB at start (each test, each
// `memlab --help`: 84 ms and 223 MB linked, 4 ms and 8 MB without them, on the development machine),
// and only the labs' cuBLAS peers call them.
//
// cublas_api holds every function memlab calls, one member each, named by the symbol the library
// exports (cublas_v2.h turns cublasCreate into cublasCreate_v2, cublasSgemm into cublasSgemm_v2, ...)
// and typed from its prototype in the headers: a changed signature fails the build, a missing symbol
// the load. The headers' major version picks the libraries (CUBLAS_VER_MAJOR 13: libcublas.so.13).
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace memlab {

// The functions memlab calls, by the library that exports them: X(symbol) for each (and cublasGemmEx,
// below).
#define MEMLAB_CUBLAS_FUNCTIONS(X) \
  X(cublasCreate_v2)               \
  X(cublasDestroy_v2)              \
  X(cublasSetStream_v2)            \
  X(cublasSetWorkspace_v2)         \
  X(cublasSetMathMode)             \
  X(cublasSgemm_v2)                \
  X(cublasSgeam_64)                \
  X(cublasDgeam_64)                \
  X(cublasGetStatusName)           \
  X(cublasGetStatusString)
#define MEMLAB_CUBLASLT_FUNCTIONS(X)         \
  X(cublasLtCreate)                          \
  X(cublasLtMatrixLayoutCreate)              \
  X(cublasLtMatrixLayoutDestroy)             \
  X(cublasLtMatrixTransformDescCreate)       \
  X(cublasLtMatrixTransformDescDestroy)      \
  X(cublasLtMatrixTransformDescSetAttribute) \
  X(cublasLtMatrixTransform)

// cublasGemmEx is overloaded in C++ (cublas_api.h adds an inline one that takes the compute type as a
// cudaDataType), so decltype cannot pick it: this is the exported one's type, and the static_cast below
// compiles only while one of the overloads has exactly this type.
using cublas_gemm_ex_fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                             const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                                             int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                                             cublasGemmAlgo_t);
static_assert(std::is_same_v<decltype(static_cast<cublas_gemm_ex_fn>(&::cublasGemmEx)), cublas_gemm_ex_fn>);

struct cublas_api {
#define MEMLAB_CUBLAS_MEMBER(symbol) decltype(&::symbol) symbol = nullptr;
  MEMLAB_CUBLAS_FUNCTIONS(MEMLAB_CUBLAS_MEMBER)
  MEMLAB_CUBLASLT_FUNCTIONS(MEMLAB_CUBLAS_MEMBER)
#undef MEMLAB_CUBLAS_MEMBER
  cublas_gemm_ex_fn cublasGemmEx = nullptr;  // libcublas's, as the functions of MEMLAB_CUBLAS_FUNCTIONS
};

// "libcublas" -> "libcublas.so.13": the soname of the major version memlab is compiled against.
inline std::string cublas_soname(std::string_view library) {
  return std::string(library) + ".so." + std::to_string(CUBLAS_VER_MAJOR);
}

// Opens the two libraries (they stay loaded for the process) and resolves every function of
// cublas_api; throws std::runtime_error naming the library and dlerror()'s reason when one cannot be
// opened or lacks a function.
cublas_api load_cublas(const std::string& blas_soname, const std::string& lt_soname);

// The process's cuBLAS, loaded on the first call (libcublas and libcublasLt of the headers' version);
// throws that load's error, on this and every later call, where it failed. The load is tried once.
const cublas_api& cublas();

// Why this process cannot call cuBLAS (the load's error), nullopt where it can; loads it on the first
// call. For the labs' refusals: a cuBLAS rung is skipped with this reason instead of failing the run.
std::optional<std::string> cublas_unavailable();

}  // namespace memlab
