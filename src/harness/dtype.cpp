#include "harness/dtype.hpp"

#include <array>

namespace memlab {
namespace {

// The order `all_dtypes()` reports them in: narrowest first, as the CLI lists them.
constexpr std::array<dtype, 5> every_dtype = {dtype::u8, dtype::f16, dtype::bf16, dtype::f32, dtype::f64};

}  // namespace

std::string_view to_string(dtype t) {
  switch (t) {
    case dtype::u8: return "u8";
    case dtype::f16: return "f16";
    case dtype::bf16: return "bf16";
    case dtype::f32: return "f32";
    case dtype::f64: return "f64";
  }
  return "?";
}

std::optional<dtype> parse_dtype(std::string_view name) {
  for (dtype t : every_dtype) {
    if (to_string(t) == name) return t;
  }
  return std::nullopt;
}

std::size_t size_of(dtype t) {
  switch (t) {
    case dtype::u8: return 1;
    case dtype::f16: return 2;
    case dtype::bf16: return 2;
    case dtype::f32: return 4;
    case dtype::f64: return 8;
  }
  return 0;
}

std::span<const dtype> all_dtypes() { return every_dtype; }

}  // namespace memlab
