// RAII, move-only owners of CUDA resources: device buffers, pinned host buffers, events, streams,
// and the L2 flusher.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace memlab {

class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t bytes);  // cudaMalloc: 256-byte aligned
  ~device_buffer();
  device_buffer(device_buffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  device_buffer& operator=(device_buffer&& o) noexcept;
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  [[nodiscard]] std::byte* data() const noexcept { return static_cast<std::byte*>(ptr_); }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

class pinned_buffer {
 public:
  pinned_buffer() = default;
  explicit pinned_buffer(std::size_t bytes);  // cudaMallocHost
  ~pinned_buffer();
  pinned_buffer(pinned_buffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  pinned_buffer& operator=(pinned_buffer&& o) noexcept;
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;

  [[nodiscard]] std::byte* data() const noexcept { return static_cast<std::byte*>(ptr_); }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

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
