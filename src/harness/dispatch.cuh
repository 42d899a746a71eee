// Calls f(T{}) with the C++ type of a memlab dtype. Device-side translation units only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <stdexcept>

#include "harness/dtype.hpp"
#include "harness/lab.hpp"

namespace memlab {

// The kernels of a rung instantiated for every dtype, in dtype order (lab.hpp: kernels_of).
template <class Rung>
std::vector<kernel_ref> kernels_of_every_dtype() {
  return kernels_of<Rung, std::uint8_t, __half, __nv_bfloat16, float, double>();
}

template <class F>
decltype(auto) visit_dtype(dtype t, F&& f) {
  switch (t) {
    case dtype::u8: return f(std::uint8_t{});
    case dtype::f16: return f(__half{});
    case dtype::bf16: return f(__nv_bfloat16{});
    case dtype::f32: return f(float{});
    case dtype::f64: return f(double{});
  }
  throw std::invalid_argument("visit_dtype: unknown dtype");
}

}  // namespace memlab
