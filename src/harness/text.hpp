// The one formatting path for everything memlab prints: numbers, bytes, durations, lists.
// Host-only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace memlab {

std::string fixed(double v, int digits);        // fixed(3.14159, 1) = "3.1"
std::string fixed_g(double v);                  // %g: "0.000123", "1.5e+09"
std::string exact(double v);                    // shortest text that reads back as the same double
std::string hex_byte(unsigned v);               // "0x0a"
std::string human_ms(double ms);                // "3.40 µs", "1.250 ms", "2.000 s"
std::string format_count(std::uint64_t n);      // "2^24" for powers of two >= 2^10, else decimal
std::string format_bytes(std::uint64_t bytes);  // "512 B", "4.00 KiB", "1.50 GiB"

// Terminal columns a UTF-8 string takes (one per code point: "µs" is two, not three bytes wide).
std::size_t display_width(std::string_view s);
// At most `max` code points, "..." marking a cut; newlines flattened so a row stays one line.
std::string shorten(std::string_view s, std::size_t max);

// Items of `range` (anything convertible to std::string) joined by `sep`.
template <class Range>
std::string join(const Range& range, std::string_view sep = ", ") {
  std::string out;
  for (const auto& x : range) {
    if (!out.empty()) out += sep;
    out += std::string(x);
  }
  return out;
}

}  // namespace memlab
