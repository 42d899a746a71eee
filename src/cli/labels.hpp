// How `memlab inspect` recognises each lab variant's kernels: the labs' kernels by symbol, joined
// with the names the CUDA runtime registered for them. The CLI and the SASS tests use it; the
// harness does not know inspect, and inspect does not know labs.
#pragma once

#include <span>
#include <vector>

#include "harness/kernel_symbols.hpp"
#include "harness/lab.hpp"
#include "inspect/inspect.hpp"

namespace memlab::cli {

// One label per variant that launches kernels of its own. A kernel whose symbol was never
// registered keeps an empty name, so that a check over the labels sees it is missing.
inline std::vector<inspect::kernel_label> kernel_labels(std::span<const lab* const> labs) {
  std::vector<inspect::kernel_label> out;
  for (const lab* l : labs) {
    for (const auto& v : l->variants) {
      if (v.kernels.empty()) continue;
      inspect::kernel_label k{std::string(l->name), std::string(v.name), {}, {}};
      for (const auto& ref : v.kernels) {
        if (ref.symbol != nullptr) k.mangled.push_back(kernel_symbol(ref.symbol));
        if (ref.instantiated_with != nullptr)
          k.instantiated_with.push_back(inspect::demangle_type(ref.instantiated_with->name()));
      }
      out.push_back(std::move(k));
    }
  }
  return out;
}

}  // namespace memlab::cli
