// NCCL loaded at run time (harness/nccl_loader.hpp): every function memlab calls resolves from the library
// it was built against, a library that cannot be loaded is a clear error, not a crash, and the
// communicators are configured as nccl-tests configures its own. No GPU: loading NCCL and asking its
// version need none.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "harness/nccl_loader.hpp"

namespace memlab {
namespace {

#if MEMLAB_HAVE_NCCL

std::string load_error(const std::string& library) {
  try {
    (void)load_nccl(library);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(nccl_loader, resolves_every_function_from_the_library_of_the_headers) {
  EXPECT_EQ(nccl_soname(), "libnccl.so." + std::to_string(NCCL_MAJOR));
  const nccl_api api = load_nccl(nccl_soname());
#define MEMLAB_EXPECT_RESOLVED(symbol) EXPECT_NE(api.symbol, nullptr) << #symbol;
  MEMLAB_NCCL_FUNCTIONS(MEMLAB_EXPECT_RESOLVED)
#undef MEMLAB_EXPECT_RESOLVED
  EXPECT_EQ(api.version / 10000, NCCL_MAJOR);
  EXPECT_NE(std::string(api.ncclGetErrorString(ncclInvalidUsage)).find("invalid usage"), std::string::npos);
  // The process's own load: the same library, so the same functions, and its version known without a load.
  const auto why = nccl_unavailable();
  ASSERT_FALSE(why) << *why;
  EXPECT_EQ(nccl().ncclAllReduce, api.ncclAllReduce);
  EXPECT_EQ(nccl_loaded_version(), api.version);
}

TEST(nccl_loader, a_library_that_cannot_be_loaded_is_named_with_the_reason) {
  const std::string missing = "libmemlab_no_such_nccl.so.2";
  const std::string why = load_error(missing);
  EXPECT_NE(why.find("cannot load " + missing + ": "), std::string::npos) << why;
  EXPECT_NE(why.find("No such file"), std::string::npos) << why;  // dlerror()'s reason
}

TEST(nccl_loader, a_library_without_a_function_is_named_with_the_function) {
  // The C library in NCCL's place: it loads, but has no ncclGetVersion.
  const std::string why = load_error("libc.so.6");
  EXPECT_NE(why.find("libc.so.6 has no ncclGetVersion"), std::string::npos) << why;
}

TEST(nccl_loader, communicators_are_configured_as_nccl_tests_configures_them) {
  const ncclConfig_t blocking = nccl_tests_config(1), nonblocking = nccl_tests_config(0);
  EXPECT_EQ(blocking.blocking, 1);  // nccl-tests' communicators: NCCL's default, blocking
  EXPECT_EQ(nonblocking.blocking, 0);
  EXPECT_EQ(blocking.size, sizeof(ncclConfig_t));  // NCCL_CONFIG_INITIALIZER's: NCCL reads what it knows of it
  EXPECT_EQ(blocking.version, static_cast<unsigned>(NCCL_VERSION_CODE));
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  EXPECT_EQ(blocking.nvlinkCentricSched, 1);  // nccl-tests' initComms sets it from NCCL 2.28
#endif
  // Everything else at NCCL's defaults (left undefined for NCCL to choose).
  EXPECT_EQ(blocking.minCTAs, NCCL_CONFIG_UNDEF_INT);
  EXPECT_EQ(blocking.maxCTAs, NCCL_CONFIG_UNDEF_INT);
  EXPECT_EQ(blocking.cgaClusterSize, NCCL_CONFIG_UNDEF_INT);
}

#else

TEST(nccl_loader, without_headers_every_collective_is_refused_with_the_reason) {
  const auto why = nccl_unavailable();
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("built without NCCL's headers"), std::string::npos) << *why;
  EXPECT_EQ(nccl_loaded_version(), 0);
}

#endif

// Run alone by the ctest nccl_unloadable (MEMLAB_NCCL_LIBRARY names a library that does not exist): the
// process's load fails once, with the reason every refusal then gives, and no version is known.
TEST(nccl_loader, DISABLED_unloadable_in_this_process) {
  const char* chosen = std::getenv("MEMLAB_NCCL_LIBRARY");
  ASSERT_NE(chosen, nullptr) << "run by the ctest nccl_unloadable, with MEMLAB_NCCL_LIBRARY set";
  const auto why = nccl_unavailable();
  ASSERT_TRUE(why);
#if MEMLAB_HAVE_NCCL
  EXPECT_NE(why->find(std::string("NCCL is not available: cannot load ") + chosen), std::string::npos) << *why;
  EXPECT_THROW((void)nccl(), std::runtime_error);
#endif
  EXPECT_EQ(nccl_loaded_version(), 0);
}

}  // namespace
}  // namespace memlab
