#include "harness/device.hpp"

#include <algorithm>

#include "harness/buffer.hpp"
#include "harness/timing.hpp"
#include "memlab/error.cuh"

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
    throw no_device_error("no CUDA device " + std::to_string(ordinal) + ": this machine has " +
                          std::to_string(count) + " (ordinals 0.." + std::to_string(count - 1) + ")");
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
  d.l2_bytes = static_cast<std::uint64_t>(prop.l2CacheSize);
  d.global_mem_bytes = prop.totalGlobalMem;
  // CUDA 13 removed memoryClockRate from cudaDeviceProp; the attribute remains.
  d.mem_clock_khz = attribute(cudaDevAttrMemoryClockRate);
  d.bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth);
  d.peak_gbps = theoretical_peak_gbps(d.mem_clock_khz, d.bus_width_bits);
  return d;
}

double measure_copy_ceiling_gbps(const device_info& dev, cudaStream_t stream, l2_flusher& flusher, double max_time_s) {
  std::size_t free_bytes = 0, total_bytes = 0;
  MEMLAB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Large enough that launch and tail effects vanish (a 400 MB copy on the H100 ran 1.4% below an
  // 8 GiB one), at most a quarter of free memory for each of the two buffers.
  const std::size_t bytes = std::min<std::size_t>(std::max<std::size_t>(40 * dev.l2_bytes, std::size_t{2} << 30), free_bytes / 4);
  if (bytes == 0) return 0;
  device_buffer src(bytes), dst(bytes);
  MEMLAB_CUDA_CHECK(cudaMemsetAsync(src.data(), 0x5a, bytes, stream));  // defined input, ordered before the copies
  measure_options opt;
  opt.max_time_s = max_time_s;
  const summary s = measure_cold(
      [&](cudaStream_t st) {
        MEMLAB_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, st));
      },
      stream, flusher, opt);
  return s.median_ms > 0 ? 2.0 * static_cast<double>(bytes) / (s.median_ms * 1e-3) / 1e9 : 0;
}

}  // namespace memlab
