// RAII, move-only owners of CUDA resources: device buffers, pinned host buffers, events, streams,
// a stream forked from another, the current device for a scope, and the L2 flusher.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "harness/error.hpp"

namespace memlab {

// Owns `bytes` of memory from Alloc, released by Release. Move-only.
template <cudaError_t (*Alloc)(void**, std::size_t), cudaError_t (*Release)(void*)>
class cuda_memory {
 public:
  cuda_memory() = default;
  explicit cuda_memory(std::size_t bytes);
  ~cuda_memory() { reset(); }
  cuda_memory(cuda_memory&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  cuda_memory& operator=(cuda_memory&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  cuda_memory(const cuda_memory&) = delete;
  cuda_memory& operator=(const cuda_memory&) = delete;

  [[nodiscard]] std::byte* data() const noexcept { return static_cast<std::byte*>(ptr_); }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }

 private:
  void reset() noexcept;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

template <cudaError_t (*Alloc)(void**, std::size_t), cudaError_t (*Release)(void*)>
cuda_memory<Alloc, Release>::cuda_memory(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) MEMLAB_CUDA_CHECK(Alloc(&ptr_, bytes));
}

template <cudaError_t (*Alloc)(void**, std::size_t), cudaError_t (*Release)(void*)>
void cuda_memory<Alloc, Release>::reset() noexcept {
  if (ptr_ != nullptr) MEMLAB_CUDA_CHECK_NOEXCEPT(Release(ptr_));
  ptr_ = nullptr;
  bytes_ = 0;
}

using device_buffer = cuda_memory<&cudaMalloc, &cudaFree>;          // 256-byte aligned device memory
using pinned_buffer = cuda_memory<&cudaMallocHost, &cudaFreeHost>;  // page-locked host memory

class cuda_event {
 public:
  cuda_event();
  ~cuda_event();
  cuda_event(cuda_event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  cuda_event& operator=(cuda_event&& o) noexcept;
  cuda_event(const cuda_event&) = delete;
  cuda_event& operator=(const cuda_event&) = delete;

  void record(cudaStream_t s);
  void synchronize();
  [[nodiscard]] cudaEvent_t get() const noexcept { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};
// Milliseconds between two recorded, completed events.
float elapsed_ms(const cuda_event& start, const cuda_event& stop);

class cuda_stream {
 public:
  cuda_stream();  // non-blocking with respect to the legacy default stream
  ~cuda_stream();
  cuda_stream(cuda_stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  cuda_stream& operator=(cuda_stream&& o) noexcept;
  cuda_stream(const cuda_stream&) = delete;
  cuda_stream& operator=(const cuda_stream&) = delete;

  void synchronize();
  [[nodiscard]] cudaStream_t get() const noexcept { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

// The current device for a scope (cudaSetDevice), and back to the one before at its end.
class current_device {
 public:
  explicit current_device(int ordinal);
  ~current_device();
  current_device(const current_device&) = delete;
  current_device& operator=(const current_device&) = delete;

 private:
  int previous_ = 0;
};

// A second stream, on device `on`, forked from a stream of device `home` and joined back into it: what
// lets two pieces of work run at once inside one timed launch, and inside one CUDA graph (a capture
// follows the fork and the join).
class side_stream {
 public:
  side_stream(int home, int on);
  // Forks from `s` (the second stream waits for what `s` holds so far); returns the second stream.
  cudaStream_t begin(cudaStream_t s);
  // Joins: `s` waits for what the second stream holds so far.
  void end(cudaStream_t s);
  [[nodiscard]] int device() const noexcept { return device_; }

 private:
  int device_ = 0;
  cuda_event fork_;
  cuda_stream stream_;
  cuda_event join_;
};

// Evicts the L2 between timed launches, as NVBench does: a memset of a buffer twice the L2's size
// leaves no line of the data under test in the cache.
class l2_flusher {
 public:
  explicit l2_flusher(std::size_t l2_bytes);
  void flush(cudaStream_t s);

 private:
  device_buffer scratch_;
  std::uint8_t value_ = 0;
};

}  // namespace memlab
