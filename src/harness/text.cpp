#include "harness/text.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdio>
#include <iterator>

namespace memlab {
namespace {

template <class... Args>
std::string printf_string(const char* fmt, Args... args) {
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, fmt, args...);
  return n < 0 ? std::string() : std::string(buf, std::min(static_cast<std::size_t>(n), sizeof buf - 1));
}

}  // namespace

std::string fixed(double v, int digits) { return printf_string("%.*f", digits, v); }
std::string fixed_g(double v) { return printf_string("%g", v); }
std::string hex_byte(unsigned v) { return printf_string("0x%02x", v); }

std::string exact(double v) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

std::string human_ms(double ms) {
  if (ms < 1.0) return fixed(ms * 1e3, 2) + " µs";
  if (ms < 1000.0) return fixed(ms, 3) + " ms";
  return fixed(ms * 1e-3, 3) + " s";
}

std::string format_count(std::uint64_t n) {
  if (n >= (std::uint64_t{1} << 10) && std::has_single_bit(n)) return "2^" + std::to_string(std::countr_zero(n));
  return std::to_string(n);
}

std::string format_bytes(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes) / 1024.0;
  std::size_t u = 0;
  // 1023.995 rather than 1024 so a value just short of the next unit never prints as "1024.00".
  while (v >= 1023.995 && u + 1 < std::size(units)) {
    v /= 1024.0;
    ++u;
  }
  return fixed(v, 2) + " " + units[u];
}

std::size_t display_width(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string shorten(std::string_view s, std::size_t max) {
  std::string flat(s);
  std::replace(flat.begin(), flat.end(), '\n', ' ');
  std::replace(flat.begin(), flat.end(), '\r', ' ');
  if (display_width(flat) <= max) return flat;
  std::size_t points = 0, i = 0;
  for (; i < flat.size(); ++i) {
    if ((static_cast<unsigned char>(flat[i]) & 0xC0) != 0x80 && points++ == max - 3) break;
  }
  return flat.substr(0, i) + "...";
}

}  // namespace memlab
