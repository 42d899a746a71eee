// The library copies a lab times its rungs against, over the same bytes: cudaMemcpyAsync (device to
// device: the copy engine or the driver's own kernel) and cub::DeviceTransform::Transform with an
// identity functor. The copy and async labs both hold them. A lab's record names the launcher with a
// function giving the case's bytes, and, for CUB, the lab's element types and its own identity
// functor (a type of the lab's: CUB's kernels instantiated with it carry its name, which
// `memlab inspect` finds them by):
//
//   copy_operands operands(const case_ctx& c) { return {destination(c), source(c)}; }
//   {.name = "memcpy", .launch = launch_memcpy_peer<operands>, .peer = true, ...},
//   {.name = "cub", .launch = launch_cub_peer<identity_op, every_dtype, operands>,
//    .kernels = {kernel_ref::with_type<identity_op>()}, .peer = true, ...},
//
// (A copy of a lab's bytes by memlab::copy, the peer of labs that move bytes in another order, is
// planned by copy_peer.hpp.) Device-side translation units only (CUB).
#pragma once

#include <cub/device/device_transform.cuh>

#include "harness/dispatch.cuh"
#include "harness/error.hpp"
#include "harness/lab.hpp"

namespace memlab {

// Where a peer's copy of the case's n elements goes and comes from.
struct copy_operands {
  void* dst = nullptr;
  const void* src = nullptr;
};
using copy_operands_fn = copy_operands (*)(const case_ctx&);

// cudaMemcpyAsync device to device: n elements' bytes.
template <copy_operands_fn Operands>
void launch_memcpy_peer(const case_ctx& c, cudaStream_t s) {
  const copy_operands o = Operands(c);
  MEMLAB_CUDA_CHECK(cudaMemcpyAsync(o.dst, o.src, c.p.n * size_of(c.p.type), cudaMemcpyDeviceToDevice, s));
}

// cub::DeviceTransform::Transform of n elements of the case's dtype (one of Dtypes) through Identity.
template <class Identity, class Dtypes, copy_operands_fn Operands>
void launch_cub_peer(const case_ctx& c, cudaStream_t s) {
  const copy_operands o = Operands(c);
  visit_dtype(Dtypes{}, c.p.type, [&](auto tag) {
    using T = decltype(tag);
    MEMLAB_CUDA_CHECK(
        cub::DeviceTransform::Transform(static_cast<const T*>(o.src), static_cast<T*>(o.dst), c.p.n, Identity{}, s));
  });
  MEMLAB_CUDA_CHECK_LAUNCH();
}

}  // namespace memlab
