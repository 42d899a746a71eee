// cuBLAS loaded at run time (harness/cublas_loader.hpp): every function memlab calls resolves from the
// toolkit's libraries, and a library that cannot be loaded is a clear error, not a crash. No GPU: loading
// cuBLAS and asking it a status's name need none.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "harness/cublas_loader.hpp"

namespace memlab {
namespace {

std::string load_error(const std::string& blas_soname, const std::string& lt_soname) {
  try {
    (void)load_cublas(blas_soname, lt_soname);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(cublas_loader, resolves_every_function_from_the_toolkits_libraries) {
  EXPECT_EQ(cublas_soname("libcublas"), "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR));
  const cublas_api api = load_cublas(cublas_soname("libcublas"), cublas_soname("libcublasLt"));
#define MEMLAB_EXPECT_RESOLVED(symbol) EXPECT_NE(api.symbol, nullptr) << #symbol;
  MEMLAB_CUBLAS_FUNCTIONS(MEMLAB_EXPECT_RESOLVED)
  MEMLAB_CUBLASLT_FUNCTIONS(MEMLAB_EXPECT_RESOLVED)
  MEMLAB_EXPECT_RESOLVED(cublasGemmEx)
#undef MEMLAB_EXPECT_RESOLVED
  EXPECT_STREQ(api.cublasGetStatusName(CUBLAS_STATUS_NOT_INITIALIZED), "CUBLAS_STATUS_NOT_INITIALIZED");
  // The process's own load: the same libraries, so the same functions.
  const auto why = cublas_unavailable();
  EXPECT_FALSE(why) << *why;
  EXPECT_EQ(cublas().cublasSgeam_64, api.cublasSgeam_64);
}

TEST(cublas_loader, a_library_that_cannot_be_loaded_is_named_with_the_reason) {
  const std::string missing = "libmemlab_no_such_cublas.so.1";
  const std::string why = load_error(missing, cublas_soname("libcublasLt"));
  EXPECT_NE(why.find("cannot load " + missing + ": "), std::string::npos) << why;
  EXPECT_NE(why.find("No such file"), std::string::npos) << why;  // dlerror()'s reason
  const std::string lt_why = load_error(cublas_soname("libcublas"), missing);
  EXPECT_NE(lt_why.find("cannot load " + missing + ": "), std::string::npos) << lt_why;
}

TEST(cublas_loader, a_library_without_a_function_is_named_with_the_function) {
  // cuBLASLt in cuBLAS's place: it loads, but has no cublasCreate_v2.
  const std::string lt = cublas_soname("libcublasLt");
  const std::string why = load_error(lt, lt);
  EXPECT_NE(why.find(lt + " has no cublasCreate_v2"), std::string::npos) << why;
}

}  // namespace
}  // namespace memlab
