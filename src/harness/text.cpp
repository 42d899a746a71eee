#include "harness/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <iterator>

namespace memlab {

std::string fixed(double v, int digits) { return fmt::format("{:.{}f}", v, digits); }
std::string fixed_g(double v) { return fmt::format("{:g}", v); }
std::string hex_byte(unsigned v) { return fmt::format("0x{:02x}", v); }

std::string exact(double v) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

std::string human_ms(double ms) {
  if (ms < 1.0) return fmt::format("{:.2f} µs", ms * 1e3);
  if (ms < 1000.0) return fmt::format("{:.3f} ms", ms);
  return fmt::format("{:.3f} s", ms * 1e-3);
}

std::string format_count(std::uint64_t n) {
  if (n >= (std::uint64_t{1} << 10) && std::has_single_bit(n)) return fmt::format("2^{}", std::countr_zero(n));
  return fmt::format("{}", n);
}

std::string format_bytes(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes) / 1024.0;
  std::size_t u = 0;
  // 1023.995 rather than 1024 so a value just short of the next unit never prints as "1024.00".
  while (v >= 1023.995 && u + 1 < std::size(units)) {
    v /= 1024.0;
    ++u;
  }
  return fmt::format("{:.2f} {}", v, units[u]);
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
