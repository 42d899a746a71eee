// A stand-in for the three NVML calls BabelStream's CUDA model makes (its banner's memory clock),
// for machines whose CUDA toolkit ships no nvml.h / libnvidia-ml. The memory clock comes from the
// CUDA runtime instead. Used only by tools/gpu/device_hierarchy.sh, and only when nvml.h is missing.
#pragma once
#include <cuda_runtime_api.h>

typedef int nvmlReturn_t;
typedef int nvmlDevice_t;
enum { NVML_SUCCESS = 0 };
enum { NVML_CLOCK_MEM = 2 };
inline const char* nvmlErrorString(nvmlReturn_t) { return "nvml shim"; }
inline nvmlReturn_t nvmlInit() { return NVML_SUCCESS; }
inline nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char*, nvmlDevice_t* d) {
  *d = 0;
  return NVML_SUCCESS;
}
inline nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t, int, unsigned int* mhz) {
  int khz = 0;
  cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, 0);
  *mhz = static_cast<unsigned int>(khz / 1000);
  return NVML_SUCCESS;
}
