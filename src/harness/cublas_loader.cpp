#include "harness/cublas_loader.hpp"

#include <dlfcn.h>

#include <stdexcept>

namespace memlab {
namespace {

std::string dl_error() {
  const char* e = dlerror();
  return e != nullptr ? e : "no reason given";
}

void* open_library(const std::string& soname) {
  void* lib = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) throw std::runtime_error("cannot load " + soname + ": " + dl_error());
  return lib;
}

template <class Fn>
void resolve(void* lib, const std::string& soname, const char* symbol, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, symbol));
  if (fn == nullptr) throw std::runtime_error(soname + " has no " + symbol + ": " + dl_error());
}

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
  void* blas = open_library(blas_soname);
  void* lt = open_library(lt_soname);
  cublas_api api;
#define MEMLAB_RESOLVE_BLAS(symbol) resolve(blas, blas_soname, #symbol, api.symbol);
#define MEMLAB_RESOLVE_LT(symbol) resolve(lt, lt_soname, #symbol, api.symbol);
  MEMLAB_CUBLAS_FUNCTIONS(MEMLAB_RESOLVE_BLAS)
  MEMLAB_CUBLASLT_FUNCTIONS(MEMLAB_RESOLVE_LT)
  resolve(blas, blas_soname, "cublasGemmEx", api.cublasGemmEx);
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
