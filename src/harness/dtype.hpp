// Element types the labs run on. Names are shared across labs and the CLI: u8, f16, bf16, f32, f64.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace memlab {

enum class dtype { u8, f16, bf16, f32, f64 };

std::string_view to_string(dtype t);
std::optional<dtype> parse_dtype(std::string_view name);
std::size_t size_of(dtype t);
std::span<const dtype> all_dtypes();

}  // namespace memlab
