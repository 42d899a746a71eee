// The ranks a collective runs on (ranks.hpp).
#include "labs/transfer/ranks.hpp"

#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>

#include "harness/error.hpp"

#if MEMLAB_HAVE_NCCL
namespace memlab::labs::transfer {

namespace {
void check(const nccl_api& api, ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string(what) + " failed: " + api.ncclGetErrorString(r));
}
}  // namespace

const std::vector<ncclComm_t>& communicators(const std::vector<int>& devices) {
  static std::map<std::vector<int>, std::vector<ncclComm_t>> cache;
  auto it = cache.find(devices);
  if (it != cache.end()) return it->second;
  // NVLink multicast stays off also where no runner set it (tests): unless the user set it.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  const nccl_api& api = nccl();
  // As nccl-tests forms a process's communicators (its initComms): one id, one group, a rank per GPU, each
  // with nccl-tests' settings.
  ncclUniqueId id{};
  check(api, api.ncclGetUniqueId(&id), "ncclGetUniqueId");
  std::vector<ncclComm_t> comms(devices.size(), nullptr);
  ncclConfig_t config = nccl_tests_config(1);
  {
    const current_device keep(devices.front());
    check(api, api.ncclGroupStart(), "ncclGroupStart");
    for (std::size_t r = 0; r < devices.size(); ++r) {
      MEMLAB_CUDA_CHECK(cudaSetDevice(devices[r]));
      check(api,
            api.ncclCommInitRankConfig(&comms[r], static_cast<int>(devices.size()), id, static_cast<int>(r), &config),
            "ncclCommInitRankConfig");
    }
    check(api, api.ncclGroupEnd(), "ncclGroupEnd (forming the communicators)");
  }
  return cache.emplace(devices, std::move(comms)).first->second;
}

cudaError_t nccl_alloc(void** p, std::size_t bytes) {
  return nccl().ncclMemAlloc(p, bytes) == ncclSuccess ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t nccl_free(void* p) {
  (void)nccl().ncclMemFree(p);
  return cudaSuccess;
}

}  // namespace memlab::labs::transfer
#endif
