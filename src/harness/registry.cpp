#include <array>

#include "harness/lab.hpp"
#include "labs/copy/copy.hpp"

namespace memlab {

const variant_info* lab::find_variant(std::string_view v) const {
  for (const auto& info : variants())
    if (info.name == v) return &info;
  return nullptr;
}

std::span<const lab* const> all_labs() {
  static const std::array<const lab*, 1> all{&labs::copy::copy_lab()};
  return all;
}

const lab* find_lab(std::string_view name) {
  for (const lab* l : all_labs())
    if (l->name() == name) return l;
  return nullptr;
}

std::vector<inspect::kernel_label> kernel_labels() {
  std::vector<inspect::kernel_label> out;
  for (const lab* l : all_labs()) {
    for (const auto& v : l->variants()) {
      if (v.kernel_name_contains.empty()) continue;
      inspect::kernel_label k{std::string(l->name()), std::string(v.name), {}};
      for (auto frag : v.kernel_name_contains) k.name_contains.emplace_back(frag);
      out.push_back(std::move(k));
    }
  }
  return out;
}

}  // namespace memlab
