#include <vector>

#include "harness/lab.hpp"

// Each lab's entry point. A lab folder's lab.cmake defines MEMLAB_LAB_<NAME> when it is built
// (the tile lab only where CuTe is found).
namespace memlab::labs {
namespace copy { const lab& copy_lab(); }
#ifdef MEMLAB_LAB_TILE
namespace tile { const lab& tile_lab(); }
#endif
#ifdef MEMLAB_LAB_STRIDE
namespace stride { const lab& stride_lab(); }
#endif
#ifdef MEMLAB_LAB_GATHER
namespace gather { const lab& gather_lab(); }
#endif
}  // namespace memlab::labs

namespace memlab {

std::string_view to_string(axis a) {
  switch (a) {
    case axis::src_offset: return "src-offset";
    case axis::dst_offset: return "dst-offset";
    case axis::stride: return "stride";
    case axis::ctas: return "ctas";
    case axis::tile: return "tile";
    case axis::table_bytes: return "table-bytes";
  }
  return "?";
}

bool axis_values::given(axis a) const {
  switch (a) {
    case axis::src_offset: return !src_offset.empty();
    case axis::dst_offset: return !dst_offset.empty();
    case axis::stride: return !stride.empty();
    case axis::ctas: return !ctas.empty();
    case axis::tile: return !tile.empty();
    case axis::table_bytes: return !table_bytes.empty();
  }
  return false;
}

const variant_info* lab::find_variant(std::string_view v) const {
  for (const auto& info : variants())
    if (info.name == v) return &info;
  return nullptr;
}

std::span<const lab* const> all_labs() {
  static const std::vector<const lab*> all{
      &labs::copy::copy_lab(),
#ifdef MEMLAB_LAB_STRIDE
      &labs::stride::stride_lab(),
#endif
#ifdef MEMLAB_LAB_GATHER
      &labs::gather::gather_lab(),
#endif
#ifdef MEMLAB_LAB_TILE
      &labs::tile::tile_lab(),
#endif
  };
  return all;
}

std::span<const std::string_view> missing_labs() {
  static const std::vector<std::string_view> missing{
#ifndef MEMLAB_LAB_TILE
      "tile: not built, CuTe headers not found (pip install nvidia-cutlass, then re-run cmake)",
#endif
  };
  return missing;
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
