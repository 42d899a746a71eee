#include "harness/buffer.hpp"

#include "harness/error.hpp"

namespace memlab {

cuda_event::cuda_event() { MEMLAB_CUDA_CHECK(cudaEventCreate(&e_)); }
cuda_event::~cuda_event() {
  if (e_ != nullptr) MEMLAB_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(e_));
}
cuda_event& cuda_event::operator=(cuda_event&& o) noexcept {
  if (this != &o) {
    if (e_ != nullptr) MEMLAB_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(e_));
    e_ = std::exchange(o.e_, nullptr);
  }
  return *this;
}
void cuda_event::record(cudaStream_t s) { MEMLAB_CUDA_CHECK(cudaEventRecord(e_, s)); }
void cuda_event::synchronize() { MEMLAB_CUDA_CHECK(cudaEventSynchronize(e_)); }

float elapsed_ms(const cuda_event& start, const cuda_event& stop) {
  float ms = 0;
  MEMLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms;
}

cuda_stream::cuda_stream() { MEMLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
cuda_stream::~cuda_stream() {
  if (s_ != nullptr) MEMLAB_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(s_));
}
cuda_stream& cuda_stream::operator=(cuda_stream&& o) noexcept {
  if (this != &o) {
    if (s_ != nullptr) MEMLAB_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(s_));
    s_ = std::exchange(o.s_, nullptr);
  }
  return *this;
}
void cuda_stream::synchronize() { MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s_)); }

l2_flusher::l2_flusher(std::size_t l2_bytes) : scratch_(2 * l2_bytes) {}

void l2_flusher::flush(cudaStream_t s) {
  if (scratch_.size() == 0) return;
  // A new value each time, so no layer can skip the write as redundant.
  MEMLAB_CUDA_CHECK(cudaMemsetAsync(scratch_.data(), ++value_, scratch_.size(), s));
}

current_device::current_device(int ordinal) {
  MEMLAB_CUDA_CHECK(cudaGetDevice(&previous_));
  MEMLAB_CUDA_CHECK(cudaSetDevice(ordinal));
}
current_device::~current_device() { MEMLAB_CUDA_CHECK_NOEXCEPT(cudaSetDevice(previous_)); }

namespace {
// Builds `T` with `ordinal` current.
template <class T>
T made_on(int ordinal) {
  const current_device on(ordinal);
  return T();
}
}  // namespace

side_stream::side_stream(int home, int on)
    : device_(on), fork_(made_on<cuda_event>(home)), stream_(made_on<cuda_stream>(on)), join_(made_on<cuda_event>(on)) {}

cudaStream_t side_stream::begin(cudaStream_t s) {
  fork_.record(s);
  MEMLAB_CUDA_CHECK(cudaStreamWaitEvent(stream_.get(), fork_.get(), 0));
  return stream_.get();
}

void side_stream::end(cudaStream_t s) {
  join_.record(stream_.get());
  MEMLAB_CUDA_CHECK(cudaStreamWaitEvent(s, join_.get(), 0));
}

}  // namespace memlab
