// Parsing of --sizes lists: element counts or byte counts, single values, lists and ranges.
//
// Grammar (items separated by commas):
//   item   := value | value ".." value [":" step]
//   value  := number [suffix] | "2^" number [suffix]
//   suffix := K | M | G              element counts, binary multiples (1K = 1024 elements)
//           | B | KiB | MiB | GiB     byte counts, converted to elements by the dtype's size
//   step   := "*" number             geometric (default "*2")
//           | "+" number [suffix]     arithmetic
// Examples: "2^12..2^30", "1M,64M", "4096", "1GiB", "2^10..2^20:*4", "1000..5000:+1000".
// Both ends of a range must be of the same kind (elements or bytes). Errors throw
// std::invalid_argument with a message naming the offending item.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace memlab {

// The suffixes a value may carry, what each multiplies by, and whether it makes a byte count.
struct size_suffix {
  std::string_view name;  // "", "K", "MiB"
  std::uint64_t unit;
  bool bytes;
};
std::span<const size_suffix> size_suffixes();
inline constexpr unsigned max_exponent = 62;         // 2^k takes k <= this
inline constexpr std::size_t max_range_items = 10000;  // a range listing more is an error

struct size_spec {
  std::uint64_t value = 0;
  bool bytes = false;  // true: a byte count; false: an element count
  std::string text;    // how the user wrote this value, e.g. "2^20" (for messages)
};

std::vector<size_spec> parse_sizes(std::string_view text);

// Lists of plain numbers for the other axes (offsets, strides, CTAs), same grammar without
// suffixes, where a range without a step counts up by one: "0..15", "1..32:*2", "0,2,4".
// `what` (the flag, "--block-rows") prefixes error messages.
std::vector<std::uint64_t> parse_counts(std::string_view text, std::string_view what);
// Byte counts (e.g. table sizes): the --sizes grammar, where a bare number is bytes and ranges
// double by default: "4MiB..256MiB".
std::vector<std::uint64_t> parse_byte_counts(std::string_view text, std::string_view what);

// Shapes of `rank` extents joined by 'x', comma-separated: "128x256,64x64". Each extent is a
// plain number or 2^k; no units, no ranges.
std::vector<std::vector<std::uint64_t>> parse_shapes(std::string_view text, std::string_view what, std::size_t rank);

// Elements of `elem_size` bytes that `s` stands for. Throws std::invalid_argument when a byte
// count is not a multiple of the element size.
std::uint64_t elements_of(const size_spec& s, std::size_t elem_size);

}  // namespace memlab
