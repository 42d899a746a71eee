#include "harness/nccl_loader.hpp"

#include <atomic>
#include <cstdlib>
#include <stdexcept>

#include "harness/dynamic_library.hpp"

namespace memlab {

namespace {
// The loaded library's version, set once the process's load succeeded (nccl_loaded_version reads it
// without loading anything).
std::atomic<int> loaded_version{0};
}  // namespace

#if MEMLAB_HAVE_NCCL

namespace {

// The process's load: the functions, or why they could not be loaded.
struct process_nccl {
  std::optional<nccl_api> api;
  std::string error;
};

const process_nccl& loaded() {
  static const process_nccl p = [] {
    process_nccl x;
    const char* chosen = std::getenv("MEMLAB_NCCL_LIBRARY");
    const std::string library = chosen != nullptr && *chosen != '\0' ? chosen : nccl_soname();
    try {
      x.api = load_nccl(library);
      loaded_version.store(x.api->version);
    } catch (const std::runtime_error& e) {
      x.error = e.what();
    }
    return x;
  }();
  return p;
}

}  // namespace

nccl_api load_nccl(const std::string& library) {
  void* lib = dynamic_library::open(library);
  nccl_api api;
#define MEMLAB_RESOLVE_NCCL(symbol) dynamic_library::resolve(lib, library, #symbol, api.symbol);
  MEMLAB_NCCL_FUNCTIONS(MEMLAB_RESOLVE_NCCL)
#undef MEMLAB_RESOLVE_NCCL
  if (api.ncclGetVersion(&api.version) != ncclSuccess) throw std::runtime_error(library + ": ncclGetVersion failed");
  // The headers' major version is the library's (the soname says so); a library older than the headers
  // lacks what they added since, which memlab asks for only by version (ncclAlltoAll).
  if (api.version / 10000 != NCCL_MAJOR) {
    throw std::runtime_error(library + " is NCCL " + std::to_string(api.version) + ", not of the major version " +
                             std::to_string(NCCL_MAJOR) + " memlab is built against");
  }
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  if (api.version >= NCCL_VERSION(2, 28, 0)) dynamic_library::resolve(lib, library, "ncclAlltoAll", api.ncclAlltoAll);
#endif
  return api;
}

const nccl_api& nccl() {
  const process_nccl& p = loaded();
  if (!p.api) throw std::runtime_error(p.error);
  return *p.api;
}

ncclConfig_t nccl_tests_config(int blocking) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = blocking;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  config.nvlinkCentricSched = 1;
#endif
  return config;
}

std::optional<std::string> nccl_unavailable() {
  const process_nccl& p = loaded();
  if (p.api) return std::nullopt;
  return "NCCL is not available: " + p.error;
}

#else  // built without NCCL's headers

std::optional<std::string> nccl_unavailable() {
  return std::string(
      "memlab was built without NCCL's headers (pip install nvidia-nccl-cu13, or apt-get install libnccl-dev, then "
      "configure and build again)");
}

#endif

int nccl_loaded_version() { return loaded_version.load(); }

}  // namespace memlab
