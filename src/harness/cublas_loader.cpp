#include "harness/cublas_loader.hpp"

#include <stdexcept>

#include "harness/dynamic_library.hpp"

namespace memlab {
namespace {

// The process's load: the functions, or why they could not be loaded.
struct process_cublas {
  std::optional<cublas_api> api;
  std::string error;
};

const process_cublas& loaded() {
  static const process_cublas p = [] {
    process_cublas x;
    try {
      x.api = load_cublas(cublas_soname("libcublas"), cublas_soname("libcublasLt"));
    } catch (const std::runtime_error& e) {
      x.error = e.what();
    }
    return x;
  }();
  return p;
}

}  // namespace

cublas_api load_cublas(const std::string& blas_soname, const std::string& lt_soname) {
  void* blas = dynamic_library::open(blas_soname);
  void* lt = dynamic_library::open(lt_soname);
  cublas_api api;
#define MEMLAB_RESOLVE_BLAS(symbol) dynamic_library::resolve(blas, blas_soname, #symbol, api.symbol);
#define MEMLAB_RESOLVE_LT(symbol) dynamic_library::resolve(lt, lt_soname, #symbol, api.symbol);
  MEMLAB_CUBLAS_FUNCTIONS(MEMLAB_RESOLVE_BLAS)
  MEMLAB_CUBLASLT_FUNCTIONS(MEMLAB_RESOLVE_LT)
  dynamic_library::resolve(blas, blas_soname, "cublasGemmEx", api.cublasGemmEx);
#undef MEMLAB_RESOLVE_BLAS
#undef MEMLAB_RESOLVE_LT
  return api;
}

const cublas_api& cublas() {
  const process_cublas& p = loaded();
  if (!p.api) throw std::runtime_error(p.error);
  return *p.api;
}

std::optional<std::string> cublas_unavailable() {
  const process_cublas& p = loaded();
  if (p.api) return std::nullopt;
  return "cuBLAS is not available: " + p.error;
}

}  // namespace memlab
