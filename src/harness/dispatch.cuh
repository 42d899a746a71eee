// A lab's element types, written once as C++ types: the table's `dtypes`, each rung's kernels (one per
// type) and the launch's dispatch on the case's dtype all read the same list. Device-side translation
// units only.
//
//   using lab_dtypes = dtype_list<__half, float, double>;
//   .dtypes = dtypes_of(lab_dtypes{}),
//   .kernels = kernels_per_dtype<aos_rung>(lab_dtypes{}),
//   visit_dtype(lab_dtypes{}, c.p.type, [&](auto tag) { using T = decltype(tag); ... });
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "harness/dtype.hpp"
#include "harness/lab.hpp"

namespace memlab {

// The C++ types a lab is built for, in the order its table lists their dtypes.
template <class... Ts>
struct dtype_list {};

// Every dtype memlab names, narrowest first (dtype.hpp's order).
using every_dtype = dtype_list<std::uint8_t, __half, __nv_bfloat16, float, double>;

// The dtype a C++ element type runs as.
template <class T>
constexpr dtype dtype_of() {
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    return dtype::u8;
  } else if constexpr (std::is_same_v<T, __half>) {
    return dtype::f16;
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return dtype::bf16;
  } else if constexpr (std::is_same_v<T, float>) {
    return dtype::f32;
  } else {
    static_assert(std::is_same_v<T, double>, "no memlab dtype for this type");
    return dtype::f64;
  }
}

// The lab table's `dtypes`.
template <class... Ts>
std::vector<dtype> dtypes_of(dtype_list<Ts...>) {
  return {dtype_of<Ts>()...};
}

// The kernels of a rung, one per type of the list, in its order (lab.hpp: kernels_of).
template <class Rung, class... Ts>
std::vector<kernel_ref> kernels_per_dtype(dtype_list<Ts...>) {
  return kernels_of<Rung, Ts...>();
}

namespace detail {
template <class List, class T, class... Rest, class F>
decltype(auto) visit_listed(dtype t, F& f) {
  if (t == dtype_of<T>()) return f(T{});
  if constexpr (sizeof...(Rest) > 0) {
    return visit_listed<List, Rest...>(t, f);
  } else {
    std::string names;
    for (dtype d : dtypes_of(List{})) names += (names.empty() ? "" : ", ") + std::string(to_string(d));
    throw std::invalid_argument("dtype " + std::string(to_string(t)) + " is not built for this lab (" + names + ")");
  }
}
}  // namespace detail

// Calls f(T{}) with the type of the list that runs as `t`; a dtype the list does not hold throws
// (the planner refuses those first: the table's `dtypes` is the same list).
template <class... Ts, class F>
decltype(auto) visit_dtype(dtype_list<Ts...>, dtype t, F&& f) {
  return detail::visit_listed<dtype_list<Ts...>, Ts...>(t, f);
}

// The same, with the lab's types written in place: visit_dtype_in<__half, float, double>(t, f).
template <class... Ts, class F>
decltype(auto) visit_dtype_in(dtype t, F&& f) {
  return visit_dtype(dtype_list<Ts...>{}, t, std::forward<F>(f));
}

}  // namespace memlab
