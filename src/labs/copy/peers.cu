// The copy lab's peers, measured in the same run: what a CUDA developer would call instead.
//   memcpy  cudaMemcpyAsync, device to device (the copy engine or the driver's own kernel)
//   cub     cub::DeviceTransform::Transform with an identity functor
//   thrust  thrust::copy on raw device pointers
#include <cub/device/device_transform.cuh>
#include <thrust/copy.h>
#include <thrust/execution_policy.h>
#include <thrust/system/cuda/execution_policy.h>

#include "harness/dispatch.cuh"
#include "labs/copy/copy.hpp"
#include "memlab/error.cuh"

namespace memlab::labs::copy {

// Named so `memlab inspect` recognises CUB's kernels instantiated for this lab.
struct identity_op {
  template <class T>
  __device__ T operator()(T x) const {
    return x;
  }
};

void launch_peer(variant_id v, dtype t, void* dst, const void* src, std::uint64_t n, cudaStream_t s) {
  visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    auto* d = static_cast<T*>(dst);
    const auto* sp = static_cast<const T*>(src);
    switch (v) {
      case variant_id::memcpy:
        MEMLAB_CUDA_CHECK(cudaMemcpyAsync(d, sp, n * sizeof(T), cudaMemcpyDeviceToDevice, s));
        break;
      case variant_id::cub:
        MEMLAB_CUDA_CHECK(cub::DeviceTransform::Transform(sp, d, n, identity_op{}, s));
        break;
      case variant_id::thrust:
        thrust::copy(thrust::cuda::par_nosync.on(s), sp, sp + n, d);  // throws thrust::system_error
        break;
      default: throw std::invalid_argument("launch_peer: not a peer variant");
    }
  });
  MEMLAB_CUDA_CHECK_LAUNCH();
}

}  // namespace memlab::labs::copy
