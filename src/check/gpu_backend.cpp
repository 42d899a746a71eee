// memlab check on the GPUs: their properties and links (no GPU work), the GPU's case runner, NVML.
#include <cuda_runtime_api.h>

#include <map>

#include <fmt/format.h>

#include "check/check.hpp"
#include "harness/device.hpp"
#include "harness/gpu_runner.hpp"
#include "harness/link.hpp"

namespace memlab::check {
namespace {

class gpus final : public check_backend {
 public:
  int device_count() override {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return n;
  }

  gpu_facts facts(int ordinal) override {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, ordinal) != cudaSuccess) {
      (void)cudaGetLastError();
      throw no_device_error("GPU " + std::to_string(ordinal) + ": cudaGetDeviceProperties failed");
    }
    gpu_facts f;
    f.ordinal = ordinal;
    f.model.name = p.name;
    f.model.memory_gib = static_cast<double>(p.totalGlobalMem) / static_cast<double>(1ull << 30);
    f.model.sm_count = p.multiProcessorCount;
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus - 1, ordinal) != cudaSuccess) (void)cudaGetLastError();
    f.bus_id = bus;
    if (cudaDriverGetVersion(&f.driver_version) != cudaSuccess) (void)cudaGetLastError();
    if (cudaRuntimeGetVersion(&f.runtime_version) != cudaSuccess) (void)cudaGetLastError();
    const link_figures l = read_links(ordinal);
    f.model.link = l.nvlink_switch ? "NVSwitch" : l.nvlink_links > 0 ? "NVLink" : "PCIe";
    bus_ids_[ordinal] = f.bus_id;
    // The UUID as nvidia-smi prints it (CUDA's, so that it is there without NVML); NVML's where it has one.
    const auto* u = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
    f.uuid = fmt::format("GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                         u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
                         u[15]);
    const nvml_identity id = nvml_of(ordinal).identity();
    if (!id.uuid.empty()) f.uuid = id.uuid;
    f.serial = id.serial;
    f.driver = id.driver;
    return f;
  }

  case_runner& runner() override { return runner_; }

  nvml_readings nvml_read(int ordinal) override { return nvml_of(ordinal).read(); }
  void nvml_start(int ordinal) override { nvml_of(ordinal).start(); }
  nvml_samples nvml_stop(int ordinal) override { return nvml_of(ordinal).stop(); }
  std::vector<gpu_process> processes(int ordinal) override { return nvml_of(ordinal).processes("before"); }

 private:
  nvml_gpu& nvml_of(int ordinal) {
    auto it = nvml_.find(ordinal);
    if (it == nvml_.end()) {
      if (!bus_ids_.contains(ordinal)) (void)facts(ordinal);
      it = nvml_.emplace(ordinal, std::make_unique<nvml_gpu>(bus_ids_[ordinal])).first;
    }
    return *it->second;
  }

  gpu_runner runner_;
  std::map<int, std::string> bus_ids_;
  std::map<int, std::unique_ptr<nvml_gpu>> nvml_;
};

}  // namespace

std::unique_ptr<check_backend> gpu_backend() { return std::make_unique<gpus>(); }

}  // namespace memlab::check
