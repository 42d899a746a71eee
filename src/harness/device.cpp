#include "harness/device.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "harness/buffer.hpp"
#include "harness/error.hpp"
#include "harness/link.hpp"
#include "harness/timing.hpp"

namespace memlab {

int device_count() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // a non-sticky error: clear it so later calls start clean
    std::string why = err == cudaErrorInsufficientDriver ? "no NVIDIA driver, or one older than this CUDA runtime"
                      : err == cudaErrorNoDevice         ? "no GPU visible (check CUDA_VISIBLE_DEVICES)"
                                                         : cudaGetErrorString(err);
    throw no_device_error("no usable CUDA device: " + why + " (cudaGetDeviceCount: " + cudaGetErrorName(err) + ")");
  }
  if (count == 0) throw no_device_error("no usable CUDA device: cudaGetDeviceCount found 0 devices");
  return count;
}

device_info open_device(int ordinal) {
  const int count = device_count();
  if (ordinal < 0 || ordinal >= count) {
    throw no_device_error(
        fmt::format("no CUDA device {}: this machine has {} (ordinals 0..{})", ordinal, count, count - 1));
  }
  MEMLAB_CUDA_CHECK(cudaSetDevice(ordinal));
  cudaDeviceProp prop{};
  MEMLAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  auto attribute = [ordinal](cudaDeviceAttr a) {
    int v = 0;
    MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, ordinal));
    return v;
  };
  device_info d;
  d.ordinal = ordinal;
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sm_count = prop.multiProcessorCount;
  d.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  d.smem_per_block_optin = static_cast<int>(prop.sharedMemPerBlockOptin);
  d.l2_bytes = static_cast<std::uint64_t>(prop.l2CacheSize);
  d.global_mem_bytes = prop.totalGlobalMem;
  // CUDA 13 removed the clock rates from cudaDeviceProp; the attributes remain.
  d.mem_clock_khz = attribute(cudaDevAttrMemoryClockRate);
  d.bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth);
  d.sm_default_clock_khz = attribute(cudaDevAttrClockRate);
  MEMLAB_CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  MEMLAB_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  d.peak_gbps = theoretical_peak_gbps(d.mem_clock_khz, d.bus_width_bits);
  d.device_count = count;
  const link_figures links = read_links(ordinal);
  d.pcie_gen = links.pcie_gen;
  d.pcie_width = links.pcie_width;
  d.pcie_gbps = links.pcie_gbps;
  d.nvlink_links = links.nvlink_links;
  d.nvlink_gbps = links.nvlink_gbps;
  d.nvlink_link_gbps = links.nvlink_link_gbps;
  d.nvlink_rate_from = links.nvlink_rate_from;
  d.nvlink_line_gbps = links.nvlink_line_gbps;
  d.nvlink_switch = links.nvlink_switch;
  d.nvlink_gpus = links.nvlink_gpus;
  d.link_source = links.source;
  for (int other = 0; other < count; ++other) {
    char bus[32] = {};
    MEMLAB_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus - 1, other));
    d.bus_ids.emplace_back(bus);
    int can = 0;
    if (other != ordinal && cudaDeviceCanAccessPeer(&can, ordinal, other) != cudaSuccess) {
      (void)cudaGetLastError();
      can = 0;
    }
    d.peer_access.push_back(can != 0);
  }
  return d;
}

namespace {

// GB/s of a cudaMemcpyAsync D2D of `bytes`, read + written, timed cold or back to back.
double memcpy_gbps(std::size_t bytes, timer& t, double max_time_s, bool cold) {
  if (bytes == 0) return 0;
  device_buffer src(bytes), dst(bytes);
  MEMLAB_CUDA_CHECK(cudaMemset(src.data(), 0x5a, bytes));  // defined input
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  const enqueue_fn copy = [&](cudaStream_t st) {
    MEMLAB_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, st));
  };
  measure_options opt;
  opt.max_time_s = max_time_s;
  const double ms =
      cold ? t.cold(copy, opt).time.median_ms : t.batch(copy, opt, t.cold(copy, opt).time.median_ms).median_ms;
  return ms > 0 ? 2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e9 : 0;
}

}  // namespace

double measure_copy_ceiling_gbps(const device_info& dev, timer& t, double max_time_s) {
  std::size_t free_bytes = 0, total_bytes = 0;
  MEMLAB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Large enough that launch and tail effects vanish (a 400 MB copy on the H100 ran 1.4% below an
  // 8 GiB one), at most a quarter of free memory for each of the two buffers.
  const std::size_t bytes =
      std::min<std::size_t>(std::max<std::size_t>(40 * dev.l2_bytes, std::size_t{2} << 30), free_bytes / 4);
  return memcpy_gbps(bytes, t, max_time_s, true);
}

double measure_l2_ceiling_gbps(const device_info& dev, timer& t, double max_time_s) {
  return memcpy_gbps(static_cast<std::size_t>(dev.l2_bytes / 4) / 256 * 256, t, max_time_s, false);
}

}  // namespace memlab
