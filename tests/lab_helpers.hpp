// Driving one lab case by hand, the way the runner does: for the labs' host and GPU tests.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "harness/dtype.hpp"
#include "harness/error.hpp"
#include "harness/lab.hpp"
#include "harness/registry.hpp"

namespace memlab::test {

inline const variant& variant_of(const lab& l, std::string_view name) {
  const variant* v = l.find_variant(name);
  if (v == nullptr) throw std::invalid_argument("lab " + std::string(l.name) + " has no variant " + std::string(name));
  return *v;
}

// The traits (the lab's own description) of the rung `name`.
template <class Traits>
const Traits& traits_of(const lab& l, std::string_view name) {
  return variant_of(l, name).traits_as<Traits>();
}

// The lab's refusal of `variant` for `p` on `dev` (nullopt: it runs).
inline std::optional<std::string> refusal(const lab& l, std::string_view variant, const case_params& p,
                                          const device_info& dev = {}) {
  return l.why_not(variant_of(l, variant), p, dev);
}

inline case_plan plan_of(const lab& l, std::string_view variant, const case_params& p, const device_info& dev = {}) {
  return l.plan(variant_of(l, variant), p, dev);
}

// Plans and allocates a case (refusing what the lab refuses: std::invalid_argument).
inline case_ctx prepare(const lab& l, std::string_view variant, const case_params& p, const device_info& dev) {
  const memlab::variant& v = variant_of(l, variant);
  if (auto why = l.why_not(v, p, dev)) throw std::invalid_argument(std::string(l.name) + ": " + *why);
  return prepare_case(l, v, p, dev, l.plan(v, p, dev));
}

// One run on fresh input into a poisoned output, then the lab's check against its CPU reference.
inline std::string run_and_verify(case_ctx& c) {
  reset(c);
  c.v->launch(c, nullptr);
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  return c.l->verify(c);
}

// Every variant's name, in the lab's order: what the labs' GPU suites are instantiated over.
inline std::vector<std::string> variant_names(const lab& l) {
  std::vector<std::string> out;
  for (const auto& v : l.variants) out.emplace_back(v.name);
  return out;
}

// A (variant, dtype) suite's test names: "vec16_f32".
struct variant_dtype_name {
  template <class Param>
  std::string operator()(const ::testing::TestParamInfo<Param>& info) const {
    return std::get<0>(info.param) + "_" + std::string(to_string(std::get<1>(info.param)));
  }
};

inline const lab* find_lab(std::string_view name) {
  for (const lab* l : all_labs())
    if (l->name == name) return l;
  return nullptr;
}

}  // namespace memlab::test
