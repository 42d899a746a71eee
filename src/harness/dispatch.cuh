// Calls f(T{}) with the C++ type of a memlab dtype. Device-side translation units only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

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

// visit_dtype for a lab built for the element types Ts only (its table's dtypes): f(T{}) for the one
// of Ts that `t` names; std::invalid_argument for any other dtype. Instantiates f for Ts alone.
template <class... Ts, class F>
void visit_dtype_in(dtype t, F&& f) {
  visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr ((std::is_same_v<T, Ts> || ...)) {
      f(tag);
    } else {
      throw std::invalid_argument("dtype " + std::string(to_string(t)) + " is not built for this lab");
    }
  });
}

}  // namespace memlab
