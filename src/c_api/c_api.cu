// libmemlab: the C ABI (include/memlab/c_api.h) over the header-only library. Each function forwards to
// memlab::copy_bytes / memlab::transpose_bytes and keeps the calling thread's last failure with a message
// that names the arguments, for callers that only see an int (C, Python's ctypes).
#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

#include "memlab/c_api.h"
#include "memlab/copy.cuh"
#include "memlab/transpose.cuh"

#ifndef MEMLAB_VERSION
#define MEMLAB_VERSION "0.0.0"
#endif

namespace {

thread_local int last_status = 0;
thread_local std::string last_message;

// Records a failure of `what` (already formatted with its arguments) and returns its status.
int fail(int status, const std::string& what) {
  last_status = status;
  last_message = what + ": " + cudaGetErrorName(static_cast<cudaError_t>(status)) + " (" +
                 cudaGetErrorString(static_cast<cudaError_t>(status)) + ")";
  return status;
}

int done(cudaError_t e, const char* what, const std::string& args) {
  if (e == cudaSuccess) return 0;
  return fail(static_cast<int>(e), std::string(what) + "(" + args + ")");
}

std::string hex(const void* p) {
  char b[32];
  std::snprintf(b, sizeof b, "%p", p);
  return b;
}

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }

// Why memlab's own checks refused a call (cudaErrorInvalidValue), for the message; "" if they did not.
std::string refusal(const void* dst, const void* src, unsigned long long bytes) {
  const auto d = reinterpret_cast<std::uintptr_t>(dst), s = reinterpret_cast<std::uintptr_t>(src);
  if (bytes == 0) return "";
  if (dst == nullptr || src == nullptr) return "; a null pointer";
  if (d < s + bytes && s < d + bytes) return "; src and dst overlap";
  return "";
}

}  // namespace

extern "C" {

int memlab_abi_version(void) { return MEMLAB_C_ABI_VERSION; }

const char* memlab_version(void) { return MEMLAB_VERSION; }

int memlab_copy_bytes(void* dst, const void* src, size_t bytes, void* stream) {
  const cudaError_t e = memlab::copy_bytes(dst, src, bytes, as_stream(stream));
  if (e == cudaSuccess) return 0;
  return done(e, "memlab_copy_bytes",
              "dst=" + hex(dst) + ", src=" + hex(src) + ", bytes=" + std::to_string(bytes) +
                  (e == cudaErrorInvalidValue ? refusal(dst, src, bytes) : ""));
}

int memlab_transpose(void* dst, const void* src, size_t batch, size_t rows, size_t cols, size_t elem_size,
                     void* stream) {
  const cudaError_t e = memlab::transpose_bytes(dst, src, batch, rows, cols, elem_size, as_stream(stream));
  if (e == cudaSuccess) return 0;
  std::string why;
  if (e == cudaErrorInvalidValue) {
    if (!memlab::transpose_moves(elem_size)) {
      why = "; elements of 1, 2, 4 or 8 bytes only";
    } else if (batch != 0 && rows != 0 && cols != 0) {
      why = batch > (1ull << 62) / elem_size / rows / cols
                ? "; more than 2^62 bytes"
                : refusal(dst, src, static_cast<unsigned long long>(batch) * rows * cols * elem_size);
    }
  }
  return done(e, "memlab_transpose",
              "dst=" + hex(dst) + ", src=" + hex(src) + ", batch=" + std::to_string(batch) +
                  ", rows=" + std::to_string(rows) + ", cols=" + std::to_string(cols) +
                  ", elem_size=" + std::to_string(elem_size) + why);
}

const char* memlab_transpose_path(size_t dst, size_t src, size_t batch, size_t rows, size_t cols, size_t elem_size) {
  return memlab::to_string(memlab::plan_transpose(dst, src, batch, rows, cols, elem_size, memlab::copy_device{}).path);
}

int memlab_get_last_error(void) {
  const int s = last_status;
  last_status = 0;
  return s;
}

const char* memlab_last_error_message(void) { return last_message.c_str(); }

const char* memlab_error_name(int status) { return cudaGetErrorName(static_cast<cudaError_t>(status)); }

const char* memlab_error_string(int status) { return cudaGetErrorString(static_cast<cudaError_t>(status)); }

int memlab_device_count(int* count) {
  if (count == nullptr) return fail(cudaErrorInvalidValue, "memlab_device_count(count=NULL)");
  *count = 0;
  return done(cudaGetDeviceCount(count), "memlab_device_count", "");
}

int memlab_get_device(int* device) {
  if (device == nullptr) return fail(cudaErrorInvalidValue, "memlab_get_device(device=NULL)");
  return done(cudaGetDevice(device), "memlab_get_device", "");
}

int memlab_set_device(int device) { return done(cudaSetDevice(device), "memlab_set_device", std::to_string(device)); }

int memlab_pointer_device(const void* p, int* device) {
  if (device == nullptr) return fail(cudaErrorInvalidValue, "memlab_pointer_device(device=NULL)");
  *device = -1;
  cudaPointerAttributes a{};
  if (const cudaError_t e = cudaPointerGetAttributes(&a, p); e != cudaSuccess) {
    return done(e, "memlab_pointer_device", hex(p));
  }
  if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged) {
    return fail(cudaErrorInvalidValue,
                "memlab_pointer_device(" + hex(p) + "): not device memory (" +
                    (a.type == cudaMemoryTypeHost ? "page-locked host memory" : "unknown to CUDA") + ")");
  }
  *device = a.device;
  return 0;
}

int memlab_stream_synchronize(void* stream) {
  return done(cudaStreamSynchronize(as_stream(stream)), "memlab_stream_synchronize", hex(stream));
}

}  // extern "C"
